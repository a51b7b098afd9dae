// The operand layouts of `dot`: for the FMA path built from the result's layout basis
// by basis, and the tensor-core (mma.sync m16n8k16, k32 and k8) accumulator and
// fragment layouts with the rule for which dots run on tensor cores.
#include "kiln/lowering/dot_layout.hpp"

#include <algorithm>
#include <bit>
#include <cctype>
#include <set>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "kiln/ir/attribute_enums.hpp"
#include "kiln/lowering/wgmma_layout.hpp"

namespace kiln::lowering {

namespace {

[[noreturn]] void fail(const std::string& message) { throw std::invalid_argument(message); }

/// The operand's coordinates of a result basis (m, n): the shared dimension
/// kept, K left at 0.
LinearLayout::Basis project(const LinearLayout::Basis& result_basis, DotOperand operand) {
  return operand == DotOperand::a ? LinearLayout::Basis{result_basis[0], 0} : LinearLayout::Basis{0, result_basis[1]};
}

/// Packs an operand coordinate pair into one integer for span bookkeeping.
std::int64_t pack(const LinearLayout::Basis& basis) {
  return (static_cast<std::int64_t>(basis[0]) << 32) | static_cast<std::uint32_t>(basis[1]);
}

int log2_of(std::int64_t value) { return std::countr_zero(static_cast<std::uint64_t>(value)); }

void check_power_of_two(const char* what, std::int64_t value) {
  if (value <= 0 || !std::has_single_bit(static_cast<std::uint64_t>(value)) || value > (std::int64_t{1} << 30))
    fail(std::string("mma layout: ") + what + " is " + std::to_string(value) + ", not a power of two");
}

/// `count` (a power of two) bases stepping by `step` along dimension `dim`:
/// step, 2 step, 4 step, …
void append_steps(std::vector<LinearLayout::Basis>& bases, std::int64_t count, std::int64_t step, int dim) {
  for (std::int64_t factor = 1; factor < count; factor *= 2) {
    LinearLayout::Basis basis = {0, 0};
    basis[dim] = static_cast<std::int32_t>(step * factor);
    bases.push_back(basis);
  }
}

/// The layout with these bases onto a rows x columns tile; a coordinate at
/// or beyond the tile's size wraps to 0 (copies), as in blocked_layout.
LinearLayout from_bases(std::vector<LinearLayout::Basis> registers, std::vector<LinearLayout::Basis> lanes,
                        std::vector<LinearLayout::Basis> warps, std::int64_t rows, std::int64_t columns) {
  for (auto* bases : {&registers, &lanes, &warps})
    for (auto& basis : *bases) {
      if (basis[0] >= rows) basis[0] = 0;
      if (basis[1] >= columns) basis[1] = 0;
    }
  return LinearLayout({{"register", std::move(registers)}, {"lane", std::move(lanes)}, {"warp", std::move(warps)}},
                      {{"dim0", log2_of(rows)}, {"dim1", log2_of(columns)}});
}

/// The warp bases: m bits down the rows (16 apart), then n bits across the
/// columns (8 apart), either replaced by 0 where the operand does not span
/// that dimension, then copies.
std::vector<LinearLayout::Basis> warp_bases(MmaWarps warps, int num_warps, bool along_m, bool along_n) {
  std::vector<LinearLayout::Basis> bases;
  append_steps(bases, warps.m, 16, 0);
  if (!along_m) bases.assign(bases.size(), {0, 0});
  std::vector<LinearLayout::Basis> n_bases;
  append_steps(n_bases, warps.n, 8, 1);
  if (!along_n) n_bases.assign(n_bases.size(), {0, 0});
  bases.insert(bases.end(), n_bases.begin(), n_bases.end());
  while (static_cast<int>(bases.size()) < log2_of(num_warps)) bases.push_back({0, 0});
  return bases;
}

/// The ops of `block` that `dot`'s a and b are computed from, transitively
/// (its accumulator left out: a dot adding to another's result, as an
/// unrolled K loop does, hands nothing over in registers).
std::set<const ir::Operation*> operands_computed_from(const ir::Operation& dot, const ir::Block& block) {
  std::set<const ir::Operation*> found;
  std::vector<const ir::Value*> pending = {dot.operands[0], dot.operands[1]};
  while (!pending.empty()) {
    const ir::Value* value = pending.back();
    pending.pop_back();
    if (value->def && value->def->parent == &block && found.insert(value->def).second)
      pending.insert(pending.end(), value->def->operands.begin(), value->def->operands.end());
  }
  return found;
}

/// Whether another dot of `dot`'s block computes its a or b, or `dot` that
/// dot's a or b (Triton's test on the dot's slice): attention's P = f(Q K^T)
/// in P V.
bool chained_to_another_dot(const ir::Operation& dot) {
  if (!dot.parent) return false;
  const std::set<const ir::Operation*> sources = operands_computed_from(dot, *dot.parent);
  for (const auto& other : dot.parent->ops)
    if (other->code == ir::OpCode::dot && other.get() != &dot &&
        (sources.contains(other.get()) || operands_computed_from(*other, *dot.parent).contains(&dot)))
      return true;
  return false;
}

}  // namespace

MmaWarps mma_warps(std::int64_t m_size, std::int64_t n_size, int num_warps) {
  check_power_of_two("M", m_size);
  check_power_of_two("N", n_size);
  check_power_of_two("num_warps", num_warps);
  MmaWarps best;
  std::int64_t best_reads = 0;
  for (int m = static_cast<int>(std::clamp<std::int64_t>(m_size / 16, 1, num_warps)); m >= 1; m /= 2) {
    const int n = static_cast<int>(std::clamp<std::int64_t>(n_size / 8, 1, num_warps / m));
    const std::int64_t reads = m_size / m + n_size / n;
    if (best_reads == 0 || reads < best_reads) {
      best = {m, n};
      best_reads = reads;
    }
  }
  return best;
}

MmaWarps mma_warps_down_rows(std::int64_t m_size, std::int64_t n_size, int num_warps) {
  check_power_of_two("M", m_size);
  check_power_of_two("N", n_size);
  check_power_of_two("num_warps", num_warps);
  MmaWarps warps;
  warps.m = static_cast<int>(std::clamp<std::int64_t>(m_size / 16, 1, num_warps));
  warps.n = static_cast<int>(std::clamp<std::int64_t>(n_size / 8, 1, num_warps / warps.m));
  return warps;
}

LinearLayout mma_accumulator_layout(std::int64_t m_size, std::int64_t n_size, MmaWarps warps, int num_warps) {
  check_power_of_two("M", m_size);
  check_power_of_two("N", n_size);
  std::vector<LinearLayout::Basis> registers = {{0, 1}, {8, 0}};
  append_steps(registers, std::max<std::int64_t>(1, n_size / (8 * warps.n)), 8 * warps.n, 1);
  append_steps(registers, std::max<std::int64_t>(1, m_size / (16 * warps.m)), 16 * warps.m, 0);
  return from_bases(std::move(registers), {{0, 2}, {0, 4}, {1, 0}, {2, 0}, {4, 0}},
                    warp_bases(warps, num_warps, true, true), m_size, n_size);
}

LinearLayout mma_operand_layout(DotOperand operand, std::int64_t rows, std::int64_t columns, MmaWarps warps,
                                int num_warps, MmaInstruction instruction) {
  check_power_of_two("rows", rows);
  check_power_of_two("columns", columns);
  const int k = instruction.k, per_register = instruction.elements_per_register;
  const std::int64_t k_size = operand == DotOperand::a ? columns : rows;
  if (k_size % k != 0) fail("mma layout: K is " + std::to_string(k_size) + ", not a multiple of " + std::to_string(k));
  // Along K first inside a register, then the second 8 rows (a) or the
  // second half of K (b), then the k tiles; the lanes take K in steps of a
  // register and the rows (a) or columns (b) in groups of 4.
  const int along_k = operand == DotOperand::a ? 1 : 0;
  std::vector<LinearLayout::Basis> registers;
  append_steps(registers, per_register, 1, along_k);
  if (operand == DotOperand::a) registers.push_back({8, 0});
  registers.push_back(operand == DotOperand::a ? LinearLayout::Basis{0, k / 2} : LinearLayout::Basis{k / 2, 0});
  append_steps(registers, k_size / k, k, along_k);
  std::vector<LinearLayout::Basis> lanes;
  append_steps(lanes, 4, per_register, along_k);
  append_steps(lanes, 8, 1, 1 - along_k);
  if (operand == DotOperand::a) {
    append_steps(registers, std::max<std::int64_t>(1, rows / (16 * warps.m)), 16 * warps.m, 0);
    return from_bases(std::move(registers), std::move(lanes), warp_bases(warps, num_warps, true, false), rows, columns);
  }
  append_steps(registers, std::max<std::int64_t>(1, columns / (8 * warps.n)), 8 * warps.n, 1);
  return from_bases(std::move(registers), std::move(lanes), warp_bases(warps, num_warps, false, true), rows, columns);
}

int compute_capability(std::string_view arch) {
  if (!arch.starts_with("sm_")) return 0;
  int number = 0;
  for (std::size_t i = 3; i < arch.size() && std::isdigit(static_cast<unsigned char>(arch[i])); ++i)
    number = number * 10 + (arch[i] - '0');
  return number;
}

MmaInstruction mma_instruction(const ir::Operation& dot) {
  const ir::DType input = dot.operands.at(0)->type.dtype;
  switch (input) {
    case ir::DType::f16:
    case ir::DType::bf16: return {16, 2};
    case ir::DType::i8:
    case ir::DType::f8e4m3:
    case ir::DType::f8e5m2: return {32, 4};
    case ir::DType::f32: return {8, 1};
    default: fail("mma layout: no mma.sync takes " + std::string(ir::dtype_name(input)) + " inputs");
  }
}

bool dot_uses_tensor_cores(const ir::Operation& dot, const GpuTarget& target) {
  if (!target.tensor_cores || compute_capability(target.arch) < 80 || dot.code != ir::OpCode::dot ||
      dot.operands.size() != 3 || dot.results.size() != 1)
    return false;
  const ir::Type& a = dot.operands[0]->type;
  const ir::Type& b = dot.operands[1]->type;
  const ir::Type& acc = dot.operands[2]->type;
  if (a.shape.size() != 2 || b.shape.size() != 2 || acc.shape.size() != 2 || b.dtype != a.dtype) return false;
  switch (a.dtype) {
    case ir::DType::f16:
    case ir::DType::bf16: return acc.dtype == ir::DType::f32 && a.shape[1] % 16 == 0;
    case ir::DType::i8: return acc.dtype == ir::DType::i32 && a.shape[1] % 32 == 0;
    case ir::DType::f8e4m3:
    case ir::DType::f8e5m2:
      return compute_capability(target.arch) >= 89 && acc.dtype == ir::DType::f32 && a.shape[1] % 32 == 0;
    case ir::DType::f32:
      return acc.dtype == ir::DType::f32 && a.shape[1] % 8 == 0 &&
             ir::attribute_enum<ir::Precision>(dot) == ir::Precision::tf32;
    default: return false;
  }
}

MmaWarps dot_mma_warps(const ir::Operation& dot, const GpuTarget& target) {
  const std::int64_t m_size = dot.operands[0]->type.shape[0], n_size = dot.operands[1]->type.shape[1];
  return dot_fits_wgmma(dot, target) || chained_to_another_dot(dot)
             ? mma_warps_down_rows(m_size, n_size, target.num_warps)
             : mma_warps(m_size, n_size, target.num_warps);
}

LinearLayout dot_accumulator_layout(const ir::Operation& dot, const GpuTarget& target) {
  const std::int64_t m_size = dot.operands[0]->type.shape[0], n_size = dot.operands[1]->type.shape[1];
  return mma_accumulator_layout(m_size, n_size, dot_mma_warps(dot, target), target.num_warps);
}

bool reads_shared_slot(const ir::Operation& dot, int index) {
  const ir::Operation* def = dot.operands.at(static_cast<std::size_t>(index))->def;
  return index < 2 && def && def->code == ir::OpCode::local_load;
}

LinearLayout dot_fragment_layout(const ir::Operation& dot, DotOperand operand, const GpuTarget& target) {
  const std::int64_t m_size = dot.operands[0]->type.shape[0], n_size = dot.operands[1]->type.shape[1];
  const std::int64_t k_size = dot.operands[0]->type.shape[1];
  const MmaWarps warps = dot_mma_warps(dot, target);
  const MmaInstruction instruction = mma_instruction(dot);
  const int num_warps = target.num_warps;
  return operand == DotOperand::a ? mma_operand_layout(DotOperand::a, m_size, k_size, warps, num_warps, instruction)
                                  : mma_operand_layout(DotOperand::b, k_size, n_size, warps, num_warps, instruction);
}

LinearLayout dot_operand_layout(const LinearLayout& result, DotOperand operand, std::int64_t k_size) {
  if (k_size <= 0 || !std::has_single_bit(static_cast<std::uint64_t>(k_size)) || k_size > (std::int64_t{1} << 30))
    fail("dot_operand_layout: K is " + std::to_string(k_size) + ", not a power of two");
  const auto& outs = result.out_dims();
  if (outs.size() != 2 || outs[0].name != "dim0" || outs[1].name != "dim1")
    fail("dot_operand_layout: the result layout's outputs are not (dim0, dim1):\n" + to_string(result));
  for (const char* in : {"register", "lane", "warp"})
    if (!result.has_in_dim(in)) fail(std::string("dot_operand_layout: the result layout has no input '") + in + "'");

  const int k_bits = std::countr_zero(static_cast<std::uint64_t>(k_size));
  const int k_position = operand == DotOperand::a ? 1 : 0;
  std::vector<LinearLayout::OutDim> operand_outs = {{"dim0", outs[0].log2_size}, {"dim1", outs[1].log2_size}};
  operand_outs[k_position].log2_size = k_bits;

  // The K elements, then the result's registers along the shared dimension;
  // a register whose basis is spanned by the kept ones would hold a copy.
  LinearLayout::InDim registers{"register", {}};
  std::set<std::int64_t> span = {0};
  auto keep_if_new = [&](const LinearLayout::Basis& basis) {
    if (span.count(pack(basis))) return;
    std::vector<std::int64_t> grown;
    for (std::int64_t element : span) {
      LinearLayout::Basis sum = {static_cast<std::int32_t>(element >> 32) ^ basis[0],
                                 static_cast<std::int32_t>(element & 0xffffffff) ^ basis[1]};
      grown.push_back(pack(sum));
    }
    span.insert(grown.begin(), grown.end());
    registers.bases.push_back(basis);
  };
  for (int bit = 0; bit < k_bits; ++bit) {
    LinearLayout::Basis basis = {0, 0};
    basis[k_position] = std::int32_t{1} << bit;
    keep_if_new(basis);
  }
  for (int bit = 0; bit < result.in_dim_size_log2("register"); ++bit)
    keep_if_new(project(result.basis("register", bit), operand));

  std::vector<LinearLayout::InDim> ins = {std::move(registers)};
  for (const char* in : {"lane", "warp"}) {
    LinearLayout::InDim thread_dim{in, {}};
    for (int bit = 0; bit < result.in_dim_size_log2(in); ++bit)
      thread_dim.bases.push_back(project(result.basis(in, bit), operand));
    ins.push_back(std::move(thread_dim));
  }
  return LinearLayout(std::move(ins), std::move(operand_outs));
}

}  // namespace kiln::lowering
