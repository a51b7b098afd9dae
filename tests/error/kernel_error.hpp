// The message of the KernelError a launch throws, for the error tests that
// compare run-time faults verbatim.
#pragma once

#include <string>

#include "kiln/kiln.hpp"

namespace kiln::test {

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

}  // namespace kiln::test
