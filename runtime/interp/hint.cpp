// multiple_of: the operand copied to the result, and a fault naming the first
// element that is not a multiple of the hint's value (OPS.md, `multiple_of`).
#include <cstdio>
#include <cstring>

#include "element.hpp"
#include "fault.hpp"
#include "program.hpp"

namespace kiln::runtime::interp {

namespace {

/// An element as the fault message shows it: pointers in hex, integers in decimal.
template <class E>
std::string element_text(typename E::S value) {
  if constexpr (E::is_pointer) {
    char text[24];
    std::snprintf(text, sizeof text, "0x%llx", static_cast<unsigned long long>(value));
    return text;
  } else {
    return std::to_string(+value);
  }
}

template <class E>
KILN_ROUTINE void run_multiple_of(const Instr& ins, Exec& ex) {
  using S = typename E::S;
  std::memmove(ex.frame + ins.out[0].offset, ex.frame + ins.in[0].offset, ins.in[0].bytes);
  const S* x = ex.at<S>(ins.out[0]);
  const auto low_bits = static_cast<std::make_unsigned_t<S>>(ins.param[0] - 1);
  const std::int64_t n = ins.in[0].numel();
  for (std::int64_t i = 0; i < n; ++i) {
    if ((static_cast<std::make_unsigned_t<S>>(x[i]) & low_bits) == 0) continue;
    const std::string which = ins.param[1] ? "element " + std::to_string(i) : std::string("the value");
    fault(ex, "multiple_of(" + std::to_string(ins.param[0]) + ") does not hold" + at_line(ins) + ": " + which + " is " +
                  element_text<E>(x[i]) + " (" + program_string(ex) + ")");
  }
}

}  // namespace

void bind_hint(const ir::Operation& op, Instr& ins) {
  const ir::Type& type = op.operands[0]->type;
  if (!type.is_pointer && (!ir::is_integer(type.dtype) || type.dtype == ir::DType::i1))
    unsupported(op, "the operand must be integers or pointers");
  ins.param[0] = op.int_attribute("value");
  ins.param[1] = type.is_tile();
  ins.run = with_element(type, [](auto e) -> Routine {
    using E = decltype(e);
    if constexpr (E::is_float || E::is_bool) return nullptr;
    else return &run_multiple_of<E>;
  });
}

}  // namespace kiln::runtime::interp
