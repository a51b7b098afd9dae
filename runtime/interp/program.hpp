// The interpreter's prepared form of a kernel: instructions bound to typed
// routines over frame slots, and the per-thread state they run against.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "hazard.hpp"
#include "kiln/ir/ir.hpp"
#include "kiln/ir/provenance.hpp"
#include "kiln/runtime/host_reference.hpp"
#include "kiln/runtime/interpreter.hpp"
#include "ring_state.hpp"

namespace kiln::runtime {
class FootprintCounter;
}

namespace kiln::runtime::interp {

/// Where a value lives in a frame: a byte offset, the tile's total bytes and
/// the bytes of one element.
struct SlotRef {
  std::size_t offset = 0;
  std::size_t bytes = 0;
  int element_bytes = 0;
  std::int64_t numel() const { return element_bytes ? static_cast<std::int64_t>(bytes) / element_bytes : 0; }
};

struct Instr;
struct Exec;
using Routine = void (*)(const Instr&, Exec&);

/// Marks every routine. Routines are only called through Routine pointers,
/// so nothing is lost by keeping them out of interprocedural optimisation,
/// and GCC 12's identical code folding miscompiles the wrappers it makes for
/// instantiations with equal bodies (u64 and pointer compares, i16 and u16
/// umulhi): the wrapper's call is deleted and the routine does nothing.
#if defined(__GNUC__) && !defined(__clang__)
#define KILN_ROUTINE [[gnu::noipa]]
#else
#define KILN_ROUTINE
#endif

/// A region: its instructions, the slots of its block arguments and the
/// slots its yield reads.
struct Body {
  std::vector<Instr> code;
  std::vector<SlotRef> args;
  std::vector<SlotRef> yields;
};

/// Provenance of a pointer value: the kernel argument its addresses derive
/// from, or kMixedSource when that is not one argument.
inline constexpr int kMixedSource = ir::Provenance::kMixed;

/// One op, bound at plan time to the routine for its element types.
struct Instr {
  Routine run = nullptr;
  ir::OpCode code{};
  std::string loc;  // "softmax.hpp:41", or empty
  std::vector<SlotRef> in, out;
  std::int64_t n = 0;                      // elements of the first result
  std::array<std::int64_t, 4> param{};     // op-specific integers (axis sizes, flags)
  std::vector<std::int64_t> dims;          // op-specific shape data
  std::uint64_t bits = 0;                  // a constant's element bits
  int source = kMixedSource;               // memory ops: the pointer's provenance
  bool scalar_base = false;                // addptr: in[0] is the scalar its pointer operand splats
  ir::DType dtype{};                       // memory ops: the pointee
  bool check_hazards = false;              // load, store: the buffer may be both loaded and stored (hazard.hpp)
  std::vector<std::int64_t> access_shape;  // load, store: the pointer tile's shape
  std::string text;                        // print prefix, assert message
  std::vector<ir::Type> types;             // print: the operand types
  std::vector<Body> regions;
  SlotRef scratch;                         // dot: conversion buffers
  std::optional<HostReference> reference;  // inline_asm: what runs in place of the asm
};

/// A kernel ready to run.
struct Program {
  std::string name;
  std::vector<ir::Type> arg_types;
  std::vector<std::string> arg_names;  // ir::parameter_label of each argument
  std::vector<SlotRef> arg_slots;
  std::vector<Instr> init;  // program-invariant ops (constants, splats of arguments…), run once per frame
  Body body;
  std::size_t frame_bytes = 0;
};

/// Everything one worker thread needs to run programs.
struct Exec {
  std::byte* frame = nullptr;
  const Program* program = nullptr;
  std::array<int, 3> pid{};
  Grid grid{};
  std::span<const KernelArgument> args;
  LaunchStats stats;
  HazardLog hazards;                       // the current program's accesses since its last barrier
  RingState rings;                         // the current program's shared rings and copy groups
  FootprintCounter* footprints = nullptr;  // the launch's, when it counts them (FootprintCounting)

  template <class T>
  T* at(const SlotRef& s) const {
    return reinterpret_cast<T*>(frame + s.offset);
  }
};

inline void run_code(const std::vector<Instr>& code, Exec& ex) {
  for (const Instr& ins : code) ins.run(ins, ex);
}

/// Prepares a kernel: slots, provenance, bound instructions.
Program build_program(const ir::Function& fn);

// Binders: set `ins.run` (and op-specific fields) for one op whose operand and
// result slots are already in `ins`. They throw std::invalid_argument for an
// op the interpreter cannot run with these types.
void bind_shape(const ir::Operation& op, Instr& ins);
void bind_elementwise(const ir::Operation& op, Instr& ins);
void bind_cast(const ir::Operation& op, Instr& ins);
void bind_memory(const ir::Operation& op, Instr& ins);
void bind_atomic(const ir::Operation& op, Instr& ins);
void bind_dot(const ir::Operation& op, Instr& ins);
void bind_reduce(const ir::Operation& op, Instr& ins);
void bind_control(const ir::Operation& op, Instr& ins);
void bind_debug(const ir::Operation& op, Instr& ins);
void bind_hint(const ir::Operation& op, Instr& ins);
void bind_shared_buffer(const ir::Operation& op, Instr& ins);
void bind_inline_asm(const ir::Operation& op, Instr& ins);
/// Bytes of scratch the dot routine needs for `op`.
std::size_t dot_scratch_bytes(const ir::Operation& op);

/// Writes one constant of `type` holding `value` (an integer or float
/// attribute) as storage bits.
std::uint64_t constant_bits(const ir::Type& type, const ir::Attribute& value);

}  // namespace kiln::runtime::interp
