// The uses of one value: what the shared-ring plan and the ring code
// generation ask of a ring, its slots and their readers.
#pragma once

#include <utility>
#include <vector>

#include "kiln/ir/ir.hpp"

namespace kiln::lowering {

/// The ops of `fn` reading `value` as an operand, with the operand's index.
inline std::vector<std::pair<const ir::Operation*, int>> uses_of(const ir::Function& fn, const ir::Value& value) {
  std::vector<std::pair<const ir::Operation*, int>> uses;
  ir::walk(fn.body, [&](ir::Operation& op) {
    for (std::size_t i = 0; i < op.operands.size(); ++i)
      if (op.operands[i] == &value) uses.emplace_back(&op, static_cast<int>(i));
  });
  return uses;
}

}  // namespace kiln::lowering
