// The linear-layout algebra: application, product, composition, inversion,
// reshape, restriction and queries, on hand-made and random layouts.
#include "kiln/lowering/linear_layout.hpp"

#include <gtest/gtest.h>

#include <cstdint>
#include <functional>
#include <random>
#include <stdexcept>
#include <string>
#include <vector>

namespace kiln::lowering {
namespace {

using Coordinates = LinearLayout::Coordinates;

/// A layout with random bases over the given dimensions (log2 sizes).
LinearLayout random_layout(std::mt19937& rng, const std::vector<std::pair<std::string, int>>& ins,
                           const std::vector<std::pair<std::string, int>>& outs) {
  std::vector<LinearLayout::OutDim> out_dims;
  for (const auto& [name, log] : outs) out_dims.push_back({name, log});
  std::vector<LinearLayout::InDim> in_dims;
  for (const auto& [name, log] : ins) {
    LinearLayout::InDim in{name, {}};
    for (int bit = 0; bit < log; ++bit) {
      LinearLayout::Basis basis;
      for (const auto& [out, out_log] : outs) basis.push_back(static_cast<std::int32_t>(rng() & ((1u << out_log) - 1)));
      in.bases.push_back(basis);
    }
    in_dims.push_back(in);
  }
  return LinearLayout(in_dims, out_dims);
}

/// Calls `fn` with every input of `layout`.
void for_each_input(const LinearLayout& layout, const std::function<void(const Coordinates&)>& fn) {
  const std::int64_t total = std::int64_t{1} << layout.total_in_bits();
  for (std::int64_t flat = 0; flat < total; ++flat) {
    Coordinates x;
    std::int64_t rest = flat;
    for (const auto& in : layout.in_dims()) {
      const int log = static_cast<int>(in.bases.size());
      x.emplace_back(in.name, static_cast<std::int32_t>(rest & ((std::int64_t{1} << log) - 1)));
      rest >>= log;
    }
    fn(x);
  }
}

std::string text(const Coordinates& c) {
  std::string s;
  for (const auto& [name, value] : c) s += name + "=" + std::to_string(value) + " ";
  return s;
}

/// Expects `fn` to throw std::invalid_argument whose message contains `part`.
void expect_invalid(const std::function<void()>& fn, const std::string& part) {
  try {
    fn();
    ADD_FAILURE() << "no exception; expected one mentioning '" << part << "'";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find(part), std::string::npos) << e.what();
  }
}

TEST(LinearLayout, ApplyXorsTheBasesOfTheSetBits) {
  const LinearLayout layout({{"register", {{0, 1}, {2, 0}}}, {"lane", {{1, 1}}}}, {{"dim0", 2}, {"dim1", 1}});
  EXPECT_EQ(layout.apply({{"register", 0}, {"lane", 0}}), (Coordinates{{"dim0", 0}, {"dim1", 0}}));
  EXPECT_EQ(layout.apply({{"register", 3}, {"lane", 0}}), (Coordinates{{"dim0", 2}, {"dim1", 1}}));
  EXPECT_EQ(layout.apply({{"lane", 1}, {"register", 3}}), (Coordinates{{"dim0", 3}, {"dim1", 0}}));
}

TEST(LinearLayout, IdentityAndZeros) {
  const LinearLayout identity = LinearLayout::identity_1d(16, "offset", "dim0");
  for (int i = 0; i < 16; ++i) EXPECT_EQ(identity.apply({{"offset", i}}), (Coordinates{{"dim0", i}}));
  EXPECT_TRUE(identity.is_injective());
  EXPECT_TRUE(identity.is_surjective());
  const LinearLayout zeros = LinearLayout::zeros_1d(8, "lane", "dim0");
  EXPECT_EQ(zeros.out_dim_size("dim0"), 1);
  EXPECT_EQ(zeros.apply({{"lane", 5}}), (Coordinates{{"dim0", 0}}));
  EXPECT_FALSE(zeros.is_injective());
  EXPECT_EQ(zeros.kernel_basis().size(), 3u);
}

TEST(LinearLayout, ProductStacksSharedDimensionsAndUnitesDisjointOnes) {
  std::mt19937 rng(7);
  for (int trial = 0; trial < 20; ++trial) {
    const LinearLayout a = random_layout(rng, {{"register", 2}, {"lane", 1}}, {{"dim0", 2}, {"dim1", 1}});
    const LinearLayout b = random_layout(rng, {{"register", 1}, {"warp", 2}}, {{"dim0", 3}, {"dim2", 2}});
    const LinearLayout p = a * b;
    ASSERT_EQ(p.in_dim_size("register"), 8);
    ASSERT_EQ(p.out_dim_size("dim0"), 32);
    for_each_input(p, [&](const Coordinates& x) {
      const std::int32_t reg = x[0].second, lane = x[1].second, warp = x[2].second;
      const Coordinates ya = a.apply({{"register", reg & 3}, {"lane", lane}});
      const Coordinates yb = b.apply({{"register", reg >> 2}, {"warp", warp}});
      const Coordinates expected{
          {"dim0", ya[0].second ^ (yb[0].second << 2)}, {"dim1", ya[1].second}, {"dim2", yb[1].second}};
      EXPECT_EQ(p.apply(x), expected) << text(x);
    });
  }
}

TEST(LinearLayout, ApplyOfACompositionIsTheCompositionOfApplies) {
  std::mt19937 rng(11);
  for (int trial = 0; trial < 30; ++trial) {
    const LinearLayout inner = random_layout(rng, {{"register", 2}, {"lane", 3}}, {{"x", 3}, {"y", 2}});
    const LinearLayout outer = random_layout(rng, {{"y", 3}, {"x", 3}}, {{"dim0", 4}, {"dim1", 2}});
    const LinearLayout composed = inner.compose(outer);
    for_each_input(inner,
                   [&](const Coordinates& x) { EXPECT_EQ(composed.apply(x), outer.apply(inner.apply(x))) << text(x); });
  }
}

TEST(LinearLayout, InverseComposedWithLayoutIsTheIdentity) {
  std::mt19937 rng(3);
  int tried = 0;
  while (tried < 25) {
    const LinearLayout layout =
        random_layout(rng, {{"register", 2}, {"lane", 3}, {"warp", 1}}, {{"dim0", 4}, {"dim1", 2}});
    if (!layout.is_injective()) continue;
    ++tried;
    ASSERT_TRUE(layout.is_surjective());
    const LinearLayout inverse = layout.invert();
    for_each_input(layout, [&](const Coordinates& x) { EXPECT_EQ(inverse.apply(layout.apply(x)), x) << text(x); });
    for_each_input(inverse, [&](const Coordinates& y) { EXPECT_EQ(layout.apply(inverse.apply(y)), y) << text(y); });
    EXPECT_EQ(layout.compose(inverse), LinearLayout({{"register", {{1, 0, 0}, {2, 0, 0}}},
                                                     {"lane", {{0, 1, 0}, {0, 2, 0}, {0, 4, 0}}},
                                                     {"warp", {{0, 0, 1}}}},
                                                    {{"register", 2}, {"lane", 3}, {"warp", 1}}));
  }
}

TEST(LinearLayout, PseudoInverseOfASurjectiveLayoutIsARightInverse) {
  std::mt19937 rng(5);
  int tried = 0;
  while (tried < 25) {
    const LinearLayout layout = random_layout(rng, {{"register", 3}, {"lane", 3}}, {{"dim0", 2}, {"dim1", 2}});
    if (!layout.is_surjective()) continue;
    ++tried;
    EXPECT_FALSE(layout.is_injective());
    const LinearLayout right = layout.pseudo_invert();
    for_each_input(right, [&](const Coordinates& y) { EXPECT_EQ(layout.apply(right.apply(y)), y) << text(y); });
  }
}

TEST(LinearLayout, PseudoInverseOfAnInjectiveLayoutIsALeftInverse) {
  std::mt19937 rng(9);
  int tried = 0;
  while (tried < 25) {
    const LinearLayout layout = random_layout(rng, {{"offset", 4}}, {{"dim0", 3}, {"dim1", 3}});
    if (!layout.is_injective()) continue;
    ++tried;
    EXPECT_FALSE(layout.is_surjective());
    const LinearLayout left = layout.pseudo_invert();
    for_each_input(layout, [&](const Coordinates& x) { EXPECT_EQ(left.apply(layout.apply(x)), x) << text(x); });
  }
}

TEST(LinearLayout, PseudoInversePrefersEarlierInputBits) {
  // Element 1 is held by register 1 and by lane 1: the register is chosen.
  const LinearLayout layout({{"register", {{1}}}, {"lane", {{1}, {2}}}}, {{"dim0", 2}});
  const LinearLayout inverse = layout.pseudo_invert();
  EXPECT_EQ(inverse.apply({{"dim0", 1}}), (Coordinates{{"register", 1}, {"lane", 0}}));
  EXPECT_EQ(inverse.apply({{"dim0", 3}}), (Coordinates{{"register", 1}, {"lane", 2}}));
}

TEST(LinearLayout, InvertAndComposeFindsWhereTheOuterLayoutHoldsEachElement) {
  std::mt19937 rng(13);
  int tried = 0;
  while (tried < 25) {
    const LinearLayout outer = random_layout(rng, {{"register", 2}, {"lane", 3}}, {{"dim0", 3}, {"dim1", 1}});
    if (!outer.is_surjective()) continue;
    ++tried;
    const LinearLayout layout = random_layout(rng, {{"register", 3}, {"lane", 2}}, {{"dim1", 1}, {"dim0", 3}});
    const LinearLayout holder = layout.invert_and_compose(outer);
    for_each_input(layout, [&](const Coordinates& x) {
      EXPECT_EQ(outer.apply(holder.apply(x)), layout.transpose_outs({"dim0", "dim1"}).apply(x)) << text(x);
    });
  }
}

TEST(LinearLayout, InvertAndComposeRejectsElementsTheOuterLayoutLacks) {
  const LinearLayout outer({{"register", {{1}}}}, {{"dim0", 2}});
  const LinearLayout layout({{"register", {{1}, {2}}}}, {{"dim0", 2}});
  expect_invalid([&] { (void)layout.invert_and_compose(outer); },
                 "'register' bit 1 maps to (2), which the outer layout never holds");
  const LinearLayout half({{"lane", {{1}}}}, {{"dim0", 2}});
  const LinearLayout zeros({{"register", {{0}}}}, {{"dim0", 2}});
  expect_invalid([&] { (void)half.invert_and_compose(zeros); }, "'lane' bit 0 maps to (1)");
}

TEST(LinearLayout, InvertRejectsANonBijectiveLayout) {
  expect_invalid([] { (void)LinearLayout::zeros_1d(4, "lane", "dim0").invert(); }, "not bijective");
}

TEST(LinearLayout, TransposeOutsReordersCoordinatesOnly) {
  const LinearLayout layout({{"register", {{1, 2}, {0, 1}}}}, {{"dim0", 1}, {"dim1", 2}});
  const LinearLayout swapped = layout.transpose_outs({"dim1", "dim0"});
  EXPECT_EQ(swapped.apply({{"register", 3}}), (Coordinates{{"dim1", 3}, {"dim0", 1}}));
  expect_invalid([&] { (void)layout.transpose_outs({"dim1", "dim1"}); }, "not a permutation");
}

TEST(LinearLayout, ReshapeOutsKeepsTheRowMajorElementOrder) {
  std::mt19937 rng(17);
  const LinearLayout layout =
      random_layout(rng, {{"register", 3}, {"lane", 4}}, {{"dim0", 2}, {"dim1", 3}, {"dim2", 2}});
  const LinearLayout flat = layout.reshape_outs({{"dim0", 128}});
  const LinearLayout folded = layout.reshape_outs({{"dim0", 16}, {"dim1", 8}});
  for_each_input(layout, [&](const Coordinates& x) {
    const Coordinates y = layout.apply(x);
    const std::int32_t row_major = (y[0].second * 8 + y[1].second) * 4 + y[2].second;
    EXPECT_EQ(flat.apply(x), (Coordinates{{"dim0", row_major}})) << text(x);
    EXPECT_EQ(folded.apply(x), (Coordinates{{"dim0", row_major / 8}, {"dim1", row_major % 8}})) << text(x);
  });
  expect_invalid([&] { (void)layout.reshape_outs({{"dim0", 64}}); }, "64 elements for a layout over 128");
  expect_invalid([&] { (void)layout.reshape_outs({{"dim0", 96}}); }, "must be a power of two, got 96");
}

TEST(LinearLayout, SublayoutDropsDimensions) {
  const LinearLayout layout({{"register", {{1, 0}}}, {"lane", {{0, 1}, {2, 1}}}, {"warp", {{0, 2}}}},
                            {{"dim0", 2}, {"dim1", 2}});
  const LinearLayout lanes = layout.sublayout({"lane"}, {"dim1"});
  EXPECT_EQ(lanes, LinearLayout({{"lane", {{1}, {1}}}}, {{"dim1", 2}}));
  const LinearLayout no_dim0 = layout.sublayout({"register", "lane", "warp"}, {"dim1"});
  EXPECT_EQ(no_dim0.apply({{"register", 1}, {"lane", 3}, {"warp", 1}}), (Coordinates{{"dim1", 2}}));
  expect_invalid([&] { (void)layout.sublayout({"block"}, {"dim0"}); }, "no input dimension 'block'");
}

TEST(LinearLayout, ContiguousElementsCountsLeadingUnitRegisterSteps) {
  const LinearLayout layout({{"register", {{0, 1}, {0, 2}, {1, 0}, {0, 4}}}, {"lane", {{0, 8}}}},
                            {{"dim0", 1}, {"dim1", 4}});
  EXPECT_EQ(layout.contiguous_elements("dim1"), 4);
  EXPECT_EQ(layout.contiguous_elements("dim0"), 1);
  EXPECT_EQ(layout.contiguous_elements("dim1", "lane"), 1);
  EXPECT_EQ(LinearLayout::identity_1d(32, "offset", "dim0").contiguous_elements("dim0", "offset"), 32);
}

TEST(LinearLayout, ToStringListsTheBases) {
  const LinearLayout layout({{"register", {{0, 1}, {0, 2}}}, {"lane", {{1, 0}}}, {"warp", {}}},
                            {{"dim0", 1}, {"dim1", 2}});
  EXPECT_EQ(to_string(layout), "register[4]: (0,1) (0,2)\nlane[2]: (1,0)\nwarp[1]:\n-> dim0[2] dim1[4]");
}

TEST(LinearLayout, BadInputNamesTheThingAndTheValues) {
  expect_invalid([] { (void)LinearLayout::identity_1d(12, "lane", "dim0"); },
                 "identity_1d size of 'lane' must be a power of two, got 12");
  expect_invalid([] { (void)LinearLayout({{"lane", {{4}}}}, {{"dim0", 2}}); },
                 "basis 0 of 'lane' is (4), outside 'dim0' of size 4");
  expect_invalid([] { (void)LinearLayout({{"lane", {{1, 0}}}}, {{"dim0", 2}}); },
                 "has 2 values for 1 output dimensions");
  expect_invalid([] { (void)LinearLayout({{"lane", {}}, {"lane", {}}}, {}); }, "'lane' appears twice");
  const LinearLayout layout = LinearLayout::identity_1d(4, "lane", "dim0");
  expect_invalid([&] { (void)layout.apply({{"lane", 4}}); }, "'lane' = 4 is outside 0..3");
  expect_invalid([&] { (void)layout.apply({}); }, "'lane' is missing");
  expect_invalid([&] { (void)layout.compose(LinearLayout::identity_1d(2, "dim0", "x")); },
                 "outer input 'dim0' has size 2, smaller than 4");
}

}  // namespace
}  // namespace kiln::lowering
