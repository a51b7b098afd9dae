// The machine the `emu` device compiles the GPU code generator's output for,
// and the floating-point mode emulated code runs in. Fixed, never the host's
// own CPU: results are the GPU's bits on every x86-64 host. No LLVM here.
#pragma once

#include <string>

namespace kiln::runtime {

/// An x86-64 machine for LLVM's JIT: a CPU name and a feature list
/// ("+sse2,-f16c", LLVM's spelling; empty for the CPU's own features).
struct EmuMachine {
  std::string cpu;
  std::string features;
};

/// The emu's fixed target: the baseline `x86-64` (SSE2), with every feature
/// whose instructions differ from the GPU's turned off explicitly (F16C and
/// AVX-512 FP16 conversions, AVX-512 BF16 and AVX-NE-CONVERT, which flush
/// bf16 subnormals, FMA). Every x86-64 CPU runs it.
EmuMachine emu_machine();

/// This host's own CPU and every feature it has, as LLVM detects them: what
/// the emu would compile for if it followed the host (tests compare the two).
EmuMachine host_machine();

/// The floating-point mode every host thread running emulated code sets, as
/// an MXCSR value: every exception masked, round to nearest even, no
/// flush-to-zero, no denormals-are-zero (0x1f80); the x87 control word is
/// set to its default (0x037f) as well, for host library calls.
inline constexpr unsigned kEmuMxcsr = 0x1f80;
inline constexpr unsigned kEmuX87ControlWord = 0x037f;

/// One line for `kiln info`: the emu's target and floating-point mode.
std::string describe_emu_machine();

}  // namespace kiln::runtime
