// Correctness of runtime control flow on the cpu device: kl::range loops
// carrying scalar and tile kl::Vars over runtime trip counts (including
// none), nested loops, kl::if_ with and without else and returning a value,
// kl::while_, loops inside branches and branches inside loops, copies of a
// kl::Var, device_print output and passing device_asserts.
#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <limits>
#include <sstream>
#include <string>
#include <vector>

#include "reference_support.hpp"

namespace {

namespace kl = kiln;
using kiln::test::as_double;
using kiln::test::expect_equal;
using kiln::test::expect_within;
using kiln::test::gamma_bound;
using kiln::test::random_values;
using kiln::test::sum_storage_t;
using kiln::test::unit_roundoff;

template <class C>
using P = kl::Ptr<kl::Scalar<C>>;

// ---------------------------------------------------------------------------
// Loops.

// One program per row: a tile accumulator sums the row block by block
// (masked tail), a scalar counts the iterations.
template <class C, int BLOCK>
void row_loop(P<C> x, P<sum_storage_t<C>> totals, kl::Ptr<kl::i32> trips, kl::i32 cols, kl::i32 stride) {
  auto row = kl::program_id(0);
  kl::Var acc = kl::zeros<kl::Scalar<C>, BLOCK>();
  kl::Var count = kl::i32(0);
  for (auto k : kl::range(0, cols, BLOCK)) {
    auto c = k + kl::arange<BLOCK>();
    acc = acc + kl::load(x + row * stride + c, c < cols);
    count = count + 1;
  }
  kl::store(totals + row, kl::sum(acc));
  kl::store(trips + row, count);
}

template <class C>
class RangeLoop : public ::testing::Test {};
using LoopTypes = ::testing::Types<std::int32_t, std::int64_t, kl::half, float, double>;
TYPED_TEST_SUITE(RangeLoop, LoopTypes, kiln::test::DTypeNames);

TYPED_TEST(RangeLoop, TileAndScalarAccumulatorsOverRuntimeTripCounts) {
  using C = TypeParam;
  using S = sum_storage_t<C>;
  constexpr int BLOCK = 64;
  const int rows = 7, stride = 300;
  const auto x = random_values<C>(static_cast<std::size_t>(rows) * stride, 71, -1000, 1000);
  auto bx = kl::Buffer<C>::from(x);
  const auto kernel = kl::compile<row_loop<C, BLOCK>>();
  // 5 trips with a tail of 44, one masked trip, no trip at all.
  for (int cols : {300, 37, 0}) {
    // Outputs start random, so that a missing store is noticed (the sum over
    // no column is 0).
    auto totals = kl::Buffer<S>::from(random_values<S>(rows, 70, 1, 100));
    auto trips = kl::Buffer<std::int32_t>::from(random_values<std::int32_t>(rows, 72, 100, 200));
    kernel.launch(kl::Grid(rows), bx, totals, trips, cols, stride);
    const int want_trips = (cols + BLOCK - 1) / BLOCK;
    expect_equal(trips.to_host(), std::vector<std::int32_t>(rows, want_trips), "iteration count");
    std::vector<double> want(rows), bound(rows);
    std::vector<S> exact(rows);
    for (int r = 0; r < rows; ++r) {
      double sum = 0, magnitude = 0;
      for (int c = 0; c < cols; ++c) {
        sum += as_double(x[static_cast<std::size_t>(r) * stride + c]);
        magnitude += std::abs(as_double(x[static_cast<std::size_t>(r) * stride + c]));
      }
      want[r] = sum;
      exact[r] = static_cast<S>(sum);
      // Each lane adds its want_trips elements in C (gamma_trips u_C of their
      // magnitudes), then kl::sum adds BLOCK lanes in S (gamma_BLOCK u_S of the
      // lanes' magnitudes, at most (1 + gamma_trips u_C) times the elements').
      if constexpr (kiln::test::is_float_v<C>) {
        const double lanes = gamma_bound(want_trips, unit_roundoff<C>());
        bound[r] =
            (lanes + gamma_bound(BLOCK, unit_roundoff<S>()) * (1 + lanes) + gamma_bound(cols, 0x1p-53)) * magnitude;
      }
    }
    const std::string what = "row sums over " + std::to_string(cols) + " columns";
    if constexpr (kiln::test::is_float_v<C>) expect_within(totals.to_host(), want, bound, what.c_str());
    else expect_equal(totals.to_host(), exact, what.c_str());
  }
}

// Program p: k = lo + p, lo + p + step, … while k < hi; records the sum of
// k*k, the iteration count and the last k (-1 when the loop does not run).
void stepped_loop(kl::Ptr<kl::i32> out, kl::i32 lo, kl::i32 hi, kl::i32 step) {
  auto p = kl::program_id(0);
  kl::Var total = kl::i32(0);
  kl::Var count = kl::i32(0);
  kl::Var last = kl::i32(-1);
  for (auto k : kl::range(lo + p, hi, step)) {
    total = total + k * k;
    count = count + 1;
    last = k;
  }
  kl::store(out + p * 3, total);
  kl::store(out + (p * 3 + 1), count);
  kl::store(out + (p * 3 + 2), last);
}

TEST(RangeLoop, RuntimeBoundsAndStep) {
  const int programs = 4;
  const auto kernel = kl::compile<stepped_loop>();
  for (const auto [lo, hi, step] :
       {std::array<int, 3>{3, 100, 7}, std::array<int, 3>{-20, 5, 3}, std::array<int, 3>{50, 10, 1}}) {
    auto out = kl::Buffer<std::int32_t>::from(random_values<std::int32_t>(programs * 3, 73, 1000, 2000));
    kernel.launch(kl::Grid(programs), out, lo, hi, step);
    std::vector<std::int32_t> want;
    for (int p = 0; p < programs; ++p) {
      int total = 0, count = 0, last = -1;
      for (int k = lo + p; k < hi; k += step) {
        total += k * k;
        ++count;
        last = k;
      }
      want.insert(want.end(), {total, count, last});
    }
    expect_equal(
        out.to_host(), want,
        ("range(" + std::to_string(lo) + ", " + std::to_string(hi) + ", " + std::to_string(step) + ")").c_str());
  }
}

// Copies of a kl::Var, written with the deduced and the declared type, are new
// variables: they keep the value of the moment they were made while the
// original (and each other) change in later loops.
void copied_vars(kl::Ptr<kl::i32> out, kl::i32 n) {
  kl::Var sum = kl::i32(0);
  for (auto k : kl::range(0, n)) sum = sum + k;
  kl::Var snapshot = sum;
  kl::Var<kl::i32> doubled = sum;
  for (auto k : kl::range(0, n)) sum = sum + 1;
  doubled = doubled * 2;
  kl::store(out, sum);
  kl::store(out + 1, snapshot);
  kl::store(out + 2, doubled);
}

TEST(Var, CopiesAreNewVariables) {
  const auto kernel = kl::compile<copied_vars>();
  for (const int n : {0, 1, 37}) {
    auto out = kl::Buffer<std::int32_t>::from(random_values<std::int32_t>(3, 29, 1000, 2000));
    kernel.launch(kl::Grid(1), out, n);
    const int sum = n * (n - 1) / 2;
    expect_equal(out.to_host(), std::vector<std::int32_t>{sum + n, sum, 2 * sum}, ("n = " + std::to_string(n)).c_str());
  }
}

// Program p sums (i + 1) * x[p, i, :] over the rows i of its matrix (inner
// loop over column blocks), and in a second inner loop whose trip count
// depends on i adds up 0 + 1 + … + i.
template <int BLOCK>
void nested_loops(kl::Ptr<kl::f32> x, kl::Ptr<kl::f32> out, kl::Ptr<kl::i32> triangle, kl::i32 rows, kl::i32 cols) {
  auto p = kl::program_id(0);
  kl::Var acc = kl::zeros<kl::f32, BLOCK>();
  kl::Var pairs = kl::i32(0);
  for (auto i : kl::range(0, rows)) {
    auto weight = kl::cast<kl::f32>(i + 1);
    for (auto j : kl::range(0, cols, BLOCK)) {
      auto c = j + kl::arange<BLOCK>();
      acc = acc + kl::load(x + (p * rows + i) * cols + c, c < cols) * weight;
    }
    for (auto t : kl::range(0, i + 1)) pairs = pairs + t;
  }
  kl::store(out + p, kl::sum(acc));
  kl::store(triangle + p, pairs);
}

TEST(RangeLoop, NestedLoops) {
  constexpr int BLOCK = 32;
  const int programs = 3, rows = 9, cols = 70;  // 3 column blocks, the last masked after 6
  const auto x = random_values<float>(static_cast<std::size_t>(programs) * rows * cols, 74);
  auto bx = kl::Buffer<float>::from(x);
  kl::Buffer<float> out(programs);
  kl::Buffer<std::int32_t> triangle(programs);
  kl::compile<nested_loops<BLOCK>>().launch(kl::Grid(programs), bx, out, triangle, rows, cols);
  std::vector<double> want(programs), bound(programs);
  int want_pairs = 0;
  for (int i = 0; i < rows; ++i) want_pairs += i * (i + 1) / 2;
  for (int p = 0; p < programs; ++p) {
    double sum = 0, magnitude = 0;
    for (int i = 0; i < rows; ++i)
      for (int j = 0; j < cols; ++j) {
        const double term = (i + 1) * static_cast<double>(x[(static_cast<std::size_t>(p) * rows + i) * cols + j]);
        sum += term;
        magnitude += std::abs(term);
      }
    want[p] = sum;
    // Each lane rounds rows products and rows sums (gamma_{2 rows}); the final
    // sum of BLOCK lanes adds gamma_BLOCK of their magnitudes.
    const double lanes = gamma_bound(2 * rows, 0x1p-24);
    bound[p] = (lanes + gamma_bound(BLOCK, 0x1p-24) * (1 + lanes) + gamma_bound(rows * cols, 0x1p-53)) * magnitude;
  }
  expect_within(out.to_host(), want, bound, "nested loop sums");
  expect_equal(triangle.to_host(), std::vector<std::int32_t>(programs, want_pairs),
               "inner trip count from the outer variable");
}

// ---------------------------------------------------------------------------
// Branches.

// Even programs double their tile (if_ without else); programs p % 3 == 0 get
// sign 1, the others -1 (if_ with else); programs 0 and 1 pick 10 p, the
// others p + 100 (if_ returning a value); and each program returns the max of
// its elements if their sum is positive, else their min (a data-dependent
// condition).
template <int BLOCK>
void branches(kl::Ptr<kl::f32> x, kl::Ptr<kl::f32> scaled, kl::Ptr<kl::f32> signs, kl::Ptr<kl::i32> picked,
              kl::Ptr<kl::f32> extreme, kl::i32 n) {
  auto p = kl::program_id(0);
  auto offs = p * BLOCK + kl::arange<BLOCK>();
  auto mask = offs < n;
  kl::Var v = kl::load(x + offs, mask);
  kl::if_(p % 2 == 0, [&] { v = v * 2.0f; });
  kl::store(scaled + offs, v, mask);
  kl::Var sign = kl::f32(0.0f);
  kl::if_(p % 3 == 0, [&] { sign = kl::f32(1.0f); }, [&] { sign = kl::f32(-1.0f); });
  kl::store(signs + p, sign);
  kl::store(picked + p, kl::if_(p < 2, [&] { return p * 10; }, [&] { return p + 100; }));
  auto t = kl::load(x + offs, mask);
  const double inf = std::numeric_limits<double>::infinity();
  kl::store(extreme + p, kl::if_(
                             kl::sum(t) > 0.0f, [&] { return kl::max(kl::where(mask, t, -inf)); },
                             [&] { return kl::min(kl::where(mask, t, inf)); }));
}

TEST(Branches, IfWithAndWithoutElseAndWithAValue) {
  constexpr int BLOCK = 16;
  const int n = 150, programs = (n + BLOCK - 1) / BLOCK;  // 10 programs, the last masked after 6
  const auto x = random_values<float>(n, 75);
  auto bx = kl::Buffer<float>::from(x);
  auto scaled = kl::Buffer<float>::from(random_values<float>(n, 76));
  kl::Buffer<float> signs(programs), extreme(programs);
  kl::Buffer<std::int32_t> picked(programs);
  kl::compile<branches<BLOCK>>().launch(kl::Grid(programs), bx, scaled, signs, picked, extreme, n);
  std::vector<float> want_scaled(n), want_signs(programs), want_extreme(programs);
  std::vector<std::int32_t> want_picked(programs);
  int positive = 0;
  for (int p = 0; p < programs; ++p) {
    double sum = 0;
    float hi = -INFINITY, lo = INFINITY;
    for (int i = p * BLOCK; i < std::min(n, p * BLOCK + BLOCK); ++i) {
      want_scaled[i] = p % 2 == 0 ? x[i] * 2.0f : x[i];
      sum += x[i];
      hi = std::max(hi, x[i]);
      lo = std::min(lo, x[i]);
    }
    want_signs[p] = p % 3 == 0 ? 1.0f : -1.0f;
    want_picked[p] = p < 2 ? p * 10 : p + 100;
    // No block sum is within f32 rounding of 0 for these inputs (checked).
    ASSERT_GT(std::abs(sum), 1e-3) << p;
    want_extreme[p] = sum > 0 ? hi : lo;
    positive += sum > 0;
  }
  ASSERT_GT(positive, 0);
  ASSERT_LT(positive, programs) << "both branches of the data-dependent if_ must run";
  expect_equal(scaled.to_host(), want_scaled, "if_ without else");
  expect_equal(signs.to_host(), want_signs, "if_ with else");
  expect_equal(picked.to_host(), want_picked, "if_ returning a value");
  expect_equal(extreme.to_host(), want_extreme, "if_ on a reduced condition");
}

// Odd programs add 0..n-1 in a loop inside the then branch, even ones
// subtract 0, 2, 4… inside the else branch; a loop over k < n then adds k
// (k % 3 == 0) or 1 (otherwise) through an if_ inside the loop, plus 1000 from
// an if_ returning a value when k == p.
void loops_and_branches(kl::Ptr<kl::i32> out, kl::i32 n) {
  auto p = kl::program_id(0);
  kl::Var a = kl::i32(0);
  kl::Var b = kl::i32(0);
  kl::if_(
      p % 2 == 1,
      [&] {
        for (auto k : kl::range(0, n)) a = a + k;
      },
      [&] {
        for (auto k : kl::range(0, n, 2)) a = a - k;
      });
  for (auto k : kl::range(0, n)) {
    kl::if_(k % 3 == 0, [&] { b = b + k; }, [&] { b = b + 1; });
    b = b + kl::if_(k == p, [&] { return kl::i32(1000); }, [&] { return kl::i32(0); });
  }
  kl::store(out + p * 2, a);
  kl::store(out + (p * 2 + 1), b);
}

TEST(Branches, LoopsInsideBranchesAndBranchesInsideLoops) {
  const int programs = 6;
  const auto kernel = kl::compile<loops_and_branches>();
  for (int n : {11, 4}) {
    auto out = kl::Buffer<std::int32_t>::from(random_values<std::int32_t>(programs * 2, 77, 5000, 6000));
    kernel.launch(kl::Grid(programs), out, n);
    std::vector<std::int32_t> want;
    for (int p = 0; p < programs; ++p) {
      int a = 0, b = 0;
      if (p % 2 == 1)
        for (int k = 0; k < n; ++k) a += k;
      else
        for (int k = 0; k < n; k += 2) a -= k;
      for (int k = 0; k < n; ++k) b += (k % 3 == 0 ? k : 1) + (k == p ? 1000 : 0);
      want.insert(want.end(), {a, b});
    }
    expect_equal(out.to_host(), want, ("loops and branches, n = " + std::to_string(n)).c_str());
  }
}

// ---------------------------------------------------------------------------
// while_.

// The number of Collatz steps from start[p] to 1 (n -> n / 2 if even, else
// 3n + 1), with the step chosen by an if_ inside the while_ body.
void collatz(kl::Ptr<kl::i32> start, kl::Ptr<kl::i32> steps) {
  auto p = kl::program_id(0);
  kl::Var value = kl::load(start + p);
  kl::Var count = kl::i32(0);
  kl::while_([&] { return value != 1; },
             [&] {
               value = kl::if_(value % 2 == 0, [&] { return value / 2; }, [&] { return value * 3 + 1; });
               count = count + 1;
             });
  kl::store(steps + p, count);
}

TEST(While, CollatzSteps) {
  // Random starts below 10^4 (their trajectories stay below 2^31), plus 1 (no
  // step) and 27 (111 steps).
  auto starts = random_values<std::int32_t>(62, 78, 1, 9999);
  starts.push_back(1);
  starts.push_back(27);
  const int programs = static_cast<int>(starts.size());
  auto bstarts = kl::Buffer<std::int32_t>::from(starts);
  auto steps = kl::Buffer<std::int32_t>::from(random_values<std::int32_t>(programs, 79, 1000, 2000));
  kl::compile<collatz>().launch(kl::Grid(programs), bstarts, steps);
  std::vector<std::int32_t> want;
  for (std::int64_t v : starts) {
    int count = 0;
    for (; v != 1; ++count) v = v % 2 == 0 ? v / 2 : 3 * v + 1;
    want.push_back(count);
  }
  ASSERT_EQ(want.back(), 111);
  expect_equal(steps.to_host(), want, "collatz steps");
}

// ---------------------------------------------------------------------------
// Debugging ops.

// Prints the program's own x, the first four elements of x and y[p].
void print_kernel(kl::Ptr<kl::i32> x, kl::Ptr<kl::f32> y) {
  auto p = kl::program_id(0);
  kl::device_print("value:", kl::load(x + p), kl::load(x + kl::arange<4>()), kl::load(y + p));
}
constexpr int kPrintLine = __LINE__ - 2;

// The numbers in `text`, in order.
std::vector<double> numbers_in(const std::string& text) {
  std::vector<double> out;
  std::string token;
  auto flush = [&] {
    if (!token.empty() && token != "-" && token != ".") out.push_back(std::stod(token));
    token.clear();
  };
  for (char ch : text) {
    if ((ch >= '0' && ch <= '9') || ch == '.' || (ch == '-' && token.empty())) token += ch;
    else flush();
  }
  flush();
  return out;
}

TEST(DevicePrint, PrintsPrefixProgramIdAndValues) {
  const std::vector<std::int32_t> x{17, -3, 250, 8};
  const std::vector<float> y{0.25f, -1.5f, 6.125f};
  const int programs = 3;
  auto bx = kl::Buffer<std::int32_t>::from(x);
  auto by = kl::Buffer<float>::from(y);
  const auto kernel = kl::compile<print_kernel>();
  ::testing::internal::CaptureStdout();
  kernel.launch(kl::Grid(programs), bx, by);
  const std::string output = ::testing::internal::GetCapturedStdout();
  std::vector<std::string> lines;
  std::istringstream stream(output);
  for (std::string line; std::getline(stream, line);) lines.push_back(line);
  ASSERT_EQ(lines.size(), static_cast<std::size_t>(programs)) << output;
  for (int p = 0; p < programs; ++p) {
    // The line of program p: the program id (p, 0, 0) before the prefix, then
    // x[p], the tile x[0..3] and y[p].
    const std::vector<double> want_values{static_cast<double>(x[p]), 17, -3, 250, 8, y[p]};
    int found = 0;
    for (const std::string& line : lines) {
      const auto at = line.find("value:");
      if (at == std::string::npos) continue;
      if (numbers_in(line.substr(at)) != want_values) continue;
      ++found;
      EXPECT_EQ(numbers_in(line.substr(0, at)), (std::vector<double>{static_cast<double>(p), 0, 0})) << line;
    }
    EXPECT_EQ(found, 1) << "program " << p << " in:\n" << output;
  }
}

TEST(DevicePrint, RecordsTheLineOfTheCall) {
  const auto kernel = kl::compile<print_kernel>();
  bool seen = false;
  kiln::ir::walk(kernel.ir().body, [&](kiln::ir::Operation& op) {
    if (op.code != kiln::ir::OpCode::print) return;
    seen = true;
    EXPECT_TRUE(op.loc.file.ends_with("control_test.cpp")) << op.loc.file;
    EXPECT_EQ(op.loc.line, kPrintLine);
  });
  EXPECT_TRUE(seen);
}

// Asserts that hold: loaded values (other 1 where masked) are positive, and
// program ids are below the grid size.
template <int BLOCK>
void asserting_copy(kl::Ptr<kl::f32> x, kl::Ptr<kl::f32> out, kl::i32 n) {
  auto offs = kl::program_id(0) * BLOCK + kl::arange<BLOCK>();
  auto mask = offs < n;
  auto v = kl::load(x + offs, mask, {.other = 1.0});
  kl::device_assert(v > 0.0f, "inputs must be positive");
  kl::device_assert(kl::program_id(0) < kl::num_programs(0), "program id below the grid size");
  kl::store(out + offs, v * 2.0f, mask);
}

TEST(DeviceAssert, PassingAssertsLetTheKernelRun) {
  const int n = 100;
  const auto x = random_values<float>(n, 80, 0.5, 4.0);
  auto bx = kl::Buffer<float>::from(x);
  kl::Buffer<float> out(n);
  kl::compile<asserting_copy<32>>().launch(kl::Grid(4), bx, out, n);
  std::vector<float> want(n);
  for (int i = 0; i < n; ++i) want[i] = x[i] * 2.0f;
  expect_equal(out.to_host(), want, "output of a kernel with passing asserts");
}

}  // namespace
