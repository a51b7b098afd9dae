// What the interpreter tests share: dtype names, random inputs, bit
// comparison and the IR text of element-wise kernels over kCount elements
// (offsets, pointers and 2-D tiles), with their launches.
#pragma once

#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <random>
#include <string>
#include <type_traits>
#include <vector>

#include "interpreter_samples.hpp"
#include "ir_samples.hpp"
#include "kiln/ir/numeric.hpp"
#include "kiln/runtime/interpreter.hpp"

namespace kiln::runtime::interpreter_test {

using interpreter_samples::buffer;
using interpreter_samples::compile;
using interpreter_samples::scalar;
using ir_samples::fill;

template <class T> constexpr const char* dtype_of();
template <> constexpr const char* dtype_of<std::uint8_t>() { return "u8"; }
template <> constexpr const char* dtype_of<std::int8_t>() { return "i8"; }
template <> constexpr const char* dtype_of<std::int16_t>() { return "i16"; }
template <> constexpr const char* dtype_of<std::int32_t>() { return "i32"; }
template <> constexpr const char* dtype_of<std::int64_t>() { return "i64"; }
template <> constexpr const char* dtype_of<std::uint16_t>() { return "u16"; }
template <> constexpr const char* dtype_of<std::uint32_t>() { return "u32"; }
template <> constexpr const char* dtype_of<std::uint64_t>() { return "u64"; }
template <> constexpr const char* dtype_of<kiln::half>() { return "f16"; }
template <> constexpr const char* dtype_of<kiln::bfloat16>() { return "bf16"; }
template <> constexpr const char* dtype_of<kiln::float8_e4m3>() { return "f8e4m3"; }
template <> constexpr const char* dtype_of<kiln::float8_e5m2>() { return "f8e5m2"; }
template <> constexpr const char* dtype_of<float>() { return "f32"; }
template <> constexpr const char* dtype_of<double>() { return "f64"; }

template <class T>
constexpr bool is_narrow_float = std::is_same_v<T, kiln::half> || std::is_same_v<T, kiln::bfloat16> ||
                                 std::is_same_v<T, kiln::float8_e4m3> || std::is_same_v<T, kiln::float8_e5m2>;
template <class T>
constexpr bool is_host_float = is_narrow_float<T> || std::is_floating_point_v<T>;

template <class T>
std::vector<T> random_values(std::size_t n, std::uint32_t seed, double lo = -8.0, double hi = 8.0) {
  std::mt19937_64 rng(seed);
  std::vector<T> out(n);
  for (auto& v : out) {
    if constexpr (is_host_float<T>) {
      v = T(static_cast<float>(std::uniform_real_distribution<double>(lo, hi)(rng)));
    } else {
      v = static_cast<T>(rng());
    }
  }
  return out;
}

template <class T>
bool same_bits(T a, T b) {
  return std::memcmp(&a, &b, sizeof(T)) == 0;
}

// Lines that compute `%offs = pid * B + arange(B)` and `%mask = %offs < %n`.
inline std::string offsets(int block) {
  return fill(R"(
  %pid = program_id {axis = 0} : i32
  %block = constant {value = {B}} : i32
  %base = mul %pid, %block : i32
  %range = arange {start = 0} : tile<{B}xi32>
  %base_t = splat %base : tile<{B}xi32>
  %offs = add %base_t, %range : tile<{B}xi32>
  %n_t = splat %n : tile<{B}xi32>
  %mask = cmp %offs, %n_t {pred = lt} : tile<{B}xi1>
)",
              {{"B", std::to_string(block)}});
}

// `%name = %arg + %offs` as a tile of pointers to `type`.
inline std::string pointers(const std::string& name, const std::string& arg, const std::string& type, int block) {
  return fill("  %{N}_s = splat %{A} : tile<{B}xptr<{T}>>\n  %{N} = addptr %{N}_s, %offs : tile<{B}xptr<{T}>>\n",
              {{"N", name}, {"A", arg}, {"T", type}, {"B", std::to_string(block)}});
}

// Lines that compute `%<p>offs`, the row-major offsets of a [R x C] tile
// starting at pid * R * C.
inline std::string offsets_2d(const std::string& p, int rows, int cols) {
  return fill(R"(
  %{P}pid = program_id {axis = 0} : i32
  %{P}size = constant {value = {S}} : i32
  %{P}start = mul %{P}pid, %{P}size : i32
  %{P}start_t = splat %{P}start : tile<{R}x{C}xi32>
  %{P}r = arange {start = 0} : tile<{R}xi32>
  %{P}c = arange {start = 0} : tile<{C}xi32>
  %{P}r2 = expand_dims %{P}r {axis = 1} : tile<{R}x1xi32>
  %{P}c2 = expand_dims %{P}c {axis = 0} : tile<1x{C}xi32>
  %{P}cols = constant {value = {C}} : tile<{R}x1xi32>
  %{P}rs = mul %{P}r2, %{P}cols : tile<{R}x1xi32>
  %{P}rb = broadcast %{P}rs : tile<{R}x{C}xi32>
  %{P}cb = broadcast %{P}c2 : tile<{R}x{C}xi32>
  %{P}local = add %{P}rb, %{P}cb : tile<{R}x{C}xi32>
  %{P}offs = add %{P}local, %{P}start_t : tile<{R}x{C}xi32>
)",
              {{"P", p}, {"R", std::to_string(rows)}, {"C", std::to_string(cols)}, {"S", std::to_string(rows * cols)}});
}

// Loads `%<p>` : tile<R x C x T> from %arg at `%<p>offs` (see offsets_2d).
inline std::string load_2d(const std::string& p, const std::string& arg, const std::string& type, int rows, int cols) {
  return offsets_2d(p, rows, cols) +
         fill(R"(  %{P}ptr_s = splat %{A} : tile<{R}x{C}xptr<{T}>>
  %{P}ptr = addptr %{P}ptr_s, %{P}offs : tile<{R}x{C}xptr<{T}>>
  %{P} = load %{P}ptr {cache = none, evict = none} : tile<{R}x{C}x{T}>
)",
              {{"P", p}, {"A", arg}, {"T", type}, {"R", std::to_string(rows)}, {"C", std::to_string(cols)}});
}

// Stores `%value` : tile<R x C x T> to %arg at `%<p>offs`.
inline std::string store_2d(const std::string& p, const std::string& arg, const std::string& value,
                            const std::string& type, int rows, int cols) {
  return offsets_2d(p, rows, cols) + fill(R"(  %{P}ptr_s = splat %{A} : tile<{R}x{C}xptr<{T}>>
  %{P}ptr = addptr %{P}ptr_s, %{P}offs : tile<{R}x{C}xptr<{T}>>
  store %{P}ptr, %{V} {cache = none, evict = none}
)",
                                          {{"P", p},
                                           {"A", arg},
                                           {"V", value},
                                           {"T", type},
                                           {"R", std::to_string(rows)},
                                           {"C", std::to_string(cols)}});
}

inline constexpr int kBlock = 64;
inline constexpr int kCount = 1000;  // not a multiple of the block: the last program is masked
inline constexpr Grid kGrid = {(kCount + kBlock - 1) / kBlock, 1, 1};

// out[i] = op(a[i], b[i]) over kCount elements.
inline std::string binary_kernel(const std::string& op, const std::string& type) {
  return fill("kernel @binary(%a: ptr<{T}>, %b: ptr<{T}>, %out: ptr<{T}>, %n: i32) {" + offsets(kBlock) +
                  pointers("pa", "a", type, kBlock) + pointers("pb", "b", type, kBlock) +
                  pointers("po", "out", type, kBlock) + R"(
  %x = load %pa, %mask {cache = none, evict = none} : tile<64x{T}>
  %y = load %pb, %mask {cache = none, evict = none} : tile<64x{T}>
  %z = {OP} %x, %y : tile<64x{T}>
  store %po, %z, %mask {cache = none, evict = none}
}
)",
              {{"T", type}, {"OP", op}});
}

// out[i] = op(a[i]), reading From and writing To.
inline std::string unary_kernel(const std::string& op, const std::string& from, const std::string& to) {
  return fill("kernel @unary(%a: ptr<{F}>, %out: ptr<{T}>, %n: i32) {" + offsets(kBlock) +
                  pointers("pa", "a", from, kBlock) + pointers("po", "out", to, kBlock) + R"(
  %x = load %pa, %mask {cache = none, evict = none} : tile<64x{F}>
  %z = {OP} %x : tile<64x{T}>
  store %po, %z, %mask {cache = none, evict = none}
}
)",
              {{"F", from}, {"T", to}, {"OP", op}});
}

template <class T>
std::vector<T> run_binary(const std::string& op, std::vector<T> a, std::vector<T> b, int threads = 3) {
  std::vector<T> out(a.size());
  const InterpretedKernel k = compile(binary_kernel(op, dtype_of<T>()));
  const KernelArgument args[] = {buffer(a, "a"), buffer(b, "b"), buffer(out, "out"),
                                 scalar(static_cast<std::int32_t>(a.size()))};
  k.launch({static_cast<int>((a.size() + kBlock - 1) / kBlock), 1, 1}, args, threads);
  return out;
}

template <class From, class To>
std::vector<To> run_unary(const std::string& op, std::vector<From> a) {
  std::vector<To> out(a.size());
  const InterpretedKernel k = compile(unary_kernel(op, dtype_of<From>(), dtype_of<To>()));
  const KernelArgument args[] = {buffer(a, "a"), buffer(out, "out"), scalar(static_cast<std::int32_t>(a.size()))};
  k.launch({static_cast<int>((a.size() + kBlock - 1) / kBlock), 1, 1}, args, 2);
  return out;
}

}  // namespace kiln::runtime::interpreter_test
