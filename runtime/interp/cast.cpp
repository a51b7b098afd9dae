// cast (value conversion between any two element types) and bitcast
// (reinterpreting bits of equal width).

#include <cstring>

#include "convert.hpp"
#include "fault.hpp"
#include "program.hpp"

namespace kiln::runtime::interp {

namespace {

template <class From, class To>
KILN_ROUTINE void run_cast(const Instr& ins, Exec& ex) {
  const std::int64_t n = ins.n;
  const typename From::S* in = ex.at<typename From::S>(ins.in[0]);
  typename To::S* out = ex.at<typename To::S>(ins.out[0]);
  for (std::int64_t i = 0; i < n; ++i) out[i] = convert<From, To>(in[i]);
}

KILN_ROUTINE void run_bitcast(const Instr& ins, Exec& ex) {
  std::memcpy(ex.frame + ins.out[0].offset, ex.frame + ins.in[0].offset, ins.out[0].bytes);
}

int value_bits(const ir::Type& t) { return t.is_pointer ? 64 : ir::dtype_bits(t.dtype); }

}  // namespace

void bind_cast(const ir::Operation& op, Instr& ins) {
  const ir::Type& from = op.operands.at(0)->type;
  const ir::Type& to = op.results.at(0)->type;
  if (from.shape != to.shape) unsupported(op, ir::to_string(from) + " and " + ir::to_string(to) + " differ in shape");
  if (op.code == ir::OpCode::bitcast) {
    if (value_bits(from) != value_bits(to))
      unsupported(op, ir::to_string(from) + " and " + ir::to_string(to) + " differ in bit width");
    ins.run = &run_bitcast;
    return;
  }
  ins.run = with_element(from, [&](auto f) -> Routine {
    return with_element(to, [&](auto t) -> Routine {
      using From = decltype(f);
      using To = decltype(t);
      if constexpr ((From::is_pointer && To::is_float) || (From::is_float && To::is_pointer))
        unsupported(op, "cannot cast " + ir::to_string(from) + " to " + ir::to_string(to));
      else return &run_cast<From, To>;
    });
  });
}

}  // namespace kiln::runtime::interp
