// The message of the TraceError a compile throws, of the KernelError a
// launch throws, or of the std::invalid_argument a launch or library call
// refuses its arguments with, for the tests that compare them verbatim.
#pragma once

#include <stdexcept>
#include <string>

#include "kiln/kiln.hpp"

namespace kiln::test {

/// The TraceError message of compiling kernel Fn, or "<traced without error>".
template <auto Fn>
std::string trace_error(const kiln::CompileOptions& options = {}) {
  try {
    kiln::compile<Fn>(options);
  } catch (const kiln::TraceError& e) {
    return e.what();
  }
  return "<traced without error>";
}

/// The KernelError message of `launch()`, or "<ran without error>".
template <class Launch>
std::string kernel_error(Launch launch) {
  try {
    launch();
  } catch (const kiln::runtime::KernelError& e) {
    return e.what();
  }
  return "<ran without error>";
}

/// The std::invalid_argument message of `call()`, or "<ran without error>".
template <class Call>
std::string invalid_argument_error(Call call) {
  try {
    call();
  } catch (const std::invalid_argument& e) {
    return e.what();
  }
  return "<ran without error>";
}

}  // namespace kiln::test
