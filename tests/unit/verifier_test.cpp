// The verifier accepts well-formed kernels: every op's type rule, regions
// with and without yields, and values from enclosing scopes.
#include <gtest/gtest.h>

#include <random>
#include <string>

#include "ir_samples.hpp"
#include "kiln/ir/builder.hpp"
#include "kiln/ir/parser.hpp"
#include "kiln/ir/verifier.hpp"

namespace kiln::ir {
namespace {

void expect_valid(const std::string& text) {
  auto fn = parse_function(text);
  EXPECT_NO_THROW(verify(*fn)) << text;
}

TEST(Verifier, AcceptsVectorAdd) { expect_valid(ir_samples::vector_add_text("", "")); }

TEST(Verifier, AcceptsShapeOps) {
  expect_valid(R"(kernel @shapes(%0: f16, %1: tile<1x32xf16>, %2: tile<4x8x2xf32>, %3: tile<16xi32>) {
  %4 = splat %0 : tile<8x32xf16>
  %5 = broadcast %1 : tile<8x32xf16>
  %6 = add %4, %5 : tile<8x32xf16>
  %7 = expand_dims %3 {axis = 0} : tile<1x16xi32>
  %8 = expand_dims %3 {axis = 1} : tile<16x1xi32>
  %9 = reshape %2 : tile<64xf32>
  %10 = trans %2 {order = [2, 0, 1]} : tile<2x4x8xf32>
  %11 = join %3, %3 : tile<16x2xi32>
  %12, %13 = split %11 : tile<16xi32>, tile<16xi32>
  %14, %15 = split %2 : tile<4x8xf32>, tile<4x8xf32>
}
)");
}

TEST(Verifier, AcceptsArithmeticMathAndConversions) {
  expect_valid(R"(kernel @arith(%0: tile<8xi8>, %1: tile<8xu32>, %2: tile<8xf32>, %3: tile<8xi1>, %4: ptr<f32>) {
  %5 = rem %0, %0 : tile<8xi8>
  %6 = shr %1, %1 : tile<8xu32>
  %7 = umulhi %1, %1 : tile<8xu32>
  %8 = and %3, %3 : tile<8xi1>
  %9 = fma %2, %2, %2 : tile<8xf32>
  %10 = exp2 %9 : tile<8xf32>
  %11 = abs %0 : tile<8xi8>
  %12 = neg %2 : tile<8xf32>
  %13 = select %3, %2, %12 : tile<8xf32>
  %14 = cast %0 : tile<8xf16>
  %15 = bitcast %2 : tile<8xu32>
  %16 = cmp %2, %12 {pred = ne} : tile<8xi1>
  %17 = cast %4 : u64
  %18 = cast %17 : ptr<i8>
  %19 = cast %4 : ptr<f16>
  %20 = constant {value = 255} : u8
  %21 = constant {value = -128} : i8
  %22 = constant {value = 1} : f32
  %23 = constant {value = -1} : u64
  %24 = num_programs {axis = 2} : i32
}
)");
}

TEST(Verifier, AcceptsMemoryAndAtomics) {
  expect_valid(R"(kernel @memory(%0: tile<64xptr<i32>>, %1: tile<64xi1>, %2: tile<64xi32>, %3: ptr<f32>, %4: f32) {
  %5 = load %0 {cache = ca, evict = first} : tile<64xi32>
  %6 = load %0, %1, %2 {cache = cv, evict = none} : tile<64xi32>
  store %0, %6 {cache = cs, evict = none}
  %7 = atomic_rmw %0, %2, %1 {kind = xor, order = acq_rel, scope = gpu} : tile<64xi32>
  %8 = atomic_rmw %3, %4 {kind = add, order = relaxed, scope = sys} : f32
  %9 = atomic_cas %0, %2, %7 {order = acquire, scope = cta} : tile<64xi32>
  print %9, %8 {prefix = "values: "}
  assert %1 {message = "in bounds"}
}
)");
}

TEST(Verifier, AcceptsDotForEveryInputType) {
  for (auto [in, acc] : {std::pair{"f16", "f32"}, {"bf16", "f32"}, {"f32", "f32"}, {"i8", "i32"}}) {
    const std::string a = std::string("tile<64x32x") + in + ">", b = std::string("tile<32x16x") + in + ">",
                      c = std::string("tile<64x16x") + acc + ">";
    expect_valid("kernel @dot(%0: " + a + ", %1: " + b + ", %2: " + c +
                 ") {\n  %3 = dot %0, %1, %2 {precision = tf32} : " + c + "\n}\n");
  }
}

TEST(Verifier, AcceptsReduceAndScanWithSeveralOperands) {
  expect_valid(R"(kernel @argmax(%0: tile<16x32xf32>, %1: tile<16x32xi32>) {
  %2, %3 = reduce %0, %1 {axis = 1} : tile<16xf32>, tile<16xi32> {
  ^(%4: f32, %5: i32, %6: f32, %7: i32):
    %8 = cmp %4, %6 {pred = ge} : i1
    %9 = select %8, %4, %6 : f32
    %10 = select %8, %5, %7 : i32
    yield %9, %10
  }
  %11 = reduce %2 {axis = 0} : f32 {
  ^(%12: f32, %13: f32):
    %14 = maximum %12, %13 : f32
    yield %14
  }
  %15 = scan %0 {axis = 0, reverse = 1} : tile<16x32xf32> {
  ^(%16: f32, %17: f32):
    %18 = add %16, %17 : f32
    yield %18
  }
}
)");
}

TEST(Verifier, AcceptsControlFlowUsingOuterValues) {
  expect_valid(R"(kernel @loops(%0: i32, %1: f32, %2: tile<16xf32>, %3: ptr<f32>) {
  %4 = constant {value = 0} : i32
  %5 = constant {value = 1} : i32
  %6, %7 = for %4, %0, %5, %1, %2 : f32, tile<16xf32> {
  ^(%8: i32, %9: f32, %10: tile<16xf32>):
    %11 = add %9, %1 : f32
    %12 = cmp %8, %0 {pred = lt} : i1
    %13 = if %12 : tile<16xf32> {
    ^():
      %14 = add %10, %2 : tile<16xf32>
      yield %14
    } {
    ^():
      yield %10
    }
    yield %11, %13
  }
  for %4, %0, %5 {
  ^(%15: i32):
    store %3, %6 {cache = none, evict = none}
  }
  %16 = cmp %6, %1 {pred = gt} : i1
  if %16 {
  ^():
    store %3, %1 {cache = none, evict = none}
  } {
  ^():
  }
  %17, %18 = while %0, %1 : i32, f32 {
  ^(%19: i32, %20: f32):
    %21 = cmp %19, %4 {pred = gt} : i1
    yield %21
  } {
  ^(%22: i32, %23: f32):
    %24 = sub %22, %5 : i32
    %25 = add %23, %6 : f32
    yield %24, %25
  }
}
)");
}

TEST(Verifier, AcceptsKernelBuiltWithTheBuilder) {
  // Random shapes and constants: the verifier's rules must hold for any of them.
  std::mt19937 rng(1234);
  for (int trial = 0; trial < 20; ++trial) {
    const std::int64_t m = std::int64_t{1} << (rng() % 6), n = std::int64_t{1} << (rng() % 6);
    Function fn;
    fn.name = "built";
    Value* x = fn.add_argument(fn.body, Type::tile(DType::f32, {m, 1}));
    Builder b(fn);
    b.set_loc({"kernels/built.hpp", static_cast<int>(rng() % 100) + 1});
    Value* wide = b.create(OpCode::broadcast, {x}, {Type::tile(DType::f32, {m, n})})->result();
    Value* c = b.constant_float(Type::tile(DType::f32, {m, n}), static_cast<double>(rng() % 1000) / 7.0);
    Value* sum = b.create(OpCode::add, {wide, c}, {Type::tile(DType::f32, {m, n})})->result();
    Operation* red = b.create(OpCode::reduce, {sum}, {Type::tile(DType::f32, {m})}, {{"axis", std::int64_t{1}}}, 1);
    Block* combine = red->regions[0].get();
    Value* l = fn.add_argument(*combine, Type::scalar(DType::f32));
    Value* r = fn.add_argument(*combine, Type::scalar(DType::f32));
    b.set_insertion_end(combine);
    Value* best = b.create(OpCode::maximum, {l, r}, {Type::scalar(DType::f32)})->result();
    b.create(OpCode::yield, {best}, {});
    EXPECT_NO_THROW(verify(fn)) << "m=" << m << " n=" << n;
  }
}

}  // namespace
}  // namespace kiln::ir
