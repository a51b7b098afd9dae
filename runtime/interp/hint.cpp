// multiple_of and max_contiguous: the operand copied to the result, and a
// fault naming the first element that breaks the hint's promise (OPS.md,
// `multiple_of`, `max_contiguous`).
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

// param: [0] the hint's value, [1] whether the operand is a tile, [2] its last
// dimension (1 for a scalar), [3] multiple_of's group (1 without one).

template <class E>
KILN_ROUTINE void run_multiple_of(const Instr& ins, Exec& ex) {
  using S = typename E::S;
  std::memmove(ex.frame + ins.out[0].offset, ex.frame + ins.in[0].offset, ins.in[0].bytes);
  const S* x = ex.at<S>(ins.out[0]);
  const auto low_bits = static_cast<std::make_unsigned_t<S>>(ins.param[0] - 1);
  const std::int64_t n = ins.in[0].numel();
  for (std::int64_t i = 0; i < n; ++i) {
    if (i % ins.param[2] % ins.param[3] != 0) continue;  // inside a group: not promised
    if ((static_cast<std::make_unsigned_t<S>>(x[i]) & low_bits) == 0) continue;
    const std::string which = ins.param[1] ? "element " + std::to_string(i) : std::string("the value");
    fault(ex, "multiple_of(" + std::to_string(ins.param[0]) + ") does not hold" + at_line(ins) + ": " + which + " is " +
                  element_text<E>(x[i]) + " (" + program_string(ex) + ")");
  }
}

template <class E>
KILN_ROUTINE void run_max_contiguous(const Instr& ins, Exec& ex) {
  using S = typename E::S;
  using U = std::make_unsigned_t<S>;
  std::memmove(ex.frame + ins.out[0].offset, ex.frame + ins.in[0].offset, ins.in[0].bytes);
  const S* x = ex.at<S>(ins.out[0]);
  const std::int64_t n = ins.in[0].numel();
  for (std::int64_t i = 0; i < n; ++i) {
    // Each run starts at a multiple of the value along the last dimension.
    if (i % ins.param[2] % ins.param[0] == 0) continue;
    if (static_cast<U>(x[i]) == static_cast<U>(static_cast<U>(x[i - 1]) + 1)) continue;
    fault(ex, "max_contiguous(" + std::to_string(ins.param[0]) + ") does not hold" + at_line(ins) + ": element " +
                  std::to_string(i) + " is " + element_text<E>(x[i]) + " but element " + std::to_string(i - 1) +
                  " is " + element_text<E>(x[i - 1]) + " (" + program_string(ex) + ")");
  }
}

}  // namespace

void bind_hint(const ir::Operation& op, Instr& ins) {
  const ir::Type& type = op.operands[0]->type;
  if (!type.is_pointer && (!ir::is_integer(type.dtype) || type.dtype == ir::DType::i1))
    unsupported(op, "the operand must be integers or pointers");
  const bool contiguous = op.code == ir::OpCode::max_contiguous;
  if (contiguous && (type.is_pointer || !type.is_tile())) unsupported(op, "the operand must be an integer tile");
  ins.param[0] = op.int_attribute("value");
  ins.param[1] = type.is_tile();
  ins.param[2] = type.is_tile() ? type.shape.back() : 1;
  const ir::Attribute* group = op.find_attribute("group");
  ins.param[3] = group ? std::get<std::int64_t>(*group) : 1;
  ins.run = with_element(type, [contiguous](auto e) -> Routine {
    using E = decltype(e);
    if constexpr (E::is_float || E::is_bool) return nullptr;
    else if constexpr (E::is_pointer) return contiguous ? nullptr : &run_multiple_of<E>;
    else return contiguous ? &run_max_contiguous<E> : &run_multiple_of<E>;
  });
}

}  // namespace kiln::runtime::interp
