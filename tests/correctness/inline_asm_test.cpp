// kl::inline_asm_elementwise on the device under test (cpu here; emu, ptx
// and gpu in the reruns): the cpu and emu devices run the host reference per
// element, a GPU the PTX. Random inputs: an f32 approximation (PTX's
// tanh.approx.f32, within its documented error of std::tanh), i32 wrapping
// arithmetic, f16 in 16-bit registers, arguments broadcast from scalars and
// from tiles of rank 2, and a non-pure asm kept where its result is unused.
#include <gtest/gtest.h>

#include <atomic>
#include <cmath>
#include <cstdint>
#include <vector>

#include "test_support.hpp"

namespace {

namespace kl = kiln;

constexpr int kBlock = 128;

bool on_gpu() { return kl::Device::default_device().kind() == kl::Device::Kind::cuda; }

float host_tanh(float x) { return std::tanh(x); }

/// out[i] = tanh(x[i]) by PTX's tanh.approx.f32.
void fast_tanh(kl::Ptr<kl::f32> x, kl::Ptr<kl::f32> out, kl::i32 n) {
  auto i = kl::program_id(0) * kBlock + kl::arange<kBlock>();
  auto mask = i < n;
  auto y = kl::inline_asm_elementwise<kl::f32>("tanh.approx.f32 $0, $1;", "=f,f", kl::asm_args(kl::load(x + i, mask)),
                                               host_tanh);
  kl::store(out + i, y, mask);
}

TEST(InlineAsm, TanhApproximationOfRandomFloats) {
  const int n = 333;
  const std::vector<float> x = kiln::test::random_values<float>(n, 41, -6, 6);
  kl::Buffer<float> out(n);
  kl::compile<fast_tanh>().launch(kl::Grid((n + kBlock - 1) / kBlock), kiln::test::to_buffer(x), out, n);
  std::vector<double> want(n);
  for (int i = 0; i < n; ++i) want[i] = std::tanh(x[i]);
  // The host reference is std::tanh itself; tanh.approx.f32's maximum relative error is 2^-10.987.
  kiln::test::expect_close(out.to_host(), want, on_gpu() ? 0x1p-10 : 0.0, "tanh.approx");
}

std::int32_t host_mad(std::int32_t a, std::int32_t b) {
  return static_cast<std::int32_t>(static_cast<std::uint32_t>(a) * static_cast<std::uint32_t>(b) +
                                   static_cast<std::uint32_t>(a));
}

/// out[i] = a[i] * b[i] + a[i], wrapping, by mad.lo.s32.
void multiply_add(kl::Ptr<kl::i32> a, kl::Ptr<kl::i32> b, kl::Ptr<kl::i32> out, kl::i32 n) {
  auto i = kl::program_id(0) * kBlock + kl::arange<kBlock>();
  auto mask = i < n;
  auto y = kl::inline_asm_elementwise<kl::i32>("mad.lo.s32 $0, $1, $2, $1;", "=r,r,r",
                                               kl::asm_args(kl::load(a + i, mask), kl::load(b + i, mask)), host_mad);
  kl::store(out + i, y, mask);
}

TEST(InlineAsm, WrappingMultiplyAddOfRandomIntegers) {
  const int n = 300;
  const std::vector<std::int32_t> a = kiln::test::random_values<std::int32_t>(n, 42, -2e9, 2e9);
  const std::vector<std::int32_t> b = kiln::test::random_values<std::int32_t>(n, 43, -2e9, 2e9);
  kl::Buffer<std::int32_t> out(n);
  kl::compile<multiply_add>().launch(kl::Grid((n + kBlock - 1) / kBlock), kiln::test::to_buffer(a),
                                     kiln::test::to_buffer(b), out, n);
  std::vector<std::int32_t> want(n);
  for (int i = 0; i < n; ++i) want[i] = host_mad(a[i], b[i]);
  kiln::test::expect_equal(out.to_host(), want, "mad.lo.s32");
}

kl::half host_negate(kl::half x) { return kl::half::from_bits(static_cast<std::uint16_t>(x.bits ^ 0x8000u)); }

/// out[i] = -x[i] for f16 in 16-bit registers (neg.f16 flips the sign bit, NaN too).
void negate_halves(kl::Ptr<kl::f16> x, kl::Ptr<kl::f16> out) {
  auto i = kl::arange<kBlock>();
  kl::store(out + i,
            kl::inline_asm_elementwise<kl::f16>("neg.f16 $0, $1;", "=h,h", kl::asm_args(kl::load(x + i)), host_negate));
}

TEST(InlineAsm, HalvesInSixteenBitRegisters) {
  const std::vector<kl::half> x = kiln::test::random_values<kl::half>(kBlock, 44, -100, 100);
  kl::Buffer<kl::half> out(kBlock);
  kl::compile<negate_halves>().launch(kl::Grid(1), kiln::test::to_buffer(x), out);
  std::vector<kl::half> want(kBlock);
  for (int i = 0; i < kBlock; ++i) want[i] = host_negate(x[i]);
  kiln::test::expect_equal(out.to_host(), want, "neg.f16");
}

constexpr int kRows = 16, kCols = 32;

/// out[r, c] = rows[r] * scale + cols[c]: a column, a row and a scalar broadcast to one tile.
void broadcast_arguments(kl::Ptr<kl::i32> rows, kl::Ptr<kl::i32> cols, kl::Ptr<kl::i32> out, kl::i32 scale) {
  auto r = kl::arange<kRows>();
  auto c = kl::arange<kCols>();
  auto row = kl::expand_dims<1>(kl::load(rows + r));
  auto col = kl::expand_dims<0>(kl::load(cols + c));
  auto y = kl::inline_asm_elementwise<kl::i32>(
      "mad.lo.s32 $0, $1, $3, $2;", "=r,r,r,r", kl::asm_args(row, col, scale),
      [](std::int32_t a, std::int32_t b, std::int32_t s) {
        return static_cast<std::int32_t>(static_cast<std::uint32_t>(a) * static_cast<std::uint32_t>(s) +
                                         static_cast<std::uint32_t>(b));
      });
  kl::store(out + kl::expand_dims<1>(r) * kCols + kl::expand_dims<0>(c), y);
}

TEST(InlineAsm, ArgumentsBroadcastFromAScalarARowAndAColumn) {
  const std::vector<std::int32_t> rows = kiln::test::random_values<std::int32_t>(kRows, 45, -1000, 1000);
  const std::vector<std::int32_t> cols = kiln::test::random_values<std::int32_t>(kCols, 46, -1000, 1000);
  const std::int32_t scale = 37;
  kl::Buffer<std::int32_t> out(kRows * kCols);
  kl::compile<broadcast_arguments>().launch(kl::Grid(1), kiln::test::to_buffer(rows), kiln::test::to_buffer(cols), out,
                                            scale);
  std::vector<std::int32_t> want(kRows * kCols);
  for (int r = 0; r < kRows; ++r)
    for (int c = 0; c < kCols; ++c) want[r * kCols + c] = rows[r] * scale + cols[c];
  kiln::test::expect_equal(out.to_host(), want, "row * scale + col");
}

std::atomic<std::int64_t> counted_calls{0};

/// Counts its calls: a reference with an effect, to see whether the op ran.
std::int32_t counted_copy(std::int32_t x) {
  counted_calls.fetch_add(1);
  return x;
}

/// out = x; an asm of x whose result is unused, pure or not.
template <bool PURE>
void copy_with_unused_asm(kl::Ptr<kl::i32> x, kl::Ptr<kl::i32> out) {
  auto i = kl::arange<kBlock>();
  auto v = kl::load(x + i);
  kl::inline_asm_elementwise<kl::i32>("mov.b32 $0, $1;", "=r,r", kl::asm_args(v), counted_copy, {.pure = PURE});
  kl::store(out + i, v);
}

bool has_inline_asm(const kiln::ir::Function& fn) {
  bool found = false;
  kiln::ir::walk(fn.body, [&](kiln::ir::Operation& op) { found = found || op.code == kiln::ir::OpCode::inline_asm; });
  return found;
}

TEST(InlineAsm, NonPureAsmIsKeptWhereItsResultIsUnusedAndAPureOneIsDropped) {
  EXPECT_TRUE(has_inline_asm(kl::compile<copy_with_unused_asm<false>>().ir()));
  EXPECT_FALSE(has_inline_asm(kl::compile<copy_with_unused_asm<true>>().ir()));
  if (on_gpu()) GTEST_SKIP() << "the host reference runs on the cpu and emu devices only";
  const std::vector<std::int32_t> x = kiln::test::random_values<std::int32_t>(kBlock, 47, -1000, 1000);
  kl::Buffer<std::int32_t> out(kBlock);
  counted_calls = 0;
  kl::compile<copy_with_unused_asm<true>>().launch(kl::Grid(1), kiln::test::to_buffer(x), out);
  EXPECT_EQ(counted_calls.load(), 0);
  kl::compile<copy_with_unused_asm<false>>().launch(kl::Grid(1), kiln::test::to_buffer(x), out);
  // Once per element on cpu; on emu once per copy of an element a thread holds.
  EXPECT_GE(counted_calls.load(), kBlock);
  kiln::test::expect_equal(out.to_host(), x, "x");
}

}  // namespace
