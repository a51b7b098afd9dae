// Structured control flow: for (with loop-carried values), if, while.
#include <cstring>

#include "element.hpp"
#include "fault.hpp"
#include "program.hpp"

namespace kiln::runtime::interp {

namespace {

void copy(Exec& ex, const SlotRef& to, const SlotRef& from) {
  if (to.offset != from.offset) std::memcpy(ex.frame + to.offset, ex.frame + from.offset, to.bytes);
}

/// Copies `from[j]` into `to[first + j]` for every j.
void copy_all(Exec& ex, const std::vector<SlotRef>& to, std::size_t first, const std::vector<SlotRef>& from) {
  for (std::size_t j = 0; j < from.size(); ++j) copy(ex, to[first + j], from[j]);
}

/// param[0]: 1 when a yielded value is another carried argument, so the
/// yields go through the result slots instead of straight into the arguments.
template <class E>
KILN_ROUTINE void run_for(const Instr& ins, Exec& ex) {
  using S = typename E::S;
  using Wide = std::conditional_t<E::is_signed, __int128, unsigned __int128>;
  const S lo = *ex.at<S>(ins.in[0]);
  const S hi = *ex.at<S>(ins.in[1]);
  const S step = *ex.at<S>(ins.in[2]);
  const Body& body = ins.regions[0];
  for (std::size_t j = 0; j < ins.out.size(); ++j) copy(ex, body.args[1 + j], ins.in[3 + j]);
  if (lo < hi && !(step > 0))
    fault(ex, "for loop" + at_line(ins) + " has step " + std::to_string(step) + ", which never reaches " +
                  std::to_string(hi) + " from " + std::to_string(lo) + " (" + program_string(ex) + ")");
  for (S iv = lo; iv < hi;) {
    *ex.at<S>(body.args[0]) = iv;
    run_code(body.code, ex);
    if (ins.param[0]) {
      copy_all(ex, ins.out, 0, body.yields);
      for (std::size_t j = 0; j < ins.out.size(); ++j) copy(ex, body.args[1 + j], ins.out[j]);
    } else {
      copy_all(ex, body.args, 1, body.yields);
    }
    const Wide next = static_cast<Wide>(iv) + static_cast<Wide>(step);
    if (next >= static_cast<Wide>(hi)) break;
    iv = static_cast<S>(next);
  }
  for (std::size_t j = 0; j < ins.out.size(); ++j) copy(ex, ins.out[j], body.args[1 + j]);
}

KILN_ROUTINE void run_if(const Instr& ins, Exec& ex) {
  const Body& taken = ins.regions[*ex.at<std::uint8_t>(ins.in[0]) ? 0 : 1];
  run_code(taken.code, ex);
  copy_all(ex, ins.out, 0, taken.yields);
}

KILN_ROUTINE void run_while(const Instr& ins, Exec& ex) {
  const Body& before = ins.regions[0];
  const Body& after = ins.regions[1];
  copy_all(ex, before.args, 0, ins.in);
  for (;;) {
    run_code(before.code, ex);
    if (!*ex.at<std::uint8_t>(before.yields[0])) break;
    copy_all(ex, after.args, 0, before.args);
    run_code(after.code, ex);
    copy_all(ex, before.args, 0, after.yields);
  }
  copy_all(ex, ins.out, 0, before.args);
}

void require_matching(const ir::Operation& op, const std::vector<SlotRef>& a, const std::vector<SlotRef>& b,
                      const std::string& what) {
  bool same = a.size() == b.size();
  for (std::size_t j = 0; same && j < a.size(); ++j) same = a[j].bytes == b[j].bytes;
  if (!same) unsupported(op, what);
}

void bind_for(const ir::Operation& op, Instr& ins) {
  if (op.operands.size() < 3) unsupported(op, "needs lo, hi and step");
  const ir::Type& iv = op.operands[0]->type;
  if (iv.is_pointer || !ir::is_integer(iv.dtype) || iv.is_tile() || op.operands[1]->type != iv ||
      op.operands[2]->type != iv)
    unsupported(op, "lo, hi and step must be scalars of one integer type, got " + ir::to_string(iv) + ", " +
                        ir::to_string(op.operands[1]->type) + ", " + ir::to_string(op.operands[2]->type));
  const Body& body = ins.regions.at(0);
  const std::vector<SlotRef> inits(ins.in.begin() + 3, ins.in.end());
  if (body.args.empty()) unsupported(op, "the body has no induction variable");
  const std::vector<SlotRef> carried(body.args.begin() + 1, body.args.end());
  require_matching(op, inits, ins.out, "initial values do not match the results");
  require_matching(op, carried, ins.out, "the body's arguments do not match the results");
  require_matching(op, body.yields, ins.out, "the body's yield does not match the results");
  for (std::size_t j = 0; j < body.yields.size(); ++j)
    for (std::size_t k = 0; k < carried.size(); ++k)
      if (j != k && body.yields[j].offset == carried[k].offset) ins.param[0] = 1;
  ins.run = with_dtype(iv.dtype, [&](auto e) -> Routine {
    using E = decltype(e);
    if constexpr (E::is_float) unsupported(op, "the induction variable must be an integer");
    else return &run_for<E>;
  });
}

}  // namespace

void bind_control(const ir::Operation& op, Instr& ins) {
  switch (op.code) {
    case ir::OpCode::for_: bind_for(op, ins); return;
    case ir::OpCode::if_:
      if (op.operands.size() != 1 || op.operands[0]->type != ir::Type::scalar(ir::DType::i1))
        unsupported(op, "the condition must be an i1 scalar");
      require_matching(op, ins.regions.at(0).yields, ins.out, "the then region's yield does not match the results");
      require_matching(op, ins.regions.at(1).yields, ins.out, "the else region's yield does not match the results");
      ins.run = &run_if;
      return;
    case ir::OpCode::while_: {
      const Body& before = ins.regions.at(0);
      const Body& after = ins.regions.at(1);
      require_matching(op, ins.in, ins.out, "initial values do not match the results");
      require_matching(op, before.args, ins.out, "the condition region's arguments do not match the results");
      require_matching(op, after.args, ins.out, "the body's arguments do not match the results");
      require_matching(op, after.yields, ins.out, "the body's yield does not match the results");
      if (before.yields.size() != 1 || before.yields[0].bytes != 1)
        unsupported(op, "the condition region must yield one i1 scalar");
      ins.run = &run_while;
      return;
    }
    default: unsupported(op, "not a control-flow op");
  }
}

}  // namespace kiln::runtime::interp
