// An LLVM function pass for the O3 pipeline (emit_ptx.cpp): a warp ballot
// (llvm.nvvm.vote.ballot.sync) of a predicate that is false becomes 0. LLVM
// folds no NVVM vote, so without it the fault code of a check that O3
// proved can never fail (a divisor it knows is not 0) would stay behind its
// ballot; folded, the branch on the ballot and the fault code go.
#pragma once

#include <llvm/IR/PassManager.h>

namespace kiln::lowering {

struct FoldFalseBallots : llvm::PassInfoMixin<FoldFalseBallots> {
  llvm::PreservedAnalyses run(llvm::Function& function, llvm::FunctionAnalysisManager& analyses);
};

}  // namespace kiln::lowering
