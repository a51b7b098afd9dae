// Blocked and slice layouts against a direct computation of Triton's blocked
// encoding, element by element, over many configurations.
#include "kiln/lowering/blocked_layout.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <functional>
#include <set>
#include <stdexcept>
#include <string>
#include <vector>

namespace kiln::lowering {
namespace {

using Sizes = std::vector<std::int64_t>;

std::int64_t product(const Sizes& sizes) {
  std::int64_t p = 1;
  for (std::int64_t s : sizes) p *= s;
  return p;
}

/// The digit of `value` along dimension `dim` in the mixed radix `sizes`, order[0] the fastest.
std::int64_t digit(std::int64_t value, const Sizes& sizes, const Sizes& order, std::int64_t dim) {
  for (std::int64_t d : order) {
    if (d == dim) return value % sizes[d];
    value /= sizes[d];
  }
  return 0;
}

struct Blocked {
  Sizes shape, spt, tpw, wpc, order;

  /// How often the layout tile repeats along each dimension (at least once).
  Sizes repetitions() const {
    Sizes reps;
    for (std::size_t d = 0; d < shape.size(); ++d)
      reps.push_back(std::max<std::int64_t>(1, shape[d] / (spt[d] * tpw[d] * wpc[d])));
    return reps;
  }

  /// The coordinate along `d` of the element register `reg` of lane `lane`
  /// in warp `warp` holds, computed from the encoding's definition rather
  /// than from linear layouts; `reps` is repetitions().
  std::int64_t coordinate(std::size_t d, std::int64_t reg, std::int64_t lane, std::int64_t warp,
                          const Sizes& reps) const {
    const auto dim = static_cast<std::int64_t>(d);
    const std::int64_t s = digit(reg % product(spt), spt, order, dim);
    const std::int64_t k = digit(reg / product(spt), reps, order, dim);
    const std::int64_t t = digit(lane, tpw, order, dim);
    const std::int64_t v = digit(warp, wpc, order, dim);
    return (s + spt[d] * (t + tpw[d] * (v + wpc[d] * k))) % shape[d];
  }

  std::string describe() const {
    auto list = [](const Sizes& v) {
      std::string s = "[";
      for (std::size_t i = 0; i < v.size(); ++i) s += (i ? "," : "") + std::to_string(v[i]);
      return s + "]";
    };
    return "shape " + list(shape) + " spt " + list(spt) + " tpw " + list(tpw) + " wpc " + list(wpc) + " order " +
           list(order);
  }
};

Sizes apply(const LinearLayout& layout, std::int64_t reg, std::int64_t lane, std::int64_t warp) {
  Sizes result;
  for (const auto& [name, value] : layout.apply({{"register", static_cast<std::int32_t>(reg)},
                                                 {"lane", static_cast<std::int32_t>(lane)},
                                                 {"warp", static_cast<std::int32_t>(warp)}}))
    result.push_back(value);
  return result;
}

/// apply() without the named coordinates, for the exhaustive checks: the XOR
/// of the bases of the set bits of (register, lane, warp), in that order.
Sizes image(const LinearLayout& layout, std::int64_t reg, std::int64_t lane, std::int64_t warp) {
  Sizes result(layout.out_dims().size(), 0);
  const std::int64_t values[] = {reg, lane, warp};
  for (std::size_t i = 0; i < 3; ++i)
    for (std::size_t bit = 0; bit < layout.in_dims()[i].bases.size(); ++bit)
      if ((values[i] >> bit) & 1)
        for (std::size_t j = 0; j < result.size(); ++j) result[j] ^= layout.in_dims()[i].bases[bit][j];
  return result;
}

/// Checks every (register, lane, warp) of the blocked layout; returns the
/// number of mismatches (each also reported).
int check_element_by_element(const Blocked& b) {
  const LinearLayout layout = blocked_layout(b.shape, b.spt, b.tpw, b.wpc, b.order);
  EXPECT_EQ(layout.in_dim_size("register"), product(b.spt) * product(b.repetitions())) << b.describe();
  EXPECT_EQ(layout.in_dim_size("lane"), product(b.tpw)) << b.describe();
  EXPECT_EQ(layout.in_dim_size("warp"), product(b.wpc)) << b.describe();
  for (std::size_t d = 0; d < b.shape.size(); ++d)
    EXPECT_EQ(layout.out_dim_size("dim" + std::to_string(d)), b.shape[d]) << b.describe();
  EXPECT_EQ(layout.in_dims()[0].name + layout.in_dims()[1].name + layout.in_dims()[2].name, "registerlanewarp");
  const Sizes reps = b.repetitions();
  int mismatches = 0;
  for (std::int64_t reg = 0; reg < layout.in_dim_size("register"); ++reg)
    for (std::int64_t lane = 0; lane < product(b.tpw); ++lane)
      for (std::int64_t warp = 0; warp < product(b.wpc); ++warp) {
        const Sizes held = image(layout, reg, lane, warp);
        for (std::size_t d = 0; d < held.size(); ++d)
          if (held[d] != b.coordinate(d, reg, lane, warp, reps) && ++mismatches <= 3)
            ADD_FAILURE() << b.describe() << ": register " << reg << " lane " << lane << " warp " << warp << " dim" << d
                          << "\n"
                          << to_string(layout);
      }
  return mismatches;
}

TEST(BlockedLayout, OneDimensionalMatchesTheEncodingFormula) {
  int configurations = 0;
  for (std::int64_t shape : {1, 2, 16, 64, 128, 256, 1024, 4096})
    for (std::int64_t spt : {1, 2, 4, 8})
      for (std::int64_t wpc : {1, 2, 4, 8}) {
        EXPECT_EQ(check_element_by_element({{shape}, {spt}, {32}, {wpc}, {0}}), 0);
        ++configurations;
      }
  EXPECT_EQ(configurations, 128);
}

TEST(BlockedLayout, TwoDimensionalMatchesTheEncodingFormula) {
  const std::vector<Sizes> shapes = {{1, 1}, {1, 64}, {4, 8}, {16, 16}, {32, 64}, {64, 32}, {64, 64}, {2, 256}};
  const std::vector<Sizes> spts = {{1, 1}, {1, 4}, {4, 1}, {2, 8}};
  const std::vector<Sizes> tpws = {{1, 32}, {4, 8}, {8, 4}, {32, 1}};
  const std::vector<Sizes> wpcs = {{1, 1}, {4, 1}, {2, 2}, {1, 2}};
  int configurations = 0;
  for (const Sizes& shape : shapes)
    for (const Sizes& spt : spts)
      for (const Sizes& tpw : tpws)
        for (const Sizes& wpc : wpcs)
          for (const Sizes& order : {Sizes{1, 0}, Sizes{0, 1}}) {
            if (check_element_by_element({shape, spt, tpw, wpc, order}) > 0) return;
            ++configurations;
          }
  EXPECT_EQ(configurations, 1024);
}

TEST(BlockedLayout, ThreeDimensionalMatchesTheEncodingFormula) {
  for (const Sizes& order : {Sizes{2, 1, 0}, Sizes{0, 2, 1}, Sizes{1, 0, 2}})
    for (const Sizes& shape : {Sizes{2, 8, 32}, Sizes{8, 2, 4}, Sizes{1, 64, 16}})
      EXPECT_EQ(check_element_by_element({shape, {1, 2, 2}, {2, 4, 4}, {2, 1, 2}, order}), 0);
}

TEST(BlockedLayout, KnownLayoutPrintsItsBases) {
  // One 4x4 tile (registers along dim1 in pairs, 2x2 lanes, 2 warps down dim0),
  // repeated once along dim1 to cover 8 columns.
  const LinearLayout layout = blocked_layout({4, 8}, {1, 2}, {2, 2}, {2, 1}, {1, 0});
  EXPECT_EQ(to_string(layout), "register[4]: (0,1) (0,4)\nlane[4]: (0,2) (1,0)\nwarp[2]: (2,0)\n-> dim0[4] dim1[8]");
  EXPECT_EQ(layout.contiguous_elements("dim1"), 2);
  EXPECT_TRUE(layout.is_injective());
}

TEST(BlockedLayout, SmallShapesReplicateAndStayOnTheirRegisters) {
  // 32 elements over 4 warps of 32 lanes: every warp holds the whole tile.
  const LinearLayout layout = blocked_layout({32}, {1}, {32}, {4}, {0});
  EXPECT_EQ(layout.basis("warp", 0), (LinearLayout::Basis{0}));
  EXPECT_EQ(layout.basis("warp", 1), (LinearLayout::Basis{0}));
  EXPECT_FALSE(layout.is_injective());
  EXPECT_TRUE(layout.is_surjective());
  EXPECT_EQ(layout.kernel_basis().size(), 2u);
}

TEST(BlockedLayout, VectorWidthFollowsSizePerThreadAlongTheFastestDimension) {
  EXPECT_EQ(blocked_layout({1024}, {4}, {32}, {4}, {0}).contiguous_elements("dim0"), 4);
  EXPECT_EQ(blocked_layout({64, 64}, {2, 8}, {8, 4}, {4, 1}, {1, 0}).contiguous_elements("dim1"), 8);
  EXPECT_EQ(blocked_layout({64, 64}, {2, 8}, {8, 4}, {4, 1}, {0, 1}).contiguous_elements("dim0"), 2);
  // Shape 4 < size_per_thread 8: the registers past the shape hold copies.
  EXPECT_EQ(blocked_layout({4}, {8}, {32}, {1}, {0}).contiguous_elements("dim0"), 4);
}

TEST(BlockedLayout, BadParametersNameTheListAndTheValues) {
  auto expect_invalid = [](const std::function<void()>& fn, const std::string& part) {
    try {
      fn();
      ADD_FAILURE() << "no exception; expected '" << part << "'";
    } catch (const std::invalid_argument& e) {
      EXPECT_NE(std::string(e.what()).find(part), std::string::npos) << e.what();
    }
  };
  expect_invalid([] { (void)blocked_layout({48}, {1}, {32}, {4}, {0}); }, "shape [48] holds 48, not a power of two");
  expect_invalid([] { (void)blocked_layout({64, 64}, {1}, {32, 1}, {4, 1}, {1, 0}); },
                 "size_per_thread [1] has rank 1, the shape has rank 2");
  expect_invalid([] { (void)blocked_layout({64, 64}, {1, 1}, {32, 1}, {4, 1}, {1, 1}); },
                 "order [1, 1] is not a permutation of 0..1");
  expect_invalid([] { (void)slice_layout(blocked_layout({64}, {1}, {32}, {1}, {0}), 1); },
                 "dimension 1 is outside the parent's rank 1");
}

TEST(SliceLayout, KnownSlicesOfABlockedLayout) {
  const LinearLayout parent = blocked_layout({4, 8}, {1, 2}, {2, 2}, {2, 1}, {1, 0});
  EXPECT_EQ(to_string(slice_layout(parent, 1)), "register[1]:\nlane[4]: (0) (1)\nwarp[2]: (2)\n-> dim0[4]");
  EXPECT_EQ(to_string(slice_layout(parent, 0)), "register[4]: (1) (4)\nlane[4]: (2) (0)\nwarp[2]: (0)\n-> dim0[8]");
}

TEST(SliceLayout, EachThreadHoldsTheReducedCoordinatesOfItsParentElements) {
  for (const Sizes& order : {Sizes{1, 0}, Sizes{0, 1}})
    for (const Sizes& shape : {Sizes{32, 64}, Sizes{4, 256}, Sizes{128, 2}})
      for (int dim : {0, 1}) {
        const Blocked b{shape, {2, 4}, {4, 8}, {2, 2}, order};
        const LinearLayout parent = blocked_layout(b.shape, b.spt, b.tpw, b.wpc, b.order);
        const LinearLayout slice = slice_layout(parent, dim);
        for (std::int64_t lane = 0; lane < 32; ++lane)
          for (std::int64_t warp = 0; warp < 4; ++warp) {
            std::set<std::int64_t> expected, held;
            for (std::int64_t reg = 0; reg < parent.in_dim_size("register"); ++reg)
              expected.insert(b.coordinate(1 - dim, reg, lane, warp, b.repetitions()));
            for (std::int64_t reg = 0; reg < slice.in_dim_size("register"); ++reg)
              held.insert(apply(slice, reg, lane, warp)[0]);
            ASSERT_EQ(held, expected) << b.describe() << " sliced along " << dim << ", lane " << lane << " warp "
                                      << warp;
          }
        // Dropping copies leaves one register per distinct element.
        EXPECT_EQ(slice.sublayout({"register"}, {"dim0"}).is_injective(), true) << b.describe();
      }
}

}  // namespace
}  // namespace kiln::lowering
