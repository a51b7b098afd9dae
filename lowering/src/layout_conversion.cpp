// Classifies a layout conversion as a register permutation, warp shuffles or
// a trip through shared memory from from⁻¹ ∘ to, for any pair of layouts.
#include "kiln/lowering/layout_conversion.hpp"

#include <algorithm>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

#include "gf2_basis.hpp"

namespace kiln::lowering {

namespace {

[[noreturn]] void fail(const std::string& message) { throw std::invalid_argument(message); }

const std::vector<std::string> kHardwareDims = {"register", "lane", "warp"};

std::int32_t coordinate(const LinearLayout::Coordinates& coordinates, const std::string& name) {
  for (const auto& [dim, value] : coordinates)
    if (dim == name) return value;
  return 0;
}

/// Packs the coordinates of the dimensions in `kept` into one word.
std::uint64_t pack_kept(const LinearLayout::Coordinates& coordinates, const LinearLayout& layout,
                        const std::vector<std::string>& kept) {
  std::uint64_t word = 0;
  int offset = 0;
  for (const std::string& name : kept) {
    word |= static_cast<std::uint64_t>(coordinate(coordinates, name)) << offset;
    offset += layout.in_dim_size_log2(name);
  }
  return word;
}

/// Whether every element `to` wants at x is held by `from` at some location
/// whose coordinates in `kept` equal x's.
bool stays_within(const LinearLayout& from, const LinearLayout& to, const LinearLayout& holder,
                  const std::vector<std::string>& kept) {
  // Moving from one holder to another changes the kept coordinates by a
  // vector of this span; a holder with the right ones exists iff the
  // difference lies in it.
  gf2::Basis replicas;
  for (const auto& k : from.kernel_basis()) replicas.add(pack_kept(k, from, kept));
  for (const auto& in : to.in_dims())
    for (std::size_t bit = 0; bit < in.bases.size(); ++bit) {
      LinearLayout::Coordinates x;
      for (const auto& dim : to.in_dims()) x.emplace_back(dim.name, dim.name == in.name ? 1 << bit : 0);
      const LinearLayout::Coordinates held_at = holder.apply(x);
      if (!replicas.contains(pack_kept(held_at, from, kept) ^ pack_kept(x, from, kept))) return false;
    }
  return true;
}

}  // namespace

std::string_view to_string(ConversionKind kind) {
  switch (kind) {
    case ConversionKind::none: return "none";
    case ConversionKind::register_permute: return "register_permute";
    case ConversionKind::warp_shuffle: return "warp_shuffle";
    case ConversionKind::shared_memory: return "shared_memory";
  }
  return "?";
}

ConversionKind classify_conversion(const LinearLayout& from, const LinearLayout& to) {
  for (const LinearLayout* layout : {&from, &to}) {
    if (layout->in_dims().size() != kHardwareDims.size() ||
        !std::all_of(kHardwareDims.begin(), kHardwareDims.end(),
                     [&](const std::string& name) { return layout->has_in_dim(name); })) {
      std::string names;
      for (const auto& in : layout->in_dims()) names += (names.empty() ? "" : ", ") + in.name;
      fail("classify_conversion: inputs must be register, lane and warp; got [" + names + "]");
    }
  }
  for (const char* name : {"lane", "warp"})
    if (from.in_dim_size(name) != to.in_dim_size(name))
      fail(std::string("classify_conversion: '") + name + "' has size " + std::to_string(from.in_dim_size(name)) +
           " in the source and " + std::to_string(to.in_dim_size(name)) + " in the target");
  std::vector<std::string> outs;
  for (const auto& out : from.out_dims()) outs.push_back(out.name);
  if (to.out_dims().size() != outs.size() ||
      !std::all_of(outs.begin(), outs.end(), [&](const std::string& name) { return to.has_out_dim(name); }))
    fail("classify_conversion: the layouts have different output dimensions");
  for (const auto& name : outs)
    if (from.out_dim_size(name) != to.out_dim_size(name))
      fail("classify_conversion: '" + name + "' has size " + std::to_string(from.out_dim_size(name)) +
           " in the source and " + std::to_string(to.out_dim_size(name)) + " in the target");

  std::vector<std::string> ins;
  for (const auto& in : from.in_dims()) ins.push_back(in.name);
  if (to.transpose_outs(outs).transpose_ins(ins) == from) return ConversionKind::none;

  // holder(x): a location of `from` holding the element `to` holds at x.
  const LinearLayout holder = to.invert_and_compose(from);
  if (stays_within(from, to, holder, {"lane", "warp"})) return ConversionKind::register_permute;
  if (stays_within(from, to, holder, {"warp"})) return ConversionKind::warp_shuffle;
  return ConversionKind::shared_memory;
}

}  // namespace kiln::lowering
