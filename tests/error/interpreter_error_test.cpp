// Faults in the CPU interpreter give one exact line: out-of-bounds loads and
// stores (past the end, before the start), integer division by zero, failed
// asserts, a wrong argument count. Masked-off lanes are never checked.
#include <gtest/gtest.h>

#include <cstring>
#include <numeric>
#include <random>
#include <string>
#include <vector>

#include "interpreter_samples.hpp"
#include "kiln/ir/builder.hpp"
#include "kiln/ir/verifier.hpp"
#include "kiln/runtime/interpreter.hpp"

namespace kiln::runtime {
namespace {

using interpreter_samples::buffer;
using interpreter_samples::compile;
using interpreter_samples::scalar;

std::vector<float> random_floats(std::size_t n, unsigned seed) {
  std::mt19937 rng(seed);
  std::vector<float> out(n);
  for (auto& v : out) v = std::uniform_real_distribution<float>(-4.0f, 4.0f)(rng);
  return out;
}

/// The message of the `Error` that `f` throws, or a note that it threw none.
template <class Error, class F>
std::string message_of(F&& f) {
  try {
    f();
  } catch (const Error& e) {
    return e.what();
  }
  return "(no error)";
}

// Each program p reads or writes 16 elements at %start + p * 16, masked by `offs < %n`.
const char* kCopy = R"(
kernel @softmax(%x: ptr<f32>, %out: ptr<f32>, %start: i32, %n: i32) {
  %pid = program_id {axis = 0} : i32
  %sixteen = constant {value = 16} : i32
  %base = mul %pid, %sixteen : i32
  %first = add %base, %start : i32
  %first_t = splat %first : tile<16xi32>
  %r = arange {start = 0} : tile<16xi32>
  %offs = add %first_t, %r : tile<16xi32>
  %n_t = splat %n : tile<16xi32>
  %mask = cmp %offs, %n_t {pred = lt} : tile<16xi1>
  %px_s = splat %x : tile<16xptr<f32>>
  %px = addptr %px_s, %offs : tile<16xptr<f32>>
  %v = load %px, %mask {cache = none, evict = none} : tile<16xf32> loc("kernels/softmax.hpp":41)
  %r_out = arange {start = 0} : tile<16xi32>
  %oo = add %first_t, %r_out : tile<16xi32>
  %po_s = splat %out : tile<16xptr<f32>>
  %po = addptr %po_s, %oo : tile<16xptr<f32>>
  store %po, %v, %mask {cache = none, evict = none} loc("kernels/softmax.hpp":42)
}
)";

struct CopyRun {
  std::vector<float> x = random_floats(1000, 1);
  std::vector<float> out = std::vector<float>(1000);
  InterpretedKernel kernel = compile(kCopy);

  LaunchStats run(int start, int n, int programs, int threads = 2) {
    const KernelArgument args[] = {buffer(x, "x"), buffer(out, "out"), scalar(start), scalar(n)};
    return kernel.launch({programs, 1, 1}, args, threads);
  }
};

TEST(InterpreterError, LoadPastTheEnd) {
  CopyRun copy;
  // Program 62 reads elements 992..1007 of a 1000-element buffer.
  EXPECT_EQ(message_of<KernelError>([&] { copy.run(0, 2000, 63, 4); }),
            "kernel softmax: load out of bounds at softmax.hpp:41: element offset 1000 is past the end of 'x' "
            "(1000 elements of f32)");
}

TEST(InterpreterError, LoadBeforeTheStart) {
  CopyRun copy;
  EXPECT_EQ(message_of<KernelError>([&] { copy.run(-3, 1000, 1); }),
            "kernel softmax: load out of bounds at softmax.hpp:41: element offset -3 is before the start of 'x' "
            "(1000 elements of f32)");
}

TEST(InterpreterError, MaskedOffLanesAreNeverChecked) {
  CopyRun copy;
  // Programs 0..62 cover 1008 elements; the last 8 are masked off.
  const LaunchStats stats = copy.run(0, 1000, 63, 3);
  EXPECT_EQ(copy.out, copy.x);
  EXPECT_EQ(stats.bytes_read, 1000 * sizeof(float));
}

const char* kStore = R"(
kernel @scatter(%out: ptr<i16>, %start: i32) {
  %r = arange {start = 0} : tile<8xi32>
  %first = splat %start : tile<8xi32>
  %offs = add %first, %r : tile<8xi32>
  %v = cast %r : tile<8xi16>
  %po_s = splat %out : tile<8xptr<i16>>
  %po = addptr %po_s, %offs : tile<8xptr<i16>>
  store %po, %v {cache = none, evict = none} loc("/src/scatter.hpp":7)
}
)";

TEST(InterpreterError, StorePastTheEndAndBeforeTheStart) {
  std::vector<std::int16_t> out(20);
  const InterpretedKernel k = compile(kStore);
  const auto run = [&](int start) {
    const KernelArgument args[] = {buffer(out, "out"), scalar(start)};
    k.launch({1, 1, 1}, args, 1);
  };
  EXPECT_EQ(message_of<KernelError>([&] { run(15); }),
            "kernel scatter: store out of bounds at scatter.hpp:7: element offset 20 is past the end of 'out' "
            "(20 elements of i16)");
  EXPECT_EQ(message_of<KernelError>([&] { run(-8); }),
            "kernel scatter: store out of bounds at scatter.hpp:7: element offset -8 is before the start of 'out' "
            "(20 elements of i16)");
  EXPECT_NO_THROW(run(12));
}

TEST(InterpreterError, MixedPointersNameTheNearestArgument) {
  // Two 8-element arguments far apart in one allocation.
  std::vector<float> storage = random_floats(200, 2);
  const auto at = [&](int first, const std::string& name) {
    const auto begin = reinterpret_cast<std::uintptr_t>(storage.data() + first);
    return KernelArgument{begin, {begin, begin + 8 * sizeof(float), name}};
  };
  const InterpretedKernel k = compile(R"(
kernel @pick(%a: ptr<f32>, %b: ptr<f32>, %i: i32) {
  %zero = constant {value = 0} : i32
  %first = cmp %i, %zero {pred = lt} : i1
  %p = select %first, %a, %b : ptr<f32>
  %q = addptr %p, %i : ptr<f32>
  %v = load %q {cache = none, evict = none} : f32 loc("pick.hpp":3)
}
)");
  const KernelArgument ok[] = {at(0, "a"), at(100, "b"), scalar(7)};
  EXPECT_NO_THROW(k.launch({1, 1, 1}, ok, 1));
  const KernelArgument bad[] = {at(0, "a"), at(100, "b"), scalar(8)};
  EXPECT_EQ(
      message_of<KernelError>([&] { k.launch({1, 1, 1}, bad, 1); }),
      "kernel pick: load out of bounds at pick.hpp:3: element offset 8 is past the end of 'b' (8 elements of f32)");
}

TEST(InterpreterError, PointersCarriedThroughLoopsKeepTheirArgument) {
  // b's memory is directly followed by a's: reading past b lands inside a,
  // which only the provenance through the loop-carried pointer can reject.
  std::vector<float> storage = random_floats(16, 4);
  const auto begin = reinterpret_cast<std::uintptr_t>(storage.data());
  const auto range = [&](int first, const std::string& name) {
    return KernelArgument{begin + first * sizeof(float),
                          {begin + first * sizeof(float), begin + (first + 8) * sizeof(float), name}};
  };
  const InterpretedKernel k = compile(R"(
kernel @walk(%a: ptr<f32>, %b: ptr<f32>, %steps: i32) {
  %r = arange {start = 0} : tile<4xi32>
  %pb_s = splat %b : tile<4xptr<f32>>
  %pb = addptr %pb_s, %r : tile<4xptr<f32>>
  %zero = constant {value = 0} : i32
  %one = constant {value = 1} : i32
  %four = constant {value = 4} : tile<4xi32>
  %end = for %zero, %steps, %one, %pb : tile<4xptr<f32>> {
  ^(%i: i32, %p: tile<4xptr<f32>>):
    %v = load %p {cache = none, evict = none} : tile<4xf32> loc("walk.hpp":6)
    %next = addptr %p, %four : tile<4xptr<f32>>
    yield %next
  }
}
)");
  const KernelArgument two[] = {range(8, "a"), range(0, "b"), scalar(2)};
  EXPECT_NO_THROW(k.launch({1, 1, 1}, two, 1));
  const KernelArgument three[] = {range(8, "a"), range(0, "b"), scalar(3)};
  EXPECT_EQ(
      message_of<KernelError>([&] { k.launch({1, 1, 1}, three, 1); }),
      "kernel walk: load out of bounds at walk.hpp:6: element offset 8 is past the end of 'b' (8 elements of f32)");
}

TEST(InterpreterError, ArgumentNamesComeFromTheKernelWhenRangesHaveNone) {
  ir::Function fn;
  fn.name = "first";
  fn.argument_names = {"values"};
  ir::Value* values = fn.add_argument(fn.body, ir::Type::pointer(ir::DType::f64));
  ir::Builder b(fn);
  b.set_loc({"first.hpp", 3});
  b.create(ir::OpCode::load, {values}, {ir::Type::scalar(ir::DType::f64)},
           {{"cache", ir::Symbol{"none"}}, {"evict", ir::Symbol{"none"}}});
  ir::verify(fn);
  const InterpretedKernel k(fn);
  const KernelArgument empty[] = {{0, {0, 0, ""}}};
  EXPECT_EQ(message_of<KernelError>([&] { k.launch({1, 1, 1}, empty, 1); }),
            "kernel first: load out of bounds at first.hpp:3: element offset 0 is past the end of 'values' "
            "(0 elements of f64)");
}

TEST(InterpreterError, IntegerDivisionByZero) {
  std::vector<std::int32_t> divisors = {3, -2, 0, 5};
  const InterpretedKernel k = compile(R"(
kernel @ratio(%d: ptr<i32>) {
  %r = arange {start = 0} : tile<4xi32>
  %pd_s = splat %d : tile<4xptr<i32>>
  %pd = addptr %pd_s, %r : tile<4xptr<i32>>
  %den = load %pd {cache = none, evict = none} : tile<4xi32>
  %num = constant {value = 12} : tile<4xi32>
  %q = rem %num, %den : tile<4xi32> loc("ratio.hpp":9)
}
)");
  const KernelArgument args[] = {buffer(divisors, "d")};
  EXPECT_EQ(message_of<KernelError>([&] { k.launch({1, 1, 1}, args, 1); }),
            "kernel ratio: integer division by zero in rem at ratio.hpp:9: element 2 of the divisor is 0 "
            "(program (0, 0, 0))");
}

TEST(InterpreterError, FailedAssert) {
  const InterpretedKernel scalar_check = compile(R"(
kernel @check(%n: i32) {
  %zero = constant {value = 0} : i32
  %ok = cmp %n, %zero {pred = gt} : i1
  assert %ok {message = "n must be positive"} loc("check.hpp":5)
}
)");
  const KernelArgument bad[] = {scalar(-4)};
  EXPECT_EQ(message_of<KernelError>([&] { scalar_check.launch({1, 1, 1}, bad, 1); }),
            "kernel check: assert failed at check.hpp:5: n must be positive (program (0, 0, 0))");

  const InterpretedKernel tile_check = compile(R"(
kernel @lanes(%limit: i32) {
  %pid = program_id {axis = 0} : i32
  %r = arange {start = 0} : tile<8xi32>
  %p = splat %pid : tile<8xi32>
  %v = add %r, %p : tile<8xi32>
  %l = splat %limit : tile<8xi32>
  %ok = cmp %v, %l {pred = lt} : tile<8xi1>
  assert %ok {message = "lane past the limit"} loc("lanes.hpp":12)
}
)");
  // Only program 3 (lanes 3..10) reaches 10 = limit, at element 7.
  const KernelArgument limit[] = {scalar(10)};
  EXPECT_EQ(message_of<KernelError>([&] { tile_check.launch({4, 1, 1}, limit, 3); }),
            "kernel lanes: assert failed at lanes.hpp:12: lane past the limit (program (3, 0, 0), element 7)");
}

TEST(InterpreterError, WrongArgumentCount) {
  CopyRun copy;
  const KernelArgument one[] = {buffer(copy.x, "x")};
  EXPECT_EQ(message_of<std::invalid_argument>([&] { copy.kernel.launch({1, 1, 1}, one, 1); }),
            "kernel softmax: takes 4 arguments, launched with 1");
}

TEST(InterpreterError, TileArgument) {
  const auto text = R"(kernel @k(%0: tile<16xi32>, %1: ptr<i32>) {
  %2 = splat %1 : tile<16xptr<i32>>
  %3 = addptr %2, %0 : tile<16xptr<i32>>
  store %3, %0 {cache = none, evict = none}
}
)";
  EXPECT_EQ(message_of<std::invalid_argument>([&] { compile(text); }),
            "interpreter: kernel k: parameter 1 (tile<16xi32>) is a tile; kernel parameters are scalars or pointers");
}

}  // namespace
}  // namespace kiln::runtime
