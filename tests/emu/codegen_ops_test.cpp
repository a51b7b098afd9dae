// scan, the shape ops (reshape, trans, join, split) and fp8 conversions
// through the GPU code generator on the emu device, compared bit for bit
// with the cpu device (the interpreter) on seeded random bytes: every kernel
// here is exact (integer scans, data movement, fp8 rounding), so any
// difference is a code generation bug.
#include <gtest/gtest.h>

#include <cstdint>
#include <memory>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "ir_samples.hpp"
#include "kiln/ir/parser.hpp"
#include "kiln/kiln.hpp"
#include "kiln/runtime/program.hpp"
#include "scan_samples.hpp"

namespace {

using kiln::Buffer;
using kiln::Device;
using kiln::ir_samples::fill;
using kiln::ir_samples::load_text;
using kiln::ir_samples::pointer_kernel_text;
using kiln::ir_samples::row_major_offsets;
using kiln::ir_samples::running_argmax_text;
using kiln::ir_samples::scan_1d_text;
using kiln::ir_samples::scan_2d_text;
using kiln::ir_samples::store_text;
using kiln::ir_samples::transposed_offsets;

/// Runs the kernel `text` (pointer arguments only, one program) on cpu and
/// emu with every buffer `bytes` long and filled with the same seeded random
/// bytes; expects every byte of every buffer afterwards to agree.
void expect_emu_matches_cpu(const std::string& text, std::size_t bytes, int num_warps = 4, unsigned seed = 1) {
  kiln::runtime::ProgramOptions options;
  options.num_warps = num_warps;
  const auto program = std::make_shared<kiln::runtime::Program>(kiln::ir::parse_function(text), "kernel", options);
  const std::size_t arguments = program->traced().body.arguments.size();
  std::vector<std::vector<std::uint8_t>> results[2];
  int run = 0;
  for (const Device& device : {Device::cpu(), Device::emu()}) {
    std::mt19937 random(seed);
    std::vector<Buffer<std::uint8_t>> buffers;
    std::vector<kiln::runtime::KernelArgument> launch_arguments;
    for (std::size_t i = 0; i < arguments; ++i) {
      std::vector<std::uint8_t> host(bytes);
      for (std::uint8_t& byte : host) byte = static_cast<std::uint8_t>(random());
      buffers.push_back(Buffer<std::uint8_t>::from(host, device));
    }
    for (std::size_t i = 0; i < arguments; ++i)
      launch_arguments.push_back(
          {reinterpret_cast<std::uintptr_t>(buffers[i].data()), buffers[i].range("%" + std::to_string(i))});
    program->launch(device, {1, 1, 1}, launch_arguments);
    for (const auto& buffer : buffers) results[run].push_back(buffer.to_host());
    ++run;
  }
  for (std::size_t i = 0; i < arguments; ++i) {
    std::size_t differ = 0, first = 0;
    for (std::size_t j = 0; j < bytes; ++j)
      if (results[0][i][j] != results[1][i][j] && differ++ == 0) first = j;
    EXPECT_EQ(differ, 0u) << "argument %" << i << ": first at byte " << first << ": cpu " << int(results[0][i][first])
                          << ", emu " << int(results[1][i][first]);
  }
}

TEST(EmuCodegenOps, OneDimensionalScansMatchTheCpu) {
  for (const auto& [size, dtype, combine] :
       std::vector<std::tuple<int, std::string, std::string>>{{1024, "i32", "add"},
                                                              {512, "i32", "maximum"},
                                                              {256, "i8", "add"},
                                                              {128, "i64", "add"},
                                                              {64, "u16", "xor"},
                                                              {16, "i32", "add"}})
    for (bool reverse : {false, true})
      for (int warps : {1, 4}) {
        SCOPED_TRACE(dtype + " " + combine + " of " + std::to_string(size) + ", reverse " + std::to_string(reverse) +
                     ", " + std::to_string(warps) + " warps");
        expect_emu_matches_cpu(scan_1d_text(size, dtype, combine, reverse, ""), 8192, warps);
      }
}

TEST(EmuCodegenOps, TwoDimensionalScansAlongEitherAxisMatchTheCpu) {
  for (const auto& [rows, cols] : std::vector<std::pair<int, int>>{{16, 32}, {64, 64}, {32, 128}, {4, 1024}})
    for (int axis : {0, 1})
      for (bool reverse : {false, true})
        for (const char* align : {"", " {divisibility = 16}"}) {
          SCOPED_TRACE(std::to_string(rows) + "x" + std::to_string(cols) + " axis " + std::to_string(axis) +
                       " reverse " + std::to_string(reverse) + align);
          expect_emu_matches_cpu(scan_2d_text(rows, cols, "i32", axis, reverse, align), 4 * 4096 + 64);
        }
}

TEST(EmuCodegenOps, ScanOfTwoOperandsKeepsTheCombineOrder) {
  // A running argmax with ties to the earlier index: associative, not commutative.
  expect_emu_matches_cpu(running_argmax_text("u8", ""), 4096);
}

TEST(EmuCodegenOps, ShapeOpsMoveEveryElementWhereTheCpuDoes) {
  const std::string kernels[] = {
      // trans into the kernel's layout and through transposed offsets.
      pointer_kernel_text("transpose", {"i32", "i32", "i32"}, "",
                          row_major_offsets("in", 32, 64) + load_text("x", "%0", "in", "32x64", "i32") +
                              "  %transposed = trans %x {order = [1, 0]} : tile<64x32xi32>\n"
                              "  %in_transposed = trans %in {order = [1, 0]} : tile<64x32xi32>\n" +
                              store_text("to_input_offsets", "%1", "in_transposed", "transposed", "64x32", "i32") +
                              transposed_offsets("out", "in", 32, 64) +
                              store_text("to_row_major_offsets", "%2", "out", "transposed", "64x32", "i32")),
      // reshape 1-D -> 2-D -> 1-D, each stored.
      R"(kernel @reshape(%0: ptr<i16>, %1: ptr<i16>, %2: ptr<i16>) {
  %3 = arange {start = 0} : tile<2048xi32>
  %4 = splat %0 : tile<2048xptr<i16>>
  %5 = addptr %4, %3 : tile<2048xptr<i16>>
  %6 = load %5 {cache = none, evict = none} : tile<2048xi16>
  %7 = reshape %6 : tile<32x64xi16>
  %8 = trans %7 {order = [1, 0]} : tile<64x32xi16>
  %9 = reshape %8 : tile<2048xi16>
  %10 = splat %1 : tile<2048xptr<i16>>
  %11 = addptr %10, %3 : tile<2048xptr<i16>>
  store %11, %9 {cache = none, evict = none}
  %12 = reshape %6 : tile<128x16xi16>
  %13 = reshape %12 : tile<2048xi16>
  %14 = splat %2 : tile<2048xptr<i16>>
  %15 = addptr %14, %3 : tile<2048xptr<i16>>
  store %15, %13 {cache = none, evict = none}
}
)",
      // join two vectors, store the pairs, split them back swapped.
      R"(kernel @join_split(%0: ptr<f32>, %1: ptr<f32>, %2: ptr<f32>) {
  %3 = arange {start = 0} : tile<256xi32>
  %4 = splat %0 : tile<256xptr<f32>>
  %5 = addptr %4, %3 : tile<256xptr<f32>>
  %6 = load %5 {cache = none, evict = none} : tile<256xf32>
  %7 = splat %1 : tile<256xptr<f32>>
  %8 = addptr %7, %3 : tile<256xptr<f32>>
  %9 = load %8 {cache = none, evict = none} : tile<256xf32>
  %10 = join %6, %9 : tile<256x2xf32>
  %11 = reshape %10 : tile<512xf32>
  %12 = arange {start = 0} : tile<512xi32>
  %13 = splat %2 : tile<512xptr<f32>>
  %14 = addptr %13, %12 : tile<512xptr<f32>>
  store %14, %11 {cache = none, evict = none}
  %15, %16 = split %10 : tile<256xf32>, tile<256xf32>
  store %5, %16 {cache = none, evict = none}
  store %8, %15 {cache = none, evict = none}
}
)",
      R"(kernel @scalar_pair(%0: ptr<i64>, %1: ptr<i64>) {
  %2 = load %0 {cache = none, evict = none} : i64
  %3 = load %1 {cache = none, evict = none} : i64
  %4 = join %2, %3 : tile<2xi64>
  %5, %6 = split %4 : i64, i64
  store %0, %6 {cache = none, evict = none}
  store %1, %5 {cache = none, evict = none}
}
)",
  };
  for (const std::string& text : kernels) {
    SCOPED_TRACE(text);
    for (int warps : {1, 4}) expect_emu_matches_cpu(text, 16384, warps);
  }
}

const char* kCast = R"(kernel @cast(%0: ptr<{F}>, %1: ptr<{T}>) {
  %2 = arange {start = 0} : tile<1024xi32>
  %3 = splat %0 : tile<1024xptr<{F}>>
  %4 = addptr %3, %2 : tile<1024xptr<{F}>>
  %5 = load %4 {cache = none, evict = none} : tile<1024x{F}>
  %6 = cast %5 : tile<1024x{T}>
  %7 = splat %1 : tile<1024xptr<{T}>>
  %8 = addptr %7, %2 : tile<1024xptr<{T}>>
  store %8, %6 {cache = none, evict = none}
}
)";

TEST(EmuCodegenOps, Fp8ConversionsRoundAndSaturateAsTheInterpreter) {
  // Random bit patterns: NaNs, infinities, subnormals and overflow included.
  for (const char* fp8 : {"f8e4m3", "f8e5m2"}) {
    for (const char* other : {"f32", "f64", "f16", "bf16", "i32", "u8", "i64", "f8e4m3", "f8e5m2"}) {
      SCOPED_TRACE(std::string(other) + " <-> " + fp8);
      expect_emu_matches_cpu(fill(kCast, {{"F", other}, {"T", fp8}}), 8192);
      expect_emu_matches_cpu(fill(kCast, {{"F", fp8}, {"T", other}}), 8192);
    }
  }
}

TEST(EmuCodegenOps, Fp8RoundingOfValuesInItsRange) {
  // x * 2^-31 + 3e-20 for random i32 x: values within the fp8 range whose
  // low bits decide the rounding; the f64 path needs rounding to odd.
  for (const char* fp8 : {"f8e4m3", "f8e5m2"})
    for (const char* wide : {"f32", "f64"}) {
      SCOPED_TRACE(std::string(wide) + " -> " + fp8);
      expect_emu_matches_cpu(fill(R"(kernel @rounding(%0: ptr<i32>, %1: ptr<{T}>) {
  %2 = arange {start = 0} : tile<1024xi32>
  %3 = splat %0 : tile<1024xptr<i32>>
  %4 = addptr %3, %2 : tile<1024xptr<i32>>
  %5 = load %4 {cache = none, evict = none} : tile<1024xi32>
  %6 = cast %5 : tile<1024x{W}>
  %7 = constant {value = 0.0000000004656612873077392578125} : tile<1024x{W}>
  %8 = mul %6, %7 : tile<1024x{W}>
  %9 = constant {value = 3.0e-20} : tile<1024x{W}>
  %10 = add %8, %9 : tile<1024x{W}>
  %11 = cast %10 : tile<1024x{T}>
  %12 = splat %1 : tile<1024xptr<{T}>>
  %13 = addptr %12, %2 : tile<1024xptr<{T}>>
  store %13, %11 {cache = none, evict = none}
}
)",
                                  {{"T", fp8}, {"W", wide}}),
                             8192);
    }
}

TEST(EmuCodegenOps, Fp8ArithmeticComputesInF32AndRoundsBack) {
  for (const char* fp8 : {"f8e4m3", "f8e5m2"})
    for (const char* op :
         {"add %5, %5", "mul %5, %5", "div %5, %5", "neg %5", "abs %5", "sqrt %5", "minimum %5, %5", "floor %5"}) {
      SCOPED_TRACE(std::string(op) + " on " + fp8);
      std::string text = fill(kCast, {{"F", fp8}, {"T", fp8}});
      text.replace(text.find("cast %5"), 7, op);
      expect_emu_matches_cpu(text, 8192);
    }
}

}  // namespace
