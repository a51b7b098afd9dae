// The shared rings' plan (shared_rings.hpp) of the tutorial matmul's
// pipelined K loop (tests/carried_pointer_kernels.hpp), f16 64 x 64 x 32
// for sm_80 at 4 warps: one ring per operand with a slot per stage, slots
// of one 4 KiB tile in the layout chosen for the copies and the ldmatrix
// reads, the two rings one after the other; none when the loop is not
// pipelined. The layout stage's description names each. The stages of a
// loop whose rings would pass 96 KiB are cut.
#include "kiln/lowering/shared_rings.hpp"

#include <gtest/gtest.h>

#include <string>
#include <utility>

#include "carried_pointer_kernels.hpp"
#include "kiln/lowering/axis_analysis.hpp"

namespace kiln::lowering {
namespace {

namespace kl = kiln;

/// The rings of the f16 tutorial matmul at BM x BN x BK tiles, `stages`
/// asked for, planned for `target`.
template <int BM = 64, int BN = 64, int BK = 32>
SharedRings plan_tutorial(int stages, const GpuTarget& target = {.arch = "sm_80", .num_warps = 4}) {
  kl::CompileOptions options;
  options.num_stages = stages;
  auto compiled = kl::compile<test::carried::tutorial_matmul<kl::f16, BM, BN, BK>>(options);
  const ir::Function& fn = compiled.program().optimized();
  const AxisInfoMap axes = analyze_axes(fn);
  return plan_shared_rings(fn, axes, assign_layouts(fn, axes, target), target);
}

TEST(SharedRings, EachStageOfEachOperandGetsASlot) {
  for (int stages = 2; stages <= 4; ++stages) {
    const SharedRings rings = plan_tutorial(stages);
    ASSERT_EQ(rings.rings.size(), 2u) << stages;
    const std::uint64_t ring_bytes = 4096u * static_cast<std::uint64_t>(stages);
    for (std::size_t i = 0; i < 2; ++i) {
      const SharedRingPlan& ring = rings.rings[i];
      EXPECT_EQ(ring.stages, stages);
      EXPECT_EQ(ring.element_bytes, 2);
      EXPECT_EQ(ring.slot_bytes, 4096u);
      EXPECT_TRUE(ring.chosen_for_readers) << "both operands are read by a tensor-core dot";
      EXPECT_EQ(ring.offset, i * ring_bytes) << "the rings are live together: one after the other";
      EXPECT_EQ(&rings.at(*ring.ring), &ring);
    }
    EXPECT_EQ(rings.bytes, 2 * ring_bytes);
    const std::string described = describe_shared_rings(rings);
    EXPECT_NE(described.find(std::to_string(stages) + " stages of 4096 bytes at offset " + std::to_string(ring_bytes)),
              std::string::npos)
        << described;
    EXPECT_NE(described.find("shared rings: 2, " + std::to_string(2 * ring_bytes) + " bytes\n"), std::string::npos)
        << described;
  }
}

TEST(SharedRings, TheStagesAreCutToFitNinetySixKibibytes) {
  // 128 x 64 and 64 x 128 f16 tiles: 32 KiB a stage, so 3 stages fit and a
  // fourth does not.
  for (const auto& [asked, kept] : {std::pair{3, 3}, std::pair{4, 3}, std::pair{8, 3}}) {
    const SharedRings rings = plan_tutorial<128, 128, 64>(asked, {.arch = "sm_90a", .num_warps = 8});
    ASSERT_EQ(rings.rings.size(), 2u) << asked;
    for (const SharedRingPlan& ring : rings.rings) EXPECT_EQ(ring.stages, kept) << asked;
    EXPECT_EQ(rings.bytes, 96u * 1024u) << asked;
  }
}

TEST(SharedRings, AnUnpipelinedLoopHasNone) {
  const SharedRings rings = plan_tutorial(1);
  EXPECT_TRUE(rings.rings.empty());
  EXPECT_EQ(rings.bytes, 0u);
  EXPECT_EQ(describe_shared_rings(rings), "");
}

}  // namespace
}  // namespace kiln::lowering
