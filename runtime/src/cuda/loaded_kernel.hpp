// A kernel image (PTX or cubin) loaded into one GPU's context and launched
// there: what the cuda device runs, whether the image was compiled now or
// ahead of time. No LLVM here.
#pragma once

#include <cstddef>
#include <optional>
#include <string>

#include "kiln/runtime/cuda/resources.hpp"
#include "kiln/runtime/program.hpp"

namespace kiln::cuda {

/// A compiled kernel for the GPU and what launching it needs.
struct KernelImage {
  std::string display_name;  // for messages: the C++ name (vector_add<1024>)
  std::size_t parameter_count = 0;
  unsigned threads_per_block = 0;  // num_warps * 32
  std::string entry_name;          // the PTX entry
  int shared_bytes = 0;            // dynamic shared memory per block
  std::string image;               // PTX text or a cubin
  std::string image_description;   // "cubin for sm_90a", "PTX for sm_80"
};

/// `image` loaded into the primary context of GPU `device`, opted into its
/// dynamic shared memory when that is above 48 KiB. Throws DriverError when
/// the driver or the GPU is unavailable, std::runtime_error when the kernel
/// needs more shared memory per block than the GPU allows.
class LoadedKernel final : public runtime::CompiledKernel {
 public:
  LoadedKernel(KernelImage image, const Device& device);

  runtime::LaunchStats launch(const Device& device, runtime::Grid grid,
                              std::span<const runtime::KernelArgument> args) const override;

 private:
  std::string display_name_;
  std::size_t parameter_count_;
  unsigned threads_per_block_;
  unsigned shared_bytes_ = 0;
  std::optional<Module> module_;
  mutable std::optional<Kernel> kernel_;  // launching changes only its shared-memory allowance, under a lock
};

}  // namespace kiln::cuda
