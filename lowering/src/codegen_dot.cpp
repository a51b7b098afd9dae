// LLVM code generation for `dot` (acc + a @ b), on tensor cores or the FMA units.
// A dot that dot_uses_wgmma accepts (sm_90a) is lowered by codegen_wgmma.cpp.
//
// Tensor cores (dot_uses_tensor_cores, sm_80+: f16/bf16 inputs with an f32
// accumulator on mma.sync.m16n8k16, i8 with an i32 one on m16n8k32, fp8 with
// an f32 one on m16n8k32 from sm_89, f32 at tf32 precision on m16n8k8): the accumulator and the result live in the
// mma.sync accumulator layout (layout assignment gives it to their
// class, so a loop-carried accumulator never moves), and a and b are read in
// the fragment layouts (dot_layout.hpp): an operand that already lives there
// or whose conversion stays inside each thread (attention's P, the
// accumulator of the first dot, cast to f16) is read from registers, and the
// others are stored into shared memory from the layouts they live in and read
// back as fragments, both in one crossing: each in a shared layout chosen for
// it (along the dimension it is stored from, swizzled so that the 16-byte
// stores and the fragment reads are free of bank conflicts) and read with
// ldmatrix (.trans where the fragment runs across the stored rows), both
// derived from the layouts (shared_access.hpp), each ldmatrix just before
// the first mma that needs it. An operand a local_load makes (a pipelined
// loop's ring slot, codegen_shared_buffer.cpp) is read from the slot the
// same way, with no crossing of the dot's own. Each 16 x 8 accumulator tile a
// warp holds takes one mma.sync per k of the instruction, in increasing k.
//
// FMA units (every other dot): each thread computes the accumulator
// registers it holds in the result's layout, reading a and b in the dot
// operand layouts assign_layouts derived from it: for each of its result
// rows the whole row of a, for each of its columns the whole column of b.
// An operand whose conversion to its dot operand layout stays inside each
// thread (or that needs none) is read from registers, k fully unrolled. Any
// other operand is converted through shared memory (or, from a local_load,
// read from its row-major ring slot), lazily: every thread
// stores the elements it holds, and after a barrier reads a[m, k] (b[k, n])
// for its rows (columns) inside the k loop, so only one k's operands are
// live at a time; a runtime loop over k when both operands are staged.
// Materialising all operand registers first would keep rows x K values live
// (8192 for attention's Q K^T at head_dim 128) and ptxas would spill. The
// staged tiles are the dot's scratch in the kernel's shared memory
// (SharedScratch), consecutive while the dot runs.
//
// On the FMA units each element sums its products in increasing k from the
// accumulator, as the interpreter does, with the same roundings: float
// inputs are widened to f32 and each product is added to the running sum
// (one fma where the product is exact in f32, a rounded multiply and an add
// otherwise); `tf32` rounds the inputs to tf32 first, `tf32x3` sums the tail
// x head, head x tail and head x head products in three passes over k; i8
// inputs multiply and add in wrapping i32.
#include <llvm/IR/Intrinsics.h>
#include <llvm/IR/IntrinsicsNVPTX.h>

#include <algorithm>
#include <map>
#include <optional>
#include <string>
#include <utility>

#include "codegen.hpp"
#include "kiln/ir/attribute_enums.hpp"
#include "kiln/lowering/dot_layout.hpp"
#include "kiln/lowering/layout_conversion.hpp"
#include "kiln/lowering/shared_layout.hpp"
#include "kiln/lowering/wgmma_layout.hpp"

namespace kiln::lowering {

namespace {

using ir::DType;
using Registers = std::vector<llvm::Value*>;

using ir::Precision;

/// How an input element enters a product: widened, or the head or tail of
/// its tf32 split.
enum class Part { widened, head, tail };

/// Whether the product of two values of `dtype`, widened to f32, is exact in
/// f32 (significands and exponent range both fit), so that one fma rounds as
/// a rounded multiply followed by an add does.
bool product_is_exact_in_f32(DType dtype) {
  return dtype == DType::f16 || dtype == DType::f8e4m3 || dtype == DType::f8e5m2;
}

/// Where the dot reads one operand: its registers in the dot operand layout,
/// or a row-major copy of the whole tile in shared memory.
struct OperandSource {
  LinearLayout layout;            // the dot operand layout
  Registers registers;            // when read from registers
  llvm::Value* staged = nullptr;  // its first element in shared memory
  bool from_slot = false;         // staged is a pipelined loop's ring slot, not this dot's scratch
  llvm::Type* memory_type = nullptr;
  std::int64_t columns = 0;  // of the staged tile
  /// The register holding compile-time coordinates (dim0, dim1).
  std::map<std::pair<std::int32_t, std::int32_t>, int> register_of;
};

class DotLowering {
 public:
  DotLowering(KernelCodegen& cg, const ir::Operation& op) : cg_(cg), b_(cg.builder), op_(op), scratch_(cg) {}

  void lower() {
    if (op_.operands.size() != 3 || op_.results.size() != 1)
      throw LoweringError("dot: expected a, b and an accumulator and one result (" + op_place(op_) + ")");
    const ir::Type& a = op_.operands[0]->type;
    const ir::Type& b = op_.operands[1]->type;
    const ir::Type& acc = op_.operands[2]->type;
    if (a.shape.size() != 2 || b.shape.size() != 2 || acc.shape.size() != 2)
      throw LoweringError(unsupported_op_message(op_, "on " + ir::to_string(a) + " x " + ir::to_string(b)));
    input_ = a.dtype;
    is_float_ = ir::is_float(input_);
    cg_.element_type(a, op_);
    accumulator_type_ = cg_.element_type(acc, op_);
    if (is_float_ != ir::is_float(acc.dtype))
      throw LoweringError("dot: float inputs need a float accumulator and integer inputs an integer one, a is " +
                          ir::to_string(a) + ", acc is " + ir::to_string(acc) + " (" + op_place(op_) + ")");
    work_type_ = is_float_ ? b_.getFloatTy() : accumulator_type_;
    precision_ = parse_precision();
    k_size_ = static_cast<std::int32_t>(a.shape[1]);

    const LinearLayout& result = cg_.layouts.at(*op_.result());
    if (dot_uses_tensor_cores(op_, cg_.target)) {
      // The accumulator in this dot's mma layout; the result, produced there,
      // converted where its class lives in another (the class of a dot that
      // splits its warps otherwise: chained_to_another_dot).
      const LinearLayout own = dot_accumulator_layout(op_, cg_.target);
      const Registers acc_values = accumulator(own);
      if (dot_uses_wgmma(cg_.fn, op_, cg_.target, cg_.axes)) emit_wgmma_dot(cg_, op_, acc_values);
      else lower_on_tensor_cores(acc_values);
      if (result != own)
        cg_.define(*op_.result(), emit_layout_conversion(cg_, LayoutConversion{op_.result(), own, result}, op_));
      return;
    }
    const Registers acc_values = accumulator(result);
    OperandSource a_source = operand(0, dot_operand_layout(result, DotOperand::a, k_size_));
    OperandSource b_source = operand(1, dot_operand_layout(result, DotOperand::b, k_size_));
    const bool crossing = (a_source.staged && !a_source.from_slot) || (b_source.staged && !b_source.from_slot);
    if (crossing) emit_barrier(cg_);

    // Per result register, the index of its row among the thread's distinct
    // rows and of its column among its distinct columns.
    std::map<std::int32_t, int> row_index, column_index;
    for (int r = 0; r < result.in_dim_size("register"); ++r) {
      const std::int32_t m = register_coordinate(result, r, 0), n = register_coordinate(result, r, 1);
      row_of_.push_back(row_index.try_emplace(m, static_cast<int>(row_index.size())).first->second);
      column_of_.push_back(column_index.try_emplace(n, static_cast<int>(column_index.size())).first->second);
    }
    rows_.resize(row_index.size());
    columns_.resize(column_index.size());
    for (const auto& [m, index] : row_index) rows_[static_cast<std::size_t>(index)] = m;
    for (const auto& [n, index] : column_index) columns_[static_cast<std::size_t>(index)] = n;
    a_thread_row_ = thread_coordinate(cg_, a_source.layout, 0);
    b_thread_column_ = thread_coordinate(cg_, b_source.layout, 1);

    Registers sums;
    for (llvm::Value* value : acc_values) sums.push_back(to_work(value));
    std::vector<std::pair<Part, Part>> passes;
    if (precision_ == Precision::tf32x3) passes = {{Part::tail, Part::head}, {Part::head, Part::tail}};
    passes.emplace_back(precision_ == Precision::ieee ? std::pair{Part::widened, Part::widened}
                                                      : std::pair{Part::head, Part::head});
    for (const auto& [a_part, b_part] : passes) {
      if (a_source.staged && b_source.staged) sums = accumulate_in_loop(sums, a_source, b_source, a_part, b_part);
      else
        for (std::int32_t k = 0; k < k_size_; ++k)
          sums = step(sums, a_source, b_source, a_part, b_part, b_.getInt32(k), k);
    }
    if (crossing) emit_barrier(cg_);

    Registers results;
    for (llvm::Value* sum : sums) results.push_back(from_work(sum));
    cg_.define(*op_.result(), std::move(results));
  }

 private:
  Precision parse_precision() const {
    if (const std::optional<Precision> precision = ir::attribute_enum<Precision>(op_)) return *precision;
    throw LoweringError("dot: unknown precision '" + op_.symbol_attribute("precision") + "' (" + op_place(op_) + ")");
  }

  /// The accumulator's registers in `layout` (the result's, or a
  /// tensor-core dot's own mma layout), converted when it lives in another.
  Registers accumulator(const LinearLayout& layout) {
    const ir::Value& acc = *op_.operands[2];
    if (const LayoutConversion* conversion = cg_.layouts.conversion(op_, acc)) {
      if (conversion->to != layout)
        throw InternalError("dot: the accumulator is converted to a layout other than the dot's (" + op_place(op_) +
                            ")");
      return emit_layout_conversion(cg_, *conversion, op_);
    }
    if (cg_.layouts.at(acc) != layout)
      throw InternalError("dot: the accumulator is not in the dot's layout (" + op_place(op_) + ")");
    return cg_.values_of(acc, static_cast<std::size_t>(layout.in_dim_size("register")), op_);
  }

  /// Operand `index` read in `needed`, its dot operand layout: from
  /// registers when the thread holds its elements, else staged in shared memory.
  OperandSource operand(int index, LinearLayout needed) {
    const ir::Value& value = *op_.operands[static_cast<std::size_t>(index)];
    OperandSource source{std::move(needed), {}, nullptr, false, nullptr, 0, {}};
    if (reads_shared_slot(op_, index)) {
      const SharedSlot& slot = cg_.slots.at(&value);
      if (slot.ring->layout != row_major_shared_layout(slot.ring->layout.out_dims()))
        throw InternalError("dot: operand %" + std::to_string(value.id) +
                            " is in a swizzled ring slot, which the FMA units do not read (" + op_place(op_) + ")");
      source.staged = b_.CreateGEP(slot.ring->memory_type, slot.ring->base, slot.element_offset);
      source.from_slot = true;
      source.columns = value.type.shape[1];
      source.memory_type = slot.ring->memory_type;
      return source;
    }
    const LinearLayout& lives_in = cg_.layouts.at(value);
    const LayoutConversion* conversion = cg_.layouts.conversion(op_, value);
    if (conversion && conversion->to != source.layout)
      throw InternalError("dot: operand %" + std::to_string(value.id) +
                          " is converted to a layout other than its dot operand layout (" + op_place(op_) + ")");
    if (!conversion && lives_in != source.layout)
      throw InternalError("dot: operand %" + std::to_string(value.id) + " (" + ir::to_string(value.type) +
                          ") is not in its dot operand layout and layout assignment recorded no conversion (" +
                          op_place(op_) + ")");
    if (!conversion) {
      source.registers = cg_.values_of(value, static_cast<std::size_t>(lives_in.in_dim_size("register")), op_);
    } else if (plan_register_permute(conversion->from, conversion->to)) {
      source.registers = emit_layout_conversion(cg_, *conversion, op_);
    } else {
      stage(source, value, lives_in);
      return source;
    }
    for (int r = 0; r < source.layout.in_dim_size("register"); ++r)
      source.register_of.try_emplace(
          {register_coordinate(source.layout, r, 0), register_coordinate(source.layout, r, 1)}, r);
    return source;
  }

  /// Stores the elements this thread holds of `value` (in `lives_in`) at their
  /// row-major offsets in a shared-memory copy of the whole tile.
  void stage(OperandSource& source, const ir::Value& value, const LinearLayout& lives_in) {
    const Registers& values = cg_.values_of(value, static_cast<std::size_t>(lives_in.in_dim_size("register")), op_);
    source.columns = value.type.shape[1];
    source.memory_type = cg_.memory_type(value.type.element(), op_);
    source.staged = scratch_.take(static_cast<std::uint64_t>(staged_bytes(value)));
    store_tile(values, lives_in, source.memory_type, source.staged);
  }

  /// The bytes a staged tile takes.
  static std::int64_t staged_bytes(const ir::Value& value) {
    return value.type.numel() * ir::dtype_bytes(value.type.dtype);
  }

  llvm::Value* slot(const OperandSource& source, llvm::Value* offset) {
    return b_.CreateGEP(source.memory_type, source.staged, offset);
  }

  /// Element (row, column) of a staged operand; one coordinate is k.
  llvm::Value* load_staged(const OperandSource& source, llvm::Value* row, llvm::Value* column) {
    llvm::Value* offset =
        b_.CreateAdd(b_.CreateMul(row, b_.getInt32(static_cast<std::uint32_t>(source.columns))), column);
    return b_.CreateLoad(source.memory_type, slot(source, offset));
  }

  /// Element (row, column) of an operand held in registers (compile-time coordinates).
  llvm::Value* from_registers(const OperandSource& source, std::int32_t row, std::int32_t column, const char* which) {
    auto it = source.register_of.find({row, column});
    if (it == source.register_of.end())
      throw InternalError(std::string("dot: no register of operand ") + which + " holds element (" +
                          std::to_string(row) + ", " + std::to_string(column) + ") its thread needs (" + op_place(op_) +
                          ")");
    return source.registers[static_cast<std::size_t>(it->second)];
  }

  /// Stores the distinct elements this thread holds of a tile in `layout`
  /// (`values` in register order) row-major at `base`.
  void store_tile(const Registers& values, const LinearLayout& layout, llvm::Type* memory_type, llvm::Value* base) {
    SharedTile(cg_, layout, row_major_shared_layout(layout.out_dims()), memory_type, base).store(values);
  }

  /// The dot on tensor cores: the accumulator in its registers, a and b as
  /// fragments (read_fragments()); each 16 x 8 accumulator tile takes one
  /// mma.sync per k of the instruction (mma_instruction), in increasing k.
  void lower_on_tensor_cores(Registers c_values) {
    const std::int64_t m_size = op_.operands[0]->type.shape[0], n_size = op_.operands[1]->type.shape[1];
    const MmaWarps warps = dot_mma_warps(op_, cg_.target);
    Fragment fragments[2];
    const bool staged = read_fragments(fragments);

    const MmaInstruction instruction = mma_instruction(op_);
    const int per_register = instruction.elements_per_register;
    const int k_tiles = static_cast<int>(k_size_ / instruction.k);
    const int m_tiles = static_cast<int>(std::max<std::int64_t>(1, m_size / (16 * warps.m)));
    const int n_tiles = static_cast<int>(std::max<std::int64_t>(1, n_size / (8 * warps.n)));
    // A 32-bit register of operand `index` from its elements first … first + per_register - 1.
    auto operand_register = [&](int index, int first) {
      Registers elements;
      for (int e = 0; e < per_register; ++e) elements.push_back(fragment_register(fragments[index], first + e));
      return pack(elements);
    };
    for (int mi = 0; mi < m_tiles; ++mi)
      for (int ni = 0; ni < n_tiles; ++ni) {
        const int c_first = 4 * (ni + n_tiles * mi);
        llvm::Value* d[4] = {c_values[c_first], c_values[c_first + 1], c_values[c_first + 2], c_values[c_first + 3]};
        for (int ki = 0; ki < k_tiles; ++ki) {
          const int a_first = instruction.k / 2 * (ki + k_tiles * mi),
                    b_first = instruction.k / 4 * (ki + k_tiles * ni);
          std::vector<llvm::Value*> arguments;
          for (int j = 0; j < 4; ++j) arguments.push_back(operand_register(0, a_first + per_register * j));
          for (int j = 0; j < 2; ++j) arguments.push_back(operand_register(1, b_first + per_register * j));
          arguments.insert(arguments.end(), d, d + 4);
          llvm::Value* tile = mma(arguments);
          for (unsigned j = 0; j < 4; ++j) d[j] = b_.CreateExtractValue(tile, {j});
        }
        for (int j = 0; j < 4; ++j) c_values[c_first + j] = d[j];
      }
    // The staged tiles' scratch is free for the next op once every thread has read.
    if (staged) emit_barrier(cg_);
    cg_.define(*op_.result(), std::move(c_values));
  }

  /// Operand a or b in its fragment layout: the registers it is held in, or
  /// a staged shared tile read with ldmatrix one group of registers at a
  /// time on first use (fragment_register), so that each ldmatrix sits next
  /// to the mma that needs it rather than all of them live at once.
  struct Fragment {
    Registers values;  // null where not read yet
    std::optional<SharedTile> tile;
    std::optional<LdmatrixPlan> plan;
  };

  /// a and b in their fragment layouts: from registers where each already
  /// lives there or its conversion stays inside each thread; the others are
  /// stored into shared memory from the layouts they live in, each in a
  /// shared layout chosen for it (choose_shared_layout: along the layout it
  /// is stored from, swizzled against bank conflicts), and after a barrier
  /// read as fragments: with ldmatrix where plan_ldmatrix finds the
  /// fragment's form and its reads take no more wavefronts than reading
  /// each thread's elements would, else at once. (A tile stored element by
  /// element stays unswizzled, choose_shared_layout; conv2d's im2col tile,
  /// taps outer, is one: read with ldmatrix its loop on sm_80 runs 175 SASS
  /// instructions where element reads took 225, with 115 registers for 127.)
  /// True when some operand was staged: the caller ends the crossing with a
  /// barrier once every fragment is read.
  bool read_fragments(Fragment (&fragments)[2]) {
    struct Staged {
      int index;
      LinearLayout needed, shared;
      llvm::Value* base;
    };
    std::vector<Staged> staged;
    const int element_bytes = static_cast<int>(ir::dtype_bytes(input_));
    for (int index : {0, 1}) {
      const ir::Value& value = *op_.operands[static_cast<std::size_t>(index)];
      LinearLayout needed = dot_fragment_layout(op_, index == 0 ? DotOperand::a : DotOperand::b, cg_.target);
      if (reads_shared_slot(op_, index)) {
        read_from_slot(fragments[index], cg_.slots.at(&value), needed, element_bytes);
        continue;
      }
      // Derived here rather than looked up: x @ x reads one value in two
      // fragment layouts, and layout assignment keys conversions by value.
      const LinearLayout& lives_in = cg_.layouts.at(value);
      if (lives_in == needed)
        fragments[index].values = cg_.values_of(value, static_cast<std::size_t>(needed.in_dim_size("register")), op_);
      else if (plan_register_permute(lives_in, needed))
        fragments[index].values = emit_layout_conversion(cg_, LayoutConversion{&value, lives_in, needed}, op_);
      else {
        LinearLayout shared = choose_shared_layout(lives_in, needed, element_bytes);
        staged.push_back({index, std::move(needed), std::move(shared), nullptr});
      }
    }
    if (staged.empty()) return false;
    llvm::Type* memory_type = input_memory_type();
    for (Staged& tile : staged) {
      const ir::Value& value = *op_.operands[static_cast<std::size_t>(tile.index)];
      const LinearLayout& lives_in = cg_.layouts.at(value);
      tile.base = scratch_.take(static_cast<std::uint64_t>(staged_bytes(value)));
      SharedTile(cg_, lives_in, tile.shared, memory_type, tile.base)
          .store(cg_.values_of(value, static_cast<std::size_t>(lives_in.in_dim_size("register")), op_));
    }
    emit_barrier(cg_);
    for (const Staged& tile : staged) {
      Fragment& fragment = fragments[tile.index];
      fragment.tile.emplace(cg_, tile.needed, tile.shared, memory_type, tile.base);
      fragment.plan = plan_ldmatrix(tile.needed, tile.shared, element_bytes);
      if (fragment.plan && ldmatrix_cost(tile.needed, tile.shared, *fragment.plan).wavefronts >
                               tile_access_cost(tile.needed, tile.shared, element_bytes).wavefronts)
        fragment.plan.reset();
      if (fragment.plan) fragment.values.assign(static_cast<std::size_t>(tile.needed.in_dim_size("register")), nullptr);
      else fragment.values = fragment.tile->load(memory_type);
    }
    return true;
  }

  /// A fragment read from a pipelined loop's ring slot (no crossing of its
  /// own: the loop's barrier made the slot visible), with ldmatrix where the
  /// ring's layout allows.
  void read_from_slot(Fragment& fragment, const SharedSlot& slot, const LinearLayout& needed, int element_bytes) {
    fragment.tile.emplace(cg_, needed, slot.ring->layout, slot.ring->memory_type, slot.ring->base, slot.element_offset);
    fragment.plan = plan_ldmatrix(needed, slot.ring->layout, element_bytes);
    if (fragment.plan) fragment.values.assign(static_cast<std::size_t>(needed.in_dim_size("register")), nullptr);
    else fragment.values = fragment.tile->load(slot.ring->memory_type);
  }

  /// Register `reg` of a fragment, reading its ldmatrix group first when it is not read yet.
  llvm::Value* fragment_register(Fragment& fragment, int reg) {
    llvm::Value*& value = fragment.values.at(static_cast<std::size_t>(reg));
    if (!value) {
      const int first = reg - reg % fragment.plan->registers_per_load();
      const Registers group = fragment.tile->load_with_ldmatrix(*fragment.plan, input_memory_type(), first);
      std::copy(group.begin(), group.end(), fragment.values.begin() + first);
    }
    return value;
  }

  llvm::Type* input_memory_type() const { return cg_.memory_type(op_.operands[0]->type.element(), op_); }

  /// One mma.sync of the dot's input dtype on A (4 registers), B (2) and C
  /// (4): an NVVM intrinsic, or for fp8, which LLVM 19 has none for, inline
  /// PTX with D tied to C. Returns D as a struct of 4.
  llvm::Value* mma(const std::vector<llvm::Value*>& arguments) {
    switch (input_) {
      case DType::bf16: return b_.CreateIntrinsic(llvm::Intrinsic::nvvm_mma_m16n8k16_row_col_bf16, {}, arguments);
      case DType::i8: return b_.CreateIntrinsic(llvm::Intrinsic::nvvm_mma_m16n8k32_row_col_s8, {}, arguments);
      case DType::f32: return b_.CreateIntrinsic(llvm::Intrinsic::nvvm_mma_m16n8k8_row_col_tf32, {}, arguments);
      case DType::f8e4m3:
      case DType::f8e5m2: {
        const std::string type = input_ == DType::f8e4m3 ? "e4m3" : "e5m2";
        llvm::Type* f32 = b_.getFloatTy();
        return emit_asm_call(cg_, llvm::StructType::get(cg_.context, {f32, f32, f32, f32}), arguments,
                             "mma.sync.aligned.m16n8k32.row.col.f32." + type + "." + type +
                                 ".f32 {$0, $1, $2, $3}, {$4, $5, $6, $7}, {$8, $9}, {$0, $1, $2, $3};",
                             "=f,=f,=f,=f,r,r,r,r,r,r,0,1,2,3");
      }
      default: return b_.CreateIntrinsic(llvm::Intrinsic::nvvm_mma_m16n8k16_row_col_f32_f32, {}, arguments);
    }
  }

  /// Fragment elements in one 32-bit register, the first in the lowest bits,
  /// as the intrinsics take them: <2 x half> for f16, an i32 otherwise; f32
  /// elements rounded to tf32 first (to nearest even, as the interpreter
  /// does, so that the tensor cores' truncation to tf32 is exact).
  llvm::Value* pack(const Registers& elements) {
    if (input_ == DType::f32) return b_.CreateBitCast(round_tf32(elements.front()), b_.getInt32Ty());
    llvm::Value* packed =
        llvm::PoisonValue::get(llvm::FixedVectorType::get(elements.front()->getType(), elements.size()));
    for (std::size_t e = 0; e < elements.size(); ++e) packed = b_.CreateInsertElement(packed, elements[e], e);
    return input_ == DType::f16 ? packed : b_.CreateBitCast(packed, b_.getInt32Ty());
  }

  /// One k: sums[r] += a[row(r), k] * b[k, column(r)] for every result
  /// register. `k_constant` is k when it is known at compile time (required
  /// for an operand read from registers).
  Registers step(const Registers& sums, const OperandSource& a, const OperandSource& b, Part a_part, Part b_part,
                 llvm::Value* k, std::optional<std::int32_t> k_constant) {
    Registers a_values, b_values;
    for (std::int32_t row : rows_) {
      llvm::Value* value = a.staged ? load_staged(a, b_.CreateXor(a_thread_row_, b_.getInt32(row)), k)
                                    : from_registers(a, row, k_constant.value(), "a");
      a_values.push_back(part_of(value, a_part));
    }
    for (std::int32_t column : columns_) {
      llvm::Value* value = b.staged ? load_staged(b, k, b_.CreateXor(b_thread_column_, b_.getInt32(column)))
                                    : from_registers(b, k_constant.value(), column, "b");
      b_values.push_back(part_of(value, b_part));
    }
    const bool fused = is_float_ && precision_ == Precision::ieee && product_is_exact_in_f32(input_);
    Registers next;
    for (std::size_t r = 0; r < sums.size(); ++r) {
      llvm::Value* x = a_values[static_cast<std::size_t>(row_of_[r])];
      llvm::Value* y = b_values[static_cast<std::size_t>(column_of_[r])];
      if (fused) next.push_back(b_.CreateIntrinsic(llvm::Intrinsic::fma, {work_type_}, {x, y, sums[r]}));
      else if (is_float_) next.push_back(b_.CreateFAdd(sums[r], b_.CreateFMul(x, y)));
      else next.push_back(b_.CreateAdd(sums[r], b_.CreateMul(x, y)));
    }
    return next;
  }

  /// The steps for k = 0 … K-1 as a runtime loop (both operands staged), the
  /// sums carried in phis.
  Registers accumulate_in_loop(const Registers& sums, const OperandSource& a, const OperandSource& b, Part a_part,
                               Part b_part) {
    llvm::BasicBlock* before = b_.GetInsertBlock();
    auto* loop = llvm::BasicBlock::Create(cg_.context, "dot_k", cg_.kernel);
    auto* after = llvm::BasicBlock::Create(cg_.context, "dot_k_done", cg_.kernel);
    b_.CreateBr(loop);
    b_.SetInsertPoint(loop);
    llvm::PHINode* k = b_.CreatePHI(b_.getInt32Ty(), 2, "k");
    k->addIncoming(b_.getInt32(0), before);
    Registers carried;
    for (llvm::Value* sum : sums) {
      llvm::PHINode* phi = b_.CreatePHI(work_type_, 2);
      phi->addIncoming(sum, before);
      carried.push_back(phi);
    }
    const Registers next = step(carried, a, b, a_part, b_part, k, std::nullopt);
    llvm::Value* k_next = b_.CreateAdd(k, b_.getInt32(1));
    llvm::BasicBlock* latch = b_.GetInsertBlock();
    k->addIncoming(k_next, latch);
    for (std::size_t r = 0; r < next.size(); ++r) llvm::cast<llvm::PHINode>(carried[r])->addIncoming(next[r], latch);
    llvm::BranchInst* back_edge =
        b_.CreateCondBr(b_.CreateICmpSLT(k_next, b_.getInt32(static_cast<std::uint32_t>(k_size_))), loop, after);
    // Not unrolled: an unrolled body keeps several k's operands live at once
    // (255 registers for matmul at 64x64x32 without alignment facts, 80 with
    // this), and a full unroll of K = 128 hands ptxas tens of thousands of
    // straight-line products.
    llvm::Metadata* loop_properties[] = {
        nullptr, llvm::MDNode::get(cg_.context, {llvm::MDString::get(cg_.context, "llvm.loop.unroll.disable")})};
    llvm::MDNode* loop_id = llvm::MDNode::getDistinct(cg_.context, loop_properties);
    loop_id->replaceOperandWith(0, loop_id);
    back_edge->setMetadata(llvm::LLVMContext::MD_loop, loop_id);
    b_.SetInsertPoint(after);
    return next;
  }

  /// An input element as it enters a product: widened to f32 (floats) or to
  /// the accumulator's type (sign- or zero-extended integers), or the head or
  /// tail of its tf32 split.
  llvm::Value* part_of(llvm::Value* value, Part part) {
    if (!is_float_)
      return ir::is_unsigned_int(input_) ? b_.CreateZExtOrTrunc(value, work_type_)
                                         : b_.CreateSExtOrTrunc(value, work_type_);
    llvm::Value* widened = is_fp8(input_)                   ? fp8_to_float(cg_, value, input_)
                           : value->getType() == work_type_ ? value
                                                            : b_.CreateFPExt(value, work_type_);
    if (part == Part::widened) return widened;
    llvm::Value* head = round_tf32(widened);
    return part == Part::head ? head : round_tf32(b_.CreateFSub(widened, head));
  }

  /// The interpreter's tf32 rounding: to nearest even at 10 mantissa bits,
  /// infinities and NaN unchanged.
  llvm::Value* round_tf32(llvm::Value* value) {
    llvm::Value* bits = b_.CreateBitCast(value, b_.getInt32Ty());
    llvm::Value* not_finite = b_.CreateICmpEQ(b_.CreateAnd(bits, 0x7f800000u), b_.getInt32(0x7f800000u));
    llvm::Value* carry = b_.CreateAnd(b_.CreateLShr(bits, 13), 1);
    llvm::Value* rounded = b_.CreateAnd(b_.CreateAdd(b_.CreateAdd(bits, b_.getInt32(0xfffu)), carry), ~0x1fffu);
    return b_.CreateBitCast(b_.CreateSelect(not_finite, bits, rounded), work_type_);
  }

  llvm::Value* to_work(llvm::Value* value) {
    if (value->getType() == work_type_) return value;
    return is_float_ ? b_.CreateFPCast(value, work_type_) : b_.CreateSExtOrTrunc(value, work_type_);
  }
  llvm::Value* from_work(llvm::Value* value) {
    if (value->getType() == accumulator_type_) return value;
    return is_float_ ? b_.CreateFPCast(value, accumulator_type_) : b_.CreateTrunc(value, accumulator_type_);
  }

  KernelCodegen& cg_;
  llvm::IRBuilder<>& b_;
  const ir::Operation& op_;
  /// The staged tiles, consecutive in the kernel's shared memory.
  SharedScratch scratch_;
  DType input_ = DType::f32;
  bool is_float_ = true;
  llvm::Type* accumulator_type_ = nullptr;
  llvm::Type* work_type_ = nullptr;
  Precision precision_ = Precision::ieee;
  std::int32_t k_size_ = 0;
  /// The compile-time parts of the thread's distinct result rows and
  /// columns, and each result register's index among them.
  std::vector<std::int32_t> rows_, columns_;
  std::vector<int> row_of_, column_of_;
  /// The thread parts of its rows of a and columns of b.
  llvm::Value* a_thread_row_ = nullptr;
  llvm::Value* b_thread_column_ = nullptr;
};

}  // namespace

void emit_dot_op(KernelCodegen& cg, const ir::Operation& op) { DotLowering(cg, op).lower(); }

}  // namespace kiln::lowering
