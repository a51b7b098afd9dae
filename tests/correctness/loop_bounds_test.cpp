// kl::range loops at the edges of i32, on every device (OPS.md, `for`): the
// induction variable never wraps, so a loop whose last k + step would pass
// the largest i32 ends there; a step that is not positive where lo < hi is a
// fault naming the loop, its bounds and the program, where a GPU's loop
// would never end. (tests/emu/loop_bounds_test.cpp: the other bound types,
// which IR text reaches.)
#include <array>
#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "error/kernel_error.hpp"
#include "reference_support.hpp"

namespace {

namespace kl = kiln;

// Program p: k = lo + p, lo + p + step, … while k < hi; records the
// iteration count and the last k (lo - 1 when the loop does not run).
void last_steps(kl::Ptr<kl::i32> out, kl::i32 lo, kl::i32 hi, kl::i32 step) {
  auto p = kl::program_id(0);
  kl::Var count = kl::i32(0);
  kl::Var last = lo - 1;
  for (auto k : kl::range(lo + p, hi, step)) {
    count = count + 1;
    last = k;
  }
  kl::store(out + p * 2, count);
  kl::store(out + (p * 2 + 1), last);
}

TEST(LoopBounds, EndWhereTheNextStepWouldPassTheLargestValue) {
  using T = std::int32_t;
  constexpr T kMax = std::numeric_limits<T>::max();
  const int programs = 4;
  const auto kernel = kl::compile<last_steps>();
  // Loops whose next k after the last would pass the largest i32 by various
  // amounts, small steps and steps of half the range; each program starts
  // one further on.
  for (const auto [lo, hi, step] :
       {std::array<T, 3>{kMax - 20, kMax, 7}, std::array<T, 3>{kMax - 20, kMax, 5}, std::array<T, 3>{kMax - 9, kMax, 3},
        std::array<T, 3>{kMax - 3, kMax, kMax / 2}, std::array<T, 3>{T(0), kMax, kMax / 2 + 1}}) {
    auto out = kl::Buffer<T>::from(kiln::test::random_values<T>(programs * 2, 91, 1, 100));
    kernel.launch(kl::Grid(programs), out, lo, hi, step);
    std::vector<T> want;
    for (int p = 0; p < programs; ++p) {
      // Counted in wide arithmetic: the reference cannot wrap either.
      T count = 0, last = lo - 1;
      for (__int128 k = static_cast<__int128>(lo) + p; k < hi; k += step) {
        ++count;
        last = static_cast<T>(k);
      }
      want.insert(want.end(), {count, last});
    }
    kiln::test::expect_equal(
        out.to_host(), want,
        ("range(" + std::to_string(lo) + " + p, " + std::to_string(hi) + ", " + std::to_string(step) + ")").c_str());
  }
}

// The line of scaled_range's loop, recorded while it is traced.
int loop_line = 0;

// Program p loops from 0 below p * hi: program 0 does not run its loop.
// clang-format off
void scaled_range(kl::Ptr<kl::i32> out, kl::i32 hi, kl::i32 step) {
  auto p = kl::program_id(0);
  kl::Var count = kl::i32(0);
  loop_line = __LINE__; for (auto k : kl::range(0, p * hi, step)) count = count + k;
  kl::store(out + p, count);
}
// clang-format on

TEST(LoopBounds, AStepThatIsNotPositiveIsAFaultNamingTheLoopItsBoundsAndTheProgram) {
  using T = std::int32_t;
  const auto kernel = kl::compile<scaled_range>();
  kl::Buffer<T> out(2);
  const T hi = 1 << 30;
  for (const T step : {0, -3}) {
    const std::string fault = kiln::test::kernel_error([&] { kernel.launch(kl::Grid(2), out, hi, step); });
    const std::string want = "kernel " + kernel.ir().name +
                             ": for loop at loop_bounds_test.cpp:" + std::to_string(loop_line) + " has step " +
                             std::to_string(step) + ", which never reaches " + std::to_string(hi) +
                             " from 0 (program (1, 0, 0))";
    EXPECT_EQ(fault, want);
  }
  // Where lo >= hi a step of 0 is no fault: the loop does not run.
  auto none = kl::Buffer<T>::from(std::vector<T>{7, 7});
  kernel.launch(kl::Grid(1), none, hi, T(0));
  kiln::test::expect_equal(none.to_host(), std::vector<T>{0, 7}, "program 0's empty loop");
}

}  // namespace
