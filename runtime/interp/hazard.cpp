// In-place hazard reports: "kernel reverse: in-place hazard in program (0,
// 0, 0): the store at reverse.cpp:21 (tile element 5) writes element 1018
// of 'x', which the load at reverse.cpp:20 read as tile element 1018, with
// no kl::debug_barrier() between them; …".
#include "hazard.hpp"

#include "bounds.hpp"
#include "fault.hpp"
#include "program.hpp"

namespace kiln::runtime::interp {

namespace {

/// Two touches by one element of tiles of one shape happen in one GPU thread.
bool same_element(const Instr* by, std::int64_t element, const Instr& ins, std::int64_t i) {
  return element == i && by->access_shape == ins.access_shape;
}

std::string describe(const Instr& ins) { return std::string(ir::op_info(ins.code).name) + at_line(ins); }

[[noreturn]] void report(const Exec& ex, const Instr& ins, std::int64_t i, std::uint64_t address, const Instr& other,
                         std::int64_t other_element) {
  const bool storing = ins.code == ir::OpCode::store;
  fault(ex, "in-place hazard in " + program_string(ex) + ": the " + describe(ins) + " (tile element " +
                std::to_string(i) + ") " + (storing ? "writes " : "reads ") + describe_address(ex, address, ins.dtype) +
                ", which the " + describe(other) + (storing ? " read" : " wrote") + " as tile element " +
                std::to_string(other_element) +
                ", with no kl::debug_barrier() between them; the elements of a program run on different GPU "
                "threads in no fixed order");
}

}  // namespace

void HazardLog::loaded(const Instr& ins, const Exec& ex, const std::uint64_t* addresses, const std::uint8_t* mask,
                       std::int64_t n) {
  for (std::int64_t i = 0; i < n; ++i) {
    if (mask && !mask[i]) continue;
    auto [it, inserted] = accesses_.try_emplace(addresses[i]);
    Touches& t = it->second;
    if (inserted) {
      t.first = {&ins, i};
    } else if (t.written) {
      if (!same_element(t.first.by, t.first.element, ins, i))
        report(ex, ins, i, addresses[i], *t.first.by, t.first.element);
    } else if (!t.second.by && !same_element(t.first.by, t.first.element, ins, i)) {
      t.second = {&ins, i};
    }
  }
}

void HazardLog::stored(const Instr& ins, const Exec& ex, const std::uint64_t* addresses, const std::uint8_t* mask,
                       std::int64_t n) {
  for (std::int64_t i = 0; i < n; ++i) {
    if (mask && !mask[i]) continue;
    auto [it, inserted] = accesses_.try_emplace(addresses[i]);
    Touches& t = it->second;
    if (!inserted && !t.written) {
      for (const Toucher& reader : {t.first, t.second})
        if (reader.by && !same_element(reader.by, reader.element, ins, i))
          report(ex, ins, i, addresses[i], *reader.by, reader.element);
    }
    t = {{&ins, i}, {}, true};
  }
}

}  // namespace kiln::runtime::interp
