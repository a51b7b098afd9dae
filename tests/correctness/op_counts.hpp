// How many ops of one kind a kernel's IR holds: what the pipelining tests
// check of the optimized program.
#pragma once

#include "kiln/ir/ir.hpp"

namespace kiln::test {

/// The ops of `fn` with opcode `code`, nested regions included.
inline int count_ops(const ir::Function& fn, ir::OpCode code) {
  int n = 0;
  ir::walk(fn.body, [&](ir::Operation& op) { n += op.code == code; });
  return n;
}

}  // namespace kiln::test
