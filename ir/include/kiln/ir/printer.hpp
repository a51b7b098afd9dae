// The IR's stable text form (parsed back by parser.hpp).
#pragma once

#include <iosfwd>
#include <string>

#include "kiln/ir/ir.hpp"

namespace kiln::ir {

struct PrintOptions {
  bool locations = false;  // append loc("file":line) to ops that have one
};

/// Prints the kernel. Values are numbered %0, %1, … in order of definition,
/// so print(parse(print(f))) == print(f).
std::string print(const Function& fn, PrintOptions options = {});
void print(std::ostream& os, const Function& fn, PrintOptions options = {});

/// One attribute value as it appears in the text form.
std::string attribute_string(const Attribute& a);

}  // namespace kiln::ir
