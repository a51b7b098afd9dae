// Triton's blocked and slice encodings built from linear-layout products, so
// that every register layout reaches codegen in the same form.
#include "kiln/lowering/blocked_layout.hpp"

#include <algorithm>
#include <bit>
#include <stdexcept>
#include <string>

namespace kiln::lowering {

namespace {

[[noreturn]] void fail(const std::string& message) { throw std::invalid_argument(message); }

std::string list_string(const std::vector<std::int64_t>& values) {
  std::string s = "[";
  for (std::size_t i = 0; i < values.size(); ++i) s += (i ? ", " : "") + std::to_string(values[i]);
  return s + "]";
}

std::string dim_name(std::size_t d) { return "dim" + std::to_string(d); }

void check_sizes(const char* what, const std::vector<std::int64_t>& sizes, std::size_t rank) {
  if (sizes.size() != rank)
    fail(std::string("blocked_layout: ") + what + " " + list_string(sizes) + " has rank " +
         std::to_string(sizes.size()) + ", the shape has rank " + std::to_string(rank));
  for (std::int64_t size : sizes)
    if (size <= 0 || !std::has_single_bit(static_cast<std::uint64_t>(size)))
      fail(std::string("blocked_layout: ") + what + " " + list_string(sizes) + " holds " + std::to_string(size) +
           ", not a power of two");
}

/// identity_1d per dimension, fastest (order[0]) first: a row-major block in `order`.
LinearLayout ordered_identity(const char* in, const std::vector<std::int64_t>& sizes,
                              const std::vector<std::int64_t>& order) {
  LinearLayout layout;
  for (std::int64_t d : order)
    layout = layout * LinearLayout::identity_1d(static_cast<std::int32_t>(sizes[d]), in, dim_name(d));
  return layout;
}

}  // namespace

LinearLayout blocked_layout(const std::vector<std::int64_t>& shape, const std::vector<std::int64_t>& size_per_thread,
                            const std::vector<std::int64_t>& threads_per_warp,
                            const std::vector<std::int64_t>& warps_per_cta, const std::vector<std::int64_t>& order) {
  const std::size_t rank = shape.size();
  if (rank == 0) fail("blocked_layout: the shape is empty (a scalar has no blocked layout)");
  check_sizes("shape", shape, rank);
  check_sizes("size_per_thread", size_per_thread, rank);
  check_sizes("threads_per_warp", threads_per_warp, rank);
  check_sizes("warps_per_cta", warps_per_cta, rank);
  std::vector<std::int64_t> sorted = order;
  std::sort(sorted.begin(), sorted.end());
  for (std::size_t d = 0; d < rank; ++d)
    if (sorted.size() != rank || sorted[d] != static_cast<std::int64_t>(d))
      fail("blocked_layout: order " + list_string(order) + " is not a permutation of 0.." + std::to_string(rank - 1));

  LinearLayout layout = ordered_identity("register", size_per_thread, order) *
                        ordered_identity("lane", threads_per_warp, order) *
                        ordered_identity("warp", warps_per_cta, order);
  // A shape larger than one layout tile: more registers, fastest dimension first.
  for (std::int64_t d : order) {
    const std::int64_t tile = layout.out_dim_size(dim_name(d));
    if (shape[d] > tile)
      layout = layout * LinearLayout::identity_1d(static_cast<std::int32_t>(shape[d] / tile), "register", dim_name(d));
  }
  // A smaller shape wraps around: the coordinate bits at or above the shape
  // are dropped, which replicates the highest hardware indices first. The
  // product listed the outputs in `order`.
  std::vector<LinearLayout::InDim> ins = layout.in_dims();
  std::vector<LinearLayout::OutDim> outs = layout.out_dims();
  for (std::size_t j = 0; j < outs.size(); ++j) {
    const std::int64_t size = shape[order[j]];
    outs[j].log2_size = std::min(outs[j].log2_size, std::countr_zero(static_cast<std::uint64_t>(size)));
    for (auto& in : ins)
      for (auto& basis : in.bases)
        if (basis[j] >= size) basis[j] = 0;
  }
  std::vector<std::string> standard;
  for (std::size_t d = 0; d < rank; ++d) standard.push_back(dim_name(d));
  return LinearLayout(std::move(ins), std::move(outs)).transpose_outs(standard);
}

LinearLayout slice_layout(const LinearLayout& parent, int dim) {
  const int rank = static_cast<int>(parent.out_dims().size());
  for (int d = 0; d < rank; ++d)
    if (parent.out_dims()[d].name != dim_name(d))
      fail("slice_layout: the parent's output " + std::to_string(d) + " is '" + parent.out_dims()[d].name +
           "', expected '" + dim_name(d) + "'");
  if (dim < 0 || dim >= rank)
    fail("slice_layout: dimension " + std::to_string(dim) + " is outside the parent's rank " + std::to_string(rank));

  std::vector<LinearLayout::OutDim> outs;
  for (int d = 0; d < rank; ++d)
    if (d != dim) outs.push_back({dim_name(outs.size()), parent.out_dims()[d].log2_size});
  std::vector<LinearLayout::InDim> ins;
  for (const auto& in : parent.in_dims()) {
    LinearLayout::InDim sliced{in.name, {}};
    for (LinearLayout::Basis basis : in.bases) {
      basis.erase(basis.begin() + dim);
      const bool zero = std::all_of(basis.begin(), basis.end(), [](std::int32_t v) { return v == 0; });
      // A register with nothing left to tell it apart holds a copy: drop it.
      // Lanes and warps stay, since the thread count is fixed.
      if (!(zero && in.name == "register")) sliced.bases.push_back(std::move(basis));
    }
    ins.push_back(std::move(sliced));
  }
  return LinearLayout(std::move(ins), std::move(outs));
}

}  // namespace kiln::lowering
