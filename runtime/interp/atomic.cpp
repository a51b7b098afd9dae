// atomic_rmw and atomic_cas: bounds-checked, and atomic across the host
// threads that run programs in parallel (std::atomic_ref; compare-exchange
// loops where the hardware has no fetch-op, e.g. float add/max/min).
#include <atomic>
#include <bit>
#include <cstdio>

#include "arith.hpp"
#include "bounds.hpp"
#include "fault.hpp"
#include "footprint.hpp"
#include "kiln/ir/attribute_enums.hpp"
#include "program.hpp"

namespace kiln::runtime::interp {

namespace {

enum class Kind { add, max, min, and_, or_, xor_, xchg };

template <class S>
using Bits = std::conditional_t<sizeof(S) == 1, std::uint8_t,
                                std::conditional_t<sizeof(S) == 2, std::uint16_t,
                                                   std::conditional_t<sizeof(S) == 4, std::uint32_t, std::uint64_t>>>;

constexpr std::memory_order failure_order(std::memory_order order) {
  return order == std::memory_order_acquire || order == std::memory_order_acq_rel ? std::memory_order_acquire
                                                                                  : std::memory_order_relaxed;
}

template <class E, Kind K>
typename E::C combine(typename E::C old, typename E::C value) {
  if constexpr (K == Kind::add) return ops::Add::apply<E>(old, value);
  else if constexpr (K == Kind::max) return ops::Maximum::apply<E>(old, value);
  else if constexpr (K == Kind::min) return ops::Minimum::apply<E>(old, value);
  else if constexpr (K == Kind::and_) return ops::And::apply<E>(old, value);
  else if constexpr (K == Kind::or_) return ops::Or::apply<E>(old, value);
  else if constexpr (K == Kind::xor_) return ops::Xor::apply<E>(old, value);
  else return value;
}

/// Atomically `*address = K(*address, value)`; returns the old value.
template <class E, Kind K>
typename E::S atomic_update(std::uint64_t address, typename E::S value, std::memory_order order) {
  using S = typename E::S;
  using B = Bits<S>;
  std::atomic_ref<B> ref(*reinterpret_cast<B*>(address));
  const B bits = std::bit_cast<B>(value);
  if constexpr (K == Kind::xchg) {
    return std::bit_cast<S>(ref.exchange(bits, order));
  } else if constexpr (!E::is_float && !E::is_bool &&
                       (K == Kind::add || K == Kind::and_ || K == Kind::or_ || K == Kind::xor_)) {
    if constexpr (K == Kind::add) return std::bit_cast<S>(ref.fetch_add(bits, order));
    else if constexpr (K == Kind::and_) return std::bit_cast<S>(ref.fetch_and(bits, order));
    else if constexpr (K == Kind::or_) return std::bit_cast<S>(ref.fetch_or(bits, order));
    else return std::bit_cast<S>(ref.fetch_xor(bits, order));
  } else {
    B current = ref.load(std::memory_order_relaxed);
    for (;;) {
      const S old = std::bit_cast<S>(current);
      const S next = E::store(combine<E, K>(E::load(old), E::load(value)));
      if (ref.compare_exchange_weak(current, std::bit_cast<B>(next), order, failure_order(order))) return old;
    }
  }
}

void check_alignment(const Instr& ins, const Exec& ex, const std::uint64_t* p, const std::uint8_t* mask,
                     std::int64_t mask_step, std::int64_t n, std::uint64_t bytes) {
  for (std::int64_t i = 0; i < n; ++i) {
    if ((mask && !mask[i * mask_step]) || p[i] % bytes == 0) continue;
    char hex[32];
    std::snprintf(hex, sizeof hex, "0x%llx", static_cast<unsigned long long>(p[i]));
    fault(ex, std::string(ir::op_info(ins.code).name) + " misaligned" + at_line(ins) + ": element " +
                  std::to_string(i) + " at " + hex + " is not aligned to " + std::to_string(bytes) + " bytes");
  }
}

/// param: [has mask, mask is one scalar, memory order].
template <class E, Kind K>
KILN_ROUTINE void run_rmw(const Instr& ins, Exec& ex) {
  const std::int64_t n = ins.n;
  using S = typename E::S;
  const std::uint64_t* p = ex.at<std::uint64_t>(ins.in[0]);
  const S* value = ex.at<S>(ins.in[1]);
  S* old = ex.at<S>(ins.out[0]);
  const std::uint8_t* mask = ins.param[0] ? ex.at<std::uint8_t>(ins.in[2]) : nullptr;
  const std::int64_t mask_step = ins.param[1] ? 0 : 1;
  const Access access = check_access(ins, ex, p, mask, mask_step, n);
  const std::int64_t active = access.active;
  check_alignment(ins, ex, p, mask, mask_step, n, sizeof(S));
  if (ex.footprints) count_footprint(ins, ex, p, mask, mask_step, n, access, Touch::read_write);
  const auto order = static_cast<std::memory_order>(ins.param[2]);
  for (std::int64_t i = 0; i < n; ++i)
    old[i] = !mask || mask[i * mask_step] ? atomic_update<E, K>(p[i], value[i], order) : S{};
  ex.stats.bytes_read += static_cast<std::uint64_t>(active) * sizeof(S);
  ex.stats.bytes_written += static_cast<std::uint64_t>(active) * sizeof(S);
}

/// param[2]: memory order.
template <class E>
KILN_ROUTINE void run_cas(const Instr& ins, Exec& ex) {
  const std::int64_t n = ins.n;
  using S = typename E::S;
  using B = Bits<S>;
  const std::uint64_t* p = ex.at<std::uint64_t>(ins.in[0]);
  const S* compare = ex.at<S>(ins.in[1]);
  const S* value = ex.at<S>(ins.in[2]);
  S* old = ex.at<S>(ins.out[0]);
  const Access access = check_access(ins, ex, p, nullptr, 0, n);
  check_alignment(ins, ex, p, nullptr, 0, n, sizeof(S));
  if (ex.footprints) count_footprint(ins, ex, p, nullptr, 0, n, access, Touch::read_write);
  const auto order = static_cast<std::memory_order>(ins.param[2]);
  for (std::int64_t i = 0; i < n; ++i) {
    std::atomic_ref<B> ref(*reinterpret_cast<B*>(p[i]));
    B expected = std::bit_cast<B>(compare[i]);
    ref.compare_exchange_strong(expected, std::bit_cast<B>(value[i]), order, failure_order(order));
    old[i] = std::bit_cast<S>(expected);
  }
  ex.stats.bytes_read += static_cast<std::uint64_t>(n) * sizeof(S);
  ex.stats.bytes_written += static_cast<std::uint64_t>(n) * sizeof(S);
}

std::memory_order parse_order(const ir::Operation& op) {
  const std::optional<ir::MemoryOrder> order = ir::attribute_enum<ir::MemoryOrder>(op);
  if (!order) unsupported(op, "unknown memory order '" + op.symbol_attribute("order") + "'");
  switch (*order) {
    case ir::MemoryOrder::relaxed: return std::memory_order_relaxed;
    case ir::MemoryOrder::acquire: return std::memory_order_acquire;
    case ir::MemoryOrder::release: return std::memory_order_release;
    case ir::MemoryOrder::acq_rel: return std::memory_order_acq_rel;
  }
  unsupported(op, "unknown memory order");
}

template <Kind K>
Routine pick_rmw(const ir::Operation& op, const ir::Type& type) {
  return with_dtype(type.dtype, [&](auto e) -> Routine {
    using E = decltype(e);
    constexpr bool bitwise = K == Kind::and_ || K == Kind::or_ || K == Kind::xor_;
    if constexpr ((bitwise && E::is_float) || (K == Kind::add && E::is_bool))
      unsupported(op, "atomic " + std::string(op.symbol_attribute("kind")) + " is not defined for " +
                          std::string(ir::dtype_name(type.dtype)));
    else return &run_rmw<E, K>;
  });
}

}  // namespace

void bind_atomic(const ir::Operation& op, Instr& ins) {
  if (op.operands.empty() || !op.operands[0]->type.is_pointer) unsupported(op, "first operand must be a pointer");
  const ir::Type& ptr = op.operands[0]->type;
  for (std::size_t i = 1; i < op.operands.size(); ++i) {
    const bool is_mask = op.code == ir::OpCode::atomic_rmw && i == 2;
    const ir::Type& t = op.operands[i]->type;
    if (is_mask ? (t.numel() != ins.n && t.numel() != 1) : (t.numel() != ins.n || t.dtype != ptr.dtype || t.is_pointer))
      unsupported(op, "operand " + ir::to_string(t) + " does not match " + ir::to_string(ptr));
  }
  ins.param[2] = static_cast<std::int64_t>(parse_order(op));
  if (op.code == ir::OpCode::atomic_cas) {
    if (op.operands.size() != 3) unsupported(op, "takes a pointer, a compare value and a new value");
    ins.run = with_dtype(ptr.dtype, [](auto e) -> Routine { return &run_cas<decltype(e)>; });
    return;
  }
  if (op.operands.size() < 2 || op.operands.size() > 3) unsupported(op, "takes a pointer, a value and a mask at most");
  ins.param[0] = op.operands.size() == 3;
  if (ins.param[0]) ins.param[1] = op.operands[2]->type.numel() != ins.n;
  const std::optional<ir::AtomicKind> kind = ir::attribute_enum<ir::AtomicKind>(op);
  if (!kind) unsupported(op, "unknown atomic kind '" + op.symbol_attribute("kind") + "'");
  switch (*kind) {
    case ir::AtomicKind::add: ins.run = pick_rmw<Kind::add>(op, ptr); return;
    case ir::AtomicKind::max: ins.run = pick_rmw<Kind::max>(op, ptr); return;
    case ir::AtomicKind::min: ins.run = pick_rmw<Kind::min>(op, ptr); return;
    case ir::AtomicKind::bit_and: ins.run = pick_rmw<Kind::and_>(op, ptr); return;
    case ir::AtomicKind::bit_or: ins.run = pick_rmw<Kind::or_>(op, ptr); return;
    case ir::AtomicKind::bit_xor: ins.run = pick_rmw<Kind::xor_>(op, ptr); return;
    case ir::AtomicKind::xchg: ins.run = pick_rmw<Kind::xchg>(op, ptr); return;
  }
}

}  // namespace kiln::runtime::interp
