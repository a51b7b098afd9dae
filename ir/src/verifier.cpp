// The IR verifier: structure and counts from the op table, each op's type
// rule (dispatched through ops.def), and SSA dominance across regions.
#include "kiln/ir/verifier.hpp"

#include <algorithm>
#include <array>
#include <bit>
#include <cstdint>
#include <cstdio>
#include <initializer_list>
#include <string>
#include <string_view>
#include <unordered_set>
#include <vector>

#include "kiln/ir/attribute_enums.hpp"
#include "kiln/ir/inline_asm.hpp"
#include "kiln/ir/passes.hpp"

namespace kiln::ir {

namespace {

// ---- Messages ----------------------------------------------------------------

std::string describe(const Value* v) { return "%" + std::to_string(v->id) + " is " + to_string(v->type); }

/// Throws "verify: <op>: <what>, %a is T, %b is U (<file:line>)".
[[noreturn]] void fail(const Operation& op, const std::string& what, std::initializer_list<const Value*> values = {}) {
  std::string message = "verify: " + std::string(op.name()) + ": " + what;
  for (const Value* v : values) message += ", " + describe(v);
  if (op.loc.known()) message += " (" + to_string(op.loc) + ")";
  throw IRError(message);
}

std::string count_of(std::size_t n, std::string_view noun) {
  return std::to_string(n) + " " + std::string(noun) + (n == 1 ? "" : "s");
}

std::string type_list(const std::vector<Type>& types) {
  std::string out;
  for (std::size_t i = 0; i < types.size(); ++i) out += (i ? ", " : "") + to_string(types[i]);
  return out;
}

// ---- Attribute kinds ---------------------------------------------------------

std::int64_t int_attr(const Operation& op, std::string_view key) {
  if (const auto* v = std::get_if<std::int64_t>(op.find_attribute(key))) return *v;
  fail(op, "attribute '" + std::string(key) + "' must be an integer");
}

void string_attr(const Operation& op, std::string_view key) {
  if (!std::holds_alternative<std::string>(*op.find_attribute(key)))
    fail(op, "attribute '" + std::string(key) + "' must be a string");
}

/// `op`'s attribute of enum E is one of its symbols (attribute_enums.hpp).
template <class E>
void enum_attr(const Operation& op) {
  const std::string_view key = AttributeEnum<E>::key;
  const auto* symbol = std::get_if<Symbol>(op.find_attribute(key));
  if (symbol && parse_symbol<E>(symbol->name)) return;
  std::string choices;
  for (std::string_view a : AttributeEnum<E>::symbols) choices += (choices.empty() ? "" : " ") + std::string(a);
  fail(op, "attribute '" + std::string(key) + "' must be one of: " + choices +
               (symbol ? "; got '" + symbol->name + "'" : ""));
}

// ---- Type helpers ------------------------------------------------------------

bool same_element(const Type& a, const Type& b) { return a.dtype == b.dtype && a.is_pointer == b.is_pointer; }
Type bool_like(const Type& t) { return Type::tile(DType::i1, t.shape); }
/// The value a pointer (or tile of pointers) points to, with the pointer's shape.
Type pointee(const Type& ptr) { return Type::tile(ptr.dtype, ptr.shape); }
int element_bits(const Type& t) { return t.is_pointer ? 64 : dtype_bits(t.dtype); }
bool is_int_element(const Type& t) { return !t.is_pointer && is_integer(t.dtype); }

void expect_type(const Operation& op, const Value* v, const Type& expected, const std::string& role) {
  if (v->type != expected) fail(op, role + " must be " + to_string(expected), {v});
}

void expect_pointer(const Operation& op, const Value* v) {
  if (!v->type.is_pointer) fail(op, "first operand must be a pointer", {v});
}

void expect_operand_range(const Operation& op, std::size_t lo, std::size_t hi, std::string_view names) {
  const std::size_t n = op.operands.size();
  if (n < lo || n > hi)
    fail(op, "expects " + std::to_string(lo) + " to " + std::to_string(hi) + " operands (" + std::string(names) +
                 "), got " + std::to_string(n));
}

// ---- Regions -----------------------------------------------------------------

void verify_yield(const Operation& op) {
  if (!op.parent->parent) fail(op, "a yield in the kernel body");
  if (op.parent->ops.back().get() != &op) fail(op, "a yield must be the last op of its region");
}

void expect_region_arguments(const Operation& op, const Block& region, const std::vector<Type>& types,
                             const std::string& region_name) {
  if (region.arguments.size() != types.size())
    fail(op, region_name + " has " + count_of(region.arguments.size(), "argument") + ", expected " +
                 std::to_string(types.size()) + (types.empty() ? "" : " (" + type_list(types) + ")"));
  for (std::size_t i = 0; i < types.size(); ++i)
    expect_type(op, region.arguments[i], types[i], region_name + " argument " + std::to_string(i));
}

/// The region ends with a yield of `types`; a region yielding nothing may omit it.
void expect_yield(const Operation& op, const Block& region, const std::vector<Type>& types,
                  const std::string& region_name) {
  const Operation* yield = region.terminator();
  for (auto& inner : region.ops)
    if (inner->code == OpCode::yield && inner.get() != yield) verify_yield(*inner);
  if (!yield) {
    if (types.empty()) return;
    fail(op, region_name + " does not end with a yield of " + type_list(types));
  }
  if (yield->operands.size() != types.size())
    fail(op, region_name + " yields " + count_of(yield->operands.size(), "value") + ", expected " +
                 std::to_string(types.size()) + (types.empty() ? "" : " (" + type_list(types) + ")"));
  for (std::size_t i = 0; i < types.size(); ++i)
    expect_type(op, yield->operands[i], types[i], region_name + " yield " + std::to_string(i));
}

std::vector<Type> types_of(const std::vector<Value*>& values, std::size_t first = 0) {
  std::vector<Type> out;
  for (std::size_t i = first; i < values.size(); ++i) out.push_back(values[i]->type);
  return out;
}

void expect_result_types(const Operation& op, const std::vector<Type>& types, const std::string& like) {
  if (op.results.size() != types.size())
    fail(op,
         "expects " + count_of(types.size(), "result") + " (" + like + "), got " + std::to_string(op.results.size()));
  for (std::size_t i = 0; i < types.size(); ++i)
    expect_type(op, op.results[i], types[i], "result " + std::to_string(i));
}

// ---- Per-op rules (named in the 6th column of ops.def) -------------------------

void verify_constant(const Operation& op) {
  const Value* r = op.result();
  if (r->type.is_pointer) fail(op, "result must not be a pointer", {r});
  const Attribute* value = op.find_attribute("value");
  const auto* integer = std::get_if<std::int64_t>(value);
  if (!integer && !std::holds_alternative<double>(*value)) fail(op, "attribute 'value' must be an integer or a float");
  if (is_float(r->type.dtype)) return;
  if (!integer) fail(op, "an integer constant needs an integer value", {r});
  const int bits = dtype_bits(r->type.dtype);
  if (bits == 64) return;
  const std::int64_t lo = is_signed_int(r->type.dtype) ? -(std::int64_t{1} << (bits - 1)) : 0;
  const std::int64_t hi =
      is_signed_int(r->type.dtype) ? (std::int64_t{1} << (bits - 1)) - 1 : (std::int64_t{1} << bits) - 1;
  if (*integer < lo || *integer > hi) fail(op, "value " + std::to_string(*integer) + " is out of range", {r});
}

void verify_grid_query(const Operation& op) {
  expect_type(op, op.result(), Type::scalar(DType::i32), "result");
  const std::int64_t axis = int_attr(op, "axis");
  if (axis < 0 || axis > 2) fail(op, "axis " + std::to_string(axis) + " is not 0, 1 or 2");
}

void verify_arange(const Operation& op) {
  const Value* r = op.result();
  if (r->type.shape.size() != 1 || r->type.is_pointer || r->type.dtype != DType::i32)
    fail(op, "result must be a 1-D tile of i32", {r});
  int_attr(op, "start");
}

void verify_splat(const Operation& op) {
  const Value* x = op.operands[0];
  const Value* r = op.result();
  if (!x->type.is_scalar()) fail(op, "operand must be a scalar", {x});
  if (!r->type.is_tile()) fail(op, "result must be a tile", {r});
  if (!same_element(x->type, r->type)) fail(op, "element types differ", {x, r});
}

void verify_broadcast(const Operation& op) {
  const Value* x = op.operands[0];
  const Value* r = op.result();
  if (!x->type.is_tile() || !r->type.is_tile()) fail(op, "operand and result must be tiles", {x, r});
  if (!same_element(x->type, r->type)) fail(op, "element types differ", {x, r});
  if (x->type.shape.size() != r->type.shape.size()) fail(op, "ranks differ", {x, r});
  for (std::size_t i = 0; i < x->type.shape.size(); ++i) {
    const auto from = x->type.shape[i], to = r->type.shape[i];
    if (from != to && from != 1)
      fail(op,
           "cannot broadcast dimension " + std::to_string(i) + " from " + std::to_string(from) + " to " +
               std::to_string(to),
           {x, r});
  }
}

void verify_expand_dims(const Operation& op) {
  const Value* x = op.operands[0];
  const std::int64_t axis = int_attr(op, "axis");
  const auto rank = static_cast<std::int64_t>(x->type.shape.size());
  if (axis < 0 || axis > rank) fail(op, "axis " + std::to_string(axis) + " is out of range", {x});
  Shape shape = x->type.shape;
  shape.insert(shape.begin() + axis, 1);
  expect_type(op, op.result(), x->type.with_shape(shape), "result");
}

void verify_reshape(const Operation& op) {
  const Value* x = op.operands[0];
  const Value* r = op.result();
  if (!x->type.is_tile() || !r->type.is_tile()) fail(op, "operand and result must be tiles", {x, r});
  if (!same_element(x->type, r->type)) fail(op, "element types differ", {x, r});
  if (x->type.numel() != r->type.numel()) fail(op, "element counts differ", {x, r});
}

void verify_trans(const Operation& op) {
  const Value* x = op.operands[0];
  const auto* order = std::get_if<std::vector<std::int64_t>>(op.find_attribute("order"));
  if (!order) fail(op, "attribute 'order' must be an integer list");
  const std::size_t rank = x->type.shape.size();
  std::vector<bool> seen(rank, false);
  bool permutation = order->size() == rank;
  for (std::size_t i = 0; permutation && i < rank; ++i) {
    const std::int64_t d = (*order)[i];
    permutation = d >= 0 && d < static_cast<std::int64_t>(rank) && !seen[d];
    if (permutation) seen[d] = true;
  }
  if (!permutation) fail(op, "order is not a permutation of the operand's dimensions", {x});
  Shape shape(rank);
  for (std::size_t i = 0; i < rank; ++i) shape[i] = x->type.shape[(*order)[i]];
  expect_type(op, op.result(), x->type.with_shape(shape), "result");
}

void verify_join(const Operation& op) {
  const Value* a = op.operands[0];
  const Value* b = op.operands[1];
  if (a->type != b->type) fail(op, "operand types differ", {a, b});
  Shape shape = a->type.shape;
  shape.push_back(2);
  expect_type(op, op.result(), a->type.with_shape(shape), "result");
}

void verify_split(const Operation& op) {
  const Value* x = op.operands[0];
  if (x->type.shape.empty() || x->type.shape.back() != 2) fail(op, "last dimension must be 2", {x});
  Shape shape = x->type.shape;
  shape.pop_back();
  const Type half = x->type.with_shape(shape);
  expect_type(op, op.results[0], half, "result 0");
  expect_type(op, op.results[1], half, "result 1");
}

/// Operands and the result share one non-pointer type.
void verify_same_type(const Operation& op) {
  for (const Value* v : op.operands)
    if (v->type.is_pointer) fail(op, "pointer operands are not allowed (use addptr)", {v});
  for (std::size_t i = 1; i < op.operands.size(); ++i)
    if (op.operands[i]->type != op.operands[0]->type)
      fail(op, "operand types differ", {op.operands[0], op.operands[i]});
  if (op.result()->type != op.operands[0]->type)
    fail(op, "result type differs from the operands", {op.operands[0], op.result()});
}

void verify_same_int(const Operation& op) {
  verify_same_type(op);
  if (!is_integer(op.operands[0]->type.dtype)) fail(op, "operands must be integers", {op.operands[0]});
}

void verify_same_float(const Operation& op) {
  verify_same_type(op);
  if (!is_float(op.operands[0]->type.dtype)) fail(op, "operands must be floats", {op.operands[0]});
}

/// isnan, isinf: one float operand, an i1 result of its shape.
void verify_float_class(const Operation& op) {
  const Value* x = op.operands[0];
  if (x->type.is_pointer || !is_float(x->type.dtype)) fail(op, "operand must be a float", {x});
  expect_type(op, op.result(), bool_like(x->type), "result");
}

void verify_cmp(const Operation& op) {
  const Value* a = op.operands[0];
  const Value* b = op.operands[1];
  if (a->type != b->type) fail(op, "operand types differ", {a, b});
  expect_type(op, op.result(), bool_like(a->type), "result");
  enum_attr<Predicate>(op);
}

void verify_select(const Operation& op) {
  const Value* cond = op.operands[0];
  const Value* a = op.operands[1];
  const Value* b = op.operands[2];
  if (a->type != b->type) fail(op, "operand types differ", {a, b});
  expect_type(op, cond, bool_like(a->type), "condition");
  expect_type(op, op.result(), a->type, "result");
}

void verify_cast(const Operation& op) {
  const Value* x = op.operands[0];
  const Value* r = op.result();
  if (x->type.shape != r->type.shape) fail(op, "shapes differ", {x, r});
  const auto address_like = [](const Type& t) {
    return t.is_pointer || t.dtype == DType::i64 || t.dtype == DType::u64;
  };
  if ((x->type.is_pointer || r->type.is_pointer) && !(address_like(x->type) && address_like(r->type)))
    fail(op, "pointers cast only to pointers, i64 or u64", {x, r});
}

void verify_bitcast(const Operation& op) {
  const Value* x = op.operands[0];
  const Value* r = op.result();
  if (x->type.shape != r->type.shape) fail(op, "shapes differ", {x, r});
  if (element_bits(x->type) != element_bits(r->type)) fail(op, "bit widths differ", {x, r});
}

void verify_addptr(const Operation& op) {
  const Value* p = op.operands[0];
  const Value* offset = op.operands[1];
  expect_pointer(op, p);
  if (!is_int_element(offset->type) || is_bool(offset->type.dtype)) fail(op, "offset must be an integer", {offset});
  if (p->type.shape != offset->type.shape) fail(op, "shapes differ", {p, offset});
  expect_type(op, op.result(), p->type, "result");
}

void verify_memory_attributes(const Operation& op) {
  enum_attr<Cache>(op);
  enum_attr<Evict>(op);
}

void verify_load(const Operation& op) {
  expect_operand_range(op, 1, 3, "pointer, mask, other");
  const Value* p = op.operands[0];
  expect_pointer(op, p);
  expect_type(op, op.result(), pointee(p->type), "result");
  if (op.operands.size() > 1) expect_type(op, op.operands[1], bool_like(p->type), "mask");
  if (op.operands.size() > 2) expect_type(op, op.operands[2], pointee(p->type), "other");
  verify_memory_attributes(op);
}

void verify_store(const Operation& op) {
  expect_operand_range(op, 2, 3, "pointer, value, mask");
  const Value* p = op.operands[0];
  expect_pointer(op, p);
  expect_type(op, op.operands[1], pointee(p->type), "value");
  if (op.operands.size() > 2) expect_type(op, op.operands[2], bool_like(p->type), "mask");
  verify_memory_attributes(op);
}

void verify_atomic_attributes(const Operation& op) {
  enum_attr<MemoryOrder>(op);
  enum_attr<Scope>(op);
}

void verify_atomic_rmw(const Operation& op) {
  expect_operand_range(op, 2, 3, "pointer, value, mask");
  const Value* p = op.operands[0];
  expect_pointer(op, p);
  expect_type(op, op.operands[1], pointee(p->type), "value");
  if (op.operands.size() > 2) expect_type(op, op.operands[2], bool_like(p->type), "mask");
  expect_type(op, op.result(), pointee(p->type), "result");
  enum_attr<AtomicKind>(op);
  const AtomicKind kind = *attribute_enum<AtomicKind>(op);
  const bool bitwise = kind == AtomicKind::bit_and || kind == AtomicKind::bit_or || kind == AtomicKind::bit_xor;
  if (bitwise && !is_integer(p->type.dtype))
    fail(op, "kind '" + std::string(symbol_of(kind)) + "' needs an integer pointee", {p});
  verify_atomic_attributes(op);
}

void verify_atomic_cas(const Operation& op) {
  const Value* p = op.operands[0];
  expect_pointer(op, p);
  expect_type(op, op.operands[1], pointee(p->type), "compare value");
  expect_type(op, op.operands[2], pointee(p->type), "new value");
  expect_type(op, op.result(), pointee(p->type), "result");
  verify_atomic_attributes(op);
}

void verify_dot(const Operation& op) {
  const Value* a = op.operands[0];
  const Value* b = op.operands[1];
  const Value* acc = op.operands[2];
  for (const Value* v : {a, b, acc})
    if (v->type.shape.size() != 2 || v->type.is_pointer) fail(op, "operands must be 2-D tiles", {v});
  if (a->type.shape[1] != b->type.shape[0]) fail(op, "K mismatch", {a, b});
  if (a->type.dtype != b->type.dtype) fail(op, "input element types differ", {a, b});
  const DType in = a->type.dtype;
  DType accumulate;
  if (in == DType::f16 || in == DType::bf16 || in == DType::f32 || in == DType::f8e4m3 || in == DType::f8e5m2) {
    accumulate = DType::f32;
  } else if (in == DType::i8) {
    accumulate = DType::i32;
  } else {
    fail(op, "inputs must be f16, bf16, f32, f8e4m3, f8e5m2 or i8", {a});
  }
  expect_type(op, acc, Type::tile(accumulate, {a->type.shape[0], b->type.shape[1]}), "accumulator");
  expect_type(op, op.result(), acc->type, "result");
  enum_attr<Precision>(op);
}

/// reduce and scan: n tiles of one shape, a combine region over their elements.
void verify_combine(const Operation& op, bool keeps_axis) {
  if (op.operands.empty()) fail(op, "expects at least one operand");
  const Value* first = op.operands[0];
  for (const Value* v : op.operands) {
    if (!v->type.is_tile()) fail(op, "operands must be tiles", {v});
    if (v->type.shape != first->type.shape) fail(op, "operand shapes differ", {first, v});
  }
  const std::int64_t axis = int_attr(op, "axis");
  if (axis < 0 || axis >= static_cast<std::int64_t>(first->type.shape.size()))
    fail(op, "axis " + std::to_string(axis) + " is out of range", {first});
  std::vector<Type> results, elements;
  for (const Value* v : op.operands) {
    Shape shape = v->type.shape;
    if (!keeps_axis) shape.erase(shape.begin() + axis);
    results.push_back(v->type.with_shape(shape));
    elements.push_back(v->type.element());
  }
  expect_result_types(op, results, "one per operand");
  std::vector<Type> arguments = elements;
  arguments.insert(arguments.end(), elements.begin(), elements.end());
  expect_region_arguments(op, *op.regions[0], arguments, "combine region");
  expect_yield(op, *op.regions[0], elements, "combine region");
}

void verify_reduce(const Operation& op) { verify_combine(op, false); }

void verify_scan(const Operation& op) {
  verify_combine(op, true);
  const std::int64_t reverse = int_attr(op, "reverse");
  if (reverse != 0 && reverse != 1) fail(op, "attribute 'reverse' must be 0 or 1");
}

void verify_for(const Operation& op) {
  if (op.operands.size() < 3)
    fail(op, "expects lo, hi, step and carried values, got " + count_of(op.operands.size(), "operand"));
  const Value* lo = op.operands[0];
  const Value* hi = op.operands[1];
  const Value* step = op.operands[2];
  if (!lo->type.is_scalar() || !is_int_element(lo->type) || is_bool(lo->type.dtype) || hi->type != lo->type ||
      step->type != lo->type)
    fail(op, "lo, hi and step must be integer scalars of one type", {lo, hi, step});
  const std::vector<Type> carried = types_of(op.operands, 3);
  expect_result_types(op, carried, "one per carried value");
  std::vector<Type> arguments = {lo->type};
  arguments.insert(arguments.end(), carried.begin(), carried.end());
  expect_region_arguments(op, *op.regions[0], arguments, "body");
  expect_yield(op, *op.regions[0], carried, "body");
  if (op.has_attribute("num_stages") && int_attr(op, "num_stages") < 1)
    fail(op, "attribute 'num_stages' must be at least 1, got " + std::to_string(int_attr(op, "num_stages")));
  if (!op.has_attribute("unroll")) return;
  const std::int64_t unroll = int_attr(op, "unroll");
  if (unroll < 1 || unroll > kMaxLoopUnroll)
    fail(op,
         "attribute 'unroll' must be from 1 to " + std::to_string(kMaxLoopUnroll) + ", got " + std::to_string(unroll));
  if (lo->type != Type::scalar(DType::i32)) fail(op, "an unrolled loop needs i32 bounds", {lo});
}

void verify_if(const Operation& op) {
  const Value* cond = op.operands[0];
  if (cond->type != Type::scalar(DType::i1)) fail(op, "condition must be an i1 scalar", {cond});
  const std::vector<Type> results = types_of(op.results);
  expect_region_arguments(op, *op.regions[0], {}, "then region");
  expect_yield(op, *op.regions[0], results, "then region");
  expect_region_arguments(op, *op.regions[1], {}, "else region");
  expect_yield(op, *op.regions[1], results, "else region");
}

void verify_while(const Operation& op) {
  const std::vector<Type> carried = types_of(op.operands);
  expect_result_types(op, carried, "one per carried value");
  expect_region_arguments(op, *op.regions[0], carried, "condition region");
  expect_yield(op, *op.regions[0], {Type::scalar(DType::i1)}, "condition region");
  expect_region_arguments(op, *op.regions[1], carried, "body");
  expect_yield(op, *op.regions[1], carried, "body");
}

void verify_print(const Operation& op) {
  string_attr(op, "prefix");
  // A GPU thread prints the elements it holds of every tile operand on one
  // line, so the tiles share one shape; scalars go on every line.
  const Value* first_tile = nullptr;
  for (const Value* operand : op.operands) {
    if (!operand->type.is_tile()) continue;
    if (!first_tile) first_tile = operand;
    if (operand->type.shape != first_tile->type.shape)
      fail(op, "tile operands differ in shape; print them separately", {first_tile, operand});
  }
}

void verify_assert(const Operation& op) {
  const Value* cond = op.operands[0];
  if (cond->type.is_pointer || cond->type.dtype != DType::i1) fail(op, "condition must be i1", {cond});
  string_attr(op, "message");
  // Every device quotes the message in its fault report, which is one line.
  for (const char c : op.string_attribute("message"))
    if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f) {
      char code[8];
      std::snprintf(code, sizeof code, "0x%02x", static_cast<unsigned char>(c));
      fail(op, "the message holds the control character " + std::string(code) + "; a fault report is one line");
    }
}

void verify_barrier(const Operation&) {}

// ---- Hints -------------------------------------------------------------------

/// A hint's `key` attribute is a power of two no larger than x's last dimension.
void expect_run_length(const Operation& op, std::string_view key, const Value* x) {
  const std::int64_t length = int_attr(op, key);
  if (length <= 0 || (length & (length - 1)) != 0)
    fail(op, std::string(key) + " " + std::to_string(length) + " is not a positive power of two", {x});
  if (length > x->type.shape.back())
    fail(op,
         std::string(key) + " " + std::to_string(length) + " exceeds the last dimension " +
             std::to_string(x->type.shape.back()),
         {x});
}

void verify_multiple_of(const Operation& op) {
  const Value* x = op.operands[0];
  if (!x->type.is_pointer && (!is_integer(x->type.dtype) || x->type.dtype == DType::i1))
    fail(op, "operand must be integers or pointers", {x});
  expect_type(op, op.result(), x->type, "result");
  const std::int64_t divisor = int_attr(op, "value");
  if (divisor <= 0 || (divisor & (divisor - 1)) != 0)
    fail(op, "value " + std::to_string(divisor) + " is not a positive power of two", {x});
  if (!op.has_attribute("group")) return;
  if (!x->type.is_tile()) fail(op, "a group needs a tile operand", {x});
  expect_run_length(op, "group", x);
}

void verify_max_contiguous(const Operation& op) {
  const Value* x = op.operands[0];
  if (!x->type.is_tile() || x->type.is_pointer || !is_integer(x->type.dtype) || x->type.dtype == DType::i1)
    fail(op, "operand must be an integer tile", {x});
  expect_type(op, op.result(), x->type, "result");
  expect_run_length(op, "value", x);
}

// ---- Inline assembly -----------------------------------------------------------

void verify_inline_asm(const Operation& op) {
  string_attr(op, "asm");
  string_attr(op, "constraints");
  string_attr(op, "key");
  const auto* pure = std::get_if<Symbol>(op.find_attribute("pure"));
  if (!pure || (pure->name != "true" && pure->name != "false")) fail(op, "attribute 'pure' must be true or false");
  const Value* result = op.result();
  if (result->type.is_pointer || result->type.is_shared) fail(op, "the result must be numbers", {result});
  std::vector<DType> dtypes;
  for (const Value* operand : op.operands) {
    if (operand->type.is_pointer || operand->type.is_shared) fail(op, "operands must be numbers", {operand});
    if (operand->type.shape != result->type.shape) fail(op, "operands must have the result's shape", {operand, result});
    dtypes.push_back(operand->type.dtype);
  }
  const std::string& text = op.string_attribute("asm");
  const std::string& constraints = op.string_attribute("constraints");
  const std::string error = inline_asm_error(text, constraints, result->type.dtype, dtypes);
  if (!error.empty()) fail(op, error);
  const std::string key = inline_asm_key(text, constraints, result->type.dtype, dtypes);
  if (op.string_attribute("key") != key)
    fail(op, "attribute 'key' is \"" + op.string_attribute("key") + "\", but the asm, constraints and dtypes give \"" +
                 key + "\"");
}

// ---- Shared-memory buffers ------------------------------------------------------

/// One slot of ring buffer `ring`'s type: a tile of its element.
Type slot_type(const Type& ring) { return Type::tile(ring.dtype, Shape(ring.shape.begin() + 1, ring.shape.end())); }

void expect_ring_and_slot(const Operation& op) {
  const Value* ring = op.operands[0];
  if (!ring->type.is_shared || ring->type.shape.size() < 2)
    fail(op, "operand 0 must be a shared buffer of slots (shared<stages x tile>)", {ring});
  expect_type(op, op.operands[1], Type::scalar(DType::i32), "the slot index");
}

void verify_local_alloc(const Operation& op) {
  const Value* ring = op.result();
  if (!ring->type.is_shared || ring->type.shape.size() < 2)
    fail(op, "the result must be a shared buffer of slots (shared<stages x tile>)", {ring});
}

void verify_async_copy(const Operation& op) {
  expect_operand_range(op, 3, 4, "buffer, slot, pointer, mask");
  expect_ring_and_slot(op);
  const Value* p = op.operands[2];
  if (!p->type.is_pointer || !p->type.is_tile()) fail(op, "operand 2 must be a tile of pointers", {p});
  if (pointee(p->type) != slot_type(op.operands[0]->type))
    fail(op, "the pointers must point to one slot's elements", {p, op.operands[0]});
  if (op.operands.size() > 3) expect_type(op, op.operands[3], bool_like(p->type), "mask");
}

void verify_async_wait(const Operation& op) {
  if (int_attr(op, "pending") < 0) fail(op, "attribute 'pending' must be at least 0");
}

void verify_local_load(const Operation& op) {
  expect_ring_and_slot(op);
  expect_type(op, op.result(), slot_type(op.operands[0]->type), "result");
}

/// Shared buffers are made by local_alloc and used only as the buffer
/// operand of async_copy and local_load.
void verify_shared_uses(const Operation& op) {
  for (std::size_t i = 0; i < op.operands.size(); ++i)
    if (op.operands[i]->type.is_shared && !(i == 0 && (op.code == OpCode::async_copy || op.code == OpCode::local_load)))
      fail(op, "operand " + std::to_string(i) + " is a shared buffer, which only async_copy and local_load take",
           {op.operands[i]});
  for (const Value* r : op.results)
    if (r->type.is_shared && op.code != OpCode::local_alloc) fail(op, "only local_alloc makes a shared buffer", {r});
  for (auto& region : op.regions)
    for (const Value* argument : region->arguments)
      if (argument->type.is_shared) fail(op, "a region argument cannot be a shared buffer", {argument});
}

using OpVerifier = void (*)(const Operation&);
constexpr std::array kOpVerifiers = {
#define KILN_OP(Enum, Text, NOperands, NResults, NRegions, Verifier, ...) &Verifier,
#include "kiln/ir/ops.def"
#undef KILN_OP
};

// ---- Structure and dominance ---------------------------------------------------

bool is_ancestor_or_self(const Block* ancestor, const Block* block) {
  for (const Block* b = block; b; b = b->parent ? b->parent->parent : nullptr)
    if (b == ancestor) return true;
  return false;
}

class Verifier {
 public:
  explicit Verifier(const Function& fn) : fn_(fn) {}

  void run() {
    collect_definitions(fn_.body, nullptr);
    for (const Value* argument : fn_.body.arguments)
      if (argument->type.is_shared)
        throw IRError("verify: kernel @" + fn_.name + ": argument %" + std::to_string(argument->id) + " is " +
                      to_string(argument->type) + ", and only local_alloc makes a shared buffer");
    verify_argument_facts();
    verify_block(fn_.body);
  }

 private:
  // Facts hold for integer scalars (divisibility, equal to 1) and pointer
  // scalars (divisibility of the address), one entry per argument.
  void verify_argument_facts() const {
    const auto& facts = fn_.argument_facts;
    const auto& args = fn_.body.arguments;
    if (facts.empty()) return;
    const std::string kernel = "verify: kernel @" + fn_.name + ": ";
    if (facts.size() != args.size())
      throw IRError(kernel + "argument facts are given for " + std::to_string(facts.size()) + " of " +
                    std::to_string(args.size()) + " arguments");
    for (std::size_t i = 0; i < args.size(); ++i) {
      const Type& t = args[i]->type;
      const std::string arg = "argument %" + std::to_string(args[i]->id) + " (" + to_string(t) + ")";
      const bool integer = t.is_scalar() && !t.is_pointer && is_integer(t.dtype) && t.dtype != DType::i1;
      const bool pointer = t.is_scalar() && t.is_pointer;
      const std::int64_t d = facts[i].divisibility;
      if (d < 1 || (d & (d - 1)) != 0)
        throw IRError(kernel + arg + ": divisibility must be a positive power of two, got " + std::to_string(d));
      if (d != 1 && !integer && !pointer)
        throw IRError(kernel + arg + ": divisibility applies to integer and pointer scalars only");
      if (facts[i].equal_to_1 && !integer)
        throw IRError(kernel + arg + ": equal_to = 1 applies to integer scalars only");
    }
  }
  void define(const Value* v, const Operation* by) {
    if (!defined_.insert(v).second) {
      if (by) fail(*by, "%" + std::to_string(v->id) + " is defined twice");
      throw IRError("verify: kernel @" + fn_.name + ": argument %" + std::to_string(v->id) + " is defined twice");
    }
  }

  void collect_definitions(const Block& block, const Operation* parent) {
    for (const Value* arg : block.arguments) define(arg, parent);
    for (auto& op : block.ops) {
      if (!op) throw IRError("verify: kernel @" + fn_.name + ": a block holds a null op");
      for (const Value* r : op->results)
        if (r) define(r, op.get());
      for (auto& region : op->regions)
        if (region) collect_definitions(*region, op.get());
    }
  }

  void verify_block(const Block& block) {
    const std::size_t scope_start = scope_.size();
    for (std::size_t i = 0; i < block.arguments.size(); ++i) {
      const Value* arg = block.arguments[i];
      if (arg->owner != &block || arg->def || arg->index != static_cast<int>(i)) {
        const std::string what = "block argument %" + std::to_string(arg->id) + " is not linked to its block";
        if (block.parent) fail(*block.parent, what);
        throw IRError("verify: kernel @" + fn_.name + ": " + what);
      }
      check_type_shape(block.parent, arg);
      make_visible(arg);
    }
    for (auto& op : block.ops) {
      if (op->parent != &block) fail(*op, "its parent link does not point to its block");
      verify_structure(*op);
      verify_operands_dominate(*op);
      for (const Value* r : op->results) check_type_shape(op.get(), r);
      for (std::string_view name : required_attributes(*op))
        if (!op->has_attribute(name)) fail(*op, "missing attribute '" + std::string(name) + "'");
      verify_shared_uses(*op);
      kOpVerifiers[static_cast<int>(op->code)](*op);
      for (auto& region : op->regions) verify_block(*region);
      for (const Value* r : op->results) make_visible(r);
    }
    while (scope_.size() > scope_start) {
      visible_.erase(scope_.back());
      scope_.pop_back();
    }
  }

  static std::vector<std::string_view> required_attributes(const Operation& op) {
    std::vector<std::string_view> names;
    std::string_view list = op.info().required_attributes;
    while (!list.empty()) {
      const auto space = list.find(' ');
      names.push_back(list.substr(0, space));
      list = space == std::string_view::npos ? std::string_view{} : list.substr(space + 1);
    }
    return names;
  }

  void verify_structure(const Operation& op) {
    const OpInfo& info = op.info();
    if (info.num_operands >= 0 && op.operands.size() != static_cast<std::size_t>(info.num_operands))
      fail(op, "expects " + count_of(info.num_operands, "operand") + ", got " + std::to_string(op.operands.size()));
    if (info.num_results >= 0 && op.results.size() != static_cast<std::size_t>(info.num_results))
      fail(op, "expects " + count_of(info.num_results, "result") + ", got " + std::to_string(op.results.size()));
    if (op.regions.size() != static_cast<std::size_t>(info.num_regions))
      fail(op, "expects " + count_of(info.num_regions, "region") + ", got " + std::to_string(op.regions.size()));
    for (std::size_t i = 0; i < op.operands.size(); ++i)
      if (!op.operands[i]) fail(op, "operand " + std::to_string(i) + " is null");
    for (std::size_t i = 0; i < op.results.size(); ++i) {
      const Value* r = op.results[i];
      if (!r || r->def != &op || r->index != static_cast<int>(i))
        fail(op, "result " + std::to_string(i) + " is not linked to its op");
    }
    for (auto& region : op.regions)
      if (!region || region->parent != &op) fail(op, "a region is not linked to its op");
  }

  // Tile dimensions are positive powers of two; a shared buffer's slot count
  // (its first dimension) is any positive number.
  void check_type_shape(const Operation* op, const Value* v) {
    for (std::size_t i = 0; i < v->type.shape.size(); ++i) {
      const std::int64_t d = v->type.shape[i];
      std::string what;
      if (d <= 0) what = "dimensions must be positive";
      else if (v->type.is_shared && i == 0) continue;
      else if (!std::has_single_bit(static_cast<std::uint64_t>(d)))
        what = "tile dimension " + std::to_string(d) + " is not a power of two (pad the tile to " +
               std::to_string(std::bit_ceil(static_cast<std::uint64_t>(d))) + " and mask the extra elements)";
      else continue;
      if (op) fail(*op, what, {v});
      throw IRError("verify: kernel @" + fn_.name + ": " + what + ", " + describe(v));
    }
  }

  void verify_operands_dominate(const Operation& op) {
    for (std::size_t i = 0; i < op.operands.size(); ++i) {
      const Value* v = op.operands[i];
      if (visible_.count(v)) continue;
      const std::string operand = "operand " + std::to_string(i);
      if (!defined_.count(v)) fail(op, operand + " is not defined in this kernel", {v});
      const Block* def_block = v->def ? v->def->parent : v->owner;
      if (is_ancestor_or_self(def_block, op.parent)) fail(op, operand + " is used before its definition", {v});
      fail(op, operand + " is defined in a region that does not enclose this use", {v});
    }
  }

  void make_visible(const Value* v) {
    visible_.insert(v);
    scope_.push_back(v);
  }

  const Function& fn_;
  std::unordered_set<const Value*> defined_;
  std::unordered_set<const Value*> visible_;
  std::vector<const Value*> scope_;
};

}  // namespace

void verify(const Function& fn) { Verifier(fn).run(); }

}  // namespace kiln::ir
