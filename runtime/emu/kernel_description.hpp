// What the emu device knows of a compiled kernel besides its machine code,
// and the state of one launch: shared by the CTA scheduler, the hooks and the
// launcher. No LLVM here.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "kiln/ir/ir.hpp"
#include "kiln/runtime/interpreter.hpp"

namespace kiln::runtime {
class FootprintCounter;
}

namespace kiln::runtime::emu {

/// One memory access the retargeting guards with a check: a bounds check of
/// global memory, or a bounds and race check of shared memory.
struct AccessSite {
  enum class Kind { load, store, atomic };
  Kind kind = Kind::load;
  /// What it is, for messages: for global memory the tile-IR op (load, store,
  /// atomic_rmw, atomic_cas); for shared memory the instruction (shared load,
  /// shared store, ldmatrix, cp.async).
  std::string op_name;
  /// The op's source line ("softmax.hpp:41") when the code generator recorded
  /// it on the access (metadata !kiln.place, a string); empty otherwise.
  std::string place;
  /// The lanes of each warp whose address the access uses: 32, or the 8 per
  /// matrix of an ldmatrix (the other lanes' addresses are ignored).
  int active_lanes = 32;
  /// Global memory only, from the op's `!kiln.access` when the code generator
  /// recorded it: the element dtype messages count in, and the pointer
  /// argument the addresses derive from (the access must lie inside it), or
  /// -1 for mixed provenance (inside any pointer argument or live allocation).
  std::optional<ir::DType> dtype = std::nullopt;
  int source = -1;
};

/// A kernel as the emu runs it.
struct KernelDescription {
  /// The IR kernel's name: messages say "kernel <name>: ..." as the cpu device's do.
  std::string name;
  /// The IR kernel's argument types and names (the ranges of pointer arguments
  /// name the buffers in messages; a range without a name uses these).
  std::vector<ir::Type> argument_types;
  std::vector<std::string> argument_names;
  /// Indexed by the site operand of kiln_emu_check_global_access,
  /// kiln_emu_check_shared_access and kiln_emu_cp_async.
  std::vector<AccessSite> access_sites;
  /// The source line of each barrier (empty when not recorded), indexed by
  /// the site operand of the barrier hooks.
  std::vector<std::string> barrier_places;
  /// Bytes of shared memory per program (CTA), laid out by the retargeting:
  /// the dynamic array (the code generator's kiln_shared, sized by the
  /// module's !kiln.shared_bytes) at offset 0, then any sized addrspace(3) global.
  std::size_t shared_bytes = 0;
  /// Threads per program: num_warps * 32.
  int threads_per_program = 0;
};

/// One launch as the hooks see it.
struct LaunchContext {
  const KernelDescription* kernel = nullptr;
  Grid grid{1, 1, 1};
  std::span<const KernelArgument> arguments;
  FootprintCounter* footprints = nullptr;  // when the launch counts them (FootprintCounting)
};

/// One thread's run of the kernel: the JIT-compiled entry taking the launch
/// arguments as 64-bit words (KernelArgument::bits).
using KernelEntry = void (*)(const std::uint64_t* arguments);

}  // namespace kiln::runtime::emu
