// print (one line per op and program on stdout), assert (a KernelError
// naming the first false element) and barrier (tile ops already run in
// program order here, so it only ends the hazard check's window and makes
// landed async copies visible).
#include <charconv>
#include <cstdio>
#include <cstring>

#include "element.hpp"
#include "fault.hpp"
#include "program.hpp"

namespace kiln::runtime::interp {

namespace {

template <class E>
void append_element(std::string& line, const std::byte* at) {
  typename E::S s;
  std::memcpy(&s, at, sizeof(s));
  char buffer[64];
  std::to_chars_result r;
  if constexpr (E::is_pointer) {
    line += "0x";
    r = std::to_chars(buffer, buffer + sizeof buffer, s, 16);
  } else if constexpr (E::is_float) {
    r = std::to_chars(buffer, buffer + sizeof buffer, E::load(s));
  } else {
    r = std::to_chars(buffer, buffer + sizeof buffer, +s);
  }
  line.append(buffer, r.ptr);
}

using Append = void (*)(std::string&, const std::byte*);

/// Appends a tile as nested brackets, row-major: [[1, 2], [3, 4]].
void append_tile(std::string& line, Append append, const ir::Shape& shape, std::size_t dim, const std::byte*& at,
                 int bytes) {
  if (dim == shape.size()) {
    append(line, at);
    at += bytes;
    return;
  }
  line += '[';
  for (std::int64_t i = 0; i < shape[dim]; ++i) {
    if (i) line += ", ";
    append_tile(line, append, shape, dim + 1, at, bytes);
  }
  line += ']';
}

KILN_ROUTINE void run_print(const Instr& ins, Exec& ex) {
  std::string line =
      "pid (" + std::to_string(ex.pid[0]) + ", " + std::to_string(ex.pid[1]) + ", " + std::to_string(ex.pid[2]) + ")";
  if (!ins.text.empty()) line += " " + ins.text;
  for (std::size_t j = 0; j < ins.in.size(); ++j) {
    const ir::Type& t = ins.types[j];
    const Append append = with_element(t, [](auto e) -> Append { return &append_element<decltype(e)>; });
    const std::byte* at = ex.frame + ins.in[j].offset;
    line += ' ';
    append_tile(line, append, t.shape, 0, at, t.element_bytes());
  }
  line += '\n';
  std::fwrite(line.data(), 1, line.size(), stdout);
}

KILN_ROUTINE void run_assert(const Instr& ins, Exec& ex) {
  const std::uint8_t* cond = ex.at<std::uint8_t>(ins.in[0]);
  const std::int64_t n = ins.in[0].numel();
  bool all = true;
  for (std::int64_t i = 0; i < n; ++i) all &= cond[i] != 0;
  if (all) return;
  std::int64_t i = 0;
  while (cond[i]) ++i;
  fault(ex, "assert failed" + at_line(ins) + ": " + ins.text + " (" + program_string(ex) +
                (ins.param[0] ? ", element " + std::to_string(i) : std::string()) + ")");
}

KILN_ROUTINE void run_barrier(const Instr&, Exec& ex) {
  ex.hazards.clear();
  ex.rings.barrier();
}

}  // namespace

void bind_debug(const ir::Operation& op, Instr& ins) {
  if (op.code == ir::OpCode::barrier) {
    ins.run = &run_barrier;
    return;
  }
  if (op.code == ir::OpCode::print) {
    const ir::Attribute* prefix = op.find_attribute("prefix");
    if (prefix) ins.text = op.string_attribute("prefix");
    while (!ins.text.empty() && ins.text.back() == ' ') ins.text.pop_back();
    for (const ir::Value* v : op.operands) ins.types.push_back(v->type);
    ins.run = &run_print;
    return;
  }
  if (op.operands.size() != 1 || op.operands[0]->type.is_pointer || op.operands[0]->type.dtype != ir::DType::i1)
    unsupported(op, "the condition must be i1");
  if (op.find_attribute("message")) ins.text = op.string_attribute("message");
  ins.param[0] = op.operands[0]->type.is_tile();
  ins.run = &run_assert;
}

}  // namespace kiln::runtime::interp
