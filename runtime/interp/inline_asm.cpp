// inline_asm on the cpu device: the op's host reference (kiln/runtime/
// host_reference.hpp) applied to each element, on storage bits.
#include <cstring>
#include <vector>

#include "program.hpp"

namespace kiln::runtime::interp {

namespace {

KILN_ROUTINE void run_inline_asm(const Instr& ins, Exec& ex) {
  const std::size_t arity = ins.in.size();
  std::vector<std::uint64_t> arguments(arity);
  const int result_bytes = ins.out[0].element_bytes;
  for (std::int64_t i = 0; i < ins.n; ++i) {
    for (std::size_t k = 0; k < arity; ++k) {
      const int bytes = ins.in[k].element_bytes;
      arguments[k] = 0;
      std::memcpy(&arguments[k], ex.frame + ins.in[k].offset + i * bytes, static_cast<std::size_t>(bytes));
    }
    const std::uint64_t result = (*ins.reference)(arguments.data());
    std::memcpy(ex.frame + ins.out[0].offset + i * result_bytes, &result, static_cast<std::size_t>(result_bytes));
  }
}

}  // namespace

// Without a reference the op is bound all the same (every Program prepares
// its interpreter, a kernel for the cuda device only too), and
// InterpretedKernel refuses to launch it.
void bind_inline_asm(const ir::Operation& op, Instr& ins) {
  ins.reference = find_host_reference(op.string_attribute("key"));
  ins.run = &run_inline_asm;
}

}  // namespace kiln::runtime::interp
