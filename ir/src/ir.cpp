// Op table expansion, attribute access, values, walking and cloning.
#include "kiln/ir/ir.hpp"

#include <algorithm>
#include <array>
#include <unordered_map>

#include "kiln/ir/builder.hpp"

namespace kiln::ir {

namespace {
constexpr std::array kOpInfo = {
#define KILN_OP(Enum, Text, NOperands, NResults, NRegions, Verifier, Attrs, ...) \
  OpInfo{Text, NOperands, NResults, NRegions, Attrs},
#include "kiln/ir/ops.def"
#undef KILN_OP
};

template <class T>
const T& typed_attribute(const Operation& op, std::string_view key, const char* kind) {
  const Attribute* a = op.find_attribute(key);
  if (!a)
    throw IRError(std::string(op.name()) + ": missing attribute '" + std::string(key) + "'" +
                  (op.loc.known() ? " (" + to_string(op.loc) + ")" : ""));
  if (const T* v = std::get_if<T>(a)) return *v;
  throw IRError(std::string(op.name()) + ": attribute '" + std::string(key) + "' must be " + kind +
                (op.loc.known() ? " (" + to_string(op.loc) + ")" : ""));
}
}  // namespace

const OpInfo& op_info(OpCode code) { return kOpInfo[static_cast<int>(code)]; }

std::optional<OpCode> parse_opcode(std::string_view name) {
  for (std::size_t i = 0; i < kOpInfo.size(); ++i)
    if (kOpInfo[i].name == name) return static_cast<OpCode>(i);
  return std::nullopt;
}

std::string to_string(const SourceLoc& loc) {
  if (!loc.known()) return "";
  auto slash = loc.file.find_last_of('/');
  return (slash == std::string::npos ? loc.file : loc.file.substr(slash + 1)) + ":" + std::to_string(loc.line);
}

const Attribute* Operation::find_attribute(std::string_view key) const {
  for (auto& [k, v] : attributes)
    if (k == key) return &v;
  return nullptr;
}

void Operation::set_attribute(std::string key, Attribute value) {
  for (auto& [k, v] : attributes)
    if (k == key) {
      v = std::move(value);
      return;
    }
  attributes.emplace_back(std::move(key), std::move(value));
}

std::int64_t Operation::int_attribute(std::string_view key) const {
  return typed_attribute<std::int64_t>(*this, key, "an integer");
}
double Operation::float_attribute(std::string_view key) const {
  const Attribute* a = find_attribute(key);
  if (a && std::holds_alternative<std::int64_t>(*a)) return static_cast<double>(std::get<std::int64_t>(*a));
  return typed_attribute<double>(*this, key, "a float");
}
const std::string& Operation::string_attribute(std::string_view key) const {
  return typed_attribute<std::string>(*this, key, "a string");
}
const std::string& Operation::symbol_attribute(std::string_view key) const {
  return typed_attribute<Symbol>(*this, key, "a symbol").name;
}
DType Operation::dtype_attribute(std::string_view key) const { return typed_attribute<DType>(*this, key, "a dtype"); }
const std::vector<std::int64_t>& Operation::ints_attribute(std::string_view key) const {
  return typed_attribute<std::vector<std::int64_t>>(*this, key, "an integer list");
}

Operation* Block::terminator() const {
  if (ops.empty() || ops.back()->code != OpCode::yield) return nullptr;
  return ops.back().get();
}

Value* Function::new_value(Type type) {
  Value& v = values_.emplace_back();
  v.type = std::move(type);
  v.id = next_id_++;
  return &v;
}

Value* Function::add_argument(Block& block, Type type) {
  Value* v = new_value(std::move(type));
  v->owner = &block;
  v->index = static_cast<int>(block.arguments.size());
  block.arguments.push_back(v);
  return v;
}

std::size_t position_in_block(const Operation& op) {
  const auto& ops = op.parent->ops;
  return static_cast<std::size_t>(
      std::find_if(ops.begin(), ops.end(), [&](const auto& candidate) { return candidate.get() == &op; }) -
      ops.begin());
}

void walk(const Block& block, const std::function<void(Operation&)>& fn) {
  for (auto& op : block.ops) {
    fn(*op);
    for (auto& region : op->regions) walk(*region, fn);
  }
}

Operation* Builder::create(OpCode code, std::vector<Value*> operands, const std::vector<Type>& result_types,
                           std::vector<std::pair<std::string, Attribute>> attributes, int num_regions) {
  auto op = std::make_unique<Operation>();
  op->code = code;
  op->operands = std::move(operands);
  op->attributes = std::move(attributes);
  op->loc = loc_;
  op->parent = block_;
  for (std::size_t i = 0; i < result_types.size(); ++i) {
    Value* v = fn_.new_value(result_types[i]);
    v->def = op.get();
    v->index = static_cast<int>(i);
    op->results.push_back(v);
  }
  for (int i = 0; i < num_regions; ++i) {
    auto region = std::make_unique<Block>();
    region->parent = op.get();
    op->regions.push_back(std::move(region));
  }
  Operation* raw = op.get();
  if (position_ < 0) {
    block_->ops.push_back(std::move(op));
  } else {
    block_->ops.insert(block_->ops.begin() + position_, std::move(op));
    ++position_;
  }
  return raw;
}

Value* Builder::constant_int(Type type, std::int64_t value) {
  return create(OpCode::constant, {}, {std::move(type)}, {{"value", value}})->result();
}

Value* Builder::constant_float(Type type, double value) {
  return create(OpCode::constant, {}, {std::move(type)}, {{"value", value}})->result();
}

namespace {
void clone_block(const Block& from, Block& to, Function& fn, std::unordered_map<const Value*, Value*>& map) {
  for (Value* arg : from.arguments) map[arg] = fn.add_argument(to, arg->type);
  for (auto& op : from.ops) {
    auto copy = std::make_unique<Operation>();
    copy->code = op->code;
    copy->attributes = op->attributes;
    copy->loc = op->loc;
    copy->parent = &to;
    for (Value* v : op->operands) copy->operands.push_back(map.at(v));
    for (Value* r : op->results) {
      Value* nr = fn.new_value(r->type);
      nr->def = copy.get();
      nr->index = r->index;
      copy->results.push_back(nr);
      map[r] = nr;
    }
    for (auto& region : op->regions) {
      auto nb = std::make_unique<Block>();
      nb->parent = copy.get();
      clone_block(*region, *nb, fn, map);
      copy->regions.push_back(std::move(nb));
    }
    to.ops.push_back(std::move(copy));
  }
}
}  // namespace

std::unique_ptr<Function> clone(const Function& fn) {
  auto out = std::make_unique<Function>();
  out->name = fn.name;
  out->argument_names = fn.argument_names;
  out->argument_facts = fn.argument_facts;
  std::unordered_map<const Value*, Value*> map;
  clone_block(fn.body, out->body, *out, map);
  return out;
}

}  // namespace kiln::ir
