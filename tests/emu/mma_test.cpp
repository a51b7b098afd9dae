// mma.sync on the emu: one warp multiplies random 16x16 by 16x8 matrices
// handed over in the PTX ISA's fragment layouts (bf16 as packed i32
// registers, f16 as <2 x half> registers), compared with a double-precision
// product rounded once to f32.
#include <bit>
#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "emu_support.hpp"

namespace {

using kiln::Buffer;
using kiln::Device;
using kiln::emu_test::compile_nvvm;
using kiln::emu_test::pointer_to;

/// A kernel whose lanes load A (4 registers of `reg`), B (2) and C (4 f32)
/// at lane * 4, lane * 2 and lane * 4, call `intrinsic` and store D.
std::string mma_kernel(const std::string& intrinsic, const std::string& reg) {
  std::string ir =
      "define ptx_kernel void @mma(ptr addrspace(1) %a, ptr addrspace(1) %b, ptr addrspace(1) %c, "
      "ptr addrspace(1) %d) {\nentry:\n"
      "  %lane = call i32 @llvm.nvvm.read.ptx.sreg.tid.x()\n"
      "  %four = mul i32 %lane, 4\n  %two = mul i32 %lane, 2\n";
  auto load = [&](const std::string& name, const std::string& type, const std::string& base, const std::string& index,
                  int offset) {
    ir += "  %" + name + ".i = add i32 %" + index + ", " + std::to_string(offset) + "\n";
    ir += "  %" + name + ".p = getelementptr i32, ptr addrspace(1) %" + base + ", i32 %" + name + ".i\n";
    ir += "  %" + name + " = load " + type + ", ptr addrspace(1) %" + name + ".p\n";
  };
  for (int r = 0; r < 4; ++r) load("a" + std::to_string(r), reg, "a", "four", r);
  for (int r = 0; r < 2; ++r) load("b" + std::to_string(r), reg, "b", "two", r);
  for (int r = 0; r < 4; ++r) load("c" + std::to_string(r), "float", "c", "four", r);
  const std::string result = "{ float, float, float, float }";
  ir += "  %r = call " + result + " @" + intrinsic + "(" + reg + " %a0, " + reg + " %a1, " + reg + " %a2, " + reg +
        " %a3, " + reg + " %b0, " + reg + " %b1, float %c0, float %c1, float %c2, float %c3)\n";
  for (int i = 0; i < 4; ++i) {
    const std::string n = std::to_string(i);
    ir += "  %d" + n + " = extractvalue " + result + " %r, " + n + "\n";
    ir += "  %d" + n + ".i = add i32 %four, " + n + "\n";
    ir += "  %d" + n + ".p = getelementptr float, ptr addrspace(1) %d, i32 %d" + n + ".i\n";
    ir += "  store float %d" + n + ", ptr addrspace(1) %d" + n + ".p\n";
  }
  ir += "  ret void\n}\n\ndeclare i32 @llvm.nvvm.read.ptx.sreg.tid.x()\n";
  ir += "declare " + result + " @" + intrinsic + "(" + reg + ", " + reg + ", " + reg + ", " + reg + ", " + reg + ", " +
        reg + ", float, float, float, float)\n";
  return ir;
}

/// Packs A (16x16), B (16x8) and C (16x8), each element given as 16 bits for
/// A and B, into the lanes' registers and runs `intrinsic`; returns D (16x8).
template <class Bits16, class Value>
void check_mma(const std::string& intrinsic, const std::string& reg, Bits16 to_bits, Value value_of) {
  std::mt19937 rng(42);
  std::uniform_real_distribution<float> uniform(-2, 2);
  std::vector<std::uint16_t> a(16 * 16), b(16 * 8);
  std::vector<float> c(16 * 8);
  for (auto& x : a) x = to_bits(uniform(rng));
  for (auto& x : b) x = to_bits(uniform(rng));
  for (auto& x : c) x = uniform(rng);
  std::vector<std::uint32_t> a_registers(32 * 4), b_registers(32 * 2);
  std::vector<float> c_registers(32 * 4);
  for (int lane = 0; lane < 32; ++lane) {
    const int g = lane / 4, t = lane % 4;
    for (int r = 0; r < 4; ++r) {
      const int row = g + 8 * (r & 1), column = 2 * t + 8 * (r >> 1);
      a_registers[lane * 4 + r] = a[row * 16 + column] | std::uint32_t{a[row * 16 + column + 1]} << 16;
    }
    for (int r = 0; r < 2; ++r) {
      const int k = 2 * t + 8 * r;
      b_registers[lane * 2 + r] = b[k * 8 + g] | std::uint32_t{b[(k + 1) * 8 + g]} << 16;
    }
    for (int i = 0; i < 4; ++i) c_registers[lane * 4 + i] = c[(g + 8 * (i >> 1)) * 8 + 2 * t + (i & 1)];
  }
  const auto kernel =
      compile_nvvm(mma_kernel(intrinsic, reg), "mma", "%0: ptr<i32>, %1: ptr<i32>, %2: ptr<f32>, %3: ptr<f32>", 1);
  const auto ba = Buffer<std::uint32_t>::from(a_registers, Device::emu());
  const auto bb = Buffer<std::uint32_t>::from(b_registers, Device::emu());
  const auto bc = Buffer<float>::from(c_registers, Device::emu());
  Buffer<float> bd(32 * 4, Device::emu());
  const std::vector<kiln::runtime::KernelArgument> args = {pointer_to(ba, "a"), pointer_to(bb, "b"),
                                                           pointer_to(bc, "c"), pointer_to(bd, "d")};
  kernel->launch(Device::emu(1), {1, 1, 1}, args);
  const std::vector<float> d = bd.to_host();
  for (int lane = 0; lane < 32; ++lane)
    for (int i = 0; i < 4; ++i) {
      const int row = lane / 4 + 8 * (i >> 1), column = 2 * (lane % 4) + (i & 1);
      double want = c[row * 8 + column];
      for (int k = 0; k < 16; ++k) want += value_of(a[row * 16 + k]) * value_of(b[k * 8 + column]);
      ASSERT_EQ(d[lane * 4 + i], static_cast<float>(want)) << intrinsic << " D[" << row << "][" << column << "]";
    }
}

TEST(Mma, M16n8k16Bf16FollowsTheFragmentLayouts) {
  check_mma(
      "llvm.nvvm.mma.m16n8k16.row.col.bf16", "i32",
      [](float x) { return static_cast<std::uint16_t>(std::bit_cast<std::uint32_t>(x) >> 16); },
      [](std::uint16_t bits) { return static_cast<double>(std::bit_cast<float>(std::uint32_t{bits} << 16)); });
}

TEST(Mma, M16n8k16F16TakesHalfPairs) {
  check_mma(
      "llvm.nvvm.mma.m16n8k16.row.col.f32.f32", "<2 x half>",
      [](float x) { return std::bit_cast<std::uint16_t>(static_cast<_Float16>(x)); },
      [](std::uint16_t bits) { return static_cast<double>(std::bit_cast<_Float16>(bits)); });
}

}  // namespace
