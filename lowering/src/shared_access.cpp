// Shared-memory accesses derived from linear layouts: vector widths, the
// ldmatrix plan for mma fragments, bank-conflict costs and the swizzle
// chosen by them (shared_access.hpp).
#include "kiln/lowering/shared_access.hpp"

#include <algorithm>
#include <array>
#include <bit>
#include <set>
#include <stdexcept>
#include <string>

namespace kiln::lowering {

namespace {

constexpr int kBanks = 32;
constexpr int kBankBytes = 4;
constexpr int kWidestAccessBytes = 16;
constexpr int kLaneBits = 5;
constexpr int kMatrixRows = 8;  // of an ldmatrix matrix

/// Whether every basis in `bases` other than those `skipped` (bit numbers) is a multiple of `step`.
bool all_multiples(const std::vector<std::int32_t>& bases, std::int32_t step, std::set<int> skipped = {}) {
  for (std::size_t bit = 0; bit < bases.size(); ++bit)
    if (!skipped.count(static_cast<int>(bit)) && bases[bit] % step != 0) return false;
  return true;
}

}  // namespace

OffsetBases::OffsetBases(const LinearLayout& offsets) {
  auto bases = [&](const char* in) {
    std::vector<std::int32_t> out;
    if (offsets.has_in_dim(in))
      for (int bit = 0; bit < offsets.in_dim_size_log2(in); ++bit) out.push_back(offsets.basis(in, bit)[0]);
    return out;
  };
  registers = bases("register");
  lanes = bases("lane");
  warps = bases("warp");
}

std::int32_t OffsetBases::apply(const std::vector<std::int32_t>& bases, std::int32_t index) {
  std::int32_t offset = 0;
  for (std::size_t bit = 0; bit < bases.size(); ++bit)
    if ((index >> bit) & 1) offset ^= bases[bit];
  return offset;
}

LinearLayout register_offsets(const LinearLayout& registers, const LinearLayout& shared) {
  if (registers.out_dims() != shared.out_dims())
    throw std::invalid_argument("register_offsets: the register layout covers\n" + to_string(registers) +
                                "\nand the shared layout\n" + to_string(shared));
  return registers.compose(shared.invert());
}

int shared_vector_elements(const OffsetBases& bases, int element_bytes) {
  auto groups_aligned = [&](int width_log2) {
    const std::int32_t width = std::int32_t{1} << width_log2;
    for (std::size_t bit = static_cast<std::size_t>(width_log2); bit < bases.registers.size(); ++bit)
      if (bases.registers[bit] % width != 0) return false;
    return all_multiples(bases.lanes, width) && all_multiples(bases.warps, width);
  };
  int width_log2 = 0;
  while (width_log2 < static_cast<int>(bases.registers.size()) &&
         (element_bytes << (width_log2 + 1)) <= kWidestAccessBytes &&
         bases.registers[static_cast<std::size_t>(width_log2)] == (1 << width_log2) && groups_aligned(width_log2 + 1))
    ++width_log2;
  return 1 << width_log2;
}

SharedAccessCost warp_access_cost(std::span<const std::uint32_t> byte_addresses, int access_bytes) {
  if (access_bytes != 1 && access_bytes != 2 && access_bytes != 4 && access_bytes != 8 && access_bytes != 16)
    throw std::invalid_argument("warp_access_cost: an access of " + std::to_string(access_bytes) +
                                " bytes is not 1, 2, 4, 8 or 16");
  const std::size_t phase_lanes = access_bytes <= kBankBytes ? 32 : static_cast<std::size_t>(128 / access_bytes);
  SharedAccessCost cost;
  for (std::size_t first = 0; first < byte_addresses.size(); first += phase_lanes) {
    std::array<std::set<std::uint32_t>, kBanks> words;
    std::set<std::uint32_t> distinct;
    for (std::size_t lane = first; lane < std::min(byte_addresses.size(), first + phase_lanes); ++lane) {
      const std::uint32_t address = byte_addresses[lane];
      for (std::uint32_t word = address / kBankBytes; word <= (address + access_bytes - 1) / kBankBytes; ++word) {
        words[word % kBanks].insert(word);
        distinct.insert(word);
      }
    }
    std::size_t busiest = 0;
    for (const auto& bank : words) busiest = std::max(busiest, bank.size());
    cost.wavefronts += static_cast<int>(busiest);
    cost.ideal += static_cast<int>((distinct.size() + kBanks - 1) / kBanks);
  }
  return cost;
}

SharedAccessCost tile_access_cost(const LinearLayout& registers, const LinearLayout& shared, int element_bytes) {
  const OffsetBases bases(register_offsets(registers, shared));
  const int width = shared_vector_elements(bases, element_bytes);
  SharedAccessCost cost;
  std::set<std::int32_t> seen;
  for (int first = 0; first < bases.register_count(); first += width) {
    // A group whose elements another group holds is accessed once.
    if (!seen.insert(bases.at(first, 0, 0)).second) continue;
    for (int warp = 0; warp < bases.warp_count(); ++warp) {
      std::vector<std::uint32_t> addresses;
      for (int lane = 0; lane < bases.lane_count(); ++lane)
        addresses.push_back(static_cast<std::uint32_t>(bases.at(first, lane, warp) * element_bytes));
      cost += warp_access_cost(addresses, width * element_bytes);
    }
  }
  return cost;
}

std::optional<LdmatrixPlan> plan_ldmatrix(const LinearLayout& fragment, const LinearLayout& shared, int element_bytes) {
  if (element_bytes != 1 && element_bytes != 2 && element_bytes != 4) return std::nullopt;
  const OffsetBases bases(register_offsets(fragment, shared));
  const int per_word = 4 / element_bytes, word_bits = std::countr_zero(static_cast<unsigned>(per_word));
  const std::int32_t row = kWidestAccessBytes / element_bytes;
  if (bases.register_count() < per_word || bases.lanes.size() != kLaneBits) return std::nullopt;
  const auto& reg = bases.registers;
  const auto& lane = bases.lanes;
  LdmatrixPlan plan;
  plan.elements_per_register = per_word;
  plan.matrices = std::min(4, bases.register_count() / per_word);
  const int matrix_bits = std::countr_zero(static_cast<unsigned>(plan.matrices));
  auto matrix_register = [&](int bit) {
    return bit < matrix_bits ? reg[static_cast<std::size_t>(word_bits + bit)] : 0;
  };
  std::set<int> within_word;
  bool words_in_order = lane[0] == per_word && lane[1] == 2 * per_word;
  for (int bit = 0; bit < word_bits; ++bit) {
    within_word.insert(bit);
    words_in_order = words_in_order && reg[static_cast<std::size_t>(bit)] == (1 << bit);
  }
  if (words_in_order && all_multiples(reg, row, within_word) && all_multiples(lane, row, {0, 1}) &&
      all_multiples(bases.warps, row)) {
    // Row r of matrix j: the lane with bits 2-4 = r, the first register of word j.
    plan.lane_offsets = {lane[2], lane[3], lane[4], matrix_register(0), matrix_register(1)};
    return plan;
  }
  if (element_bytes == 2 && lane[2] == 1 && lane[3] == 2 && lane[4] == 4 && all_multiples(reg, row) &&
      all_multiples(lane, row, {2, 3, 4}) && all_multiples(bases.warps, row)) {
    // Row r = 2t + e of matrix j: register 2j + e of the lane with bits 0-1 = t.
    plan.transposed = true;
    plan.lane_offsets = {reg[0], lane[0], lane[1], matrix_register(0), matrix_register(1)};
    return plan;
  }
  return std::nullopt;
}

SharedAccessCost ldmatrix_cost(const LinearLayout& fragment, const LinearLayout& shared, const LdmatrixPlan& plan) {
  const OffsetBases bases(register_offsets(fragment, shared));
  const int element_bytes = 4 / plan.elements_per_register;
  SharedAccessCost cost;
  for (int first = 0; first < bases.register_count(); first += plan.registers_per_load())
    for (int warp = 0; warp < bases.warp_count(); ++warp)
      for (int matrix = 0; matrix < plan.matrices; ++matrix) {
        std::vector<std::uint32_t> rows;
        for (int row = 0; row < kMatrixRows; ++row) {
          const std::int32_t offset =
              bases.at(first, 0, warp) ^ OffsetBases::apply(plan.lane_offsets, kMatrixRows * matrix + row);
          rows.push_back(static_cast<std::uint32_t>(offset * element_bytes));
        }
        cost += warp_access_cost(rows, kWidestAccessBytes);
      }
  return cost;
}

SharedAccessCost fragment_read_cost(const LinearLayout& fragment, const LinearLayout& shared, int element_bytes) {
  if (const std::optional<LdmatrixPlan> plan = plan_ldmatrix(fragment, shared, element_bytes))
    return ldmatrix_cost(fragment, shared, *plan);
  return tile_access_cost(fragment, shared, element_bytes);
}

bool stored_in_16_byte_vectors(const LinearLayout& writer, const LinearLayout& shared, int element_bytes) {
  return shared_vector_elements(OffsetBases(register_offsets(writer, shared)), element_bytes) * element_bytes ==
         kWidestAccessBytes;
}

LinearLayout choose_shared_layout(const LinearLayout& writer, const LinearLayout& reader, int element_bytes) {
  if (writer.out_dims().size() != 2)
    throw std::invalid_argument("choose_shared_layout: the tile is not 2-D:\n" + to_string(writer));
  const std::int64_t sizes[2] = {writer.out_dim_size("dim0"), writer.out_dim_size("dim1")};
  const int contiguous = contiguous_dim_of(writer);
  const int row_bits = std::countr_zero(static_cast<std::uint64_t>(sizes[1 - contiguous]));
  const int available = std::min(3, swizzle_bits_available(sizes[contiguous], element_bytes));
  // A tile stored with narrower accesses comes from scalar global loads that
  // bound the kernel anyway, and its swizzled addresses would each take a
  // register (live across the loop once hoisted): it stays unswizzled.
  LinearLayout unswizzled = swizzled_shared_layout(sizes[0], sizes[1], contiguous, element_bytes, {});
  if (!stored_in_16_byte_vectors(writer, unswizzled, element_bytes)) return unswizzled;
  LinearLayout best;
  int best_wavefronts = -1;
  for (int bits = 0; bits <= std::min(available, row_bits); ++bits)
    for (int shift = 0; shift + bits <= row_bits; ++shift) {
      LinearLayout candidate = swizzled_shared_layout(sizes[0], sizes[1], contiguous, element_bytes, {shift, bits});
      const int wavefronts = tile_access_cost(writer, candidate, element_bytes).wavefronts +
                             fragment_read_cost(reader, candidate, element_bytes).wavefronts;
      if (best_wavefronts < 0 || wavefronts < best_wavefronts) {
        best = std::move(candidate);
        best_wavefronts = wavefronts;
      }
      if (bits == 0) break;  // every shift of no swizzle is the same layout
    }
  return best;
}

}  // namespace kiln::lowering
