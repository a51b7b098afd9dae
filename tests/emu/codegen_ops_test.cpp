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

namespace {

using kiln::Buffer;
using kiln::Device;
using kiln::ir_samples::fill;

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
    EXPECT_EQ(differ, 0u) << "argument %" << i << ": first at byte " << first << ": cpu "
                          << int(results[0][i][first]) << ", emu " << int(results[1][i][first]);
  }
}

const char* kScan1d = R"(kernel @scan_1d(%0: ptr<{T}>, %1: ptr<{T}>) {
  %2 = arange {start = 0} : tile<{N}xi32>
  %3 = splat %0 : tile<{N}xptr<{T}>>
  %4 = addptr %3, %2 : tile<{N}xptr<{T}>>
  %5 = load %4 {cache = none, evict = none} : tile<{N}x{T}>
  %6 = scan %5 {axis = 0, reverse = {REV}} : tile<{N}x{T}> {
  ^(%7: {T}, %8: {T}):
    %9 = {OP} %7, %8 : {T}
    yield %9
  }
  %10 = splat %1 : tile<{N}xptr<{T}>>
  %11 = addptr %10, %2 : tile<{N}xptr<{T}>>
  store %11, %6 {cache = none, evict = none}
}
)";

/// A rows x cols i32 tile (16-byte aligned pointers when `aligned`, which
/// changes the layout) scanned along `axis` into %1.
const char* kScan2d = R"(kernel @scan_2d(%0: ptr<i32>{ALIGN}, %1: ptr<i32>{ALIGN}) {
  %2 = arange {start = 0} : tile<{R}xi32>
  %3 = arange {start = 0} : tile<{C}xi32>
  %4 = expand_dims %2 {axis = 1} : tile<{R}x1xi32>
  %5 = constant {value = {C}} : tile<{R}x1xi32>
  %6 = mul %4, %5 : tile<{R}x1xi32>
  %7 = broadcast %6 : tile<{R}x{C}xi32>
  %8 = expand_dims %3 {axis = 0} : tile<1x{C}xi32>
  %9 = broadcast %8 : tile<{R}x{C}xi32>
  %10 = add %7, %9 : tile<{R}x{C}xi32>
  %11 = splat %0 : tile<{R}x{C}xptr<i32>>
  %12 = addptr %11, %10 : tile<{R}x{C}xptr<i32>>
  %13 = load %12 {cache = none, evict = none} : tile<{R}x{C}xi32>
  %14 = scan %13 {axis = {A}, reverse = {REV}} : tile<{R}x{C}xi32> {
  ^(%15: i32, %16: i32):
    %17 = add %15, %16 : i32
    yield %17
  }
  %18 = splat %1 : tile<{R}x{C}xptr<i32>>
  %19 = addptr %18, %10 : tile<{R}x{C}xptr<i32>>
  store %19, %14 {cache = none, evict = none}
}
)";

TEST(EmuCodegenOps, OneDimensionalScansMatchTheCpu) {
  for (const auto& [size, dtype, combine] :
       std::vector<std::tuple<int, std::string, std::string>>{{1024, "i32", "add"},
                                                              {512, "i32", "maximum"},
                                                              {256, "i8", "add"},
                                                              {128, "i64", "add"},
                                                              {64, "u16", "xor"},
                                                              {16, "i32", "add"}})
    for (const char* reverse : {"0", "1"})
      for (int warps : {1, 4}) {
        SCOPED_TRACE(dtype + " " + combine + " of " + std::to_string(size) + ", reverse " + reverse + ", " +
                     std::to_string(warps) + " warps");
        expect_emu_matches_cpu(
            fill(kScan1d, {{"N", std::to_string(size)}, {"T", dtype}, {"OP", combine}, {"REV", reverse}}), 8192,
            warps);
      }
}

TEST(EmuCodegenOps, TwoDimensionalScansAlongEitherAxisMatchTheCpu) {
  for (const auto& [rows, cols] : std::vector<std::pair<int, int>>{{16, 32}, {64, 64}, {32, 128}, {4, 1024}})
    for (const char* axis : {"0", "1"})
      for (const char* reverse : {"0", "1"})
        for (const char* align : {"", " {divisibility = 16}"}) {
          SCOPED_TRACE(std::to_string(rows) + "x" + std::to_string(cols) + " axis " + axis + " reverse " + reverse +
                       align);
          expect_emu_matches_cpu(fill(kScan2d, {{"R", std::to_string(rows)},
                                                {"C", std::to_string(cols)},
                                                {"A", axis},
                                                {"REV", reverse},
                                                {"ALIGN", align}}),
                                 4 * 4096 + 64);
        }
}

TEST(EmuCodegenOps, ScanOfTwoOperandsKeepsTheCombineOrder) {
  // A running argmax with ties to the earlier index: associative, not commutative.
  expect_emu_matches_cpu(R"(kernel @running_argmax(%0: ptr<u8>, %1: ptr<i32>) {
  %2 = arange {start = 0} : tile<512xi32>
  %3 = splat %0 : tile<512xptr<u8>>
  %4 = addptr %3, %2 : tile<512xptr<u8>>
  %5 = load %4 {cache = none, evict = none} : tile<512xu8>
  %6, %7 = scan %5, %2 {axis = 0, reverse = 0} : tile<512xu8>, tile<512xi32> {
  ^(%8: u8, %9: i32, %10: u8, %11: i32):
    %12 = cmp %8, %10 {pred = ge} : i1
    %13 = select %12, %8, %10 : u8
    %14 = select %12, %9, %11 : i32
    yield %13, %14
  }
  %15 = splat %1 : tile<512xptr<i32>>
  %16 = addptr %15, %2 : tile<512xptr<i32>>
  store %16, %7 {cache = none, evict = none}
}
)",
                         4096);
}

TEST(EmuCodegenOps, ShapeOpsMoveEveryElementWhereTheCpuDoes) {
  const char* kernels[] = {
      // trans into the kernel's layout and through transposed offsets.
      R"(kernel @transpose(%0: ptr<i32>, %1: ptr<i32>, %2: ptr<i32>) {
  %3 = arange {start = 0} : tile<32xi32>
  %4 = arange {start = 0} : tile<64xi32>
  %5 = expand_dims %3 {axis = 1} : tile<32x1xi32>
  %6 = constant {value = 64} : tile<32x1xi32>
  %7 = mul %5, %6 : tile<32x1xi32>
  %8 = broadcast %7 : tile<32x64xi32>
  %9 = expand_dims %4 {axis = 0} : tile<1x64xi32>
  %10 = broadcast %9 : tile<32x64xi32>
  %11 = add %8, %10 : tile<32x64xi32>
  %12 = splat %0 : tile<32x64xptr<i32>>
  %13 = addptr %12, %11 : tile<32x64xptr<i32>>
  %14 = load %13 {cache = none, evict = none} : tile<32x64xi32>
  %15 = trans %14 {order = [1, 0]} : tile<64x32xi32>
  %16 = trans %11 {order = [1, 0]} : tile<64x32xi32>
  %17 = splat %1 : tile<64x32xptr<i32>>
  %18 = addptr %17, %16 : tile<64x32xptr<i32>>
  store %18, %15 {cache = none, evict = none}
  %19 = broadcast %5 : tile<32x64xi32>
  %20 = constant {value = 32} : tile<1x64xi32>
  %21 = mul %9, %20 : tile<1x64xi32>
  %22 = broadcast %21 : tile<32x64xi32>
  %23 = add %19, %22 : tile<32x64xi32>
  %24 = trans %23 {order = [1, 0]} : tile<64x32xi32>
  %25 = splat %2 : tile<64x32xptr<i32>>
  %26 = addptr %25, %24 : tile<64x32xptr<i32>>
  store %26, %15 {cache = none, evict = none}
}
)",
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
  for (const char* text : kernels) {
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
    for (const char* op : {"add %5, %5", "mul %5, %5", "div %5, %5", "neg %5", "abs %5", "sqrt %5", "minimum %5, %5",
                           "floor %5"}) {
      SCOPED_TRACE(std::string(op) + " on " + fp8);
      std::string text = fill(kCast, {{"F", fp8}, {"T", fp8}});
      text.replace(text.find("cast %5"), 7, op);
      expect_emu_matches_cpu(text, 8192);
    }
}

}  // namespace
