// Correctness of cast from i1 and the integer dtypes to every dtype, and of bitcast
// to each dtype of the same width (the reference is in cast_reference.hpp).
#include <cstdint>

#include "cast_reference.hpp"

namespace {

using Sources = ::testing::Types<bool, std::int8_t, std::int16_t, std::int32_t, std::int64_t, std::uint8_t,
                                 std::uint16_t, std::uint32_t, std::uint64_t>;

template <class T>
class CastFromInt : public ::testing::Test {};
TYPED_TEST_SUITE(CastFromInt, Sources, kiln::test::DTypeNames);

TYPED_TEST(CastFromInt, CastToEveryDtypeAndBitcastToEachOfTheSameWidth) {
  kiln::test::cast::check_conversions_from<TypeParam>();
}

}  // namespace
