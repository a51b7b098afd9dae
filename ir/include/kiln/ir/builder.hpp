// Creates ops at an insertion point, stamping each with the current source location.
#pragma once

#include "kiln/ir/ir.hpp"

namespace kiln::ir {

class Builder {
 public:
  explicit Builder(Function& fn) : fn_(fn), block_(&fn.body), position_(-1) {}

  Function& function() { return fn_; }
  Block* block() const { return block_; }

  /// New ops go to the end of `block`.
  void set_insertion_end(Block* block) {
    block_ = block;
    position_ = -1;
  }
  /// New ops go before the op at `index` in `block`.
  void set_insertion_before(Block* block, std::size_t index) {
    block_ = block;
    position_ = static_cast<long>(index);
  }

  void set_loc(SourceLoc loc) { loc_ = std::move(loc); }
  const SourceLoc& loc() const { return loc_; }

  /// Creates an op with the given result types and `num_regions` empty regions.
  Operation* create(OpCode code, std::vector<Value*> operands, const std::vector<Type>& result_types,
                    std::vector<std::pair<std::string, Attribute>> attributes = {}, int num_regions = 0);

  Value* constant_int(Type type, std::int64_t value);
  Value* constant_float(Type type, double value);

 private:
  Function& fn_;
  Block* block_;
  long position_;
  SourceLoc loc_;
};

}  // namespace kiln::ir
