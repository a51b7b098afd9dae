// fp8 dots on tensor cores: compiled for sm_90a (mma.sync takes e4m3 and
// e5m2 from sm_89 on, m16n8k32) and run there by the emu-sm_90a device, a
// tiled matmul of f8e4m3 or f8e5m2 tiles gives the products within the
// inner-product bound of a double reference, unpipelined and pipelined, with
// tails; compiled for sm_80 the same dot stays on the FMA units, and the cpu
// and emu devices agree with the same bound.
#include <gtest/gtest.h>

#include <string>

#include "kiln/kiln.hpp"
#include "tiled_matmul.hpp"

namespace {

using kiln::Device;
using kiln::emu_test::describe;
using kiln::emu_test::expect_matmul_products;
using kiln::emu_test::MatmulCase;

template <class T>
void expect_fp8_products(const char* dtype, const std::string& instruction) {
  for (const MatmulCase& c : {MatmulCase{40, 50, 70, 4, 1}, MatmulCase{64, 64, 96, 4, 3}}) {
    const std::string what = describe(c, dtype);
    const std::string sm90a = expect_matmul_products<T, 32, 32, 32>(Device::emu_sm90a(), c, what, "sm_90a");
    EXPECT_NE(sm90a.find(instruction), std::string::npos) << what << ": no " << instruction;
    const std::string sm80 = expect_matmul_products<T, 32, 32, 32>(Device::emu(), c, what + " on emu", "sm_80");
    EXPECT_EQ(sm80.find("mma.sync"), std::string::npos) << what << ": sm_80 has no fp8 mma.sync";
    expect_matmul_products<T, 32, 32, 32>(Device::cpu(), c, what + " on cpu", "sm_80");
  }
}

TEST(Fp8Mma, E4m3OnTheTensorCores) {
  expect_fp8_products<kiln::float8_e4m3>("f8e4m3", "mma.sync.aligned.m16n8k32.row.col.f32.e4m3.e4m3.f32");
}

TEST(Fp8Mma, E5m2OnTheTensorCores) {
  expect_fp8_products<kiln::float8_e5m2>("f8e5m2", "mma.sync.aligned.m16n8k32.row.col.f32.e5m2.e5m2.f32");
}

}  // namespace
