// Tiles above two dimensions through the GPU code generator: 3-D copies,
// join and split between 3-D and 4-D tiles, permutes, reshapes to and from
// 3-D and reductions of a 3-D tile along each axis, traced from the DSL and
// lowered for sm_80 and sm_90a; ptxas accepts every kernel without spills.
#include <gtest/gtest.h>

#include <string>

#include "codegen/codegen_support.hpp"
#include "correctness/rank3_kernels.hpp"
#include "kiln/kiln.hpp"

namespace kiln::codegen_test {
namespace {

namespace kl = kiln;
using namespace kiln::test::rank3;
using kiln::test::rank3::Tile;  // not kiln::Tile

/// A 4x8x32 f32 tile copied, contiguous and aligned along its last dimension.
const char* kCopy3d = R"(kernel @copy3d(%0: ptr<f32> {divisibility = 16}, %1: ptr<f32> {divisibility = 16}) {
  %2 = arange {start = 0} : tile<4xi32>
  %3 = arange {start = 0} : tile<8xi32>
  %4 = arange {start = 0} : tile<32xi32>
  %5 = expand_dims %2 {axis = 1} : tile<4x1xi32>
  %6 = expand_dims %5 {axis = 2} : tile<4x1x1xi32>
  %7 = constant {value = 256} : tile<4x1x1xi32>
  %8 = mul %6, %7 : tile<4x1x1xi32>
  %9 = broadcast %8 : tile<4x8x32xi32>
  %10 = expand_dims %3 {axis = 0} : tile<1x8xi32>
  %11 = expand_dims %10 {axis = 2} : tile<1x8x1xi32>
  %12 = constant {value = 32} : tile<1x8x1xi32>
  %13 = mul %11, %12 : tile<1x8x1xi32>
  %14 = broadcast %13 : tile<4x8x32xi32>
  %15 = expand_dims %4 {axis = 0} : tile<1x32xi32>
  %16 = expand_dims %15 {axis = 0} : tile<1x1x32xi32>
  %17 = broadcast %16 : tile<4x8x32xi32>
  %18 = add %9, %14 : tile<4x8x32xi32>
  %19 = add %18, %17 : tile<4x8x32xi32>
  %20 = splat %0 : tile<4x8x32xptr<f32>>
  %21 = addptr %20, %19 : tile<4x8x32xptr<f32>>
  %22 = load %21 {cache = none, evict = none} : tile<4x8x32xf32>
  %23 = splat %1 : tile<4x8x32xptr<f32>>
  %24 = addptr %23, %19 : tile<4x8x32xptr<f32>>
  store %24, %22 {cache = none, evict = none}
}
)";

/// x reshaped to [A, B*C] into `reshaped` (row-major in the array), and that
/// 2-D tile doubled and reshaped back to [A, B, C] into `back`.
template <class E>
void reshape_round_trip_kernel(kl::Ptr<kl::Scalar<E>> x_ptr, kl::Ptr<kl::Scalar<E>> reshaped,
                               kl::Ptr<kl::Scalar<E>> back) {
  const auto t = Tile::here();
  auto x = kl::load(x_ptr + t.offs, t.mask);
  auto m = kl::arange<kB * kC>();
  auto jm = kl::program_id(1) * kB + m / kC;
  auto km = kl::program_id(2) * kC + m % kC;
  auto inner = jm * kD2 + km;  // [B*C]
  auto i_col = kl::expand_dims<1>(t.i);
  auto flat = kl::reshape<kA, kB * kC>(x);  // 3-D to 2-D
  kl::store(reshaped + (i_col * (kD1 * kD2) + kl::expand_dims<0>(inner)), flat,
            (i_col < kD0) & kl::expand_dims<0>((jm < kD1) & (km < kD2)));
  kl::store(back + t.offs, kl::reshape<kA, kB, kC>(flat * 2), t.mask);  // 2-D to 3-D
}

/// Lowers `fn` for both architectures and checks ptxas accepts it without spills.
#define KILN_EXPECT_LOWERS_FOR_BOTH(fn, stem)                                         \
  for (const char* arch : {"sm_80", "sm_90a"}) {                                      \
    const lowering::GpuKernel kernel = lowering::compile_for_gpu(fn, {.arch = arch}); \
    EXPECT_TRUE(contains(kernel.ptx, ".entry")) << kernel.ptx;                        \
    KILN_EXPECT_PTXAS_ACCEPTS(kernel, arch, stem);                                    \
  }

TEST(Rank3, ContiguousThreeDimensionalCopyUsesSixteenByteAccessesAndMovesNoData) {
  for (const char* arch : {"sm_80", "sm_90a"}) {
    const lowering::GpuKernel kernel = compile_text(kCopy3d, arch);
    // 1024 elements over 128 threads: 8 per thread, two 16-byte vectors each way.
    EXPECT_EQ(count(kernel.ptx, "ld.global.v4.f32") + count(kernel.ptx, "ld.global.nc.v4.f32"), 2) << kernel.ptx;
    EXPECT_EQ(count(kernel.ptx, "st.global.v4.f32"), 2) << kernel.ptx;
    EXPECT_EQ(count(kernel.ptx, ".shared"), 0) << kernel.ptx;
    EXPECT_EQ(count(kernel.ptx, "shfl.sync"), 0) << kernel.ptx;
    KILN_EXPECT_PTXAS_ACCEPTS(kernel, arch, "copy3d");
  }
}

TEST(Rank3, JoinAndSplitBetweenThreeAndFourDimensions) {
  KILN_EXPECT_LOWERS_FOR_BOTH(kl::compile<join_split_kernel<float>>().ir(), "join_split_3d_f32");
  KILN_EXPECT_LOWERS_FOR_BOTH(kl::compile<join_split_kernel<kl::half>>().ir(), "join_split_3d_f16");
}

TEST(Rank3, JoinOfLoadedThreeDimensionalTilesMovesNoData) {
  // The pairs of the 4-D result are held in one thread's registers, so the
  // loads feeding the join live in the kernel's 3-D layout, which is the
  // slice of the 4-D one: no f32 value moves between threads. The
  // 4-element index tile that i and k share (one class, needed along two
  // axes) is an arange, computed again in the second layout: nothing goes
  // through shared memory.
  const lowering::GpuKernel kernel =
      lowering::compile_for_gpu(kl::compile<join_split_kernel<float>>().ir(), {.arch = "sm_90a"});
  EXPECT_EQ(count(kernel.llvm_ir, "x float] undef"), 0) << kernel.llvm_ir;
  EXPECT_EQ(count(kernel.llvm_ir, "shfl.sync.idx.f32(i32"), 0) << kernel.llvm_ir;
  EXPECT_EQ(kernel.shared_bytes, 0);
  EXPECT_EQ(count(kernel.llvm_ir, "call void @llvm.nvvm.barrier0()"), 0) << kernel.llvm_ir;
}

TEST(Rank3, PermutesOfThreeDimensionalTiles) {
  KILN_EXPECT_LOWERS_FOR_BOTH(kl::compile<permute_kernel<float>>().ir(), "permute_3d_f32");
  KILN_EXPECT_LOWERS_FOR_BOTH(kl::compile<permute_kernel<kl::half>>().ir(), "permute_3d_f16");
}

TEST(Rank3, ReshapesToAndFromThreeDimensions) {
  KILN_EXPECT_LOWERS_FOR_BOTH(kl::compile<reshape_round_trip_kernel<float>>().ir(), "reshape_3d_f32");
  KILN_EXPECT_LOWERS_FOR_BOTH(kl::compile<reshape_round_trip_kernel<std::int8_t>>().ir(), "reshape_3d_i8");
}

TEST(Rank3, ReductionsAlongEachAxisOfAThreeDimensionalTile) {
  KILN_EXPECT_LOWERS_FOR_BOTH(kl::compile<reduce_3d_kernel<float>>().ir(), "reduce_3d_f32");
  KILN_EXPECT_LOWERS_FOR_BOTH(kl::compile<reduce_3d_kernel<std::int32_t>>().ir(), "reduce_3d_i32");
}

}  // namespace
}  // namespace kiln::codegen_test
