// The shared rings' plan (shared_rings.hpp) of the tutorial matmul's
// pipelined K loop (tests/carried_pointer_kernels.hpp), f16 64 x 64 x 32
// for sm_80 at 4 warps: one ring per operand with a slot per stage, slots
// of one 4 KiB tile in the layout chosen for the copies and the ldmatrix
// reads, the two rings one after the other; none when the loop is not
// pipelined. The layout stage's description names each.
#include "kiln/lowering/shared_rings.hpp"

#include <gtest/gtest.h>

#include <string>

#include "carried_pointer_kernels.hpp"
#include "kiln/lowering/axis_analysis.hpp"

namespace kiln::lowering {
namespace {

namespace kl = kiln;

SharedRings plan_tutorial(int stages) {
  kl::CompileOptions options;
  options.num_stages = stages;
  auto compiled = kl::compile<test::carried::tutorial_matmul<kl::f16, 64, 64, 32>>(options);
  const ir::Function& fn = compiled.program().optimized();
  const GpuTarget target{.arch = "sm_80", .num_warps = 4};
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

TEST(SharedRings, AnUnpipelinedLoopHasNone) {
  const SharedRings rings = plan_tutorial(1);
  EXPECT_TRUE(rings.rings.empty());
  EXPECT_EQ(rings.bytes, 0u);
  EXPECT_EQ(describe_shared_rings(rings), "");
}

}  // namespace
}  // namespace kiln::lowering
