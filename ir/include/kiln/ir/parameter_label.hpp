// How messages name a kernel's parameter, the same on every device.
#pragma once

#include <cstddef>
#include <string>

#include "kiln/ir/ir.hpp"

namespace kiln::ir {

/// Argument `index` of `fn` in the user's words: its C++ parameter name
/// quoted (`'x'`) where the kernel registered one, else
/// `parameter 2 (Ptr<f16>)`, counted from 1 and with its DSL type.
std::string parameter_label(const Function& fn, std::size_t index);

/// The same label for parameter `index` of type `type` named `name` (empty:
/// unnamed), where no traced function is at hand.
std::string parameter_label(const std::string& name, std::size_t index, const Type& type);

}  // namespace kiln::ir
