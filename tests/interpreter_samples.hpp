// Helpers of the test suites that run IR text on the CPU interpreter:
// compiling a kernel and passing it buffers and scalars.
#pragma once

#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "kiln/ir/parser.hpp"
#include "kiln/ir/verifier.hpp"
#include "kiln/runtime/interpreter.hpp"

namespace kiln::interpreter_samples {

/// Parses `text` (source file "test.kiln"), verifies it and compiles it for the interpreter.
inline runtime::InterpretedKernel compile(const std::string& text) {
  auto fn = ir::parse_function(text, "test.kiln");
  ir::verify(*fn);
  return runtime::InterpretedKernel(*fn);
}

/// A pointer argument to `data`, whose memory range carries `name`.
template <class T>
runtime::KernelArgument buffer(std::vector<T>& data, const std::string& name) {
  const auto begin = reinterpret_cast<std::uintptr_t>(data.data());
  return {begin, {begin, begin + data.size() * sizeof(T), name}};
}

/// A scalar argument holding the bits of `value` (zero-extended to 64 bits).
template <class T>
runtime::KernelArgument scalar(T value) {
  std::uint64_t bits = 0;
  std::memcpy(&bits, &value, sizeof(T));
  return {bits, {}};
}

}  // namespace kiln::interpreter_samples
