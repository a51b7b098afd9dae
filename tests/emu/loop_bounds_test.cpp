// `for` loops over every integer type of their bounds on cpu and emu, from
// IR text (kl::range takes i32 only): the induction variable never wraps, so
// a loop ends where its next value would pass the type's largest value, and
// a step that is not positive where lo < hi is the same fault on both, its
// bounds printed as their type says (OPS.md, `for`).
#include <gtest/gtest.h>

#include <array>
#include <cstdint>
#include <limits>
#include <memory>
#include <string>
#include <vector>

#include "kiln/ir/parser.hpp"
#include "kiln/kiln.hpp"
#include "kiln/runtime/program.hpp"

namespace {

using kiln::Buffer;
using kiln::Device;

/// count[0] = the iterations of for k = lo; k < hi; k += step, last[0] = the
/// last k (lo when the loop does not run); bounds of type `type`.
std::string last_steps_text(const std::string& type) {
  return "kernel @last_steps(%0: ptr<" + type + ">, %1: ptr<" + type + ">, %2: " + type + ", %3: " + type +
         ", %4: " + type + ") {\n  %5 = constant {value = 0} : " + type + "\n  %6 = constant {value = 1} : " + type +
         "\n  %7, %8 = for %2, %3, %4, %5, %2 : " + type + ", " + type + " loc(\"steps.kiln\":4) {\n  ^(%9: " + type +
         ", %10: " + type + ", %11: " + type + "):\n    %12 = add %10, %6 : " + type +
         "\n    yield %12, %9\n  }\n  store %0, %7 {cache = none, evict = none}\n  store %1, %8 {cache = none, evict "
         "= none}\n}\n";
}

/// Runs last_steps over `type` with bounds `lo`, `hi`, `step` (as their
/// bits) on `device`: {count, last}, or the fault's message.
template <class T>
std::string run_last_steps(const std::string& type, T lo, T hi, T step, const Device& device) {
  const auto program =
      std::make_shared<kiln::runtime::Program>(kiln::ir::parse_function(last_steps_text(type)), "last_steps");
  Buffer<T> count(1, device), last(1, device);
  const std::vector<kiln::runtime::KernelArgument> arguments = {
      {reinterpret_cast<std::uintptr_t>(count.data()), count.range("%0")},
      {reinterpret_cast<std::uintptr_t>(last.data()), last.range("%1")},
      {static_cast<std::uint64_t>(lo), {}},
      {static_cast<std::uint64_t>(hi), {}},
      {static_cast<std::uint64_t>(step), {}}};
  try {
    program->launch(device, {1, 1, 1}, arguments);
  } catch (const kiln::runtime::KernelError& error) {
    return error.what();
  }
  return std::to_string(count.to_host()[0]) + " iterations, last " + std::to_string(last.to_host()[0]);
}

/// What the loop gives, counted in wide arithmetic.
template <class T>
std::string expected_steps(T lo, T hi, T step) {
  T count = 0, last = lo;
  for (__int128 k = lo; k < hi; k += step) {
    ++count;
    last = static_cast<T>(k);
  }
  return std::to_string(count) + " iterations, last " + std::to_string(last);
}

template <class T>
void expect_loops_end_at_the_largest_value(const std::string& type) {
  constexpr T kMax = std::numeric_limits<T>::max();
  constexpr T kMin = std::numeric_limits<T>::min();
  for (const auto [lo, hi, step] :
       {std::array<T, 3>{T(kMax - 20), kMax, T(7)}, std::array<T, 3>{T(kMax - 9), kMax, T(3)},
        std::array<T, 3>{T(kMax - 3), kMax, T(kMax / 2)}, std::array<T, 3>{kMin, kMax, T(kMax / 2 + 1)},
        std::array<T, 3>{T(kMax - 1), kMax, T(1)}, std::array<T, 3>{kMin, T(kMin + 5), T(2)}}) {
    const std::string want = expected_steps(lo, hi, step);
    for (const Device& device : {Device::cpu(), Device::emu()})
      EXPECT_EQ(run_last_steps(type, lo, hi, step, device), want)
          << type << " range(" << +lo << ", " << +hi << ", " << +step << ") on " << device.name();
  }
}

TEST(LoopBounds, EveryBoundTypeEndsWhereTheNextStepWouldPassItsLargestValue) {
  expect_loops_end_at_the_largest_value<std::int8_t>("i8");
  expect_loops_end_at_the_largest_value<std::uint16_t>("u16");
  expect_loops_end_at_the_largest_value<std::int32_t>("i32");
  expect_loops_end_at_the_largest_value<std::uint32_t>("u32");
  expect_loops_end_at_the_largest_value<std::int64_t>("i64");
  expect_loops_end_at_the_largest_value<std::uint64_t>("u64");
}

TEST(LoopBounds, AStepThatIsNotPositiveIsTheSameFaultOnCpuAndEmu) {
  const std::string loop = "kernel last_steps: for loop at steps.kiln:4 has step ";
  const std::string program = " (program (0, 0, 0))";
  const std::uint64_t u64_max = std::numeric_limits<std::uint64_t>::max();
  for (const Device& device : {Device::cpu(), Device::emu()}) {
    EXPECT_EQ(run_last_steps<std::int32_t>("i32", -5, 10, -2, device),
              loop + "-2, which never reaches 10 from -5" + program);
    EXPECT_EQ(run_last_steps<std::int64_t>("i64", 0, std::int64_t{1} << 40, 0, device),
              loop + "0, which never reaches 1099511627776 from 0" + program);
    EXPECT_EQ(run_last_steps<std::uint64_t>("u64", 1, u64_max, 0, device),
              loop + "0, which never reaches " + std::to_string(u64_max) + " from 1" + program);
    EXPECT_EQ(run_last_steps<std::uint32_t>("u32", 3, 4000000000u, 0, device),
              loop + "0, which never reaches 4000000000 from 3" + program);
    EXPECT_EQ(run_last_steps<std::int8_t>("i8", 100, 120, -1, device),
              loop + "-1, which never reaches 120 from 100" + program);
    // lo >= hi: the loop does not run, whatever its step.
    EXPECT_EQ(run_last_steps<std::int32_t>("i32", 10, 10, 0, device), "0 iterations, last 10");
  }
}

}  // namespace
