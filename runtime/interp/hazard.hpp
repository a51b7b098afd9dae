// The in-place hazard check (OPS.md, "Memory order inside a program"): the
// addresses one program has loaded and stored since it began or since its
// last barrier, and which element of which op touched each, so that an
// element reading what another element wrote, or writing what another
// element read, is reported instead of giving the answer no GPU gives.
#pragma once

#include <cstdint>
#include <unordered_map>

namespace kiln::runtime::interp {

struct Instr;
struct Exec;

class HazardLog {
 public:
  /// Forgets every access: a new program, or a barrier.
  void clear() {
    if (!accesses_.empty()) accesses_.clear();
  }
  /// Records the active elements of a load (`mask` null: all of them);
  /// throws KernelError when one reads what another element stored.
  void loaded(const Instr& ins, const Exec& ex, const std::uint64_t* addresses, const std::uint8_t* mask,
              std::int64_t n);
  /// The same for a store, which must not write what another element read.
  void stored(const Instr& ins, const Exec& ex, const std::uint64_t* addresses, const std::uint8_t* mask,
              std::int64_t n);

 private:
  /// One element of one op.
  struct Toucher {
    const Instr* by = nullptr;
    std::int64_t element = 0;
  };
  /// An address's last writer, or (when `written` is false) up to two of the
  /// distinct elements that read it: two readers mean any writer differs
  /// from one of them.
  struct Touches {
    Toucher first, second;
    bool written = false;
  };
  std::unordered_map<std::uint64_t, Touches> accesses_;
};

}  // namespace kiln::runtime::interp
