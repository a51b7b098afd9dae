// Parses the IR's text form back into a kernel.
#pragma once

#include <memory>
#include <string_view>

#include "kiln/ir/ir.hpp"

namespace kiln::ir {

/// Parses one kernel. Throws IRError "<source>:<line>:<column>: <what>" on
/// malformed text; the result is not verified (call verify()).
std::unique_ptr<Function> parse_function(std::string_view text, std::string_view source_name = "<input>");

}  // namespace kiln::ir
