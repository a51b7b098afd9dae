// The acting copy of each element of a register layout: the kernel basis in
// reduced echelon form, its pivots and where each copy's acting copy is.
#include "kiln/lowering/acting_copies.hpp"

#include <algorithm>
#include <bit>
#include <string_view>

namespace kiln::lowering {

namespace {

int bits_of(const LinearLayout& layout, std::string_view in) {
  return layout.has_in_dim(in) ? layout.in_dim_size_log2(in) : 0;
}

}  // namespace

bool ActingCopies::crosses_lanes() const {
  return std::any_of(source_lane_offset.begin(), source_lane_offset.end(), [](std::int32_t v) { return v != 0; }) ||
         std::any_of(lane_sources.begin(), lane_sources.end(), [](std::int32_t v) { return v != 0; });
}

bool ActingCopies::crosses_warps() const {
  for (const std::vector<std::int32_t>* offsets : {&source_warp_offset, &lane_warp_sources, &warp_sources})
    if (std::any_of(offsets->begin(), offsets->end(), [](std::int32_t v) { return v != 0; })) return true;
  return false;
}

ActingCopies acting_copies(const LinearLayout& layout) {
  const int register_bits = bits_of(layout, "register");
  const int lane_bits = bits_of(layout, "lane");
  const int warp_bits = bits_of(layout, "warp");
  auto offset_of = [&](std::string_view in) {
    return in == "register" ? 0 : in == "lane" ? register_bits : register_bits + lane_bits;
  };
  // Each kernel vector packed into one word: register bits lowest, then lane, then warp.
  std::vector<std::uint64_t> kernel;
  for (const LinearLayout::Coordinates& coordinates : layout.kernel_basis()) {
    std::uint64_t packed = 0;
    for (const auto& [name, index] : coordinates)
      packed |= static_cast<std::uint64_t>(static_cast<std::uint32_t>(index)) << offset_of(name);
    kernel.push_back(packed);
  }
  // Reduced echelon form: each new pivot is cleared from every other vector,
  // so each row's lowest set bit is its pivot and no other row has it.
  std::vector<std::uint64_t> rows;
  for (int bit = 0; bit < register_bits + lane_bits + warp_bits; ++bit) {
    auto it = std::find_if(kernel.begin(), kernel.end(), [&](std::uint64_t v) { return (v >> bit & 1) != 0; });
    if (it == kernel.end()) continue;
    const std::uint64_t row = *it;
    kernel.erase(it);
    for (std::vector<std::uint64_t>* others : {&kernel, &rows})
      for (std::uint64_t& other : *others)
        if ((other >> bit & 1) != 0) other ^= row;
    rows.push_back(row);
  }
  auto part = [](std::uint64_t v, int offset, int bits) {
    return static_cast<std::int32_t>(v >> offset & ((std::uint64_t{1} << bits) - 1));
  };
  auto register_part = [&](std::uint64_t v) { return part(v, 0, register_bits); };
  auto lane_part = [&](std::uint64_t v) { return part(v, register_bits, lane_bits); };
  auto warp_part = [&](std::uint64_t v) { return part(v, register_bits + lane_bits, warp_bits); };

  ActingCopies copies;
  copies.lane_sources.assign(static_cast<std::size_t>(lane_bits), 0);
  copies.lane_warp_sources.assign(static_cast<std::size_t>(lane_bits), 0);
  copies.warp_sources.assign(static_cast<std::size_t>(warp_bits), 0);
  for (std::uint64_t row : rows) {
    const int pivot = std::countr_zero(row);
    if (pivot < register_bits) {
      copies.register_pivots |= std::int32_t{1} << pivot;
    } else if (pivot < register_bits + lane_bits) {
      const int lane_bit = pivot - register_bits;
      copies.lane_pivots |= std::int32_t{1} << lane_bit;
      copies.lane_sources[static_cast<std::size_t>(lane_bit)] = lane_part(row);
      copies.lane_warp_sources[static_cast<std::size_t>(lane_bit)] = warp_part(row);
    } else {
      const int warp_bit = pivot - register_bits - lane_bits;
      copies.warp_pivots |= std::int32_t{1} << warp_bit;
      copies.warp_sources[static_cast<std::size_t>(warp_bit)] = warp_part(row);
    }
  }
  for (int reg = 0; reg < (1 << register_bits); ++reg) {
    std::uint64_t applied = 0;
    for (std::uint64_t row : rows) {
      const int pivot = std::countr_zero(row);
      if (pivot < register_bits && (reg >> pivot & 1) != 0) applied ^= row;
    }
    copies.source_register.push_back(reg ^ register_part(applied));
    copies.source_lane_offset.push_back(lane_part(applied));
    copies.source_warp_offset.push_back(warp_part(applied));
  }
  return copies;
}

}  // namespace kiln::lowering
