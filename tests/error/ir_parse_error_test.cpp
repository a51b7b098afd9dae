// Malformed IR text: parse_function rejects it with one line naming the place and the problem.
#include <gtest/gtest.h>

#include <string>

#include "kiln/ir/parser.hpp"

namespace kiln::ir {
namespace {

struct BadText {
  const char* what;
  std::string text;
  std::string message;
};

const BadText kCases[] = {
    {"unknown op", "kernel @k(%0: i32) {\n  %1 = ad %0, %0 : i32\n}\n", "<input>:2:8: unknown op 'ad'"},
    {"unknown type", "kernel @k(%0: f31) {\n}\n", "<input>:1:15: unknown type 'f31'"},
    {"unknown tile element", "kernel @k(%0: tile<4xf31>) {\n}\n", "<input>:1:22: unknown type 'f31'"},
    {"unknown pointee", "kernel @k(%0: ptr<tile>) {\n}\n", "<input>:1:19: unknown pointee type 'tile'"},
    {"tile without x", "kernel @k(%0: tile<4, f32>) {\n}\n",
     "<input>:1:21: expected 'x' after tile dimension, got ','"},
    {"missing colon", "kernel @k(%0 i32) {\n}\n", "<input>:1:14: expected ':' after value name, got 'i32'"},
    {"undefined value", "kernel @k(%0: i32) {\n  %1 = add %0, %7 : i32\n}\n",
     "<input>:2:16: use of undefined value %7"},
    {"use of own result", "kernel @k(%0: i32) {\n  %1 = add %1, %0 : i32\n}\n",
     "<input>:2:12: use of undefined value %1"},
    {"value out of scope",
     "kernel @k(%0: i32) {\n  for %0, %0, %0 {\n  ^(%1: i32):\n    yield\n  }\n  %2 = add %1, %1 : i32\n}\n",
     "<input>:6:12: use of value %1 outside its scope"},
    {"redefined value", "kernel @k(%0: i32) {\n  %0 = add %0, %0 : i32\n}\n", "<input>:2:3: redefinition of value %0"},
    {"redefined result", "kernel @k(%0: tile<2x2xi32>) {\n  %1, %1 = split %0 : tile<2xi32>, tile<2xi32>\n}\n",
     "<input>:2:7: redefinition of value %1"},
    {"redefined block argument", "kernel @k(%0: i32) {\n  for %0, %0, %0 {\n  ^(%0: i32):\n    yield\n  }\n}\n",
     "<input>:3:5: redefinition of value %0"},
    {"missing closing brace", "kernel @k(%0: i32) {\n  %1 = add %0, %0 : i32\n",
     "<input>:3:1: expected '}' to close the kernel body, got end of input"},
    {"missing region brace", "kernel @k(%0: i32) {\n  for %0, %0, %0 {\n  ^(%1: i32):\n    yield\n}\n",
     "<input>:6:1: expected '}' to close the kernel body, got end of input"},
    {"attribute without '='", "kernel @k(%0: i32) {\n  %1 = cmp %0, %0 {pred lt} : i1\n}\n",
     "<input>:2:25: expected '=' after attribute name 'pred', got 'lt'"},
    {"attribute without value", "kernel @k() {\n  %0 = constant {value = } : i32\n}\n",
     "<input>:2:26: expected an attribute value, got '}'"},
    {"duplicate attribute", "kernel @k() {\n  %0 = constant {value = 1, value = 2} : i32\n}\n",
     "<input>:2:29: duplicate attribute 'value'"},
    {"float in an integer list",
     "kernel @k(%0: tile<2x2xi32>) {\n  %1 = trans %0 {order = [1, 0.5]} : tile<2x2xi32>\n}\n",
     "<input>:2:30: expected an integer in the list, got '0.5'"},
    {"integer out of range", "kernel @k() {\n  %0 = constant {value = 9223372036854775808} : i64\n}\n",
     "<input>:2:26: integer out of range '9223372036854775808'"},
    {"unterminated string", "kernel @k(%0: i1) {\n  assert %0 {message = \"oops}\n}\n",
     "<input>:2:24: unterminated string"},
    {"control character in a string", "kernel @k(%0: i1) {\n  assert %0 {message = \"a\rb\"}\n}\n",
     "<input>:2:26: control character 0x0d in string; write it as an \\x escape"},
    {"unknown escape", "kernel @k(%0: i1) {\n  assert %0 {message = \"a\\qb\"}\n}\n",
     "<input>:2:26: unknown escape '\\q' in string"},
    {"escaped control character", "kernel @k(%0: i1) {\n  assert %0 {message = \"a\\\rb\"}\n}\n",
     "<input>:2:26: unknown escape in string: '\\' followed by 0x0d"},
    {"control character in the kernel name", "kernel @\"a\\nb\"(%0: tile<3xi32>) {\n}\n",
     "<input>:1:8: control character 0x0a in the kernel name"},
    {"control character in a loc file name", "kernel @k(%0: i32) {\n  %1 = add %0, %0 : i64 loc(\"a\\nb\":3)\n}\n",
     "<input>:2:29: control character 0x0a in the file name in loc"},
    {"result count mismatch", "kernel @k(%0: tile<2x2xi32>) {\n  %1, %2 = split %0 : tile<2xi32>\n}\n",
     "<input>:2:12: 'split' has 2 result names but 1 result types"},
    {"types on an op without results", "kernel @k(%0: ptr<i32>, %1: i32) {\n  store %0, %1 : i32\n}\n",
     "<input>:2:3: 'store' has 0 result names but 1 result types"},
    {"missing kernel header", "%0 = constant {value = 1} : i32\n", "<input>:1:1: expected 'kernel', got '%0'"},
    {"missing kernel name", "kernel k() {\n}\n", "<input>:1:8: expected kernel name '@name' after 'kernel', got 'k'"},
    {"unknown argument fact", "kernel @k(%0: i32 {aligned = 16}) {\n}\n",
     "<input>:1:20: expected an argument fact 'divisibility = <power of two>' or 'equal_to = 1', got 'aligned' = '16'"},
    {"equal_to other than 1", "kernel @k(%0: i32 {equal_to = 2}) {\n}\n",
     "<input>:1:20: expected an argument fact 'divisibility = <power of two>' or 'equal_to = 1', got 'equal_to' = '2'"},
    {"divisibility not a power of two", "kernel @k(%0: i32 {divisibility = 12}) {\n}\n",
     "<input>:1:35: divisibility must be a positive power of two, got '12'"},
    {"junk after the kernel", "kernel @k() {\n}\n}\n", "<input>:3:1: expected end of input after the kernel, got '}'"},
    {"region without block header", "kernel @k(%0: i1) {\n  if %0 {\n    yield\n  } {\n  ^():\n    yield\n  }\n}\n",
     "<input>:3:5: expected '^' to open the region's block, got 'yield'"},
    {"block header without colon", "kernel @k(%0: i32) {\n  for %0, %0, %0 {\n  ^(%1: i32)\n    yield\n  }\n}\n",
     "<input>:4:5: expected ':' after the block arguments, got 'yield'"},
    {"unexpected character", "kernel @k() {\n  %0 = constant {value = 1} : i32 ;\n}\n",
     "<input>:2:35: unexpected character ';'"},
    {"loc with line zero", "kernel @k() {\n  %0 = constant {value = 1} : i32 loc(\"a.hpp\":0)\n}\n",
     "<input>:2:47: expected a positive line number in loc, got '0'"},
    {"missing operand after comma", "kernel @k(%0: i32) {\n  %1 = add %0, : i32\n}\n",
     "<input>:2:16: expected a value name, got ':'"},
};

TEST(IrParseError, EachMalformedTextGivesItsMessage) {
  for (const BadText& c : kCases) {
    SCOPED_TRACE(c.what);
    try {
      parse_function(c.text);
      ADD_FAILURE() << "parsed without an error";
    } catch (const IRError& e) {
      EXPECT_EQ(std::string(e.what()), c.message);
    }
  }
}

TEST(IrParseError, MessageNamesTheSource) {
  try {
    parse_function("kernel @k() {\n  %0 = constant {value = 1} : f31\n}\n", "kernels/softmax.kir");
    FAIL() << "parsed without an error";
  } catch (const IRError& e) {
    EXPECT_EQ(std::string(e.what()), "kernels/softmax.kir:2:31: unknown type 'f31'");
  }
}

}  // namespace
}  // namespace kiln::ir
