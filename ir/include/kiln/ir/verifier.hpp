// Checks a kernel's structure and types against the op table.
#pragma once

#include "kiln/ir/ir.hpp"

namespace kiln::ir {

/// Throws IRError on the first problem: "verify: <op>: <what>, <values> (<file:line>)".
/// Checks operand/result/region counts, required attributes, each op's type
/// rule, terminators, and that every operand is defined before its use in an
/// enclosing scope (SSA dominance for structured regions).
void verify(const Function& fn);

}  // namespace kiln::ir
