// Helpers of the emu tests: compiling hand-written nvptx64 LLVM IR for the
// emu device, and launch arguments pointing at host buffers.
#pragma once

#include <gtest/gtest.h>

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "emu/emulated_kernel.hpp"
#include "kiln/ir/parser.hpp"
#include "kiln/kiln.hpp"

namespace kiln::emu_test {

/// `llvm_ir` (nvptx64 text whose kernel is @kernel_name) compiled for the
/// emu with `num_warps` warps; the IR kernel with `parameters` (tile-IR
/// text, e.g. "%0: ptr<i32>") names the kernel and its arguments in messages.
inline std::unique_ptr<runtime::CompiledKernel> compile_nvvm(const std::string& llvm_ir, const std::string& kernel_name,
                                                             const std::string& parameters, int num_warps = 4) {
  const std::unique_ptr<ir::Function> signature =
      ir::parse_function("kernel @" + kernel_name + "(" + parameters + ") {\n}\n");
  return runtime::emu::compile_llvm_ir_for_emu(llvm_ir, kernel_name, *signature, num_warps);
}

/// The launch argument pointing at `buffer`, bounded by it.
template <class T>
runtime::KernelArgument pointer_to(const Buffer<T>& buffer, const std::string& name) {
  return {reinterpret_cast<std::uintptr_t>(buffer.data()), buffer.range(name)};
}

/// The message of the KernelError `launch` throws; empty when it throws none.
template <class Launch>
std::string kernel_error(Launch launch) {
  try {
    launch();
  } catch (const runtime::KernelError& e) {
    return e.what();
  }
  return "";
}

}  // namespace kiln::emu_test
