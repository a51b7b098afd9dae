// kl::return_if: a program ends early where its scalar condition holds and
// runs the rest of the kernel where it does not, on every device; the rest
// may hold reductions (barriers on a GPU), loops and further return_ifs.
#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

#include "error/kernel_error.hpp"
#include "reference_support.hpp"

namespace kl = kiln;

namespace return_if_kernels {

// Programs past `used` return before touching out; the others double x.
template <int BLOCK>
void double_used(kl::Ptr<kl::f32> x, kl::Ptr<kl::f32> out, kl::i32 used) {
  kl::return_if(kl::program_id(0) >= used);
  auto offsets = kl::program_id(0) * BLOCK + kl::arange<BLOCK>();
  kl::store(out + offsets, kl::load(x + offsets) * 2.0f);
}

// Row sums after a return_if: the reduction's barriers lie in the part that
// returned programs skip. A value declared before is reassigned after it,
// and a loop accumulates into a kl::Var.
template <int COLS>
void row_sums(kl::Ptr<kl::i32> x, kl::Ptr<kl::i32> out, kl::i32 rows, kl::i32 repeats) {
  auto row = kl::program_id(0);
  auto values = kl::load(x + row * COLS + kl::arange<COLS>());
  kl::return_if(row >= rows);
  values = values + 1;
  kl::Var total = kl::sum(values);
  for (auto i : kl::range(1, repeats)) total = total + kl::sum(values) * i;
  kl::store(out + row, total);
}

// Two return_ifs: odd programs return first, then those past `limit`.
void even_below(kl::Ptr<kl::i32> out, kl::i32 limit) {
  auto p = kl::program_id(0);
  kl::return_if(p % 2 == 1);
  kl::store(out + p, p * 10);
  kl::return_if(p >= limit);
  kl::store(out + p, p * 100);
}

constexpr int nested_line = __LINE__ + 3;
void return_inside_loop(kl::Ptr<kl::i32> out, kl::i32 n) {
  for (auto i : kl::range(0, n)) {
    kl::return_if(i == 3);
    kl::store(out + i, i);
  }
}

constexpr int tile_line = __LINE__ + 2;
void return_on_tile(kl::Ptr<kl::i32> out) {
  kl::return_if(kl::arange<16>() > 3);
  kl::store(out, 1);
}

}  // namespace return_if_kernels

namespace {

using kiln::test::expect_equal;
using kiln::test::random_values;
using kiln::test::trace_error;
using namespace return_if_kernels;

TEST(ReturnIf, ProgramsPastTheCountLeaveTheirOutputAlone) {
  constexpr int kBlock = 64, kPrograms = 8, kUsed = 5;
  const std::vector<float> x = random_values<float>(kBlock * kPrograms, 51);
  const std::vector<float> before = random_values<float>(kBlock * kPrograms, 52);
  const auto x_buffer = kl::Buffer<float>::from(x);
  auto out = kl::Buffer<float>::from(before);
  kl::compile<double_used<kBlock>>().launch(kl::Grid(kPrograms), x_buffer, out, kUsed);
  std::vector<float> want = before;
  for (int i = 0; i < kBlock * kUsed; ++i) want[i] = x[i] * 2.0f;
  expect_equal(out.to_host(), want, "out");
}

TEST(ReturnIf, ReductionsAndLoopsAfterTheReturn) {
  constexpr int kCols = 32, kPrograms = 12, kRows = 7, kRepeats = 4;
  const std::vector<std::int32_t> x = random_values<std::int32_t>(kCols * kPrograms, 53, -1000, 1000);
  const std::vector<std::int32_t> before = random_values<std::int32_t>(kPrograms, 54, -1000, 1000);
  const auto x_buffer = kl::Buffer<std::int32_t>::from(x);
  auto out = kl::Buffer<std::int32_t>::from(before);
  kl::compile<row_sums<kCols>>().launch(kl::Grid(kPrograms), x_buffer, out, kRows, kRepeats);
  std::vector<std::int32_t> want = before;
  for (int r = 0; r < kRows; ++r) {
    std::int32_t sum = 0;
    for (int c = 0; c < kCols; ++c) sum += x[r * kCols + c] + 1;
    want[r] = sum * (1 + 1 + 2 + 3);  // the sum itself, then i = 1, 2, 3
  }
  expect_equal(out.to_host(), want, "row sums");
}

TEST(ReturnIf, SuccessiveReturnsNest) {
  constexpr int kPrograms = 10, kLimit = 5;
  const std::vector<std::int32_t> before = random_values<std::int32_t>(kPrograms, 55, -1000, 1000);
  auto out = kl::Buffer<std::int32_t>::from(before);
  kl::compile<even_below>().launch(kl::Grid(kPrograms), out, kLimit);
  std::vector<std::int32_t> want = before;
  for (int p = 0; p < kPrograms; p += 2) want[p] = p < kLimit ? p * 100 : p * 10;
  expect_equal(out.to_host(), want, "out");
}

TEST(ReturnIf, InsideALoopIsRefused) {
  EXPECT_EQ(trace_error<return_inside_loop>(),
            "kernel return_inside_loop: return_if: only at the kernel's top level, not inside a kl::range, kl::if_ "
            "or kl::while_ body; carry a kl::Var flag out of the construct and test it after (return_if_test.cpp:" +
                std::to_string(nested_line) + ")");
}

TEST(ReturnIf, ATileConditionIsRefused) {
  EXPECT_EQ(trace_error<return_on_tile>(),
            "kernel return_on_tile: return_if: the condition must be a scalar i1, got tile<16xi1>; reduce it first "
            "(e.g. kl::max of the mask) (return_if_test.cpp:" +
                std::to_string(tile_line) + ")");
}

}  // namespace
