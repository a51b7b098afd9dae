// The rules of the inline_asm op (OPS.md): which constraint strings describe
// its operands and result, the key that names its host reference, and whether
// it may be removed, merged or moved (its `pure` attribute).
#pragma once

#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "kiln/ir/ir.hpp"

namespace kiln::ir {

/// Why an inline_asm with this text and constraint string ("=r,r,r": one
/// output, then one input per operand, LLVM's NVPTX register classes h r l
/// f d) cannot compute a `result` from `operands`; empty when it can. The
/// message names the offending constraint or placeholder and the dtypes.
std::string inline_asm_error(std::string_view asm_text, std::string_view constraints, DType result,
                             std::span<const DType> operands);

/// The register class letter of each constraint of a valid constraint
/// string: the output's first, then the inputs' ("=f,f" gives {f, f}).
std::vector<char> inline_asm_register_classes(std::string_view constraints);

/// "asm-" and 16 hex digits: FNV-1a (64 bits) of the asm text, the
/// constraints and the result and operand dtypes. It names the host
/// reference the cpu and emu devices run in place of the asm.
std::string inline_asm_key(std::string_view asm_text, std::string_view constraints, DType result,
                           std::span<const DType> operands);

/// An inline_asm's `pure` attribute: true when the asm computes its result
/// from its operands alone (it may be removed when unused, merged with an
/// equal one and moved out of loops), false when it has effects beyond it.
bool inline_asm_is_pure(const Operation& op);

}  // namespace kiln::ir
