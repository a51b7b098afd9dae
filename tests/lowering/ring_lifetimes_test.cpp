// Placement of the shared rings of pipelined loops: rings of loops one after
// the other share bytes when a drained wait and a barrier separate them, and
// only then; rings live at once never overlap.
#include "kiln/lowering/ring_lifetimes.hpp"

#include <gtest/gtest.h>

#include <memory>
#include <string>

#include "kiln/ir/parser.hpp"

namespace kiln::lowering {
namespace {

constexpr std::uint64_t kAlignment = 128;

// One phase: ring `ring` of two 16-element f32 slots filled by a copy and
// read by a local_load into `loaded`, which is stored.
std::string phase(const std::string& ring, const std::string& loaded) {
  return "  " + ring + " = local_alloc : shared<2x16xf32>\n  async_copy " + ring +
         ", %1, %4\n  async_commit\n  async_wait {pending = 0}\n  barrier\n  " + loaded + " = local_load " + ring +
         ", %1 : tile<16xf32>\n  store %4, " + loaded + " {cache = none, evict = none}\n";
}

// Two phases with `separator` between them.
std::string two_phases(const std::string& separator) {
  return R"(kernel @two_phases(%0: ptr<f32> {divisibility = 16}) {
  %1 = constant {value = 0} : i32
  %2 = arange {start = 0} : tile<16xi32>
  %3 = splat %0 : tile<16xptr<f32>>
  %4 = addptr %3, %2 : tile<16xptr<f32>>
)" + phase("%5", "%6") +
         separator + phase("%7", "%8") + "}\n";
}

RingPlacement place(const std::string& text, std::uint64_t ring_bytes = 200) {
  const std::unique_ptr<ir::Function> fn = ir::parse_function(text);
  RingPlacement placement = place_rings(*fn, [&](const ir::Value&) { return ring_bytes; }, kAlignment);
  EXPECT_EQ(placement.offsets.size(), 2u);
  return placement;
}

TEST(RingLifetimes, RingsSeparatedByADrainedWaitAndABarrierShareBytes) {
  const RingPlacement placement = place(two_phases("  async_wait {pending = 0}\n  barrier\n"));
  EXPECT_EQ(placement.bytes, 200u);
  for (const auto& [ring, offset] : placement.offsets) EXPECT_EQ(offset, 0u);
}

TEST(RingLifetimes, WithoutTheBarrierTheSecondRingGoesAfterTheFirst) {
  const RingPlacement placement = place(two_phases("  async_wait {pending = 0}\n"));
  EXPECT_EQ(placement.bytes, 256u + 200u) << "the second ring starts on the first aligned offset after the first";
}

TEST(RingLifetimes, AWaitThatLeavesCopiesInFlightDoesNotReleaseTheRing) {
  EXPECT_EQ(place(two_phases("  async_wait {pending = 1}\n  barrier\n")).bytes, 456u);
}

TEST(RingLifetimes, ABarrierBeforeTheWaitDoesNotReleaseTheRing) {
  EXPECT_EQ(place(two_phases("  barrier\n  async_wait {pending = 0}\n")).bytes, 456u);
}

TEST(RingLifetimes, AUseAfterTheBarrierKeepsTheRingLive) {
  // The first ring's slot is read again after the separator: it is live
  // while the second ring is.
  const RingPlacement placement =
      place(two_phases("  async_wait {pending = 0}\n  barrier\n  %9 = local_load %5, %1 : tile<16xf32>\n"
                       "  store %4, %9 {cache = none, evict = none}\n"));
  EXPECT_EQ(placement.bytes, 456u);
}

TEST(RingLifetimes, OffsetsAreAligned) {
  const RingPlacement placement = place(two_phases(""), 130);
  std::uint64_t largest = 0;
  for (const auto& [ring, offset] : placement.offsets) {
    EXPECT_EQ(offset % kAlignment, 0u);
    largest = std::max(largest, offset);
  }
  EXPECT_EQ(largest, 256u);
  EXPECT_EQ(placement.bytes, 386u);
}

}  // namespace
}  // namespace kiln::lowering
