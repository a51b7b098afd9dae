// Rings' live intervals and their first-fit placement in shared memory
// (ring_lifetimes.hpp says when a ring is live).
#include "kiln/lowering/ring_lifetimes.hpp"

#include <algorithm>
#include <limits>
#include <optional>
#include <unordered_set>
#include <vector>

namespace kiln::lowering {

namespace {

/// A ring's live interval, in pre-order positions of the kernel's ops
/// (both ends included), and its size.
struct Lifetime {
  const ir::Value* ring;
  std::size_t first;
  std::size_t last;
  std::uint64_t bytes;
};

/// Whether `op`, or an op nested in its regions, reads one of `values`.
bool touches(const ir::Operation& op, const std::unordered_set<const ir::Value*>& values) {
  bool found = false;
  auto visit = [&](const ir::Operation& o) {
    for (const ir::Value* operand : o.operands) found |= values.contains(operand);
  };
  visit(op);
  for (const auto& region : op.regions) ir::walk(*region, visit);
  return found;
}

/// The values through which the ring's memory is reached: the ring itself
/// (copies and local_loads take it) and its local_loads' results (a dot may
/// read its fragments straight from the slot such a result names).
std::unordered_set<const ir::Value*> accesses_of(const ir::Function& fn, const ir::Value& ring) {
  std::unordered_set<const ir::Value*> values{&ring};
  ir::walk(fn.body, [&](ir::Operation& op) {
    if (op.code == ir::OpCode::local_load && op.operands[0] == &ring) values.insert(op.result());
  });
  return values;
}

/// The position in its block of the barrier that ends the ring's life: the
/// first barrier after an `async_wait {pending = 0}` after the last op of the
/// block that reaches the ring; none when there is no such pair.
std::optional<std::size_t> release_point(const ir::Block& block, std::size_t alloc,
                                         const std::unordered_set<const ir::Value*>& accesses) {
  std::size_t last_use = alloc;
  for (std::size_t i = alloc + 1; i < block.ops.size(); ++i)
    if (touches(*block.ops[i], accesses)) last_use = i;
  bool drained = false;
  for (std::size_t i = last_use + 1; i < block.ops.size(); ++i) {
    const ir::Operation& op = *block.ops[i];
    if (op.code == ir::OpCode::async_wait && op.int_attribute("pending") == 0) drained = true;
    if (op.code == ir::OpCode::barrier && drained) return i;
  }
  return std::nullopt;
}

std::vector<Lifetime> lifetimes(const ir::Function& fn,
                                const std::function<std::uint64_t(const ir::Value&)>& bytes_of) {
  std::unordered_map<const ir::Operation*, std::size_t> preorder;
  std::vector<const ir::Operation*> allocs;
  ir::walk(fn.body, [&](ir::Operation& op) {
    preorder.emplace(&op, preorder.size());
    if (op.code == ir::OpCode::local_alloc) allocs.push_back(&op);
  });
  std::vector<Lifetime> out;
  for (const ir::Operation* alloc : allocs) {
    const ir::Value& ring = *alloc->result();
    const std::optional<std::size_t> release =
        release_point(*alloc->parent, ir::position_in_block(*alloc), accesses_of(fn, ring));
    out.push_back({&ring, preorder.at(alloc),
                   release ? preorder.at(alloc->parent->ops[*release].get()) : std::numeric_limits<std::size_t>::max(),
                   bytes_of(ring)});
  }
  return out;
}

std::uint64_t align_up(std::uint64_t offset, std::uint64_t alignment) {
  return (offset + alignment - 1) / alignment * alignment;
}

}  // namespace

RingPlacement place_rings(const ir::Function& fn, const std::function<std::uint64_t(const ir::Value&)>& bytes_of,
                          std::uint64_t alignment) {
  RingPlacement placement;
  std::vector<Lifetime> placed;
  for (const Lifetime& ring : lifetimes(fn, bytes_of)) {
    std::vector<std::pair<std::uint64_t, std::uint64_t>> taken;  // [begin, end) of rings live with this one
    for (const Lifetime& other : placed)
      if (other.first <= ring.last && ring.first <= other.last) {
        const std::uint64_t begin = placement.offsets.at(other.ring);
        taken.emplace_back(begin, begin + other.bytes);
      }
    std::sort(taken.begin(), taken.end());
    std::uint64_t offset = 0;
    for (const auto& [begin, end] : taken) {
      if (offset + ring.bytes <= begin) break;
      offset = std::max(offset, align_up(end, alignment));
    }
    placement.offsets.emplace(ring.ring, offset);
    placement.bytes = std::max(placement.bytes, offset + ring.bytes);
    placed.push_back(ring);
  }
  return placement;
}

}  // namespace kiln::lowering
