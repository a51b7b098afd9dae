// The matrix instructions' inline assembly on the emu's hooks
// (matrix_assembly.hpp). The accumulator registers of wgmma.mma_async are
// its first N / 2 operands (tied to its N / 2 results), then A (its
// descriptor, or its four fragment registers), B's descriptor and the
// scale-d value, then the immediates its input type takes (imm-scale-a and
// imm-scale-b, 1, for floats; imm-trans-a, when A is a descriptor, and
// imm-trans-b for f16 and bf16), as codegen_wgmma.cpp emits them; fp8
// mma.sync takes A (4 registers), B (2) and C (4, tied to its 4 results),
// as codegen_dot.cpp emits it.
#include "matrix_assembly.hpp"

#include <llvm/IR/IRBuilder.h>
#include <llvm/IR/InlineAsm.h>
#include <llvm/IR/InstIterator.h>
#include <llvm/IR/Module.h>

#include <algorithm>
#include <regex>
#include <string>
#include <vector>

#include "kiln/lowering/compile.hpp"
#include "retarget_module.hpp"

namespace kiln::runtime::emu {

namespace {

[[noreturn]] void fail(const KernelDescription& kernel, const std::string& what) {
  throw lowering::LoweringError("emu: kernel " + kernel.name + ": " + what);
}

/// The struct `values` make, of `call`'s result type.
llvm::Value* pack(llvm::IRBuilder<>& builder, llvm::Type* type, const std::vector<llvm::Value*>& values) {
  llvm::Value* packed = llvm::PoisonValue::get(type);
  for (unsigned i = 0; i < values.size(); ++i) packed = builder.CreateInsertValue(packed, values[i], {i});
  return packed;
}

class AssemblyOnHooks {
 public:
  AssemblyOnHooks(llvm::Module& module, KernelDescription& kernel) : module_(module), kernel_(kernel) {
    llvm::LLVMContext& context = module.getContext();
    llvm::Type* void_type = llvm::Type::getVoidTy(context);
    llvm::Type* i32 = llvm::Type::getInt32Ty(context);
    llvm::Type* i64 = llvm::Type::getInt64Ty(context);
    llvm::Type* pointer = llvm::PointerType::get(context, 0);
    mma_ = module.getOrInsertFunction("kiln_emu_wgmma_mma", void_type, i32, pointer, i64, i64, i32, pointer, i32);
    fence_ = module.getOrInsertFunction("kiln_emu_wgmma_fence", void_type);
    commit_ = module.getOrInsertFunction("kiln_emu_wgmma_commit", void_type);
    wait_ = module.getOrInsertFunction("kiln_emu_wgmma_wait", void_type, i32);
    fp8_mma_ = module.getOrInsertFunction("kiln_emu_mma_fp8", void_type, i32, pointer, pointer);
  }

  void run() {
    std::vector<llvm::CallInst*> calls;
    for (llvm::Function& function : module_)
      for (llvm::Instruction& instruction : llvm::instructions(function))
        if (auto* call = llvm::dyn_cast<llvm::CallInst>(&instruction); call && call->isInlineAsm())
          calls.push_back(call);
    for (llvm::CallInst* call : calls) replace(call);
  }

 private:
  void replace(llvm::CallInst* call) {
    const std::string text = llvm::cast<llvm::InlineAsm>(call->getCalledOperand())->getAsmString();
    llvm::IRBuilder<> builder(call);
    static const std::regex mma(
        R"(wgmma\.mma_async\.sync\.aligned\.m64n(\d+)k(\d+)\.(f32|s32)\.(f16|bf16|e4m3|e5m2|s8)\.(\w+) \{[^}]*\}, )"
        R"((\$\d+|\{\$\d+, \$\d+, \$\d+, \$\d+\}), \$\d+, p((?:, [01])*);)");
    static const std::regex wait(R"(^wgmma\.wait_group\.sync\.aligned (\d);$)");
    static const std::regex fp8_mma(
        R"(^mma\.sync\.aligned\.m16n8k32\.row\.col\.f32\.(e4m3|e5m2)\.(e4m3|e5m2)\.f32 )"
        R"(\{\$0, \$1, \$2, \$3\}, \{\$4, \$5, \$6, \$7\}, \{\$8, \$9\}, \{\$0, \$1, \$2, \$3\};$)");
    std::smatch match;
    if (text == "fence.proxy.async.shared::cta;") {
    } else if (text == "wgmma.fence.sync.aligned;") {
      builder.CreateCall(fence_);
    } else if (text == "wgmma.commit_group.sync.aligned;") {
      builder.CreateCall(commit_);
    } else if (std::regex_search(text, match, wait)) {
      builder.CreateCall(wait_, {builder.getInt32(static_cast<std::uint32_t>(std::stoi(match[1])))});
      const std::vector<llvm::Value*> registers(call->arg_begin(), call->arg_end());
      if (!call->getType()->isVoidTy()) call->replaceAllUsesWith(pack(builder, call->getType(), registers));
    } else if (std::regex_search(text, match, mma) && match[4] == match[5]) {
      replace_mma(call, builder, match);
    } else if (std::regex_search(text, match, fp8_mma) && match[1] == match[2]) {
      replace_fp8_mma(call, builder, match[1] == "e5m2");
    } else {
      fail(kernel_, "no emu hook runs the inline assembly `" + text + "`");
    }
    call->eraseFromParent();
  }

  void replace_mma(llvm::CallInst* call, llvm::IRBuilder<>& builder, const std::smatch& match) {
    const unsigned n = static_cast<unsigned>(std::stoul(match[1]));
    if (n < 8 || n > 256 || n % 8 != 0)
      fail(kernel_, "wgmma.mma_async m64n" + std::to_string(n) + ": N is not a multiple of 8 from 8 to 256");
    const std::string input = match[4];
    const bool half_width = input == "f16" || input == "bf16", integer = input == "s8";
    if (match[2] != (half_width ? "16" : "32") || match[3] != (integer ? "s32" : "f32"))
      fail(kernel_, "wgmma.mma_async m64n" + std::to_string(n) + "k" + match[2].str() + "." + match[3].str() + "." +
                        input + ": no such instruction");
    const unsigned registers = n / 2;
    const bool a_in_registers = match[6].str().starts_with("{");
    if (a_in_registers && !half_width)
      fail(kernel_, "wgmma.mma_async on " + input +
                        " with A in registers: the emu runs A from registers for f16 and "
                        "bf16 only");
    // The immediates after scale-d: imm-scale-a and imm-scale-b (floats),
    // then imm-trans-a (A in shared memory) and imm-trans-b (f16, bf16).
    std::vector<bool> immediates;
    const std::string listed = match[7];
    for (std::size_t i = 0; i < listed.size(); ++i)
      if (listed[i] == '0' || listed[i] == '1') immediates.push_back(listed[i] == '1');
    const std::size_t scales = integer ? 0 : 2, transposes = half_width ? (a_in_registers ? 1 : 2) : 0;
    if (immediates.size() != scales + transposes || (scales && !(immediates[0] && immediates[1])))
      fail(kernel_, "wgmma.mma_async on " + input + " takes " + std::to_string(scales) + " scales of 1 and " +
                        std::to_string(transposes) + " transpose flags, not `" + listed + "`");
    const bool trans_a = transposes == 2 && immediates[scales], trans_b = transposes > 0 && immediates.back();
    static const std::vector<std::string> inputs = {"f16", "bf16", "e4m3", "e5m2", "s8"};
    const auto input_index =
        static_cast<std::uint32_t>(std::find(inputs.begin(), inputs.end(), input) - inputs.begin());
    const unsigned a_operands = a_in_registers ? 4 : 1;
    if (call->arg_size() != registers + a_operands + 2)
      fail(kernel_, "wgmma.mma_async m64n" + std::to_string(n) + " has " + std::to_string(call->arg_size()) +
                        " operands, not its " + std::to_string(registers) + " accumulator registers, A, B and scale-d");
    const std::uint32_t flags = n | input_index << 16 | (trans_a ? 1u << 19 : 0u) | (trans_b ? 1u << 20 : 0u);
    llvm::Function& function = *call->getFunction();
    llvm::IRBuilder<> entry(&*function.getEntryBlock().getFirstInsertionPt());
    llvm::Type* register_type = integer ? builder.getInt32Ty() : builder.getFloatTy();
    llvm::Type* array = llvm::ArrayType::get(register_type, registers);
    llvm::Value* accumulator = entry.CreateAlloca(array);
    for (unsigned r = 0; r < registers; ++r)
      builder.CreateStore(call->getArgOperand(r), builder.CreateConstGEP2_32(array, accumulator, 0, r));
    llvm::Value* a_fragment = llvm::ConstantPointerNull::get(builder.getPtrTy());
    llvm::Value* a_descriptor = builder.getInt64(0);
    if (a_in_registers) {
      llvm::Type* words = llvm::ArrayType::get(builder.getInt32Ty(), 4);
      a_fragment = entry.CreateAlloca(words);
      for (unsigned w = 0; w < 4; ++w)
        builder.CreateStore(call->getArgOperand(registers + w), builder.CreateConstGEP2_32(words, a_fragment, 0, w));
    } else {
      a_descriptor = call->getArgOperand(registers);
    }
    llvm::ConstantInt* site =
        add_site(kernel_, builder.getContext(), {AccessSite::Kind::load, "wgmma.mma_async", place_of(*call)});
    builder.CreateCall(mma_,
                       {builder.getInt32(flags), a_fragment, a_descriptor, call->getArgOperand(registers + a_operands),
                        call->getArgOperand(registers + a_operands + 1), accumulator, site});
    std::vector<llvm::Value*> results;
    for (unsigned r = 0; r < registers; ++r)
      results.push_back(builder.CreateLoad(register_type, builder.CreateConstGEP2_32(array, accumulator, 0, r)));
    call->replaceAllUsesWith(pack(builder, call->getType(), results));
  }

  /// mma.sync m16n8k32 on fp8: A and B's 6 registers and C's 4 values in
  /// memory, D back in C's place.
  void replace_fp8_mma(llvm::CallInst* call, llvm::IRBuilder<>& builder, bool e5m2) {
    if (call->arg_size() != 10) fail(kernel_, "an fp8 mma.sync has " + std::to_string(call->arg_size()) + " operands");
    llvm::IRBuilder<> entry(&*call->getFunction()->getEntryBlock().getFirstInsertionPt());
    llvm::Type* words = llvm::ArrayType::get(builder.getInt32Ty(), 6);
    llvm::Type* values = llvm::ArrayType::get(builder.getFloatTy(), 4);
    llvm::Value* registers = entry.CreateAlloca(words);
    llvm::Value* accumulator = entry.CreateAlloca(values);
    for (unsigned r = 0; r < 6; ++r)
      builder.CreateStore(call->getArgOperand(r), builder.CreateConstGEP2_32(words, registers, 0, r));
    for (unsigned r = 0; r < 4; ++r)
      builder.CreateStore(call->getArgOperand(6 + r), builder.CreateConstGEP2_32(values, accumulator, 0, r));
    builder.CreateCall(fp8_mma_, {builder.getInt32(e5m2 ? 1 : 0), registers, accumulator});
    std::vector<llvm::Value*> results;
    for (unsigned r = 0; r < 4; ++r)
      results.push_back(
          builder.CreateLoad(builder.getFloatTy(), builder.CreateConstGEP2_32(values, accumulator, 0, r)));
    call->replaceAllUsesWith(pack(builder, call->getType(), results));
  }

  llvm::Module& module_;
  KernelDescription& kernel_;
  llvm::FunctionCallee mma_, fence_, commit_, wait_, fp8_mma_;
};

}  // namespace

void run_matrix_assembly_on_hooks(llvm::Module& module, KernelDescription& kernel) {
  AssemblyOnHooks(module, kernel).run();
}

}  // namespace kiln::runtime::emu
