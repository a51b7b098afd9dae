// LLVM code generation, shared memory: the kernel's one dynamic shared-memory
// array, each op's scratch at offsets in it (SharedScratch, codegen.hpp says
// why the ops may share it), and the limit of what one block may have.
#include <llvm/IR/Constants.h>
#include <llvm/IR/GlobalVariable.h>
#include <llvm/IR/IntrinsicsNVPTX.h>
#include <llvm/IR/Metadata.h>

#include "codegen.hpp"

namespace kiln::lowering {

llvm::GlobalVariable* shared_memory_array(KernelCodegen& cg) {
  if (!cg.shared_memory) {
    auto* array = llvm::ArrayType::get(cg.builder.getInt8Ty(), 0);
    cg.shared_memory =
        new llvm::GlobalVariable(cg.module, array, false, llvm::GlobalValue::ExternalLinkage, nullptr,
                                 kSharedMemoryArray, nullptr, llvm::GlobalValue::NotThreadLocal, kSharedAddressSpace);
    cg.shared_memory->setAlignment(llvm::Align(16));
  }
  return cg.shared_memory;
}

llvm::Value* SharedScratch::take(std::uint64_t bytes, std::uint64_t alignment) {
  llvm::GlobalVariable* array = shared_memory_array(cg_);
  const std::uint64_t offset = (end_ + alignment - 1) / alignment * alignment;
  end_ = offset + bytes;
  cg_.shared_bytes = std::max(cg_.shared_bytes, end_);
  return cg_.builder.CreateConstInBoundsGEP1_64(cg_.builder.getInt8Ty(), array, offset);
}

void emit_barrier(KernelCodegen& cg) { cg.builder.CreateIntrinsic(llvm::Intrinsic::nvvm_barrier0, {}, {}); }

std::uint64_t shared_memory_limit_bytes(const std::string& arch) {
  constexpr std::uint64_t kibibyte = 1024;
  if (arch == "sm_90" || arch == "sm_90a") return 227 * kibibyte;
  if (arch == "sm_80" || arch == "sm_87") return 163 * kibibyte;
  if (arch == "sm_86" || arch == "sm_89") return 99 * kibibyte;
  return 48 * kibibyte;
}

void finish_shared_memory(KernelCodegen& cg) {
  if (cg.shared_bytes == 0) return;
  const std::uint64_t limit = shared_memory_limit_bytes(cg.target.arch);
  if (cg.shared_bytes > limit)
    throw LoweringError("kernel " + cg.fn.name + " needs " + std::to_string(cg.shared_bytes) +
                        " bytes of shared memory per program, more than the " + std::to_string(limit) + " bytes " +
                        cg.target.arch + " gives one block");
  cg.module.getOrInsertNamedMetadata(kSharedBytesMetadata)
      ->addOperand(llvm::MDNode::get(
          cg.context,
          {llvm::ConstantAsMetadata::get(cg.builder.getInt32(static_cast<std::uint32_t>(cg.shared_bytes)))}));
}

int shared_memory_bytes(const llvm::Module& module) {
  const llvm::NamedMDNode* node = module.getNamedMetadata(kSharedBytesMetadata);
  if (!node || node->getNumOperands() == 0) return 0;
  const auto* bytes = llvm::mdconst::extract<llvm::ConstantInt>(node->getOperand(0)->getOperand(0));
  return static_cast<int>(bytes->getZExtValue());
}

}  // namespace kiln::lowering
