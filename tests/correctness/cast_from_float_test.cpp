// Correctness of cast from the float dtypes, fp8 included to every dtype, and of bitcast
// to each dtype of the same width (the reference is in cast_reference.hpp).
#include <cstdint>

#include "cast_reference.hpp"

namespace {

using Sources = ::testing::Types<kiln::half, kiln::bfloat16, float, double, kiln::float8_e4m3, kiln::float8_e5m2>;

template <class T>
class CastFromFloat : public ::testing::Test {};
TYPED_TEST_SUITE(CastFromFloat, Sources, kiln::test::DTypeNames);

TYPED_TEST(CastFromFloat, CastToEveryDtypeAndBitcastToEachOfTheSameWidth) {
  kiln::test::cast::check_conversions_from<TypeParam>();
}

}  // namespace
