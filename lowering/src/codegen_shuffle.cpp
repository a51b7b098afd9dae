// LLVM code generation of one warp shuffle of a value of any register type:
// the exchange behind cross-lane reductions and warp-shuffle layout
// conversions.
#include <llvm/IR/IntrinsicsNVPTX.h>

#include "codegen.hpp"

namespace kiln::lowering {

llvm::Value* shuffle_in_warp(KernelCodegen& cg, llvm::Value* value, WarpShuffle mode, llvm::Value* lane_operand) {
  llvm::IRBuilder<>& b = cg.builder;
  llvm::Type* type = value->getType();
  auto shuffle32 = [&](llvm::Value* word) {
    const bool is_float = word->getType()->isFloatTy();
    const llvm::Intrinsic::ID id =
        mode == WarpShuffle::xor_lane
            ? (is_float ? llvm::Intrinsic::nvvm_shfl_sync_bfly_f32 : llvm::Intrinsic::nvvm_shfl_sync_bfly_i32)
            : (is_float ? llvm::Intrinsic::nvvm_shfl_sync_idx_f32 : llvm::Intrinsic::nvvm_shfl_sync_idx_i32);
    return b.CreateIntrinsic(word->getType(), id, {b.getInt32(0xffffffffu), word, lane_operand, b.getInt32(31)});
  };
  if (type->isFloatTy() || type->isIntegerTy(32)) return shuffle32(value);
  const llvm::TypeSize bits = cg.module.getDataLayout().getTypeSizeInBits(type);
  llvm::Type* same_width = b.getIntNTy(type->isIntegerTy(1) ? 1 : static_cast<unsigned>(bits.getFixedValue()));
  llvm::Value* as_integer =
      type->isPointerTy() ? b.CreatePtrToInt(value, same_width) : b.CreateBitCast(value, same_width);
  llvm::Value* shuffled;
  if (same_width->getIntegerBitWidth() <= 32) {
    shuffled = b.CreateTrunc(shuffle32(b.CreateZExt(as_integer, b.getInt32Ty())), same_width);
  } else {
    llvm::Value* low = shuffle32(b.CreateTrunc(as_integer, b.getInt32Ty()));
    llvm::Value* high = shuffle32(b.CreateTrunc(b.CreateLShr(as_integer, 32), b.getInt32Ty()));
    shuffled = b.CreateOr(b.CreateZExt(low, same_width), b.CreateShl(b.CreateZExt(high, same_width), 32));
  }
  return type->isPointerTy() ? b.CreateIntToPtr(shuffled, type) : b.CreateBitCast(shuffled, type);
}

}  // namespace kiln::lowering
