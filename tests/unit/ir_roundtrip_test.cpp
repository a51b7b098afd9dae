// The IR text form: print(parse(text)) == text for every op, nested regions,
// every attribute kind and locations; printing kernels built with the Builder.
#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <map>
#include <random>
#include <regex>
#include <string>

#include "kiln/ir/builder.hpp"
#include "kiln/ir/parser.hpp"
#include "kiln/ir/printer.hpp"

namespace kiln::ir {
namespace {

constexpr OpCode kAllOps[] = {
#define KILN_OP(Enum, ...) OpCode::Enum,
#include "kiln/ir/ops.def"
#undef KILN_OP
};

std::string kernel(const std::string& name, const std::string& args, const std::string& body) {
  return "kernel @" + name + "(" + args + ") {\n" + body + "}\n";
}
std::string unary(const std::string& op, const std::string& type) {
  return kernel(op, "%0: " + type, "  %1 = " + op + " %0 : " + type + "\n");
}
std::string binary(const std::string& op, const std::string& type) {
  return kernel(op, "%0: " + type + ", %1: " + type, "  %2 = " + op + " %0, %1 : " + type + "\n");
}

// One sample kernel per op, keyed by the op's text name.
std::map<std::string, std::string> op_samples() {
  std::map<std::string, std::string> s;
  s["constant"] = kernel("constant", "",
                         "  %0 = constant {value = 1024} : i32\n"
                         "  %1 = constant {value = -2.5} : tile<4x8xf32>\n");
  s["program_id"] = kernel("program_id", "", "  %0 = program_id {axis = 0} : i32\n");
  s["num_programs"] = kernel("num_programs", "", "  %0 = num_programs {axis = 2} : i32\n");
  s["arange"] = kernel("arange", "", "  %0 = arange {start = 0} : tile<128xi32>\n");
  s["splat"] = kernel("splat", "%0: f32", "  %1 = splat %0 : tile<16x16xf32>\n");
  s["broadcast"] = kernel("broadcast", "%0: tile<1x32xf16>", "  %1 = broadcast %0 : tile<8x32xf16>\n");
  s["expand_dims"] = kernel("expand_dims", "%0: tile<32xi32>", "  %1 = expand_dims %0 {axis = 1} : tile<32x1xi32>\n");
  s["reshape"] = kernel("reshape", "%0: tile<4x8xf32>", "  %1 = reshape %0 : tile<32xf32>\n");
  s["trans"] = kernel("trans", "%0: tile<4x8x2xf32>", "  %1 = trans %0 {order = [2, 0, 1]} : tile<2x4x8xf32>\n");
  s["join"] = kernel("join", "%0: tile<16xf32>, %1: tile<16xf32>", "  %2 = join %0, %1 : tile<16x2xf32>\n");
  s["split"] = kernel("split", "%0: tile<16x2xf32>", "  %1, %2 = split %0 : tile<16xf32>, tile<16xf32>\n");
  s["add"] = binary("add", "i32");
  s["sub"] = binary("sub", "tile<8xi64>");
  s["mul"] = binary("mul", "tile<2x2xu16>");
  s["div"] = binary("div", "f64");
  s["rem"] = binary("rem", "tile<8xi8>");
  s["minimum"] = binary("minimum", "tile<32xbf16>");
  s["maximum"] = binary("maximum", "tile<32xf8e4m3>");
  s["neg"] = unary("neg", "tile<4xf8e5m2>");
  s["and"] = binary("and", "tile<8xi1>");
  s["or"] = binary("or", "u32");
  s["xor"] = binary("xor", "u64");
  s["not"] = unary("not", "tile<8xu8>");
  s["shl"] = binary("shl", "i16");
  s["shr"] = binary("shr", "tile<64xu32>");
  s["umulhi"] = binary("umulhi", "tile<64xu32>");
  s["popc"] = unary("popc", "tile<64xu64>");
  s["clz"] = unary("clz", "tile<8xi16>");
  s["fma"] = kernel("fma", "%0: f32, %1: f32, %2: f32", "  %3 = fma %0, %1, %2 : f32\n");
  s["cmp"] = kernel("cmp", "%0: tile<8xi32>, %1: tile<8xi32>", "  %2 = cmp %0, %1 {pred = lt} : tile<8xi1>\n");
  s["select"] =
      kernel("select", "%0: tile<8xi1>, %1: tile<8xf32>, %2: tile<8xf32>", "  %3 = select %0, %1, %2 : tile<8xf32>\n");
  s["cast"] = kernel("cast", "%0: tile<8xf32>", "  %1 = cast %0 : tile<8xbf16>\n");
  s["bitcast"] = kernel("bitcast", "%0: f32", "  %1 = bitcast %0 : u32\n");
  for (const char* op :
       {"exp", "exp2", "log", "log2", "log1p", "sqrt", "rsqrt", "sin", "cos", "tanh", "erf", "floor", "ceil"})
    s[op] = unary(op, "tile<128xf32>");
  for (const char* op : {"expm1", "tan", "atan", "asin", "acos", "sinh", "cosh"}) s[op] = unary(op, "tile<64xf16>");
  for (const char* op : {"trunc", "round", "rint"}) s[op] = unary(op, "tile<2x8xbf16>");
  for (const char* op : {"asinh", "acosh", "atanh", "log10", "exp10"}) s[op] = unary(op, "tile<16xf64>");
  for (const char* op : {"cbrt", "erfc", "erfinv", "lgamma"}) s[op] = unary(op, "tile<4x8xf32>");
  for (const char* op : {"fast_exp", "fast_exp2"}) s[op] = unary(op, "tile<4x8xbf16>");
  s["pow"] = binary("pow", "tile<32xf32>");
  s["atan2"] = binary("atan2", "f64");
  s["hypot"] = binary("hypot", "tile<8xf16>");
  s["copysign"] = binary("copysign", "tile<8xbf16>");
  s["isnan"] = kernel("isnan", "%0: tile<8xf32>", "  %1 = isnan %0 : tile<8xi1>\n");
  s["isinf"] = kernel("isinf", "%0: tile<4x4xf8e5m2>", "  %1 = isinf %0 : tile<4x4xi1>\n");
  s["abs"] = unary("abs", "i32");
  s["addptr"] =
      kernel("addptr", "%0: tile<64xptr<f16>>, %1: tile<64xi32>", "  %2 = addptr %0, %1 : tile<64xptr<f16>>\n");
  s["load"] = kernel("load", "%0: tile<64xptr<f16>>, %1: tile<64xi1>, %2: tile<64xf16>",
                     "  %3 = load %0, %1, %2 {cache = cg, evict = last} : tile<64xf16>\n");
  s["store"] = kernel("store", "%0: tile<64xptr<f16>>, %1: tile<64xf16>, %2: tile<64xi1>",
                      "  store %0, %1, %2 {cache = none, evict = first}\n");
  s["atomic_rmw"] = kernel("atomic_rmw", "%0: tile<32xptr<f32>>, %1: tile<32xf32>, %2: tile<32xi1>",
                           "  %3 = atomic_rmw %0, %1, %2 {kind = add, order = acq_rel, scope = gpu} : tile<32xf32>\n");
  s["atomic_cas"] = kernel("atomic_cas", "%0: ptr<i32>, %1: i32, %2: i32",
                           "  %3 = atomic_cas %0, %1, %2 {order = relaxed, scope = cta} : i32\n");
  s["dot"] = kernel("dot", "%0: tile<64x32xf16>, %1: tile<32x16xf16>, %2: tile<64x16xf32>",
                    "  %3 = dot %0, %1, %2 {precision = ieee} : tile<64x16xf32>\n");
  s["reduce"] = kernel("reduce", "%0: tile<4x128xf32>, %1: tile<4x128xi32>",
                       "  %2, %3 = reduce %0, %1 {axis = 1} : tile<4xf32>, tile<4xi32> {\n"
                       "  ^(%4: f32, %5: i32, %6: f32, %7: i32):\n"
                       "    %8 = cmp %4, %6 {pred = gt} : i1\n"
                       "    %9 = select %8, %4, %6 : f32\n"
                       "    %10 = select %8, %5, %7 : i32\n"
                       "    yield %9, %10\n"
                       "  }\n");
  s["scan"] = kernel("scan", "%0: tile<256xi32>",
                     "  %1 = scan %0 {axis = 0, reverse = 1} : tile<256xi32> {\n"
                     "  ^(%2: i32, %3: i32):\n"
                     "    %4 = add %2, %3 : i32\n"
                     "    yield %4\n"
                     "  }\n");
  s["for"] = kernel("for", "%0: i32, %1: tile<16xf32>",
                    "  %2 = constant {value = 0} : i32\n"
                    "  %3 = constant {value = 1} : i32\n"
                    "  %4 = for %2, %0, %3, %1 : tile<16xf32> {\n"
                    "  ^(%5: i32, %6: tile<16xf32>):\n"
                    "    %7 = exp %6 : tile<16xf32>\n"
                    "    yield %7\n"
                    "  }\n");
  s["if"] = kernel("if", "%0: i1, %1: f32",
                   "  %2 = if %0 : f32 {\n"
                   "  ^():\n"
                   "    %3 = neg %1 : f32\n"
                   "    yield %3\n"
                   "  } {\n"
                   "  ^():\n"
                   "    yield %1\n"
                   "  }\n");
  s["while"] = kernel("while", "%0: i32, %1: i32",
                      "  %2 = while %0 : i32 {\n"
                      "  ^(%3: i32):\n"
                      "    %4 = cmp %3, %1 {pred = lt} : i1\n"
                      "    yield %4\n"
                      "  } {\n"
                      "  ^(%5: i32):\n"
                      "    %6 = add %5, %5 : i32\n"
                      "    yield %6\n"
                      "  }\n");
  s["yield"] = kernel("yield", "%0: i32, %1: i32, %2: i32",
                      "  for %0, %1, %2 {\n"
                      "  ^(%3: i32):\n"
                      "    yield\n"
                      "  }\n");
  s["print"] = kernel("print", "%0: i32, %1: tile<4xf32>", "  print %0, %1 {prefix = \"x = \"}\n");
  s["assert"] = kernel("assert", "%0: tile<8xi1>", "  assert %0 {message = \"index out of bounds\"}\n");
  s["multiple_of"] = kernel("multiple_of", "%0: tile<16xptr<f16>>, %1: tile<2x8xi32>",
                            "  %2 = multiple_of %0 {value = 16} : tile<16xptr<f16>>\n"
                            "  %3 = multiple_of %1 {value = 4, group = 4} : tile<2x8xi32>\n");
  s["max_contiguous"] =
      kernel("max_contiguous", "%0: tile<2x8xi32>", "  %1 = max_contiguous %0 {value = 4} : tile<2x8xi32>\n");
  s["inline_asm"] = kernel("inline_asm", "%0: tile<8xi32>, %1: tile<8xi32>",
                           "  %2 = inline_asm %0, %1 {asm = \"mad.lo.s32 $0, $1, $2, $1;\", constraints = \"=r,r,r\", "
                           "pure = true, key = \"asm-6cb0aade1301f180\"} : tile<8xi32>\n");
  s["barrier"] = kernel("barrier", "%0: i32", "  barrier\n  %1 = add %0, %0 : i32\n");
  s["local_alloc"] = kernel("local_alloc", "", "  %0 = local_alloc : shared<3x8x4xf16>\n");
  s["async_copy"] = kernel("async_copy", "%0: tile<8x4xptr<f16>>, %1: tile<8x4xi1>",
                           "  %2 = local_alloc : shared<3x8x4xf16>\n  %3 = constant {value = 1} : i32\n"
                           "  async_copy %2, %3, %0\n  async_copy %2, %3, %0, %1\n");
  s["async_commit"] = kernel("async_commit", "", "  async_commit\n");
  s["async_wait"] = kernel("async_wait", "", "  async_wait {pending = 2}\n");
  s["local_load"] = kernel("local_load", "",
                           "  %0 = local_alloc : shared<2x8x4xi8>\n  %1 = constant {value = 0} : i32\n"
                           "  %2 = local_load %0, %1 : tile<8x4xi8>\n");
  return s;
}

// parse → print → parse → print, every print equal to the input.
void expect_round_trip(const std::string& text, PrintOptions options = {}) {
  auto first = parse_function(text);
  const std::string printed = print(*first, options);
  EXPECT_EQ(printed, text);
  EXPECT_EQ(print(*parse_function(printed), options), text);
}

bool contains_op(const Function& fn, OpCode code) {
  bool found = false;
  walk(fn.body, [&](Operation& op) { found = found || op.code == code; });
  return found;
}

TEST(IrRoundTrip, EveryOpHasASampleThatRoundTrips) {
  const auto samples = op_samples();
  ASSERT_EQ(std::size(kAllOps), samples.size()) << "a sample names no op, or an op has none";
  for (OpCode code : kAllOps) {
    const std::string name(op_info(code).name);
    auto it = samples.find(name);
    ASSERT_NE(it, samples.end()) << "no sample text for op '" << name << "'";
    SCOPED_TRACE(name);
    expect_round_trip(it->second);
    EXPECT_TRUE(contains_op(*parse_function(it->second), code)) << "the sample for '" << name << "' lacks it";
  }
}

const std::string kNested =
    "kernel @nested(%0: ptr<f32>, %1: i32, %2: tile<8x16xf32>) {\n"
    "  %3 = constant {value = -7} : i32 loc(\"/src/kiln/kernels/nested.hpp\":12)\n"
    "  %4 = constant {value = 1e-30} : f32\n"
    "  %5 = constant {value = -inf} : f32 loc(\"/src/kiln/kernels/nested.hpp\":13)\n"
    "  %6 = constant {value = nan} : tile<8x16xf32>\n"
    "  %7 = constant {value = 0} : i32\n"
    "  %8 = constant {value = 1} : i32\n"
    "  %9, %10 = for %7, %1, %8, %4, %2 : f32, tile<8x16xf32> loc(\"/src/kiln/kernels/nested.hpp\":20) {\n"
    "  ^(%11: i32, %12: f32, %13: tile<8x16xf32>):\n"
    "    %14 = cmp %11, %3 {pred = ge} : i1\n"
    "    %15 = if %14 : tile<8x16xf32> {\n"
    "    ^():\n"
    "      %16 = while %11 : i32 loc(\"/src/kiln/kernels/nested.hpp\":23) {\n"
    "      ^(%17: i32):\n"
    "        %18 = cmp %17, %1 {pred = lt} : i1\n"
    "        yield %18\n"
    "      } {\n"
    "      ^(%19: i32):\n"
    "        %20 = add %19, %8 : i32\n"
    "        yield %20\n"
    "      }\n"
    "      %21 = trans %13 {order = [1, 0]} : tile<16x8xf32>\n"
    "      %22 = trans %21 {order = [1, 0]} : tile<8x16xf32>\n"
    "      yield %22\n"
    "    } {\n"
    "    ^():\n"
    "      yield %6\n"
    "    }\n"
    "    %23 = reduce %15 {axis = 1} : tile<8xf32> loc(\"/src/kiln/kernels/nested.hpp\":30) {\n"
    "    ^(%24: f32, %25: f32):\n"
    "      %26 = maximum %24, %25 : f32\n"
    "      yield %26\n"
    "    }\n"
    "    %27 = reduce %23 {axis = 0} : f32 {\n"
    "    ^(%28: f32, %29: f32):\n"
    "      %30 = add %28, %29 : f32\n"
    "      yield %30\n"
    "    }\n"
    "    %31 = add %12, %27 : f32\n"
    "    print %31 {prefix = \"tab\\t quote\\\" backslash\\\\ newline\\n bell\\x07\", format = f16}\n"
    "    yield %31, %15\n"
    "  }\n"
    "  store %0, %9 {cache = cs, evict = none} loc(\"/src/kiln/kernels/nested.hpp\":40)\n"
    "}\n";

TEST(IrRoundTrip, NestedRegionsAttributesAndLocations) {
  expect_round_trip(kNested, {.locations = true});
  const std::string without_locations = std::regex_replace(kNested, std::regex(R"( loc\("[^"]*":\d+\))"), "");
  ASSERT_NE(without_locations, kNested);
  EXPECT_EQ(print(*parse_function(kNested)), without_locations);
  expect_round_trip(without_locations);
}

TEST(IrRoundTrip, ArgumentFactsOfASpecialisedKernel) {
  const std::string text =
      "kernel @k(%0: ptr<f32> {divisibility = 16}, %1: i32, %2: i64 {equal_to = 1}, %3: i32 {divisibility = 16}) {\n"
      "}\n";
  expect_round_trip(text);
  auto fn = parse_function(text);
  ASSERT_EQ(fn->argument_facts.size(), 4u);
  EXPECT_EQ(fn->argument_facts[0], (ArgumentFacts{.divisibility = 16}));
  EXPECT_TRUE(fn->argument_facts[1].trivial());
  EXPECT_EQ(fn->argument_facts[2], (ArgumentFacts{.equal_to_1 = true}));
  EXPECT_EQ(clone(*fn)->argument_facts, fn->argument_facts);
  // A kernel without facts keeps none, so unspecialised kernels print as before.
  EXPECT_TRUE(parse_function("kernel @k(%0: i32) {\n}\n")->argument_facts.empty());
}

TEST(IrRoundTrip, ParsedAttributesHaveTheirKinds) {
  auto fn = parse_function(kNested);
  std::vector<Operation*> ops;
  walk(fn->body, [&](Operation& op) { ops.push_back(&op); });
  EXPECT_EQ(ops[0]->int_attribute("value"), -7);
  EXPECT_EQ(ops[0]->loc, (SourceLoc{"/src/kiln/kernels/nested.hpp", 12}));
  EXPECT_FALSE(ops[1]->loc.known());
  EXPECT_EQ(std::get<double>(*ops[1]->find_attribute("value")), 1e-30);
  EXPECT_EQ(std::get<double>(*ops[2]->find_attribute("value")), -INFINITY);
  EXPECT_TRUE(std::isnan(std::get<double>(*ops[3]->find_attribute("value"))));
  Operation* print_op = nullptr;
  Operation* trans_op = nullptr;
  for (Operation* op : ops) {
    if (op->code == OpCode::print) print_op = op;
    if (op->code == OpCode::trans && !trans_op) trans_op = op;
  }
  ASSERT_TRUE(print_op && trans_op);
  EXPECT_EQ(print_op->string_attribute("prefix"), "tab\t quote\" backslash\\ newline\n bell\x07");
  EXPECT_EQ(print_op->dtype_attribute("format"), DType::f16);
  EXPECT_EQ(print_op->attributes[0].first, "prefix");
  EXPECT_EQ(trans_op->ints_attribute("order"), (std::vector<std::int64_t>{1, 0}));
  EXPECT_EQ(ops[7]->symbol_attribute("pred"), "ge");
}

// Checks ids follow definition order and every parent/owner link.
void check_block(const Block& block, const Operation* parent, int& next_id) {
  EXPECT_EQ(block.parent, parent);
  for (std::size_t i = 0; i < block.arguments.size(); ++i) {
    EXPECT_EQ(block.arguments[i]->id, next_id++);
    EXPECT_EQ(block.arguments[i]->owner, &block);
    EXPECT_EQ(block.arguments[i]->index, static_cast<int>(i));
    EXPECT_EQ(block.arguments[i]->def, nullptr);
  }
  for (auto& op : block.ops) {
    EXPECT_EQ(op->parent, &block);
    for (std::size_t i = 0; i < op->results.size(); ++i) {
      EXPECT_EQ(op->results[i]->id, next_id++);
      EXPECT_EQ(op->results[i]->def, op.get());
      EXPECT_EQ(op->results[i]->index, static_cast<int>(i));
    }
    for (auto& region : op->regions) check_block(*region, op.get(), next_id);
  }
}

TEST(IrRoundTrip, ParsedStructureIsLinkedAndNumberedInOrder) {
  auto fn = parse_function(kNested);
  EXPECT_EQ(fn->name, "nested");
  int next_id = 0;
  check_block(fn->body, nullptr, next_id);
  EXPECT_EQ(next_id, fn->value_count());
  EXPECT_EQ(next_id, 32);
  // Operand types come from the definitions.
  const Operation& store = *fn->body.ops.back();
  EXPECT_EQ(store.operands[1]->type, Type::scalar(DType::f32));
  EXPECT_EQ(store.operands[1], fn->body.ops[6]->results[0]);
}

TEST(IrRoundTrip, ParserIgnoresWhitespaceLayout) {
  const std::string squeezed =
      "kernel @k(%0:tile< 4 x 8 x ptr<f32> >,%1:i32){%2,%3=split %0:tile<4xptr<f32>>,tile<4xptr<f32>>\n"
      "%4=constant{value=[3,-4]}:i32 loc ( \"a.hpp\" : 3 ) for %1,%1,%1{^(%5:i32):yield}}";
  auto fn = parse_function(squeezed);
  EXPECT_EQ(print(*fn, {.locations = true}),
            "kernel @k(%0: tile<4x8xptr<f32>>, %1: i32) {\n"
            "  %2, %3 = split %0 : tile<4xptr<f32>>, tile<4xptr<f32>>\n"
            "  %4 = constant {value = [3, -4]} : i32 loc(\"a.hpp\":3)\n"
            "  for %1, %1, %1 {\n"
            "  ^(%5: i32):\n"
            "    yield\n"
            "  }\n"
            "}\n");
}

TEST(IrRoundTrip, OddKernelNamesAreQuoted) {
  expect_round_trip("kernel @\"vector_add<1024>\"() {\n}\n");
  EXPECT_EQ(parse_function("kernel @\"vector_add<1024>\"() {\n}\n")->name, "vector_add<1024>");
}

TEST(IrRoundTrip, RandomFloatAttributesRoundTripBitExactly) {
  std::mt19937_64 rng(20240611);
  for (int i = 0; i < 2000; ++i) {
    // Random bit patterns cover subnormals, huge and tiny exponents, infinities and NaNs.
    const double value = i % 2 ? std::bit_cast<double>(rng()) : std::ldexp(static_cast<double>(rng() >> 11), -53);
    Function fn;
    Builder b(fn);
    b.constant_float(Type::scalar(DType::f64), value);
    const std::string text = print(fn);
    auto parsed = parse_function(text);
    const Attribute& a = *parsed->body.ops[0]->find_attribute("value");
    ASSERT_TRUE(std::holds_alternative<double>(a)) << text;
    const double back = std::get<double>(a);
    if (std::isnan(value)) {
      EXPECT_TRUE(std::isnan(back)) << text;
      EXPECT_EQ(std::signbit(back), std::signbit(value)) << text;
    } else {
      EXPECT_EQ(std::bit_cast<std::uint64_t>(back), std::bit_cast<std::uint64_t>(value)) << text;
    }
    EXPECT_EQ(print(*parsed), text);
  }
}

TEST(IrRoundTrip, RandomIntegersAndStringsRoundTrip) {
  std::mt19937_64 rng(7);
  for (int i = 0; i < 500; ++i) {
    const auto value = static_cast<std::int64_t>(rng());
    std::string prefix;
    for (int n = static_cast<int>(rng() % 24); n > 0; --n) prefix += static_cast<char>(1 + rng() % 255);
    Function fn;
    Builder b(fn);
    Value* c = b.constant_int(Type::scalar(DType::i64), value);
    b.create(OpCode::print, {c}, {}, {{"prefix", prefix}, {"shape", std::vector<std::int64_t>{value, -value}}});
    auto parsed = parse_function(print(fn));
    const Operation& print_op = *parsed->body.ops[1];
    EXPECT_EQ(parsed->body.ops[0]->int_attribute("value"), value);
    EXPECT_EQ(print_op.string_attribute("prefix"), prefix);
    EXPECT_EQ(print_op.ints_attribute("shape"), (std::vector<std::int64_t>{value, -value}));
    EXPECT_EQ(print(*parsed), print(fn));
  }
}

TEST(IrPrinter, AttributeStrings) {
  EXPECT_EQ(attribute_string(std::int64_t{-3}), "-3");
  EXPECT_EQ(attribute_string(2.0), "2.0");
  EXPECT_EQ(attribute_string(-0.0), "-0.0");
  EXPECT_EQ(attribute_string(1e20), "1e+20");
  EXPECT_EQ(attribute_string(1.5e-07), "1.5e-07");
  EXPECT_EQ(attribute_string(0.1), "0.1");
  EXPECT_EQ(attribute_string(-INFINITY), "-inf");
  EXPECT_EQ(attribute_string(std::string("a\"b\\c\nd")), R"("a\"b\\c\nd")");
  EXPECT_EQ(attribute_string(Symbol{"acq_rel"}), "acq_rel");
  EXPECT_EQ(attribute_string(DType::bf16), "bf16");
  EXPECT_EQ(attribute_string(std::vector<std::int64_t>{1, 0}), "[1, 0]");
  EXPECT_EQ(attribute_string(std::vector<std::int64_t>{}), "[]");
}

TEST(IrPrinter, BuilderKernelPrintsExactly) {
  Function fn;
  fn.name = "vector_add";
  Value* x = fn.add_argument(fn.body, Type::pointer(DType::f32));
  Value* y = fn.add_argument(fn.body, Type::pointer(DType::f32));
  Value* out = fn.add_argument(fn.body, Type::pointer(DType::f32));
  Value* n = fn.add_argument(fn.body, Type::scalar(DType::i32));
  Builder b(fn);
  b.set_loc({"/home/me/kernels/vector_add.cpp", 7});
  const Type i32 = Type::scalar(DType::i32);
  const Type offsets_type = Type::tile(DType::i32, {1024});
  const Type values_type = Type::tile(DType::f32, {1024});
  const Type pointer_tile = Type::pointer(DType::f32).with_shape({1024});
  Value* pid = b.create(OpCode::program_id, {}, {i32}, {{"axis", std::int64_t{0}}})->result();
  Value* block = b.constant_int(i32, 1024);
  Value* start = b.create(OpCode::mul, {pid, block}, {i32})->result();
  Value* range = b.create(OpCode::arange, {}, {offsets_type}, {{"start", std::int64_t{0}}})->result();
  Value* offsets =
      b.create(OpCode::add, {b.create(OpCode::splat, {start}, {offsets_type})->result(), range}, {offsets_type})
          ->result();
  b.set_loc({"/home/me/kernels/vector_add.cpp", 8});
  Value* mask = b.create(OpCode::cmp, {offsets, b.create(OpCode::splat, {n}, {offsets_type})->result()},
                         {Type::tile(DType::i1, {1024})}, {{"pred", Symbol{"lt"}}})
                    ->result();
  b.set_loc({});
  const std::vector<std::pair<std::string, Attribute>> cache = {{"cache", Symbol{"none"}}, {"evict", Symbol{"none"}}};
  auto load = [&](Value* base) {
    Value* ptrs = b.create(OpCode::splat, {base}, {pointer_tile})->result();
    Value* addresses = b.create(OpCode::addptr, {ptrs, offsets}, {pointer_tile})->result();
    return b.create(OpCode::load, {addresses, mask}, {values_type}, cache)->result();
  };
  Value* sum = b.create(OpCode::add, {load(x), load(y)}, {values_type})->result();
  Value* out_ptrs = b.create(OpCode::splat, {out}, {pointer_tile})->result();
  Value* out_addresses = b.create(OpCode::addptr, {out_ptrs, offsets}, {pointer_tile})->result();
  b.create(OpCode::store, {out_addresses, sum, mask}, {}, cache);

  const std::string expected =
      "kernel @vector_add(%0: ptr<f32>, %1: ptr<f32>, %2: ptr<f32>, %3: i32) {\n"
      "  %4 = program_id {axis = 0} : i32\n"
      "  %5 = constant {value = 1024} : i32\n"
      "  %6 = mul %4, %5 : i32\n"
      "  %7 = arange {start = 0} : tile<1024xi32>\n"
      "  %8 = splat %6 : tile<1024xi32>\n"
      "  %9 = add %8, %7 : tile<1024xi32>\n"
      "  %10 = splat %3 : tile<1024xi32>\n"
      "  %11 = cmp %9, %10 {pred = lt} : tile<1024xi1>\n"
      "  %12 = splat %0 : tile<1024xptr<f32>>\n"
      "  %13 = addptr %12, %9 : tile<1024xptr<f32>>\n"
      "  %14 = load %13, %11 {cache = none, evict = none} : tile<1024xf32>\n"
      "  %15 = splat %1 : tile<1024xptr<f32>>\n"
      "  %16 = addptr %15, %9 : tile<1024xptr<f32>>\n"
      "  %17 = load %16, %11 {cache = none, evict = none} : tile<1024xf32>\n"
      "  %18 = add %14, %17 : tile<1024xf32>\n"
      "  %19 = splat %2 : tile<1024xptr<f32>>\n"
      "  %20 = addptr %19, %9 : tile<1024xptr<f32>>\n"
      "  store %20, %18, %11 {cache = none, evict = none}\n"
      "}\n";
  EXPECT_EQ(print(fn), expected);
  const std::string with_locations = print(fn, {.locations = true});
  EXPECT_NE(with_locations.find("  %4 = program_id {axis = 0} : i32 loc(\"/home/me/kernels/vector_add.cpp\":7)\n"),
            std::string::npos);
  EXPECT_NE(with_locations.find("{pred = lt} : tile<1024xi1> loc(\"/home/me/kernels/vector_add.cpp\":8)\n"),
            std::string::npos);
  EXPECT_NE(with_locations.find("  %14 = load %13, %11 {cache = none, evict = none} : tile<1024xf32>\n"),
            std::string::npos);
  expect_round_trip(expected);
  expect_round_trip(with_locations, {.locations = true});
}

TEST(IrPrinter, RenumbersInOrderOfDefinition) {
  Function fn;
  fn.name = "order";
  Builder b(fn);
  const Type f32 = Type::scalar(DType::f32);
  Value* late = b.constant_float(f32, 2.0);  // id 0, printed second
  b.set_insertion_before(&fn.body, 0);
  Value* early = b.constant_float(f32, 0.5);  // id 1, printed first
  b.set_insertion_end(&fn.body);
  Operation* branch =
      b.create(OpCode::if_,
               {b.create(OpCode::cmp, {early, late}, {Type::scalar(DType::i1)}, {{"pred", Symbol{"lt"}}})->result()},
               {f32}, {}, 2);
  for (auto& region : branch->regions) {
    b.set_insertion_end(region.get());
    b.create(OpCode::yield, {region == branch->regions[0] ? early : late}, {});
  }
  EXPECT_EQ(print(fn),
            "kernel @order() {\n"
            "  %0 = constant {value = 0.5} : f32\n"
            "  %1 = constant {value = 2.0} : f32\n"
            "  %2 = cmp %0, %1 {pred = lt} : i1\n"
            "  %3 = if %2 : f32 {\n"
            "  ^():\n"
            "    yield %0\n"
            "  } {\n"
            "  ^():\n"
            "    yield %1\n"
            "  }\n"
            "}\n");
}

}  // namespace
}  // namespace kiln::ir
