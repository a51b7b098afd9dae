// The code generator's two kinds of error: LoweringError for a kernel it
// cannot lower (the user's to fix) and InternalError for its own broken
// invariants, which say so and ask for a report. The second is no kind of
// the first, so every test that expects a LoweringError, or none, fails on
// an internal error: the existing suites show none is reachable from them.
#include <gtest/gtest.h>

#include <stdexcept>
#include <type_traits>

#include "kiln/lowering/compile.hpp"

namespace kiln::lowering {
namespace {

static_assert(!std::is_base_of_v<LoweringError, InternalError>);
static_assert(!std::is_base_of_v<InternalError, LoweringError>);
static_assert(std::is_base_of_v<std::logic_error, InternalError>);

TEST(InternalError, SaysItIsKilnsAndAsksForAReport) {
  const InternalError error("%7 is used before the code generator defined it");
  EXPECT_STREQ(error.what(), "internal error in kiln: %7 is used before the code generator defined it (please report)");
}

}  // namespace
}  // namespace kiln::lowering
