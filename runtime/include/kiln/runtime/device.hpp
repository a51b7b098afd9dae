// Devices kernels run on: `cpu` (the tile-IR interpreter), `emu` (the GPU code
// generator's output run on this machine's cores) and `cuda` (an NVIDIA GPU
// through the CUDA driver). docs/architecture.md, "The devices".
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace kiln {

class Device {
 public:
  enum class Kind { cpu, emu, cuda };

  /// The interpreter on this machine's cores (0 threads: all hardware threads).
  static Device cpu(int threads = 0);
  /// The LLVM IR of the GPU code generator, compiled for this machine, each
  /// program's threads run as fibers; programs spread over `threads` host
  /// threads (0: all hardware threads).
  static Device emu(int threads = 0);
  /// The same running the code generated for sm_90a (wgmma for the dots that
  /// take it) instead of sm_80: "emu-sm_90a" (or "emu-sm_90a:N").
  static Device emu_sm90a(int threads = 0);
  /// GPU `ordinal` through the CUDA driver.
  static Device cuda(int ordinal = 0);
  /// "cpu", "emu", "emu-sm_90a" (or "cpu:N", "emu:N", "emu-sm_90a:N" for N
  /// host threads), "cuda" or "cuda:N" (GPU N). Unknown or unavailable devices throw
  /// std::invalid_argument naming the device and what is available.
  static Device from_name(std::string_view name);
  /// $KILN_DEVICE if set, else `cuda` when a driver and a GPU are present,
  /// else `cpu`.
  static Device default_device();
  /// Every device name that can be used here.
  static std::vector<std::string> available();

  Kind kind() const { return kind_; }
  std::string name() const;
  /// Host threads of `cpu` and `emu` (0: all hardware threads); 0 for `cuda`.
  int threads() const { return kind_ == Kind::cuda ? 0 : index_; }
  /// The GPU's ordinal for `cuda`; 0 otherwise.
  int ordinal() const { return kind_ == Kind::cuda ? index_ : 0; }
  /// The architecture whose generated code `emu` runs: "sm_80" or "sm_90a";
  /// empty for cpu and cuda.
  std::string emulated_arch() const;

  friend bool operator==(const Device&, const Device&) = default;

 private:
  Device(Kind kind, int index, bool sm90a = false) : kind_(kind), index_(index), sm90a_(sm90a) {}
  Kind kind_;
  int index_;   // host threads (cpu, emu) or GPU ordinal (cuda)
  bool sm90a_;  // emu: runs sm_90a code
};

}  // namespace kiln
