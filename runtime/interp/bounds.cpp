// Bounds checks and their messages: "kernel softmax: load out of bounds at
// softmax.hpp:41: element offset 1000 is past the end of 'x' (1000 elements of f32)",
// or "... of the buffer at 0x7f3a… (30 elements of f16)" for a pointer loaded
// from memory into a live allocation that is no argument.

#include "bounds.hpp"

#include <bit>
#include <cstdio>
#include <limits>
#include <optional>

#include "../src/live_allocations.hpp"
#include "fault.hpp"

namespace kiln::runtime::interp {

namespace {

/// The launcher's name for the range, quoted, else the kernel's label of the
/// parameter ('x', or parameter 1 (Ptr<f32>)).
std::string range_name(const Exec& ex, int arg) {
  const std::string& name = ex.args[arg].range.name;
  return name.empty() ? ex.program->arg_names[arg] : "'" + name + "'";
}

bool inside(const MemoryRange& r, std::uint64_t address, std::uint64_t bytes) {
  return address >= r.begin && r.end >= r.begin && r.end - r.begin >= bytes &&
         address - r.begin <= r.end - r.begin - bytes;
}

/// How far an access lies outside `r`, in bytes.
std::uint64_t distance(const MemoryRange& r, std::uint64_t address, std::uint64_t bytes) {
  if (address < r.begin) return r.begin - address;
  return address + bytes > r.end ? address + bytes - r.end : 0;
}

/// "0x7f3a…".
std::string hex(std::uint64_t address) {
  char text[32];
  std::snprintf(text, sizeof text, "0x%llx", static_cast<unsigned long long>(address));
  return text;
}

/// What messages call the memory `r`: "'x'" for pointer argument `arg`, "the
/// buffer at 0x…" for a live allocation outside the arguments (arg < 0).
std::string memory_name(const Exec& ex, int arg, const MemoryRange& r) {
  return arg >= 0 ? range_name(ex, arg) : "the buffer at " + hex(r.begin);
}

[[noreturn]] void out_of_bounds(const Instr& ins, const Exec& ex, int arg, const MemoryRange* r,
                                std::uint64_t address) {
  const std::string what = std::string(ir::op_info(ins.code).name) + " out of bounds" + at_line(ins) + ": ";
  const auto bytes = static_cast<std::int64_t>(ir::dtype_bytes(ins.dtype));
  const std::string type(ir::dtype_name(ins.dtype));
  if (!r) fault(ex, what + "address " + hex(address) + " of a " + type + " element is inside no live buffer");
  const auto diff = static_cast<std::int64_t>(address - r->begin);
  const std::int64_t offset = diff >= 0 ? diff / bytes : -((-diff + bytes - 1) / bytes);
  const std::int64_t count = static_cast<std::int64_t>(r->end - r->begin) / bytes;
  fault(ex, what + "element offset " + std::to_string(offset) +
                (offset < 0 ? " is before the start of " : " is past the end of ") + memory_name(ex, arg, *r) + " (" +
                std::to_string(count) + " elements of " + type + ")");
}

/// Mixed provenance (a select of pointers, a pointer loaded from memory or
/// cast from an integer): the start of the pointer argument or, failing
/// that, the live allocation of the device holding the element; nullopt when
/// none does.
std::optional<std::uintptr_t> memory_holding(const Exec& ex, std::uint64_t address, std::uint64_t bytes) {
  if (const int a = argument_holding(ex, address, bytes); a >= 0) return ex.args[a].range.begin;
  if (const auto live = live_allocations::find(address, bytes); live && live->holds) return live->range.begin;
  return std::nullopt;
}

/// The same as a check: an element in no memory is an error naming the
/// nearest pointer argument or live allocation.
void check_any(const Instr& ins, const Exec& ex, std::uint64_t address, std::uint64_t bytes) {
  if (memory_holding(ex, address, bytes)) return;
  const auto& types = ex.program->arg_types;
  int nearest = -1;
  std::uint64_t best = std::numeric_limits<std::uint64_t>::max();
  for (std::size_t a = 0; a < types.size(); ++a) {
    if (!types[a].is_pointer) continue;
    if (const std::uint64_t d = distance(ex.args[a].range, address, bytes); d < best) {
      best = d;
      nearest = static_cast<int>(a);
    }
  }
  const std::optional<live_allocations::Lookup> live = live_allocations::find(address, bytes);
  if (live && distance(live->range, address, bytes) < best) out_of_bounds(ins, ex, -1, &live->range, address);
  out_of_bounds(ins, ex, nearest, nearest >= 0 ? &ex.args[nearest].range : nullptr, address);
}

/// Checks every active element on its own.
void check_each(const Instr& ins, const Exec& ex, const std::uint64_t* addresses, const std::uint8_t* mask,
                std::int64_t mask_step, std::int64_t n, std::uint64_t bytes) {
  if (ins.source == kMixedSource) {
    for (std::int64_t i = 0; i < n; ++i)
      if (!mask || mask[i * mask_step]) check_any(ins, ex, addresses[i], bytes);
    return;
  }
  const MemoryRange& r = ex.args[ins.source].range;
  for (std::int64_t i = 0; i < n; ++i)
    if ((!mask || mask[i * mask_step]) && !inside(r, addresses[i], bytes))
      out_of_bounds(ins, ex, ins.source, &r, addresses[i]);
}

}  // namespace

int argument_holding(const Exec& ex, std::uint64_t address, std::uint64_t bytes) {
  const auto& types = ex.program->arg_types;
  for (std::size_t a = 0; a < types.size(); ++a)
    if (types[a].is_pointer && inside(ex.args[a].range, address, bytes)) return static_cast<int>(a);
  return -1;
}

std::string describe_address(const Exec& ex, std::uint64_t address, ir::DType dtype) {
  const auto bytes = static_cast<std::uint64_t>(ir::dtype_bytes(dtype));
  if (const int a = argument_holding(ex, address, bytes); a >= 0)
    return "element " + std::to_string((address - ex.args[a].range.begin) / bytes) + " of " + range_name(ex, a);
  if (const auto live = live_allocations::find(address, bytes); live && live->holds)
    return "element " + std::to_string((address - live->range.begin) / bytes) + " of the buffer at " +
           hex(live->range.begin);
  return "address " + hex(address) + " (in no live buffer)";
}

Access check_access(const Instr& ins, const Exec& ex, const std::uint64_t* addresses, const std::uint8_t* mask,
                    std::int64_t mask_step, std::int64_t n) {
  const auto bytes = static_cast<std::uint64_t>(ir::dtype_bytes(ins.dtype));
  Access access;
  if (n == 0) return access;
  // One run of consecutive elements is checked at its two active ends.
  const int shift = std::countr_zero(bytes);
  const std::uint64_t start = addresses[0];
  std::uint64_t gaps = 0;
  for (std::int64_t i = 0; i < n; ++i) gaps |= addresses[i] ^ (start + (static_cast<std::uint64_t>(i) << shift));
  access.contiguous = gaps == 0;
  if (!mask) {
    access = {n, 0, n - 1, access.contiguous};
  } else {
    std::int64_t active = 0;
    if (mask_step == 1)
      for (std::int64_t i = 0; i < n; ++i) active += mask[i] != 0;
    else active = mask[0] ? n : 0;
    access.active = active;
    if (active == 0) return access;
    while (!mask[access.first * mask_step]) ++access.first;
    access.last = n - 1;
    while (!mask[access.last * mask_step]) --access.last;
  }
  if (access.contiguous) {
    const std::uint64_t lo = addresses[access.first], hi = addresses[access.last];
    if (ins.source != kMixedSource) {
      const MemoryRange& r = ex.args[ins.source].range;
      if (inside(r, lo, bytes) && inside(r, hi, bytes)) return access;
    } else if (const auto memory = memory_holding(ex, lo, bytes); memory && memory == memory_holding(ex, hi, bytes)) {
      return access;
    }
  }
  check_each(ins, ex, addresses, mask, mask_step, n, bytes);
  return access;
}

}  // namespace kiln::runtime::interp
