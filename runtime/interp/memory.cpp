// addptr, load and store: address arithmetic and bounds-checked global
// memory access, hazard-checked where a buffer is both loaded and stored and
// counted in the launch's footprints when it counts them; masked-off lanes
// are never touched.

#include <bit>
#include <cstring>

#include "bounds.hpp"
#include "element.hpp"
#include "fault.hpp"
#include "footprint.hpp"
#include "program.hpp"
#include "shared_buffer.hpp"

namespace kiln::runtime::interp {

namespace {

/// param[0]: log2 of the pointee's size in bytes.
template <class E>
KILN_ROUTINE void run_addptr(const Instr& ins, Exec& ex) {
  const std::int64_t n = ins.n;
  const std::uint64_t* p = ex.at<std::uint64_t>(ins.in[0]);
  const typename E::S* offset = ex.at<typename E::S>(ins.in[1]);
  std::uint64_t* out = ex.at<std::uint64_t>(ins.out[0]);
  const auto shift = static_cast<int>(ins.param[0]);
  for (std::int64_t i = 0; i < n; ++i) out[i] = p[i] + (static_cast<std::uint64_t>(offset[i]) << shift);
}

/// The same with one base address for every element.
template <class E>
KILN_ROUTINE void run_addptr_scalar_base(const Instr& ins, Exec& ex) {
  const std::int64_t n = ins.n;
  const std::uint64_t p = *ex.at<std::uint64_t>(ins.in[0]);
  const typename E::S* offset = ex.at<typename E::S>(ins.in[1]);
  std::uint64_t* out = ex.at<std::uint64_t>(ins.out[0]);
  const auto shift = static_cast<int>(ins.param[0]);
  for (std::int64_t i = 0; i < n; ++i) out[i] = p + (static_cast<std::uint64_t>(offset[i]) << shift);
}

template <class U>
U read(std::uint64_t address) {
  U v;
  std::memcpy(&v, reinterpret_cast<const void*>(address), sizeof(U));
  return v;
}

template <class U>
void write(std::uint64_t address, U v) {
  std::memcpy(reinterpret_cast<void*>(address), &v, sizeof(U));
}

/// param: [has mask, mask is one scalar, has other, other is one scalar];
/// `Bool` loads i1, whose memory bytes are normalised to 0/1. A contiguous
/// access reads its active span as one block (every address in it is in
/// bounds, so reading the masked-off lanes inside it is harmless); lanes
/// outside the mask take `other`, or 0.
template <class U, bool Bool>
void load_values(const Instr& ins, Exec& ex, U* out) {
  const std::int64_t n = ins.n;
  const std::uint64_t* p = ex.at<std::uint64_t>(ins.in[0]);
  const std::uint8_t* mask = ins.param[0] ? ex.at<std::uint8_t>(ins.in[1]) : nullptr;
  const U* other = ins.param[2] ? ex.at<U>(ins.in[2]) : nullptr;
  const bool other_tile = other && !ins.param[3];
  const U fill = other ? other[0] : U{0};
  if (mask && ins.param[1]) {  // one mask for the whole tile
    if (*mask) {
      mask = nullptr;
    } else {
      for (std::int64_t i = 0; i < n; ++i) out[i] = other_tile ? other[i] : fill;
      return;
    }
  }
  const Access access = check_access(ins, ex, p, mask, 1, n);
  if (ins.check_hazards) ex.hazards.loaded(ins, ex, p, mask, n);
  if (ex.footprints) count_footprint(ins, ex, p, mask, 1, n, access, Touch::read);
  if (!mask) {
    if (access.contiguous) std::memcpy(out, reinterpret_cast<const void*>(p[0]), n * sizeof(U));
    else
      for (std::int64_t i = 0; i < n; ++i) out[i] = read<U>(p[i]);
  } else if (access.contiguous && access.active > 0) {
    const U* src = reinterpret_cast<const U*>(p[0]);
    const std::int64_t first = access.first, last = access.last;
    if (other_tile) {
      for (std::int64_t i = 0; i < first; ++i) out[i] = other[i];
      for (std::int64_t i = first; i <= last; ++i) {
        const U v = src[i];
        out[i] = mask[i] ? v : other[i];
      }
      for (std::int64_t i = last + 1; i < n; ++i) out[i] = other[i];
    } else {
      for (std::int64_t i = 0; i < first; ++i) out[i] = fill;
      for (std::int64_t i = first; i <= last; ++i) {
        const U v = src[i];
        out[i] = mask[i] ? v : fill;
      }
      for (std::int64_t i = last + 1; i < n; ++i) out[i] = fill;
    }
  } else {
    for (std::int64_t i = 0; i < n; ++i) out[i] = mask[i] ? read<U>(p[i]) : other_tile ? other[i] : fill;
  }
  if constexpr (Bool)
    for (std::int64_t i = 0; i < n; ++i) out[i] = out[i] != 0;
  ex.stats.bytes_read += static_cast<std::uint64_t>(access.active) * sizeof(U);
}

template <class U, bool Bool>
KILN_ROUTINE void run_load(const Instr& ins, Exec& ex) {
  load_values<U, Bool>(ins, ex, ex.at<U>(ins.out[0]));
}

/// in: pointers, mask (as bound for a load), ring, slot. Reads global memory
/// now into the slot's copy in flight, which lands at its wait (ring_state.hpp).
template <class U, bool Bool>
KILN_ROUTINE void run_async_copy(const Instr& ins, Exec& ex) {
  const std::size_t last = ins.in.size() - 1;
  const RingView ring = ring_view(ins.in[last - 1], ex);
  RingSlot& slot = checked_slot(ring, *ex.at<std::int32_t>(ins.in[last]), ins, ex);
  if (slot.phase == RingSlot::Phase::in_flight)
    fault(ex, "async_copy" + at_line(ins) + " in " + program_string(ex) + " copies into slot " +
                  std::to_string(ring.index_of(slot)) + " while the copy of async_copy" + at_line(*slot.copy) +
                  " into it is in flight");
  if (slot.read_since_barrier)
    fault(ex, "async_copy" + at_line(ins) + " in " + program_string(ex) + " overwrites slot " +
                  std::to_string(ring.index_of(slot)) + ", which local_load" + at_line(*slot.reader) +
                  " read with no barrier between: on a GPU other threads may still be reading it");
  load_values<U, Bool>(ins, ex, reinterpret_cast<U*>(ring.in_flight(ring.index_of(slot))));
  slot.phase = RingSlot::Phase::in_flight;
  slot.group = ex.rings.open_group();
  slot.copy = &ins;
}

/// param: [has mask, mask is one scalar]. Masked-off lanes are never written:
/// another program may own them.
template <class U>
KILN_ROUTINE void run_store(const Instr& ins, Exec& ex) {
  const std::uint64_t* p = ex.at<std::uint64_t>(ins.in[0]);
  const U* value = ex.at<U>(ins.in[1]);
  const std::int64_t n = ins.in[0].numel();
  const std::uint8_t* mask = ins.param[0] ? ex.at<std::uint8_t>(ins.in[2]) : nullptr;
  if (mask && ins.param[1]) {  // one mask for the whole tile
    if (!*mask) return;
    mask = nullptr;
  }
  const Access access = check_access(ins, ex, p, mask, 1, n);
  if (ins.check_hazards) ex.hazards.stored(ins, ex, p, mask, n);
  if (ex.footprints) count_footprint(ins, ex, p, mask, 1, n, access, Touch::write);
  if (access.contiguous && access.active == n) {
    std::memcpy(reinterpret_cast<void*>(p[0]), value, n * sizeof(U));
  } else if (access.contiguous) {
    U* dst = reinterpret_cast<U*>(p[0]);
    for (std::int64_t i = access.first; i <= access.last; ++i)
      if (mask[i]) dst[i] = value[i];
  } else {
    for (std::int64_t i = 0; i < n; ++i)
      if (!mask || mask[i]) write<U>(p[i], value[i]);
  }
  ex.stats.bytes_written += static_cast<std::uint64_t>(access.active) * sizeof(U);
}

/// Checks an optional operand that is either one scalar or one per element;
/// returns whether it is a scalar.
bool scalar_or_matching(const ir::Operation& op, std::size_t index, std::int64_t n, const char* what) {
  const std::int64_t m = op.operands[index]->type.numel();
  if (m != n && m != 1)
    unsupported(op, std::string(what) + " " + ir::to_string(op.operands[index]->type) + " does not match " +
                        ir::to_string(op.operands[0]->type));
  return m != n;
}

void require_pointer(const ir::Operation& op) {
  if (op.operands.empty() || !op.operands[0]->type.is_pointer) unsupported(op, "first operand must be a pointer");
}

}  // namespace

void bind_async_copy(const ir::Operation& op, Instr& ins) {
  const ir::Type& pointers = op.operands[2]->type;
  std::vector<SlotRef> in = {ins.in[2]};
  if (op.operands.size() > 3) in.push_back(ins.in[3]);
  in.push_back(ins.in[0]);
  in.push_back(ins.in[1]);
  ins.in = std::move(in);
  ins.n = pointers.numel();
  ins.param[0] = op.operands.size() > 3;
  ins.run = with_width(ir::dtype_bytes(pointers.dtype), [&](auto u) -> Routine {
    using U = decltype(u);
    return pointers.dtype == ir::DType::i1 ? &run_async_copy<U, true> : &run_async_copy<U, false>;
  });
}

void bind_memory(const ir::Operation& op, Instr& ins) {
  require_pointer(op);
  const ir::DType pointee = op.operands[0]->type.dtype;
  const int width = ir::dtype_bytes(pointee);
  const std::int64_t n = op.operands[0]->type.numel();
  switch (op.code) {
    case ir::OpCode::addptr: {
      const ir::Type& offset = op.operands.at(1)->type;
      if (offset.is_pointer || !ir::is_integer(offset.dtype) || offset.numel() != n)
        unsupported(op, "offset " + ir::to_string(offset) + " is not an integer tile matching " +
                            ir::to_string(op.operands[0]->type));
      ins.param[0] = std::countr_zero(static_cast<unsigned>(width));
      ins.run = with_dtype(offset.dtype, [&](auto e) -> Routine {
        using E = decltype(e);
        if constexpr (E::is_float) unsupported(op, "offset must be an integer");
        else return ins.scalar_base ? &run_addptr_scalar_base<E> : &run_addptr<E>;
      });
      return;
    }
    case ir::OpCode::load: {
      if (op.operands.size() > 3) unsupported(op, "takes a pointer, a mask and an other value at most");
      ins.param[0] = op.operands.size() >= 2;
      if (ins.param[0]) ins.param[1] = scalar_or_matching(op, 1, n, "mask");
      ins.param[2] = op.operands.size() == 3;
      if (ins.param[2]) ins.param[3] = scalar_or_matching(op, 2, n, "other");
      const bool is_bool = pointee == ir::DType::i1;
      ins.run = with_width(width, [&](auto u) -> Routine {
        using U = decltype(u);
        return is_bool ? &run_load<U, true> : &run_load<U, false>;
      });
      return;
    }
    case ir::OpCode::store: {
      if (op.operands.size() < 2 || op.operands.size() > 3)
        unsupported(op, "takes a pointer, a value and a mask at most");
      if (op.operands[1]->type.numel() != n)
        unsupported(op, "value " + ir::to_string(op.operands[1]->type) + " does not match " +
                            ir::to_string(op.operands[0]->type));
      ins.param[0] = op.operands.size() == 3;
      if (ins.param[0]) ins.param[1] = scalar_or_matching(op, 2, n, "mask");
      ins.run = with_width(width, [](auto u) -> Routine { return &run_store<decltype(u)>; });
      return;
    }
    default: unsupported(op, "not a memory op");
  }
}

}  // namespace kiln::runtime::interp
