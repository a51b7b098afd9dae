// Common subexpression elimination: a scoped table of pure ops, keyed by
// code, operands, attributes and result types.
#include <bit>
#include <cstdint>
#include <functional>
#include <unordered_map>
#include <vector>

#include "kiln/ir/passes.hpp"
#include "op_traits.hpp"

namespace kiln::ir {

namespace {

/// Attribute equality that tells 0.0 from -0.0 and NaN from NaN by bits, so
/// two constants merge only when they print the same.
bool same_attribute(const Attribute& a, const Attribute& b) {
  const auto* da = std::get_if<double>(&a);
  const auto* db = std::get_if<double>(&b);
  if (da && db) return std::bit_cast<std::uint64_t>(*da) == std::bit_cast<std::uint64_t>(*db);
  return a == b;
}

bool equivalent(const Operation& a, const Operation& b) {
  if (a.code != b.code || a.operands != b.operands || a.results.size() != b.results.size() ||
      a.attributes.size() != b.attributes.size())
    return false;
  for (std::size_t i = 0; i < a.results.size(); ++i)
    if (a.results[i]->type != b.results[i]->type) return false;
  for (const auto& [key, value] : a.attributes) {
    const Attribute* other = b.find_attribute(key);
    if (!other || !same_attribute(value, *other)) return false;
  }
  return true;
}

void mix(std::size_t& h, std::size_t v) { h ^= v + 0x9e3779b97f4a7c15ull + (h << 6) + (h >> 2); }

std::size_t hash_op(const Operation& op) {
  std::size_t h = static_cast<std::size_t>(op.code);
  for (const Value* v : op.operands) mix(h, std::hash<const Value*>{}(v));
  for (const Value* r : op.results) {
    mix(h, static_cast<std::size_t>(r->type.dtype) * 2 + r->type.is_pointer);
    for (auto d : r->type.shape) mix(h, static_cast<std::size_t>(d));
  }
  // Attribute order may differ between equivalent ops: combine keys commutatively.
  std::size_t keys = 0;
  for (const auto& [key, value] : op.attributes) keys += std::hash<std::string>{}(key);
  mix(h, keys);
  return h;
}

class CommonSubexpressions {
 public:
  bool run(Function& fn) {
    run_block(fn.body);
    replacements_.apply(fn.body);
    return changed_;
  }

 private:
  void run_block(Block& block) {
    const std::size_t scope_start = scope_.size();
    for (std::size_t i = 0; i < block.ops.size();) {
      Operation& op = *block.ops[i];
      replacements_.remap_operands(op);
      if (is_pure(op)) {
        const std::size_t h = hash_op(op);
        if (Operation* earlier = find(h, op)) {
          for (std::size_t r = 0; r < op.results.size(); ++r) replacements_.add(op.results[r], earlier->results[r]);
          passes::erase_op(block, i);
          changed_ = true;
          continue;
        }
        table_[h].push_back(&op);
        scope_.push_back(h);
      }
      for (auto& region : op.regions) run_block(*region);
      ++i;
    }
    // Ops of this block do not dominate anything after it.
    while (scope_.size() > scope_start) {
      auto& bucket = table_[scope_.back()];
      bucket.pop_back();
      if (bucket.empty()) table_.erase(scope_.back());
      scope_.pop_back();
    }
  }

  Operation* find(std::size_t h, const Operation& op) const {
    auto it = table_.find(h);
    if (it == table_.end()) return nullptr;
    for (Operation* candidate : it->second)
      if (equivalent(*candidate, op)) return candidate;
    return nullptr;
  }

  std::unordered_map<std::size_t, std::vector<Operation*>> table_;
  std::vector<std::size_t> scope_;  // hashes of the entries added, innermost last
  passes::ValueReplacements replacements_;
  bool changed_ = false;
};

}  // namespace

bool eliminate_common_subexpressions(Function& fn) { return CommonSubexpressions().run(fn); }

}  // namespace kiln::ir
