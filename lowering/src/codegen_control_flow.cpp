// LLVM code generation for structured control flow: `for` becomes a guarded
// loop whose body starts with one phi per register of the induction variable
// and of each carried value, `while` a loop whose header holds the phis;
// `if` becomes a branch whose merge block holds one phi per register of each
// result. Layout assignment put every carried value (init, body argument,
// yield, result) in one class, so the registers line up.
#include "codegen.hpp"

namespace kiln::lowering {

namespace {

using ir::OpCode;

/// Checks that `yielded` (a region's yield) matches `expected` register for
/// register; a mismatch is a layout assignment bug, reported naming `op`.
void check_yield(const ir::Operation& op, const char* region, const std::vector<std::vector<llvm::Value*>>& yielded,
                 const std::vector<std::vector<llvm::Value*>>& expected) {
  if (yielded.size() != expected.size())
    throw LoweringError(std::string(op.name()) + ": its " + region + " yields " + std::to_string(yielded.size()) +
                        " values, expected " + std::to_string(expected.size()) + " (" + op_place(op) + ")");
  for (std::size_t i = 0; i < yielded.size(); ++i)
    if (yielded[i].size() != expected[i].size())
      throw InternalError(std::string(op.name()) + ": its " + region + " yields value " + std::to_string(i) + " in " +
                          std::to_string(yielded[i].size()) + " registers per thread, expected " +
                          std::to_string(expected[i].size()) + " (" + op_place(op) + ")");
}

/// One phi per register of each of `inits`, in the current block (a loop
/// header), entered from `preheader`.
std::vector<std::vector<llvm::Value*>> carried_phis(KernelCodegen& cg,
                                                    const std::vector<std::vector<llvm::Value*>>& inits,
                                                    llvm::BasicBlock* preheader) {
  std::vector<std::vector<llvm::Value*>> carried;
  for (const auto& init : inits) {
    std::vector<llvm::Value*> phis;
    for (llvm::Value* value : init) {
      llvm::PHINode* phi = cg.builder.CreatePHI(value->getType(), 2);
      phi->addIncoming(value, preheader);
      phis.push_back(phi);
    }
    carried.push_back(std::move(phis));
  }
  return carried;
}

/// Closes the loop: the phis of `carried` take `next` from the current block.
void add_back_edge(KernelCodegen& cg, const std::vector<std::vector<llvm::Value*>>& carried,
                   const std::vector<std::vector<llvm::Value*>>& next) {
  llvm::BasicBlock* latch = cg.builder.GetInsertBlock();
  for (std::size_t i = 0; i < carried.size(); ++i)
    for (std::size_t r = 0; r < carried[i].size(); ++r)
      llvm::cast<llvm::PHINode>(carried[i][r])->addIncoming(next[i][r], latch);
}

void emit_for(KernelCodegen& cg, const ir::Operation& op) {
  llvm::IRBuilder<>& b = cg.builder;
  const ir::Block& body = *op.regions[0];
  llvm::Value* lower = cg.values_of(*op.operands[0])[0];
  llvm::Value* upper = cg.values_of(*op.operands[1])[0];
  llvm::Value* step = cg.values_of(*op.operands[2])[0];
  std::vector<std::vector<llvm::Value*>> inits;
  for (std::size_t i = 3; i < op.operands.size(); ++i) {
    const ir::Value& init = *op.operands[i];
    cg.element_type(init.type, op);
    inits.push_back(cg.values_of(init, cg.register_count(*body.arguments[i - 2]), op));
  }

  // The loop runs while iv < hi, as the interpreter's: a step that is not
  // positive where lo < hi is a fault, and the induction variable never
  // wraps. The body goes on to iv + step while iv < hi - step, which the
  // bounds' type holds once saturated at its least value, so iv + step is
  // computed only where it does not overflow.
  const bool is_unsigned = ir::is_unsigned_int(op.operands[0]->type.dtype);
  llvm::Value* runs = is_unsigned ? b.CreateICmpULT(lower, upper) : b.CreateICmpSLT(lower, upper);
  emit_loop_step_check(cg, op, runs, lower, upper, step);
  llvm::Value* limit = b.CreateBinaryIntrinsic(is_unsigned ? llvm::Intrinsic::usub_sat : llvm::Intrinsic::ssub_sat,
                                               upper, step, nullptr, "for.limit");
  llvm::BasicBlock* preheader = b.GetInsertBlock();
  auto* loop_body = llvm::BasicBlock::Create(cg.context, "for.body", cg.kernel);
  auto* exit = llvm::BasicBlock::Create(cg.context, "for.exit", cg.kernel);
  b.CreateCondBr(runs, loop_body, exit);

  b.SetInsertPoint(loop_body);
  llvm::PHINode* induction = b.CreatePHI(lower->getType(), 2, "iv");
  induction->addIncoming(lower, preheader);
  const std::vector<std::vector<llvm::Value*>> carried = carried_phis(cg, inits, preheader);
  std::vector<std::vector<llvm::Value*>> arguments = {{induction}};
  arguments.insert(arguments.end(), carried.begin(), carried.end());
  const std::vector<std::vector<llvm::Value*>> next = emit_region(cg, body, arguments);
  check_yield(op, "body", next, carried);
  llvm::Value* goes_on = is_unsigned ? b.CreateICmpULT(induction, limit) : b.CreateICmpSLT(induction, limit);
  induction->addIncoming(b.CreateAdd(induction, step, "iv.next", is_unsigned, !is_unsigned), b.GetInsertBlock());
  add_back_edge(cg, carried, next);
  llvm::BasicBlock* latch = b.GetInsertBlock();
  b.CreateCondBr(goes_on, loop_body, exit);

  b.SetInsertPoint(exit);
  std::vector<std::vector<llvm::Value*>> finals(op.results.size());
  for (std::size_t i = 0; i < op.results.size(); ++i)
    for (std::size_t r = 0; r < inits[i].size(); ++r) {
      llvm::PHINode* phi = b.CreatePHI(inits[i][r]->getType(), 2);
      phi->addIncoming(inits[i][r], preheader);
      phi->addIncoming(next[i][r], latch);
      finals[i].push_back(phi);
    }
  const ir::Operation& yield = *body.terminator();
  for (std::size_t i = 0; i < op.results.size(); ++i) {
    const ir::Operation* producer = yield.operands[i]->def;
    const bool in_flight = producer && wgmma_dot_stays_in_flight(cg, *producer);
    cg.define(*op.results[i], in_flight ? emit_wgmma_wait(cg, 0, finals[i]) : finals[i]);
  }
}

/// Region 0 decides on the carried values whether to go on; region 1
/// computes the next ones. The results are the values region 0 stopped on.
void emit_while(KernelCodegen& cg, const ir::Operation& op) {
  llvm::IRBuilder<>& b = cg.builder;
  std::vector<std::vector<llvm::Value*>> inits;
  for (std::size_t i = 0; i < op.operands.size(); ++i) {
    cg.element_type(op.operands[i]->type, op);
    inits.push_back(cg.values_of(*op.operands[i], cg.register_count(*op.regions[0]->arguments[i]), op));
  }
  llvm::BasicBlock* preheader = b.GetInsertBlock();
  auto* header = llvm::BasicBlock::Create(cg.context, "while.header", cg.kernel);
  auto* loop_body = llvm::BasicBlock::Create(cg.context, "while.body", cg.kernel);
  auto* exit = llvm::BasicBlock::Create(cg.context, "while.exit", cg.kernel);
  b.CreateBr(header);

  b.SetInsertPoint(header);
  const std::vector<std::vector<llvm::Value*>> carried = carried_phis(cg, inits, preheader);
  const std::vector<std::vector<llvm::Value*>> go_on = emit_region(cg, *op.regions[0], carried);
  check_yield(op, "condition region", go_on, {{nullptr}});
  b.CreateCondBr(go_on[0][0], loop_body, exit);

  b.SetInsertPoint(loop_body);
  const std::vector<std::vector<llvm::Value*>> next = emit_region(cg, *op.regions[1], carried);
  check_yield(op, "body", next, carried);
  add_back_edge(cg, carried, next);
  b.CreateBr(header);

  b.SetInsertPoint(exit);
  for (std::size_t i = 0; i < op.results.size(); ++i) cg.define(*op.results[i], carried[i]);
}

void emit_if(KernelCodegen& cg, const ir::Operation& op) {
  llvm::IRBuilder<>& b = cg.builder;
  llvm::Value* condition = cg.values_of(*op.operands[0], 1, op)[0];
  std::vector<std::vector<llvm::Value*>> expected;
  for (const ir::Value* result : op.results) {
    cg.element_type(result->type, op);
    expected.emplace_back(cg.register_count(*result));
  }
  auto* then_block = llvm::BasicBlock::Create(cg.context, "if.then", cg.kernel);
  auto* else_block = llvm::BasicBlock::Create(cg.context, "if.else", cg.kernel);
  auto* merge = llvm::BasicBlock::Create(cg.context, "if.merge", cg.kernel);
  b.CreateCondBr(condition, then_block, else_block);

  std::vector<std::pair<std::vector<std::vector<llvm::Value*>>, llvm::BasicBlock*>> branches;
  for (auto [region, block, name] :
       {std::tuple{0, then_block, "then region"}, std::tuple{1, else_block, "else region"}}) {
    b.SetInsertPoint(block);
    std::vector<std::vector<llvm::Value*>> yielded = emit_region(cg, *op.regions[region], {});
    check_yield(op, name, yielded, expected);
    branches.emplace_back(std::move(yielded), b.GetInsertBlock());
    b.CreateBr(merge);
  }

  b.SetInsertPoint(merge);
  for (std::size_t i = 0; i < op.results.size(); ++i) {
    std::vector<llvm::Value*> values;
    for (std::size_t r = 0; r < expected[i].size(); ++r) {
      llvm::PHINode* phi = b.CreatePHI(branches[0].first[i][r]->getType(), 2);
      for (const auto& [yielded, from] : branches) phi->addIncoming(yielded[i][r], from);
      values.push_back(phi);
    }
    cg.define(*op.results[i], std::move(values));
  }
}

}  // namespace

void emit_control_flow_op(KernelCodegen& cg, const ir::Operation& op) {
  switch (op.code) {
    case OpCode::for_: emit_for(cg, op); return;
    case OpCode::while_: emit_while(cg, op); return;
    case OpCode::if_: emit_if(cg, op); return;
    default: throw InternalError(std::string(op.name()) + " reached the control-flow code generator");
  }
}

}  // namespace kiln::lowering
