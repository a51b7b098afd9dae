// The CPU interpreter against plain C++ references: masked loads, program
// ids, shape ops, reduce, scan, dot, control flow, atomics under parallel
// programs, launch stats, print and assert.
#include <gtest/gtest.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstring>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "interpreter_test_support.hpp"
#include "kiln/ir/builder.hpp"
#include "kiln/ir/verifier.hpp"

namespace kiln::runtime {
namespace {

using namespace interpreter_test;

// ---- Memory ---------------------------------------------------------------------------

TEST(Interpreter, MaskedLoadUsesOtherAndCountsOnlyActiveLanes) {
  const int n = 100;
  auto x = random_values<float>(n, 120);  // exactly n: the masked-off lanes lie past the end
  std::vector<float> out(128);
  const InterpretedKernel k = compile("kernel @masked(%x: ptr<f32>, %out: ptr<f32>, %n: i32) {" + offsets(kBlock) +
                                      pointers("px", "x", "f32", kBlock) + pointers("po", "out", "f32", kBlock) + R"(
  %other = constant {value = -1.5} : tile<64xf32>
  %v = load %px, %mask, %other {cache = none, evict = none} : tile<64xf32>
  store %po, %v {cache = none, evict = none}
}
)");
  const KernelArgument args[] = {buffer(x, "x"), buffer(out, "out"), scalar(n)};
  const LaunchStats stats = k.launch({2, 1, 1}, args, 2);
  for (int i = 0; i < n; ++i) ASSERT_EQ(out[i], x[i]);
  for (int i = n; i < 128; ++i) ASSERT_EQ(out[i], -1.5f);
  EXPECT_EQ(stats.bytes_read, n * sizeof(float));
  EXPECT_EQ(stats.bytes_written, 128 * sizeof(float));
}

TEST(Interpreter, VectorAddBuiltWithBuilderCountsBytes) {
  using ir::DType;
  using ir::OpCode;
  using ir::Type;
  ir::Function fn;
  fn.name = "vector_add";
  fn.argument_names = {"x", "y", "out", "n"};
  ir::Value* x = fn.add_argument(fn.body, Type::pointer(DType::f32));
  ir::Value* y = fn.add_argument(fn.body, Type::pointer(DType::f32));
  ir::Value* out = fn.add_argument(fn.body, Type::pointer(DType::f32));
  ir::Value* n = fn.add_argument(fn.body, Type::scalar(DType::i32));
  ir::Builder b(fn);
  b.set_loc({"vector_add.hpp", 7});
  const Type index = Type::tile(DType::i32, {kBlock});
  const Type ptr_tile = {DType::f32, true, {kBlock}};
  const Type values = Type::tile(DType::f32, {kBlock});
  ir::Value* pid = b.create(OpCode::program_id, {}, {Type::scalar(DType::i32)}, {{"axis", std::int64_t{0}}})->result();
  ir::Value* block = b.constant_int(Type::scalar(DType::i32), kBlock);
  ir::Value* start = b.create(OpCode::mul, {pid, block}, {Type::scalar(DType::i32)})->result();
  ir::Value* range = b.create(OpCode::arange, {}, {index}, {{"start", std::int64_t{0}}})->result();
  ir::Value* offs =
      b.create(OpCode::add, {b.create(OpCode::splat, {start}, {index})->result(), range}, {index})->result();
  ir::Value* mask = b.create(OpCode::cmp, {offs, b.create(OpCode::splat, {n}, {index})->result()},
                             {Type::tile(DType::i1, {kBlock})}, {{"pred", ir::Symbol{"lt"}}})
                        ->result();
  const auto at = [&](ir::Value* base) {
    ir::Value* s = b.create(OpCode::splat, {base}, {ptr_tile})->result();
    return b.create(OpCode::addptr, {s, offs}, {ptr_tile})->result();
  };
  const std::vector<std::pair<std::string, ir::Attribute>> memory = {{"cache", ir::Symbol{"none"}},
                                                                     {"evict", ir::Symbol{"none"}}};
  ir::Value* xv = b.create(OpCode::load, {at(x), mask}, {values}, memory)->result();
  ir::Value* yv = b.create(OpCode::load, {at(y), mask}, {values}, memory)->result();
  ir::Value* sum = b.create(OpCode::add, {xv, yv}, {values})->result();
  b.create(OpCode::store, {at(out), sum, mask}, {}, memory);
  ir::verify(fn);

  auto xs = random_values<float>(kCount, 130), ys = random_values<float>(kCount, 131);
  std::vector<float> result(kCount);
  const InterpretedKernel k(fn);
  const KernelArgument args[] = {buffer(xs, "x"), buffer(ys, "y"), buffer(result, "out"), scalar(kCount)};
  for (int threads : {1, 4}) {
    std::fill(result.begin(), result.end(), 0.0f);
    const LaunchStats stats = k.launch(kGrid, args, threads);
    for (int i = 0; i < kCount; ++i) ASSERT_EQ(result[i], xs[i] + ys[i]);
    EXPECT_EQ(stats.bytes_read, 2u * kCount * sizeof(float));
    EXPECT_EQ(stats.bytes_written, kCount * sizeof(float));
  }
}

TEST(Interpreter, ProgramIdsCoverTheThreeDimensionalGrid) {
  const Grid grid = {3, 4, 5};
  std::vector<std::int32_t> out(60 * 2, -1);
  const InterpretedKernel k = compile(R"(
kernel @ids(%out: ptr<i32>) {
  %x = program_id {axis = 0} : i32
  %y = program_id {axis = 1} : i32
  %z = program_id {axis = 2} : i32
  %gx = num_programs {axis = 0} : i32
  %gy = num_programs {axis = 1} : i32
  %gz = num_programs {axis = 2} : i32
  %zy = mul %z, %gy : i32
  %zyy = add %zy, %y : i32
  %row = mul %zyy, %gx : i32
  %id = add %row, %x : i32
  %two = constant {value = 2} : i32
  %slot = mul %id, %two : i32
  %p = addptr %out, %slot : ptr<i32>
  store %p, %id {cache = none, evict = none}
  %gxy = mul %gx, %gy : i32
  %total = mul %gxy, %gz : i32
  %one = constant {value = 1} : i32
  %slot1 = add %slot, %one : i32
  %p1 = addptr %out, %slot1 : ptr<i32>
  store %p1, %total {cache = none, evict = none}
}
)");
  const KernelArgument args[] = {buffer(out, "out")};
  k.launch(grid, args, 3);
  for (int i = 0; i < 60; ++i) {
    ASSERT_EQ(out[2 * i], i);
    ASSERT_EQ(out[2 * i + 1], 60);
  }
}

// ---- Shape ops ---------------------------------------------------------------------

TEST(Interpreter, TransposeBroadcastJoinSplit) {
  auto x = random_values<std::int32_t>(2 * 4 * 8, 140);
  std::vector<std::int32_t> t(64), bc(32), swapped(64);
  const InterpretedKernel k = compile(R"(
kernel @shapes(%x: ptr<i32>, %t: ptr<i32>, %bc: ptr<i32>, %sw: ptr<i32>) {
  %r = arange {start = 0} : tile<64xi32>
  %px_s = splat %x : tile<64xptr<i32>>
  %px = addptr %px_s, %r : tile<64xptr<i32>>
  %flat = load %px {cache = none, evict = none} : tile<64xi32>
  %cube = reshape %flat : tile<2x4x8xi32>
  %perm = trans %cube {order = [2, 0, 1]} : tile<8x2x4xi32>
  %tflat = reshape %perm : tile<64xi32>
  %pt_s = splat %t : tile<64xptr<i32>>
  %pt = addptr %pt_s, %r : tile<64xptr<i32>>
  store %pt, %tflat {cache = none, evict = none}
  %r8 = arange {start = 0} : tile<8xi32>
  %row = expand_dims %r8 {axis = 0} : tile<1x8xi32>
  %rows = broadcast %row : tile<4x8xi32>
  %bflat = reshape %rows : tile<32xi32>
  %r32 = arange {start = 0} : tile<32xi32>
  %pb_s = splat %bc : tile<32xptr<i32>>
  %pb = addptr %pb_s, %r32 : tile<32xptr<i32>>
  store %pb, %bflat {cache = none, evict = none}
  %pairs = reshape %flat : tile<32x2xi32>
  %even, %odd = split %pairs : tile<32xi32>, tile<32xi32>
  %joined = join %odd, %even : tile<32x2xi32>
  %jflat = reshape %joined : tile<64xi32>
  %ps_s = splat %sw : tile<64xptr<i32>>
  %ps = addptr %ps_s, %r : tile<64xptr<i32>>
  store %ps, %jflat {cache = none, evict = none}
}
)");
  const KernelArgument args[] = {buffer(x, "x"), buffer(t, "t"), buffer(bc, "bc"), buffer(swapped, "sw")};
  k.launch({1, 1, 1}, args, 1);
  for (int i = 0; i < 8; ++i)
    for (int a = 0; a < 2; ++a)
      for (int b = 0; b < 4; ++b) ASSERT_EQ(t[(i * 2 + a) * 4 + b], x[(a * 4 + b) * 8 + i]);
  for (int i = 0; i < 32; ++i) ASSERT_EQ(bc[i], i % 8);
  for (int i = 0; i < 32; ++i) {
    ASSERT_EQ(swapped[2 * i], x[2 * i + 1]);
    ASSERT_EQ(swapped[2 * i + 1], x[2 * i]);
  }
}

// ---- Reductions and scans -------------------------------------------------------

constexpr int kRows = 16, kCols = 64, kPrograms = 5;

// Runs `body` (which may use %x : tile<16x64xT>) storing `%out_v` with `out_shape`
// (rows or cols of T2) at pid * size.
template <class T, class R>
std::vector<R> run_rows(const std::string& body, const std::vector<T>& x_in, int out_len, const std::string& out_type) {
  auto x = x_in;
  std::vector<R> out(static_cast<std::size_t>(out_len) * kPrograms);
  const std::string text =
      fill("kernel @rows(%in: ptr<{T}>, %out: ptr<{O}>) {\n", {{"T", dtype_of<T>()}, {"O", out_type}}) +
      load_2d("x", "in", dtype_of<T>(), kRows, kCols) + body +
      fill(R"(
  %opid = program_id {axis = 0} : i32
  %olen = constant {value = {L}} : i32
  %ostart = mul %opid, %olen : i32
  %or = arange {start = 0} : tile<{L}xi32>
  %os = splat %ostart : tile<{L}xi32>
  %oo = add %os, %or : tile<{L}xi32>
  %op_s = splat %out : tile<{L}xptr<{O}>>
  %op = addptr %op_s, %oo : tile<{L}xptr<{O}>>
  store %op, %out_v {cache = none, evict = none}
}
)",
           {{"L", std::to_string(out_len)}, {"O", out_type}});
  const InterpretedKernel k = compile(text);
  const KernelArgument args[] = {buffer(x, "x"), buffer(out, "out")};
  k.launch({kPrograms, 1, 1}, args, 3);
  return out;
}

TEST(Interpreter, SumAndMaxReductionsMatchSequentialReference) {
  const auto x = random_values<float>(kRows * kCols * kPrograms, 150);
  const auto sums = run_rows<float, float>(R"(
  %out_v = reduce %x {axis = 1} : tile<16xf32> {
  ^(%a: f32, %b: f32):
    %s = add %a, %b : f32
    yield %s
  }
)",
                                           x, kRows, "f32");
  const auto maxes = run_rows<float, float>(R"(
  %out_v = reduce %x {axis = 0} : tile<64xf32> {
  ^(%a: f32, %b: f32):
    %m = maximum %b, %a : f32
    yield %m
  }
)",
                                            x, kCols, "f32");
  for (int p = 0; p < kPrograms; ++p) {
    const float* tile = x.data() + p * kRows * kCols;
    for (int r = 0; r < kRows; ++r) {
      float s = tile[r * kCols];
      for (int c = 1; c < kCols; ++c) s += tile[r * kCols + c];
      ASSERT_EQ(sums[p * kRows + r], s);
    }
    for (int c = 0; c < kCols; ++c) {
      float m = tile[c];
      for (int r = 1; r < kRows; ++r) m = std::max(m, tile[r * kCols + c]);
      ASSERT_EQ(maxes[p * kCols + c], m);
    }
  }
}

TEST(Interpreter, MaxReductionPropagatesNaNAndPrefersPositiveZero) {
  auto x = random_values<float>(kRows * kCols * kPrograms, 155);
  std::fill(x.begin(), x.begin() + kCols, -0.0f);
  x[37] = 0.0f;                                             // row 0: +0 among -0s
  x[kCols + 50] = std::numeric_limits<float>::quiet_NaN();  // row 1: one NaN
  const auto maxes = run_rows<float, float>(R"(
  %out_v = reduce %x {axis = 1} : tile<16xf32> {
  ^(%a: f32, %b: f32):
    %m = maximum %a, %b : f32
    yield %m
  }
)",
                                            x, kRows, "f32");
  EXPECT_EQ(maxes[0], 0.0f);
  EXPECT_FALSE(std::signbit(maxes[0]));
  EXPECT_TRUE(std::isnan(maxes[1]));
  for (int row = 2; row < kRows * kPrograms; ++row)
    ASSERT_EQ(maxes[row], *std::max_element(x.begin() + row * kCols, x.begin() + (row + 1) * kCols)) << row;
}

TEST(Interpreter, GenericCombineRegionMatchesReference) {
  // Not a bare add: runs the region per pair (with a constant inside it).
  const auto x = random_values<std::int32_t>(kRows * kCols * kPrograms, 160);
  const auto out = run_rows<std::int32_t, std::int32_t>(R"(
  %out_v = reduce %x {axis = 1} : tile<16xi32> {
  ^(%a: i32, %b: i32):
    %three = constant {value = 3} : i32
    %a3 = mul %a, %three : i32
    %s = xor %a3, %b : i32
    yield %s
  }
)",
                                                        x, kRows, "i32");
  for (int p = 0; p < kPrograms; ++p)
    for (int r = 0; r < kRows; ++r) {
      const std::int32_t* row = x.data() + (p * kRows + r) * kCols;
      std::uint32_t acc = static_cast<std::uint32_t>(row[0]);
      for (int c = 1; c < kCols; ++c) acc = (acc * 3u) ^ static_cast<std::uint32_t>(row[c]);
      ASSERT_EQ(out[p * kRows + r], static_cast<std::int32_t>(acc));
    }
}

TEST(Interpreter, HalfSumRoundsAtEveryStep) {
  const auto x = random_values<kiln::half>(kRows * kCols * kPrograms, 170);
  const auto sums = run_rows<kiln::half, kiln::half>(R"(
  %out_v = reduce %x {axis = 1} : tile<16xf16> {
  ^(%a: f16, %b: f16):
    %s = add %a, %b : f16
    yield %s
  }
)",
                                                     x, kRows, "f16");
  for (int p = 0; p < kPrograms; ++p)
    for (int r = 0; r < kRows; ++r) {
      const kiln::half* row = x.data() + (p * kRows + r) * kCols;
      kiln::half s = row[0];
      for (int c = 1; c < kCols; ++c) s = kiln::half(static_cast<float>(s) + static_cast<float>(row[c]));
      ASSERT_TRUE(same_bits(sums[p * kRows + r], s));
    }
}

TEST(Interpreter, ArgmaxThroughTwoOperandReduce) {
  auto x = random_values<float>(kRows * kCols * kPrograms, 180);
  x[5] = x[9] = 100.0f;  // a tie: the first index wins
  const auto idx = run_rows<float, std::int32_t>(R"(
  %ci = arange {start = 0} : tile<64xi32>
  %ci2 = expand_dims %ci {axis = 0} : tile<1x64xi32>
  %cols = broadcast %ci2 : tile<16x64xi32>
  %best, %out_v = reduce %x, %cols {axis = 1} : tile<16xf32>, tile<16xi32> {
  ^(%av: f32, %ai: i32, %bv: f32, %bi: i32):
    %gt = cmp %bv, %av {pred = gt} : i1
    %v = select %gt, %bv, %av : f32
    %i = select %gt, %bi, %ai : i32
    yield %v, %i
  }
)",
                                                 x, kRows, "i32");
  for (int p = 0; p < kPrograms; ++p)
    for (int r = 0; r < kRows; ++r) {
      const float* row = x.data() + (p * kRows + r) * kCols;
      ASSERT_EQ(idx[p * kRows + r], std::max_element(row, row + kCols) - row);
    }
  EXPECT_EQ(idx[0], 5);
}

TEST(Interpreter, ScansForwardAndReverse) {
  const auto x = random_values<float>(kRows * kCols * kPrograms, 190);
  const std::string scan = R"(
  %cs = scan %x {axis = 1, reverse = {REV}} : tile<16x64xf32> {
  ^(%a: f32, %b: f32):
    %s = add %a, %b : f32
    yield %s
  }
  %out_v = reshape %cs : tile<1024xf32>
)";
  const auto forward = run_rows<float, float>(fill(scan, {{"REV", "0"}}), x, kRows * kCols, "f32");
  const auto backward = run_rows<float, float>(fill(scan, {{"REV", "1"}}), x, kRows * kCols, "f32");
  for (int row = 0; row < kRows * kPrograms; ++row) {
    const float* in = x.data() + row * kCols;
    float acc = 0;
    for (int c = 0; c < kCols; ++c) {
      acc = c ? acc + in[c] : in[c];
      ASSERT_EQ(forward[row * kCols + c], acc);
    }
    for (int c = kCols - 1; c >= 0; --c) {
      acc = c < kCols - 1 ? acc + in[c] : in[c];
      ASSERT_EQ(backward[row * kCols + c], acc);
    }
  }
  // Along axis 0 with a generic region (max of a and 2b).
  const auto xi = random_values<std::int32_t>(kRows * kCols * kPrograms, 191);
  const auto generic = run_rows<std::int32_t, std::int32_t>(R"(
  %cs = scan %x {axis = 0, reverse = 0} : tile<16x64xi32> {
  ^(%a: i32, %b: i32):
    %b2 = add %b, %b : i32
    %m = maximum %a, %b2 : i32
    yield %m
  }
  %out_v = reshape %cs : tile<1024xi32>
)",
                                                            xi, kRows * kCols, "i32");
  for (int p = 0; p < kPrograms; ++p)
    for (int c = 0; c < kCols; ++c) {
      const std::int32_t* in = xi.data() + p * kRows * kCols;
      std::int32_t acc = in[c];
      for (int r = 0; r < kRows; ++r) {
        if (r) acc = std::max(acc, static_cast<std::int32_t>(2u * static_cast<std::uint32_t>(in[r * kCols + c])));
        ASSERT_EQ(generic[p * kRows * kCols + r * kCols + c], acc);
      }
    }
}

// ---- dot ------------------------------------------------------------------------------

constexpr int kM = 16, kN = 8, kK = 32;

float round_tf32(float x) {
  std::uint32_t b = std::bit_cast<std::uint32_t>(x);
  b += 0xfffu + ((b >> 13) & 1u);
  return std::bit_cast<float>(b & ~0x1fffu);
}

// out = acc + a @ b per program, a: [M,K] of In, b: [K,N] of In, acc/out: [M,N] of Acc.
template <class In, class Acc>
std::vector<Acc> run_dot(std::vector<In> a, std::vector<In> b, std::vector<Acc> acc, const std::string& precision) {
  std::vector<Acc> out(acc.size());
  const std::string in = dtype_of<In>(), ac = dtype_of<Acc>();
  const InterpretedKernel k = compile(
      "kernel @dot(%a_in: ptr<" + in + ">, %b_in: ptr<" + in + ">, %c_in: ptr<" + ac + ">, %out: ptr<" + ac + ">) {\n" +
      load_2d("a", "a_in", in, kM, kK) + load_2d("b", "b_in", in, kK, kN) + load_2d("c", "c_in", ac, kM, kN) +
      fill("  %d = dot %a, %b, %c {precision = {P}} : tile<16x8x{T}>\n", {{"P", precision}, {"T", ac}}) +
      store_2d("o", "out", "d", ac, kM, kN) + "}\n");
  const KernelArgument args[] = {buffer(a, "a"), buffer(b, "b"), buffer(acc, "c"), buffer(out, "out")};
  k.launch({kPrograms, 1, 1}, args, 2);
  return out;
}

template <class In, class Acc, class W, class Round>
void check_dot(const std::vector<In>& a, const std::vector<In>& b, const std::vector<Acc>& acc,
               const std::vector<Acc>& out, Round round) {
  for (int p = 0; p < kPrograms; ++p)
    for (int m = 0; m < kM; ++m)
      for (int n = 0; n < kN; ++n) {
        W sum = static_cast<W>(acc[(p * kM + m) * kN + n]);
        for (int k = 0; k < kK; ++k)
          sum += round(static_cast<W>(static_cast<float>(a[(p * kM + m) * kK + k]))) *
                 round(static_cast<W>(static_cast<float>(b[(p * kK + k) * kN + n])));
        ASSERT_EQ(out[(p * kM + m) * kN + n], static_cast<Acc>(sum)) << p << " " << m << " " << n;
      }
}

TEST(Interpreter, DotAccumulatesInKOrder) {
  const auto a = random_values<float>(kM * kK * kPrograms, 200);
  const auto b = random_values<float>(kK * kN * kPrograms, 201);
  const auto c = random_values<float>(kM * kN * kPrograms, 202);
  const auto identity = [](float v) { return v; };
  check_dot<float, float, float>(a, b, c, run_dot<float, float>(a, b, c, "ieee"), identity);
  check_dot<float, float, float>(a, b, c, run_dot<float, float>(a, b, c, "tf32"), round_tf32);
  const auto ah = random_values<kiln::half>(kM * kK * kPrograms, 203);
  const auto bh = random_values<kiln::half>(kK * kN * kPrograms, 204);
  check_dot<kiln::half, float, float>(ah, bh, c, run_dot<kiln::half, float>(ah, bh, c, "ieee"), identity);
  const auto ab = random_values<kiln::bfloat16>(kM * kK * kPrograms, 205);
  const auto bb = random_values<kiln::bfloat16>(kK * kN * kPrograms, 206);
  check_dot<kiln::bfloat16, float, float>(ab, bb, c, run_dot<kiln::bfloat16, float>(ab, bb, c, "ieee"), identity);
  const auto a4 = random_values<kiln::float8_e4m3>(kM * kK * kPrograms, 207);
  const auto b4 = random_values<kiln::float8_e4m3>(kK * kN * kPrograms, 208);
  check_dot<kiln::float8_e4m3, float, float>(a4, b4, c, run_dot<kiln::float8_e4m3, float>(a4, b4, c, "ieee"), identity);
  const auto a5 = random_values<kiln::float8_e5m2>(kM * kK * kPrograms, 209);
  const auto b5 = random_values<kiln::float8_e5m2>(kK * kN * kPrograms, 210);
  check_dot<kiln::float8_e5m2, float, float>(a5, b5, c, run_dot<kiln::float8_e5m2, float>(a5, b5, c, "ieee"), identity);
}

TEST(Interpreter, DotTf32x3IsCloseToIeee) {
  const auto a = random_values<float>(kM * kK * kPrograms, 210);
  const auto b = random_values<float>(kK * kN * kPrograms, 211);
  const auto c = random_values<float>(kM * kN * kPrograms, 212);
  const auto ieee = run_dot<float, float>(a, b, c, "ieee");
  const auto split = run_dot<float, float>(a, b, c, "tf32x3");
  const auto tf32 = run_dot<float, float>(a, b, c, "tf32");
  double split_error = 0, tf32_error = 0;
  for (std::size_t i = 0; i < ieee.size(); ++i) {
    split_error = std::max(split_error, static_cast<double>(std::fabs(split[i] - ieee[i])));
    tf32_error = std::max(tf32_error, static_cast<double>(std::fabs(tf32[i] - ieee[i])));
  }
  // K = 32 products of magnitude <= 64 summing to <= 2048: f32 rounding is at
  // most K ulps of 2048 (~8e-3), tf32 input rounding ~2^-11 per product.
  EXPECT_LT(split_error, 8e-3);
  EXPECT_GT(tf32_error, 5 * split_error);
}

TEST(Interpreter, IntegerDotAccumulatesInI32) {
  const auto a = random_values<std::int8_t>(kM * kK * kPrograms, 220);
  const auto b = random_values<std::int8_t>(kK * kN * kPrograms, 221);
  const auto c = random_values<std::int32_t>(kM * kN * kPrograms, 222);
  const auto out = run_dot<std::int8_t, std::int32_t>(a, b, c, "ieee");
  for (int p = 0; p < kPrograms; ++p)
    for (int m = 0; m < kM; ++m)
      for (int n = 0; n < kN; ++n) {
        std::uint32_t sum = static_cast<std::uint32_t>(c[(p * kM + m) * kN + n]);
        for (int k = 0; k < kK; ++k)
          sum += static_cast<std::uint32_t>(a[(p * kM + m) * kK + k] * b[(p * kK + k) * kN + n]);
        ASSERT_EQ(out[(p * kM + m) * kN + n], static_cast<std::int32_t>(sum));
      }
}

// ---- Control flow ----------------------------------------------------------------------

TEST(Interpreter, ForLoopCarriesTileAndScalar) {
  // out[pid * 64 + j] = sum over k < blocks of x[k * 64 + j] + count of iterations.
  const int blocks = 7;
  auto x = random_values<float>(blocks * kBlock, 230);
  std::vector<float> out(kBlock * 3);
  const InterpretedKernel k = compile(R"(
kernel @loop(%x: ptr<f32>, %out: ptr<f32>, %blocks: i32) {
  %zero = constant {value = 0} : i32
  %one = constant {value = 1} : i32
  %init = constant {value = 0.0} : tile<64xf32>
  %r = arange {start = 0} : tile<64xi32>
  %sum, %count = for %zero, %blocks, %one, %init, %zero : tile<64xf32>, i32 {
  ^(%k: i32, %acc: tile<64xf32>, %c: i32):
    %width = constant {value = 64} : i32
    %start = mul %k, %width : i32
    %start_t = splat %start : tile<64xi32>
    %offs = add %start_t, %r : tile<64xi32>
    %px_s = splat %x : tile<64xptr<f32>>
    %px = addptr %px_s, %offs : tile<64xptr<f32>>
    %v = load %px {cache = none, evict = none} : tile<64xf32>
    %next = add %acc, %v : tile<64xf32>
    %c1 = add %c, %one : i32
    yield %next, %c1
  }
  %countf = cast %count : f32
  %count_t = splat %countf : tile<64xf32>
  %result = add %sum, %count_t : tile<64xf32>
  %pid = program_id {axis = 0} : i32
  %w = constant {value = 64} : i32
  %base = mul %pid, %w : i32
  %base_t = splat %base : tile<64xi32>
  %oo = add %base_t, %r : tile<64xi32>
  %po_s = splat %out : tile<64xptr<f32>>
  %po = addptr %po_s, %oo : tile<64xptr<f32>>
  store %po, %result {cache = none, evict = none}
}
)");
  const KernelArgument args[] = {buffer(x, "x"), buffer(out, "out"), scalar(blocks)};
  k.launch({3, 1, 1}, args, 2);
  for (int j = 0; j < kBlock; ++j) {
    float s = 0;
    for (int b = 0; b < blocks; ++b) s += x[b * kBlock + j];
    for (int p = 0; p < 3; ++p) ASSERT_EQ(out[p * kBlock + j], s + blocks);
  }
  // A loop that runs zero times yields its initial values.
  const KernelArgument none[] = {buffer(x, "x"), buffer(out, "out"), scalar(0)};
  k.launch({1, 1, 1}, none, 1);
  EXPECT_EQ(out[0], 0.0f);
}

TEST(Interpreter, ScalarPointerCarriedThroughLoopWalksRows) {
  // out[p * 16 + c] = sum over r of x[(p * rows + r) * 16 + c], the row pointer advancing by 16 per iteration.
  const int rows = 9, programs = 4;
  auto x = random_values<float>(programs * rows * 16, 235);
  std::vector<float> out(programs * 16);
  const InterpretedKernel k = compile(R"(
kernel @column_sums(%x: ptr<f32>, %out: ptr<f32>, %rows: i32) {
  %pid = program_id {axis = 0} : i32
  %w = constant {value = 16} : i32
  %rw = mul %rows, %w : i32
  %first = mul %pid, %rw : i32
  %base = addptr %x, %first : ptr<f32>
  %c = arange {start = 0} : tile<16xi32>
  %zero = constant {value = 0} : i32
  %one = constant {value = 1} : i32
  %acc0 = constant {value = 0.0} : tile<16xf32>
  %sum, %end = for %zero, %rows, %one, %acc0, %base : tile<16xf32>, ptr<f32> {
  ^(%r: i32, %acc: tile<16xf32>, %p: ptr<f32>):
    %ps = splat %p : tile<16xptr<f32>>
    %pc = addptr %ps, %c : tile<16xptr<f32>>
    %v = load %pc {cache = none, evict = none} : tile<16xf32>
    %next = add %acc, %v : tile<16xf32>
    %pn = addptr %p, %w : ptr<f32>
    yield %next, %pn
  }
  %os = mul %pid, %w : i32
  %ob = addptr %out, %os : ptr<f32>
  %obs = splat %ob : tile<16xptr<f32>>
  %po = addptr %obs, %c : tile<16xptr<f32>>
  store %po, %sum {cache = none, evict = none}
}
)");
  const KernelArgument args[] = {buffer(x, "x"), buffer(out, "out"), scalar(rows)};
  k.launch({programs, 1, 1}, args, 2);
  for (int p = 0; p < programs; ++p)
    for (int c = 0; c < 16; ++c) {
      float s = 0;
      for (int r = 0; r < rows; ++r) s += x[(p * rows + r) * 16 + c];
      ASSERT_EQ(out[p * 16 + c], s) << p << " " << c;
    }
}

TEST(Interpreter, ForLoopWithSwappedYieldsComputesFibonacci) {
  std::vector<std::int64_t> out(20);
  const InterpretedKernel k = compile(R"(
kernel @fib(%out: ptr<i64>) {
  %pid = program_id {axis = 0} : i32
  %lo = constant {value = 0} : i32
  %step = constant {value = 1} : i32
  %a0 = constant {value = 0} : i64
  %b0 = constant {value = 1} : i64
  %fa, %fb = for %lo, %pid, %step, %a0, %b0 : i64, i64 {
  ^(%i: i32, %a: i64, %b: i64):
    %s = add %a, %b : i64
    yield %b, %s
  }
  %p = addptr %out, %pid : ptr<i64>
  store %p, %fa {cache = none, evict = none}
}
)");
  const KernelArgument args[] = {buffer(out, "out")};
  k.launch({20, 1, 1}, args, 4);
  std::int64_t a = 0, b = 1;
  for (int i = 0; i < 20; ++i) {
    ASSERT_EQ(out[i], a) << i;
    b = a + b;
    a = b - a;
  }
}

TEST(Interpreter, IfAndWhile) {
  // Even programs store the Collatz step count of pid + 1, odd ones its negation.
  std::vector<std::int32_t> out(27);
  const InterpretedKernel k = compile(R"(
kernel @collatz(%out: ptr<i32>) {
  %pid = program_id {axis = 0} : i32
  %one = constant {value = 1} : i32
  %two = constant {value = 2} : i32
  %three = constant {value = 3} : i32
  %zero = constant {value = 0} : i32
  %start = add %pid, %one : i32
  %steps, %last = while %zero, %start : i32, i32 {
  ^(%s: i32, %v: i32):
    %go = cmp %v, %one {pred = ne} : i1
    yield %go
  } {
  ^(%s2: i32, %v2: i32):
    %r = rem %v2, %two : i32
    %even = cmp %r, %zero {pred = eq} : i1
    %half = div %v2, %two : i32
    %tv = mul %v2, %three : i32
    %odd = add %tv, %one : i32
    %next = select %even, %half, %odd : i32
    %s3 = add %s2, %one : i32
    yield %s3, %next
  }
  %pr = rem %pid, %two : i32
  %is_even = cmp %pr, %zero {pred = eq} : i1
  %value = if %is_even : i32 {
  ^():
    yield %steps
  } {
  ^():
    %neg = neg %steps : i32
    yield %neg
  }
  %p = addptr %out, %pid : ptr<i32>
  store %p, %value {cache = none, evict = none}
}
)");
  const KernelArgument args[] = {buffer(out, "out")};
  k.launch({27, 1, 1}, args, 3);
  for (int pid = 0; pid < 27; ++pid) {
    int v = pid + 1, steps = 0;
    while (v != 1) {
      v = v % 2 == 0 ? v / 2 : 3 * v + 1;
      ++steps;
    }
    ASSERT_EQ(out[pid], pid % 2 == 0 ? steps : -steps) << pid;
  }
}

// ---- Atomics -------------------------------------------------------------------------

TEST(Interpreter, AtomicsAreAtomicAcrossParallelPrograms) {
  const int programs = 300;
  std::vector<std::int32_t> counter(1, 0);
  std::vector<float> total(1, 0.0f);
  std::vector<std::int32_t> biggest(1, std::numeric_limits<std::int32_t>::min());
  auto values = random_values<std::int32_t>(programs, 240);
  const InterpretedKernel k = compile(R"(
kernel @atomics(%counter: ptr<i32>, %total: ptr<f32>, %biggest: ptr<i32>, %values: ptr<i32>) {
  %pc = splat %counter : tile<64xptr<i32>>
  %ones = constant {value = 1} : tile<64xi32>
  %old = atomic_rmw %pc, %ones {kind = add, order = relaxed, scope = gpu} : tile<64xi32>
  %pid = program_id {axis = 0} : i32
  %pidf = cast %pid : f32
  %told = atomic_rmw %total, %pidf {kind = add, order = acq_rel, scope = gpu} : f32
  %pv = addptr %values, %pid : ptr<i32>
  %v = load %pv {cache = none, evict = none} : i32
  %mold = atomic_rmw %biggest, %v {kind = max, order = relaxed, scope = gpu} : i32
}
)");
  const KernelArgument args[] = {buffer(counter, "counter"), buffer(total, "total"), buffer(biggest, "biggest"),
                                 buffer(values, "values")};
  const LaunchStats stats = k.launch({programs, 1, 1}, args, 4);
  EXPECT_EQ(counter[0], programs * 64);
  EXPECT_EQ(total[0], programs * (programs - 1) / 2.0f);
  EXPECT_EQ(biggest[0], *std::max_element(values.begin(), values.end()));
  EXPECT_EQ(stats.bytes_written, programs * (64 + 1 + 1) * 4u);
}

TEST(Interpreter, AtomicCasLetsExactlyOneProgramWin) {
  const int programs = 200;
  std::vector<std::int32_t> lock(1, 0), seen(programs, -1);
  const InterpretedKernel k = compile(R"(
kernel @cas(%lock: ptr<i32>, %seen: ptr<i32>) {
  %pid = program_id {axis = 0} : i32
  %one = constant {value = 1} : i32
  %zero = constant {value = 0} : i32
  %mine = add %pid, %one : i32
  %old = atomic_cas %lock, %zero, %mine {order = acq_rel, scope = gpu} : i32
  %p = addptr %seen, %pid : ptr<i32>
  store %p, %old {cache = none, evict = none}
}
)");
  const KernelArgument args[] = {buffer(lock, "lock"), buffer(seen, "seen")};
  k.launch({programs, 1, 1}, args, 4);
  EXPECT_EQ(std::count(seen.begin(), seen.end(), 0), 1);
  const int winner = static_cast<int>(std::find(seen.begin(), seen.end(), 0) - seen.begin());
  EXPECT_EQ(lock[0], winner + 1);
  seen[winner] = winner + 1;
  EXPECT_EQ(std::count(seen.begin(), seen.end(), winner + 1), programs);
}

TEST(Interpreter, MaskedAtomicsSkipInactiveLanesAndReturnZero) {
  std::vector<float> slots(64, 1.0f), olds(64, -1.0f);
  const InterpretedKernel k = compile(R"(
kernel @masked_xchg(%slots: ptr<f32>, %olds: ptr<f32>) {
  %r = arange {start = 0} : tile<64xi32>
  %ps_s = splat %slots : tile<64xptr<f32>>
  %ps = addptr %ps_s, %r : tile<64xptr<f32>>
  %half = constant {value = 32} : tile<64xi32>
  %low = cmp %r, %half {pred = lt} : tile<64xi1>
  %v = constant {value = 7.5} : tile<64xf32>
  %old = atomic_rmw %ps, %v, %low {kind = xchg, order = relaxed, scope = gpu} : tile<64xf32>
  %po_s = splat %olds : tile<64xptr<f32>>
  %po = addptr %po_s, %r : tile<64xptr<f32>>
  store %po, %old {cache = none, evict = none}
}
)");
  const KernelArgument args[] = {buffer(slots, "slots"), buffer(olds, "olds")};
  k.launch({1, 1, 1}, args, 1);
  for (int i = 0; i < 64; ++i) {
    ASSERT_EQ(slots[i], i < 32 ? 7.5f : 1.0f);
    ASSERT_EQ(olds[i], i < 32 ? 1.0f : 0.0f);
  }
}

// ---- Debugging ---------------------------------------------------------------------------

TEST(Interpreter, PrintWritesOneLinePerProgram) {
  const InterpretedKernel k = compile(R"(
kernel @show(%scale: f32) {
  %r = arange {start = 0} : tile<4xi32>
  print %r, %scale {prefix = "r:"}
}
)");
  const KernelArgument args[] = {scalar(2.5f)};
  testing::internal::CaptureStdout();
  k.launch({2, 1, 1}, args, 1);
  const std::string printed = testing::internal::GetCapturedStdout();
  EXPECT_EQ(printed, "pid (0, 0, 0) r: [0, 1, 2, 3] 2.5\npid (1, 0, 0) r: [0, 1, 2, 3] 2.5\n");
}

TEST(Interpreter, PassingAssertIsSilent) {
  const InterpretedKernel k = compile(R"(
kernel @check(%n: i32) {
  %zero = constant {value = 0} : i32
  %ok = cmp %n, %zero {pred = gt} : i1
  assert %ok {message = "n must be positive"}
}
)");
  const KernelArgument args[] = {scalar(5)};
  EXPECT_NO_THROW(k.launch({8, 1, 1}, args, 2));
}

}  // namespace
}  // namespace kiln::runtime
