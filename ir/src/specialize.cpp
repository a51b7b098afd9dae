// Specialisation: records what the launch's argument values let the compiler
// assume and substitutes the arguments known to equal 1, so that the passes
// fold `stride * 1` and the GPU backend sees which accesses are contiguous.
#include "kiln/ir/builder.hpp"
#include "kiln/ir/passes.hpp"
#include "op_traits.hpp"

namespace kiln::ir {

void specialize(Function& fn, std::vector<ArgumentFacts> facts) {
  if (facts.size() != fn.body.arguments.size())
    throw IRError("specialize @" + fn.name + ": " + std::to_string(facts.size()) + " argument facts for " +
                  std::to_string(fn.body.arguments.size()) + " arguments");
  Builder builder(fn);
  builder.set_insertion_before(&fn.body, 0);
  passes::ValueReplacements ones;
  for (std::size_t i = 0; i < facts.size(); ++i) {
    Value* arg = fn.body.arguments[i];
    if (facts[i].equal_to_1) ones.add(arg, builder.constant_int(arg->type, 1));
  }
  ones.apply(fn.body);
  fn.argument_facts = std::move(facts);
}

}  // namespace kiln::ir
