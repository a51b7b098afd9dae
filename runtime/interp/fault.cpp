// Fault and binding-error messages.
#include "fault.hpp"

#include <stdexcept>

namespace kiln::runtime::interp {

std::string at_line(const Instr& ins) { return ins.loc.empty() ? std::string() : " at " + ins.loc; }

std::string program_string(const Exec& ex) {
  return "program (" + std::to_string(ex.pid[0]) + ", " + std::to_string(ex.pid[1]) + ", " + std::to_string(ex.pid[2]) +
         ")";
}

void fault(const Exec& ex, const std::string& what) { throw KernelError("kernel " + ex.program->name + ": " + what); }

void unsupported(const ir::Operation& op, const std::string& what) {
  const std::string line = ir::to_string(op.loc);
  throw std::invalid_argument("interpreter: " + std::string(op.name()) + ": " + what +
                              (line.empty() ? std::string() : " (" + line + ")"));
}

}  // namespace kiln::runtime::interp
