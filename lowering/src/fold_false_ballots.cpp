// FoldFalseBallots (fold_false_ballots.hpp).
#include "fold_false_ballots.hpp"

#include <llvm/IR/Constants.h>
#include <llvm/IR/InstIterator.h>
#include <llvm/IR/IntrinsicInst.h>
#include <llvm/IR/IntrinsicsNVPTX.h>

#include <vector>

namespace kiln::lowering {

llvm::PreservedAnalyses FoldFalseBallots::run(llvm::Function& function, llvm::FunctionAnalysisManager&) {
  std::vector<llvm::IntrinsicInst*> folded;
  for (llvm::Instruction& instruction : llvm::instructions(function))
    if (auto* ballot = llvm::dyn_cast<llvm::IntrinsicInst>(&instruction))
      if (ballot->getIntrinsicID() == llvm::Intrinsic::nvvm_vote_ballot_sync)
        if (auto* predicate = llvm::dyn_cast<llvm::ConstantInt>(ballot->getArgOperand(1));
            predicate && predicate->isZero())
          folded.push_back(ballot);
  for (llvm::IntrinsicInst* ballot : folded) {
    ballot->replaceAllUsesWith(llvm::ConstantInt::get(ballot->getType(), 0));
    ballot->eraseFromParent();
  }
  return folded.empty() ? llvm::PreservedAnalyses::all() : llvm::PreservedAnalyses::none();
}

}  // namespace kiln::lowering
