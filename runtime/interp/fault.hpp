// Messages for kernel faults (KernelError) and for ops the interpreter cannot
// bind (std::invalid_argument), naming the kernel, the op and its line.
#pragma once

#include <string>

#include "program.hpp"

namespace kiln::runtime::interp {

/// " at softmax.hpp:41", or "" when the op's line is unknown.
std::string at_line(const Instr& ins);

/// "program (x, y, z)".
std::string program_string(const Exec& ex);

/// Throws KernelError "kernel <name>: <what>".
[[noreturn]] void fault(const Exec& ex, const std::string& what);

/// Throws std::invalid_argument "interpreter: <op>: <what> (<line>)".
[[noreturn]] void unsupported(const ir::Operation& op, const std::string& what);

}  // namespace kiln::runtime::interp
