// The tile IR: values, operations, blocks and kernels (functions).
//
// A kernel owns every value it defines. An operation has operands (values),
// results (values it defines), named attributes and regions; each region is
// exactly one block whose arguments are the region's entry values (a loop's
// induction variable and carried values, a combine function's inputs).
#pragma once

#include <compare>
#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "kiln/ir/type.hpp"

namespace kiln::ir {

enum class OpCode : std::uint8_t {
#define KILN_OP(Enum, ...) Enum,
#include "kiln/ir/ops.def"
#undef KILN_OP
};

struct OpInfo {
  std::string_view name;
  int num_operands;  // -1: variadic
  int num_results;   // -1: variadic
  int num_regions;
  std::string_view required_attributes;  // space-separated names
};

const OpInfo& op_info(OpCode code);
std::optional<OpCode> parse_opcode(std::string_view name);

/// A symbolic attribute value, printed bare: `pred = lt`, `cache = cg`.
struct Symbol {
  std::string name;
  friend bool operator==(const Symbol&, const Symbol&) = default;
};

/// Attribute values: integers, floats, strings, symbols, dtypes, integer lists.
using Attribute = std::variant<std::int64_t, double, std::string, Symbol, DType, std::vector<std::int64_t>>;

/// Where the traced C++ code created an op: file, line and the kernel function.
struct SourceLoc {
  std::string file;
  int line = 0;
  bool known() const { return line > 0; }
  friend bool operator==(const SourceLoc&, const SourceLoc&) = default;
};
/// "softmax.hpp:41" (the file's last path component), or "" when unknown.
std::string to_string(const SourceLoc& loc);

struct Operation;
struct Block;

struct Value {
  Type type;
  Operation* def = nullptr;  // the defining op, or null for a block argument
  Block* owner = nullptr;    // the block whose argument this is (block arguments only)
  int index = 0;             // result or argument index
  int id = 0;                // number used by the printer, unique in the kernel
};

struct Operation {
  OpCode code;
  std::vector<Value*> operands;
  std::vector<Value*> results;
  std::vector<std::pair<std::string, Attribute>> attributes;
  std::vector<std::unique_ptr<Block>> regions;
  SourceLoc loc;
  Block* parent = nullptr;

  const OpInfo& info() const { return op_info(code); }
  std::string_view name() const { return info().name; }
  Value* result(int i = 0) const { return results.at(i); }

  const Attribute* find_attribute(std::string_view key) const;
  bool has_attribute(std::string_view key) const { return find_attribute(key) != nullptr; }
  void set_attribute(std::string key, Attribute value);
  /// Typed accessors; they throw IRError naming the op when the attribute is
  /// missing or of another kind.
  std::int64_t int_attribute(std::string_view key) const;
  double float_attribute(std::string_view key) const;
  const std::string& string_attribute(std::string_view key) const;
  const std::string& symbol_attribute(std::string_view key) const;
  DType dtype_attribute(std::string_view key) const;
  const std::vector<std::int64_t>& ints_attribute(std::string_view key) const;
};

struct Block {
  std::vector<Value*> arguments;
  std::vector<std::unique_ptr<Operation>> ops;
  Operation* parent = nullptr;  // the op owning this region, null for a kernel body

  /// The terminating yield, if the block has one.
  Operation* terminator() const;
};

/// What a launch's argument value lets a specialised kernel assume (Triton's
/// specialisation). Printed after the argument's type: `{divisibility = 16}`,
/// `{equal_to = 1}`.
struct ArgumentFacts {
  /// The integer, or the pointer's address in bytes, is a multiple of this
  /// power of two (1: nothing known).
  std::int64_t divisibility = 1;
  /// The integer is 1; specialize() replaces its uses by the constant.
  bool equal_to_1 = false;

  bool trivial() const { return divisibility == 1 && !equal_to_1; }
  friend bool operator==(const ArgumentFacts&, const ArgumentFacts&) = default;
  friend auto operator<=>(const ArgumentFacts&, const ArgumentFacts&) = default;
};

/// A kernel: a name, typed arguments and a body.
struct Function {
  std::string name;
  std::vector<std::string> argument_names;    // C++ parameter names where known
  std::vector<ArgumentFacts> argument_facts;  // one per argument, or empty: nothing known
  Block body;

  Function() = default;
  Function(const Function&) = delete;
  Function& operator=(const Function&) = delete;

  /// Creates a value owned by this kernel with a fresh id.
  Value* new_value(Type type);
  Value* add_argument(Block& block, Type type);
  int value_count() const { return next_id_; }

 private:
  std::deque<Value> values_;
  int next_id_ = 0;
};

/// Error in IR construction, verification or parsing; the message names the
/// op, its source line and the offending values.
struct IRError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

/// Visits every op in `block` and in nested regions, parents before children.
void walk(const Block& block, const std::function<void(Operation&)>& fn);

/// The index of `op` among the ops of its block (op.parent).
std::size_t position_in_block(const Operation& op);

/// Deep copy of a kernel (fresh values, same ids order).
std::unique_ptr<Function> clone(const Function& fn);

/// A structural hash of the kernel's printed form (stable across processes).
std::uint64_t structural_hash(const Function& fn);

}  // namespace kiln::ir
