// The generic passes other than canonicalization (canonicalize_test.cpp), one
// rewrite per test: IR text in, IR text out, and the rewrites that would
// change a program's meaning must not happen; optimized kernels compute the
// same bits as the originals.
#include <gtest/gtest.h>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <functional>
#include <optional>
#include <random>
#include <regex>
#include <sstream>
#include <string>
#include <vector>

#include "ir_samples.hpp"
#include "kiln/ir/numeric.hpp"
#include "kiln/ir/parser.hpp"
#include "kiln/ir/passes.hpp"
#include "kiln/ir/printer.hpp"
#include "kiln/ir/verifier.hpp"
#include "kiln/runtime/interpreter.hpp"
#include "pass_test_support.hpp"

namespace kiln::ir {
namespace {

using ir_samples::fill;
using test::after;

PipelineOptions logging_to(std::ostream& log, std::string dump_after = "", bool timing = false) {
  PipelineOptions options;
  options.log = &log;
  options.dump_after = std::move(dump_after);
  options.timing = timing;
  return options;
}

// ---- cse ------------------------------------------------------------------------------

TEST(CommonSubexpressions, MergesEquivalentPureOps) {
  EXPECT_EQ(after(eliminate_common_subexpressions, R"(kernel @k(%0: tile<8xi32>, %1: tile<8xi32>) {
  %2 = constant {value = 3} : tile<8xi32>
  %3 = constant {value = 3} : tile<8xi32>
  %4 = add %0, %2 : tile<8xi32>
  %5 = add %0, %3 : tile<8xi32>
  %6 = mul %4, %5 : tile<8xi32>
  %7 = program_id {axis = 0} : i32
  %8 = program_id {axis = 0} : i32
  %9 = program_id {axis = 1} : i32
  print %6, %7, %8, %9 {prefix = ""}
}
)"),
            R"(kernel @k(%0: tile<8xi32>, %1: tile<8xi32>) {
  %2 = constant {value = 3} : tile<8xi32>
  %3 = add %0, %2 : tile<8xi32>
  %4 = mul %3, %3 : tile<8xi32>
  %5 = program_id {axis = 0} : i32
  %6 = program_id {axis = 1} : i32
  print %4, %5, %5, %6 {prefix = ""}
}
)");
}

TEST(CommonSubexpressions, KeepsOpsThatDifferInAttributesTypesOrOperandOrder) {
  const std::string text = R"(kernel @k(%0: i32, %1: i32) {
  %2 = cmp %0, %1 {pred = lt} : i1
  %3 = cmp %0, %1 {pred = gt} : i1
  %4 = sub %0, %1 : i32
  %5 = sub %1, %0 : i32
  %6 = constant {value = 0.0} : f32
  %7 = constant {value = -0.0} : f32
  %8 = constant {value = 1} : i32
  %9 = constant {value = 1} : i64
  print %2, %3, %4, %5, %6, %7, %8, %9 {prefix = ""}
}
)";
  EXPECT_EQ(after(eliminate_common_subexpressions, text, false), text);
}

TEST(CommonSubexpressions, DoesNotMergeLoadsStoresOrAtomics) {
  const std::string text = R"(kernel @k(%0: ptr<f32>, %1: f32) {
  %2 = load %0 {cache = none, evict = none} : f32
  store %0, %1 {cache = none, evict = none}
  %3 = load %0 {cache = none, evict = none} : f32
  store %0, %1 {cache = none, evict = none}
  %4 = atomic_rmw %0, %1 {kind = add, order = relaxed, scope = gpu} : f32
  %5 = atomic_rmw %0, %1 {kind = add, order = relaxed, scope = gpu} : f32
  print %2, %3, %4, %5 {prefix = ""}
}
)";
  EXPECT_EQ(after(eliminate_common_subexpressions, text, false), text);
}

TEST(CommonSubexpressions, UsesOnlyOpsThatDominate) {
  // The exp in the loop body reuses the one before the loop; the exp after
  // the `if` may not reuse the one inside its then-region, nor the else-region
  // the one in the then-region.
  EXPECT_EQ(after(eliminate_common_subexpressions, R"(kernel @k(%0: f32, %1: i1, %2: i32) {
  %3 = exp %0 : f32
  %4 = for %2, %2, %2, %0 : f32 {
  ^(%5: i32, %6: f32):
    %7 = exp %0 : f32
    %8 = add %6, %7 : f32
    yield %8
  }
  if %1 {
  ^():
    %9 = neg %0 : f32
    print %9 {prefix = ""}
  } {
  ^():
    %10 = neg %0 : f32
    print %10 {prefix = ""}
  }
  %11 = neg %0 : f32
  print %3, %4, %11 {prefix = ""}
}
)"),
            R"(kernel @k(%0: f32, %1: i1, %2: i32) {
  %3 = exp %0 : f32
  %4 = for %2, %2, %2, %0 : f32 {
  ^(%5: i32, %6: f32):
    %7 = add %6, %3 : f32
    yield %7
  }
  if %1 {
  ^():
    %8 = neg %0 : f32
    print %8 {prefix = ""}
  } {
  ^():
    %9 = neg %0 : f32
    print %9 {prefix = ""}
  }
  %10 = neg %0 : f32
  print %3, %4, %10 {prefix = ""}
}
)");
}

// ---- dce ------------------------------------------------------------------------------

TEST(DeadCode, RemovesUnusedChainsAndKeepsSideEffects) {
  EXPECT_EQ(after(eliminate_dead_code, R"(kernel @k(%0: ptr<f32>, %1: f32, %2: i1) {
  %3 = exp %1 : f32
  %4 = neg %3 : f32
  %5 = load %0 {cache = none, evict = none} : f32
  %6 = add %1, %1 : f32
  store %0, %6 {cache = none, evict = none}
  %7 = atomic_rmw %0, %1 {kind = add, order = relaxed, scope = gpu} : f32
  print %1 {prefix = ""}
  assert %2 {message = "ok"}
}
)"),
            R"(kernel @k(%0: ptr<f32>, %1: f32, %2: i1) {
  %3 = add %1, %1 : f32
  store %0, %3 {cache = none, evict = none}
  %4 = atomic_rmw %0, %1 {kind = add, order = relaxed, scope = gpu} : f32
  print %1 {prefix = ""}
  assert %2 {message = "ok"}
}
)");
}

TEST(DeadCode, RemovesPureLoopsAndKeepsLoopsWithStores) {
  EXPECT_EQ(after(eliminate_dead_code, R"(kernel @k(%0: ptr<f32>, %1: f32, %2: i32) {
  %3 = for %2, %2, %2, %1 : f32 {
  ^(%4: i32, %5: f32):
    %6 = exp %5 : f32
    yield %6
  }
  %7 = for %2, %2, %2, %1 : f32 {
  ^(%8: i32, %9: f32):
    %10 = exp %9 : f32
    %11 = neg %10 : f32
    store %0, %10 {cache = none, evict = none}
    yield %10
  }
}
)"),
            R"(kernel @k(%0: ptr<f32>, %1: f32, %2: i32) {
  %3 = for %2, %2, %2, %1 : f32 {
  ^(%4: i32, %5: f32):
    %6 = exp %5 : f32
    store %0, %6 {cache = none, evict = none}
    yield %6
  }
}
)");
}

TEST(DeadCode, KeepsValuesUsedOnlyInsideRegions) {
  const std::string text = R"(kernel @k(%0: ptr<f32>, %1: f32, %2: i1) {
  %3 = exp %1 : f32
  if %2 {
  ^():
    store %0, %3 {cache = none, evict = none}
  } {
  ^():
  }
}
)";
  EXPECT_EQ(after(eliminate_dead_code, text, false), text);
}

// ---- licm -----------------------------------------------------------------------------

TEST(LoopInvariants, HoistsInvariantChainsButNotLoadsOrIntegerDivision) {
  EXPECT_EQ(after(hoist_loop_invariants, R"(kernel @k(%0: ptr<f32>, %1: f32, %2: i32, %3: i32) {
  %4 = for %2, %3, %2, %1 : f32 {
  ^(%5: i32, %6: f32):
    %7 = exp %1 : f32
    %8 = constant {value = 2.0} : f32
    %9 = mul %7, %8 : f32
    %10 = add %6, %9 : f32
    %11 = load %0 {cache = none, evict = none} : f32
    %12 = div %3, %2 : i32
    %13 = div %1, %8 : f32
    %14 = cast %5 : f32
    %15 = add %10, %14 : f32
    %16 = add %15, %11 : f32
    %17 = cast %12 : f32
    %18 = add %16, %17 : f32
    %19 = add %18, %13 : f32
    yield %19
  }
  store %0, %4 {cache = none, evict = none}
}
)"),
            R"(kernel @k(%0: ptr<f32>, %1: f32, %2: i32, %3: i32) {
  %4 = exp %1 : f32
  %5 = constant {value = 2.0} : f32
  %6 = mul %4, %5 : f32
  %7 = div %1, %5 : f32
  %8 = for %2, %3, %2, %1 : f32 {
  ^(%9: i32, %10: f32):
    %11 = add %10, %6 : f32
    %12 = load %0 {cache = none, evict = none} : f32
    %13 = div %3, %2 : i32
    %14 = cast %9 : f32
    %15 = add %11, %14 : f32
    %16 = add %15, %12 : f32
    %17 = cast %13 : f32
    %18 = add %16, %17 : f32
    %19 = add %18, %7 : f32
    yield %19
  }
  store %0, %8 {cache = none, evict = none}
}
)");
}

TEST(LoopInvariants, HoistsOutOfNestedLoopsAndWhile) {
  EXPECT_EQ(after(hoist_loop_invariants, R"(kernel @k(%0: f32, %1: i32) {
  %2 = for %1, %1, %1, %0 : f32 {
  ^(%3: i32, %4: f32):
    %5 = for %1, %1, %1, %4 : f32 {
    ^(%6: i32, %7: f32):
      %8 = sqrt %0 : f32
      %9 = add %7, %8 : f32
      yield %9
    }
    yield %5
  }
  %10 = while %1 : i32 {
  ^(%11: i32):
    %12 = constant {value = 0} : i32
    %13 = cmp %11, %12 {pred = gt} : i1
    yield %13
  } {
  ^(%14: i32):
    %15 = constant {value = 1} : i32
    %16 = sub %14, %15 : i32
    yield %16
  }
  print %2, %10 {prefix = ""}
}
)"),
            R"(kernel @k(%0: f32, %1: i32) {
  %2 = sqrt %0 : f32
  %3 = for %1, %1, %1, %0 : f32 {
  ^(%4: i32, %5: f32):
    %6 = for %1, %1, %1, %5 : f32 {
    ^(%7: i32, %8: f32):
      %9 = add %8, %2 : f32
      yield %9
    }
    yield %6
  }
  %10 = constant {value = 0} : i32
  %11 = constant {value = 1} : i32
  %12 = while %1 : i32 {
  ^(%13: i32):
    %14 = cmp %13, %10 {pred = gt} : i1
    yield %14
  } {
  ^(%15: i32):
    %16 = sub %15, %11 : i32
    yield %16
  }
  print %3, %12 {prefix = ""}
}
)");
}

TEST(LoopInvariants, LeavesOpsInsideConditionalsAndStores) {
  const std::string text = R"(kernel @k(%0: ptr<f32>, %1: f32, %2: i32, %3: i1) {
  for %2, %2, %2 {
  ^(%4: i32):
    store %0, %1 {cache = none, evict = none}
    if %3 {
    ^():
      %5 = exp %1 : f32
      store %0, %5 {cache = none, evict = none}
    } {
    ^():
    }
  }
}
)";
  EXPECT_EQ(after(hoist_loop_invariants, text, false), text);
}

// ---- pipeline -------------------------------------------------------------------------

const char* kUnoptimized = R"(kernel @k(%0: ptr<f32>, %1: i32) {
  %2 = program_id {axis = 0} : i32
  %3 = constant {value = 16} : i32
  %4 = constant {value = 4} : i32
  %5 = constant {value = 4} : i32
  %6 = mul %4, %5 : i32
  %7 = mul %2, %6 : i32
  %8 = mul %2, %3 : i32
  %9 = arange {start = 0} : tile<16xi32>
  %10 = splat %8 : tile<16xi32>
  %11 = splat %7 : tile<16xi32>
  %12 = add %10, %9 : tile<16xi32>
  %13 = add %11, %9 : tile<16xi32>
  %14 = splat %0 : tile<16xptr<f32>>
  %15 = addptr %14, %12 : tile<16xptr<f32>>
  %16 = load %15 {cache = none, evict = none} : tile<16xf32>
  %17 = constant {value = 0} : i32
  %18 = constant {value = 1} : i32
  %19, %20 = for %17, %1, %18, %16, %13 : tile<16xf32>, tile<16xi32> {
  ^(%21: i32, %22: tile<16xf32>, %23: tile<16xi32>):
    %24 = constant {value = 2.0} : tile<16xf32>
    %25 = mul %22, %24 : tile<16xf32>
    yield %25, %23
  }
  %26 = addptr %14, %20 : tile<16xptr<f32>>
  store %26, %19 {cache = none, evict = none}
}
)";

TEST(Pipeline, OptimizesToAFixedPoint) {
  auto fn = parse_function(kUnoptimized);
  std::ostringstream log;
  optimize(*fn, logging_to(log));
  EXPECT_EQ(print(*fn), R"(kernel @k(%0: ptr<f32>, %1: i32) {
  %2 = program_id {axis = 0} : i32
  %3 = constant {value = 16} : i32
  %4 = mul %2, %3 : i32
  %5 = arange {start = 0} : tile<16xi32>
  %6 = splat %4 : tile<16xi32>
  %7 = add %6, %5 : tile<16xi32>
  %8 = splat %0 : tile<16xptr<f32>>
  %9 = addptr %8, %7 : tile<16xptr<f32>>
  %10 = load %9 {cache = none, evict = none} : tile<16xf32>
  %11 = constant {value = 0} : i32
  %12 = constant {value = 1} : i32
  %13 = constant {value = 2.0} : tile<16xf32>
  %14 = for %11, %1, %12, %10 : tile<16xf32> {
  ^(%15: i32, %16: tile<16xf32>):
    %17 = mul %16, %13 : tile<16xf32>
    yield %17
  }
  store %9, %14 {cache = none, evict = none}
}
)");
  EXPECT_EQ(log.str(), "");
}

TEST(Pipeline, DumpsAfterTheNamedPass) {
  auto fn = parse_function(kUnoptimized);
  std::ostringstream log;
  optimize(*fn, logging_to(log, "licm"));
  const std::string out = log.str();
  EXPECT_EQ(out.rfind("// after licm\nkernel @k(", 0), 0u) << out;
  EXPECT_EQ(out.find("// after cse"), std::string::npos);
  EXPECT_NE(out.find(print(*fn)), std::string::npos) << "the last dump is the final kernel";
}

TEST(Pipeline, DumpsAfterEveryPassAndTimesThem) {
  auto fn = parse_function(kUnoptimized);
  std::ostringstream log;
  optimize(*fn, logging_to(log, "all", true));
  const std::string out = log.str();
  for (const char* pass : {"canonicalize", "cse", "licm", "dce"})
    EXPECT_NE(out.find(std::string("// after ") + pass + "\n"), std::string::npos) << pass;
  const std::regex timing_line(R"(pass (canonicalize|cse|licm|dce): [0-9]+\.[0-9]{2} ms)");
  std::istringstream lines(out);
  int timings = 0;
  for (std::string line; std::getline(lines, line);)
    if (line.rfind("pass ", 0) == 0) {
      EXPECT_TRUE(std::regex_match(line, timing_line)) << line;
      ++timings;
    }
  EXPECT_GE(timings, 8) << "at least two rounds of four passes";
  EXPECT_EQ(timings % 4, 0);
}

// ---- specialize ------------------------------------------------------------------------

TEST(Specialize, ReplacesArgumentsEqualToOneAndRecordsTheFacts) {
  auto fn = parse_function(R"(kernel @k(%0: ptr<f32>, %1: i32, %2: i32) {
  %3 = program_id {axis = 0} : i32
  %4 = mul %3, %1 : i32
  %5 = addptr %0, %4 : ptr<f32>
  %6 = load %5 {cache = none, evict = none} : f32
  %7 = addptr %5, %2 : ptr<f32>
  store %7, %6 {cache = none, evict = none}
}
)");
  specialize(*fn, {{.divisibility = 16}, {.equal_to_1 = true}, {.divisibility = 16}});
  verify(*fn);
  std::ostringstream log;
  optimize(*fn, logging_to(log));
  EXPECT_EQ(print(*fn),
            R"(kernel @k(%0: ptr<f32> {divisibility = 16}, %1: i32 {equal_to = 1}, %2: i32 {divisibility = 16}) {
  %3 = program_id {axis = 0} : i32
  %4 = addptr %0, %3 : ptr<f32>
  %5 = load %4 {cache = none, evict = none} : f32
  %6 = addptr %4, %2 : ptr<f32>
  store %6, %5 {cache = none, evict = none}
}
)");
}

TEST(Specialize, RejectsAFactCountThatDiffers) {
  auto fn = parse_function("kernel @k(%0: i32) {\n}\n");
  EXPECT_THROW(specialize(*fn, {}), IRError);
}

TEST(Pipeline, VerifiesTheInputFirst) {
  auto fn = parse_function(R"(kernel @k(%0: f32, %1: f16) {
  %2 = add %0, %1 : f32
}
)");
  std::ostringstream log;
  try {
    optimize(*fn, logging_to(log));
    FAIL() << "expected a verifier error";
  } catch (const IRError& e) {
    EXPECT_STREQ(e.what(), "verify: add: operand types differ, %0 is f32, %1 is f16");
  }
}

// ---- semantics: the interpreter gives the same bits before and after -------------------

// out[i] = f(in[i], folded constants) through a loop with an unchanged carried
// value, loop invariants, a constant-condition `if` and a cast of a constant.
constexpr const char* kDifferentialKernel =
    R"(kernel @differential(%in: ptr<{T}>, %out: ptr<{T}>, %cast_out: ptr<{U}>, %n: i32) {
  %pid = program_id {axis = 0} : i32
  %block = constant {value = 32} : i32
  %base = mul %pid, %block : i32
  %range = arange {start = 0} : tile<32xi32>
  %base_t = splat %base : tile<32xi32>
  %offs = add %base_t, %range : tile<32xi32>
  %n_t = splat %n : tile<32xi32>
  %mask = cmp %offs, %n_t {pred = lt} : tile<32xi1>
  %in_s = splat %in : tile<32xptr<{T}>>
  %in_p = addptr %in_s, %offs : tile<32xptr<{T}>>
  %x = load %in_p, %mask {cache = none, evict = none} : tile<32x{T}>
  %a = constant {value = {A}} : {T}
  %b = constant {value = {B}} : {T}
  %folded = {BIN} %a, %b : {T}
  %unary = {UNARY} %folded : {T}
  %pick = cmp %folded, %a {pred = {PRED}} : i1
  %chosen = select %pick, %unary, %b : {T}
  %zero = constant {value = 0} : i32
  %one = constant {value = 1} : i32
  %three = constant {value = 3} : i32
  %acc, %kept = for %zero, %three, %one, %x, %x : tile<32x{T}>, tile<32x{T}> {
  ^(%i: i32, %acc_in: tile<32x{T}>, %kept_in: tile<32x{T}>):
    %c_t = splat %chosen : tile<32x{T}>
    %c_b = broadcast %c_t : tile<32x{T}>
    %next = {BIN2} %acc_in, %c_b : tile<32x{T}>
    yield %next, %kept_in
  }
  %result = if %pick : tile<32x{T}> {
  ^():
    %r1 = {BIN2} %acc, %kept : tile<32x{T}>
    yield %r1
  } {
  ^():
    yield %acc
  }
  %out_s = splat %out : tile<32xptr<{T}>>
  %out_p = addptr %out_s, %offs : tile<32xptr<{T}>>
  store %out_p, %result, %mask {cache = none, evict = none}
  %converted = cast %chosen : {U}
  %converted_t = splat %converted : tile<32x{U}>
  %cast_s = splat %cast_out : tile<32xptr<{U}>>
  %cast_p = addptr %cast_s, %offs : tile<32xptr<{U}>>
  store %cast_p, %converted_t, %mask {cache = none, evict = none}
}
)";

struct Outputs {
  std::vector<std::uint8_t> out, cast_out;
  bool faulted = false;
};

Outputs interpret(const Function& fn, const std::vector<std::uint8_t>& input, DType u, int n) {
  Outputs o{std::vector<std::uint8_t>(input.size()), std::vector<std::uint8_t>(n * dtype_bytes(u))};
  auto buffer = [](std::vector<std::uint8_t>& bytes, const char* name) {
    const auto begin = reinterpret_cast<std::uintptr_t>(bytes.data());
    return runtime::KernelArgument{begin, {begin, begin + bytes.size(), name}};
  };
  std::vector<std::uint8_t> in = input;
  const runtime::KernelArgument args[] = {
      buffer(in, "in"), buffer(o.out, "out"), buffer(o.cast_out, "cast_out"), {static_cast<std::uint64_t>(n), {}}};
  try {
    runtime::InterpretedKernel(fn).launch({(n + 31) / 32, 1, 1}, args, 1);
  } catch (const runtime::KernelError&) {
    o.faulted = true;
  }
  return o;
}

/// Element `i` of a float buffer, widened to double.
double float_element(DType t, const std::vector<std::uint8_t>& bytes, int i) {
  const std::uint8_t* p = bytes.data() + static_cast<std::size_t>(i) * dtype_bytes(t);
  std::uint64_t bits = 0;
  std::memcpy(&bits, p, dtype_bytes(t));
  switch (t) {
    case DType::f16: return half::from_bits(static_cast<std::uint16_t>(bits));
    case DType::bf16: return bfloat16::from_bits(static_cast<std::uint16_t>(bits));
    case DType::f32: return std::bit_cast<float>(static_cast<std::uint32_t>(bits));
    default: return std::bit_cast<double>(bits);
  }
}

/// Equal bits, or NaN in both (NaN payloads are not part of the semantics).
void expect_same_elements(DType t, const std::vector<std::uint8_t>& a, const std::vector<std::uint8_t>& b,
                          const std::string& context) {
  const int size = dtype_bytes(t);
  for (std::size_t i = 0; i * size < a.size(); ++i) {
    if (std::memcmp(a.data() + i * size, b.data() + i * size, size) == 0) continue;
    const bool both_nan = is_float(t) && std::isnan(float_element(t, a, static_cast<int>(i))) &&
                          std::isnan(float_element(t, b, static_cast<int>(i)));
    std::uint64_t bits_a = 0, bits_b = 0;
    std::memcpy(&bits_a, a.data() + i * size, size);
    std::memcpy(&bits_b, b.data() + i * size, size);
    EXPECT_TRUE(both_nan) << "element " << i << " differs: 0x" << std::hex << bits_a << " before, 0x" << bits_b
                          << " after\n"
                          << std::dec << context;
    if (!both_nan) return;
  }
}

std::string random_constant(DType t, std::mt19937_64& rng) {
  if (is_float(t)) {
    const double v = std::uniform_real_distribution<double>(-40.0, 40.0)(rng);
    char text[64];
    auto end = std::to_chars(text, text + sizeof text, v).ptr;
    std::string s(text, end);
    return s.find_first_of(".e") == std::string::npos ? s + ".0" : s;
  }
  const int width = dtype_bits(t);
  const std::uint64_t bits = rng() % 3 ? rng() % 10 : rng();
  const std::uint64_t masked = width == 64 ? bits : bits & ((std::uint64_t{1} << width) - 1);
  if (is_signed_int(t) && width < 64 && (masked >> (width - 1)))
    return std::to_string(static_cast<std::int64_t>(masked) - (std::int64_t{1} << width));
  return std::to_string(static_cast<std::int64_t>(masked));  // 64-bit values past 2^63 read back as negative
}

TEST(PassSemantics, OptimizedKernelsComputeTheSameBitsAsTheOriginal) {
  std::mt19937_64 rng(31337);
  const DType dtypes[] = {DType::i8,  DType::i32,  DType::u16, DType::i64,
                          DType::f16, DType::bf16, DType::f32, DType::f64};
  const DType cast_targets[] = {DType::i1,  DType::i8,   DType::u32, DType::i64,
                                DType::f16, DType::bf16, DType::f32, DType::f64};
  const std::vector<std::string> float_binary = {"add", "sub", "mul", "div", "rem", "minimum", "maximum"};
  std::vector<std::string> int_binary = float_binary;
  for (const char* op : {"and", "or", "xor", "shl", "shr", "umulhi"}) int_binary.push_back(op);
  const char* preds[] = {"eq", "ne", "lt", "le", "gt", "ge"};
  int inlined_ifs = 0;
  for (int trial = 0; trial < 160; ++trial) {
    const DType t = dtypes[trial % 8];
    const DType u = cast_targets[rng() % 8];
    const auto& binary = is_float(t) ? float_binary : int_binary;
    const std::vector<std::string> unary =
        is_float(t) ? std::vector<std::string>{"neg", "abs"} : std::vector<std::string>{"neg", "abs", "not"};
    const std::string text = fill(kDifferentialKernel, {{"BIN2", binary[rng() % binary.size()]},
                                                        {"BIN", binary[rng() % binary.size()]},
                                                        {"UNARY", unary[rng() % unary.size()]},
                                                        {"PRED", preds[rng() % 6]},
                                                        {"T", std::string(dtype_name(t))},
                                                        {"U", std::string(dtype_name(u))},
                                                        {"A", random_constant(t, rng)},
                                                        {"B", random_constant(t, rng)}});
    const int n = 40 + static_cast<int>(rng() % 50);
    std::vector<std::uint8_t> input(static_cast<std::size_t>(n) * dtype_bytes(t));
    for (auto& byte : input) byte = static_cast<std::uint8_t>(rng());
    if (is_float(t))  // moderate magnitudes, so that results are not all inf or NaN
      for (int i = 0; i < n; ++i) {
        const double v = std::uniform_real_distribution<double>(-50.0, 50.0)(rng);
        std::uint64_t bits = 0;
        if (t == DType::f16) bits = half(v).bits;
        if (t == DType::bf16) bits = bfloat16(v).bits;
        if (t == DType::f32) bits = std::bit_cast<std::uint32_t>(static_cast<float>(v));
        if (t == DType::f64) bits = std::bit_cast<std::uint64_t>(v);
        std::memcpy(input.data() + static_cast<std::size_t>(i) * dtype_bytes(t), &bits, dtype_bytes(t));
      }

    auto original = parse_function(text);
    verify(*original);
    auto optimized = clone(*original);
    optimize(*optimized);
    const std::string context = text + "--- optimized:\n" + print(*optimized);
    if (print(*optimized).find(" if ") == std::string::npos) ++inlined_ifs;

    const Outputs before = interpret(*original, input, u, n);
    const Outputs after = interpret(*optimized, input, u, n);
    ASSERT_EQ(before.faulted, after.faulted) << context;
    if (before.faulted) continue;
    expect_same_elements(t, before.out, after.out, context);
    expect_same_elements(u, before.cast_out, after.cast_out, context);
    if (HasFailure()) return;
  }
  EXPECT_GT(inlined_ifs, 100) << "the constants fold unless an integer division by zero stays for run time";
}

}  // namespace
}  // namespace kiln::ir
