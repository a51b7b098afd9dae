// The `cuda` device: compiling a program for the GPU (loaded_kernel.cpp loads and launches it).
#include "cuda_kernel.hpp"

#include <optional>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "gpu_context.hpp"
#include "kiln/lowering/compile.hpp"
#include "kiln/runtime/compile_cache.hpp"
#include "kiln/runtime/cuda/ptxas.hpp"
#include "kiln/runtime/cuda/target.hpp"
#include "loaded_kernel.hpp"

namespace kiln::cuda {

namespace {

/// The process's compile cache for GPU code ($KILN_CACHE_DIR, else
/// ~/.cache/kiln, shared with other kiln processes).
runtime::CompileCache& gpu_code_cache() {
  static auto* cache = new runtime::CompileCache();
  return *cache;
}

/// The architecture the code generator targets for `gpu`: its own, with the
/// `a` features (wgmma, setmaxnreg) on compute capability 9.0; sm_90 for newer
/// GPUs, whose PTX LLVM 19 cannot write (their driver or ptxas compiles
/// sm_90 PTX for them).
std::string ptx_arch(const DeviceInfo& gpu) {
  const int capability = gpu.compute_capability_major * 10 + gpu.compute_capability_minor;
  if (capability < 80)
    throw std::invalid_argument("cuda: kiln needs a GPU of compute capability 8.0 or newer; " + gpu.name + " is " +
                                gpu.arch());
  if (capability == 90) return "sm_90a";
  return capability > 90 ? "sm_90" : gpu.arch();
}

/// The cubin's architecture: the device's own, `sm_90a` on compute capability
/// 9.0 (the PTX may use the `a` features).
std::string cubin_arch(const DeviceInfo& gpu) { return gpu.arch() == "sm_90" ? "sm_90a" : gpu.arch(); }

/// The compile cache's payload for a compiled kernel: the PTX entry name and
/// the dynamic shared memory per block on their own lines, then the image.
struct CachedKernel {
  std::string entry_name;
  int shared_bytes = 0;
  std::string image;

  std::string encode() const { return entry_name + "\n" + std::to_string(shared_bytes) + "\n" + image; }
  static CachedKernel decode(const std::string& payload) {
    const std::size_t name_end = payload.find('\n');
    const std::size_t bytes_end = payload.find('\n', name_end + 1);
    return {payload.substr(0, name_end), std::stoi(payload.substr(name_end + 1, bytes_end - name_end - 1)),
            payload.substr(bytes_end + 1)};
  }
};

/// Compiles `program` for GPU `device` through the compile cache: the image
/// and what launching it needs.
KernelImage compile_image(const runtime::Program& program, const Device& device) {
  const GpuContext& gpu = current_context(device.ordinal());
  const lowering::GpuTarget target = target_for(program, ptx_arch(gpu.info));
  const std::optional<std::filesystem::path> ptxas = find_ptxas();
  const std::string image_arch = ptxas ? cubin_arch(gpu.info) : target.arch;
  const runtime::CacheKey key = cache_key(
      program, target,
      ptxas ? "cubin " + image_arch + " ptx " + target.arch + " ptxas " + ptxas->string() : "ptx " + target.arch);
  const CachedKernel cached = CachedKernel::decode(gpu_code_cache().get_or_compile(key, [&] {
    const lowering::GpuKernel compiled =
        lowering::compile_for_gpu(program.optimized(), target, {.keep_llvm_ir = false});
    const std::string image =
        ptxas ? assemble_cubin(*ptxas, compiled.ptx, image_arch, program.display_name()) : compiled.ptx;
    return CachedKernel{compiled.name, compiled.shared_bytes, image}.encode();
  }));
  return KernelImage{.display_name = program.display_name(),
                     .parameter_count = program.traced().body.arguments.size(),
                     .threads_per_block = static_cast<unsigned>(program.options().num_warps) * 32,
                     .entry_name = cached.entry_name,
                     .shared_bytes = cached.shared_bytes,
                     .image = cached.image,
                     .image_description = (ptxas ? "cubin for " : "PTX for ") + image_arch};
}

}  // namespace

std::unique_ptr<runtime::CompiledKernel> compile_for_cuda(const runtime::Program& program, const Device& device) {
  return std::make_unique<LoadedKernel>(compile_image(program, device), device);
}

}  // namespace kiln::cuda
