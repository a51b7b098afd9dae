// The `cuda` device: compiling a program for the GPU, loading it, launching it.
#include "cuda_kernel.hpp"

#include <optional>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "gpu_context.hpp"
#include "kiln/ir/printer.hpp"
#include "kiln/lowering/compile.hpp"
#include "kiln/runtime/compile_cache.hpp"
#include "kiln/runtime/cuda/driver_abi.hpp"
#include "kiln/runtime/cuda/entry_points.hpp"
#include "kiln/runtime/cuda/launch_timer.hpp"
#include "kiln/runtime/cuda/ptxas.hpp"

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

std::string grid_text(runtime::Grid grid) {
  return "(" + std::to_string(grid[0]) + ", " + std::to_string(grid[1]) + ", " + std::to_string(grid[2]) + ")";
}

/// A program loaded into one GPU's context.
class CudaKernel final : public runtime::CompiledKernel {
 public:
  CudaKernel(const runtime::Program& program, const Device& device)
      : display_name_(program.display_name()),
        parameter_count_(program.optimized().body.arguments.size()),
        threads_per_block_(static_cast<unsigned>(program.options().num_warps) * 32) {
    const GpuContext& gpu = current_context(device.ordinal());
    const lowering::GpuTarget target{
        .arch = ptx_arch(gpu.info), .num_warps = program.options().num_warps, .arguments_do_not_overlap = false};
    const std::optional<std::filesystem::path> ptxas = find_ptxas();
    const std::string image_arch = ptxas ? cubin_arch(gpu.info) : target.arch;
    runtime::CacheKey key;
    key.ir = ir::print(program.optimized(), {.locations = true});
    key.options = "num_warps=" + std::to_string(target.num_warps) +
                  " arguments_do_not_overlap=" + std::to_string(target.arguments_do_not_overlap);
    key.target =
        ptxas ? "cubin " + image_arch + " ptx " + target.arch + " ptxas " + ptxas->string() : "ptx " + target.arch;
    const CachedKernel cached = CachedKernel::decode(gpu_code_cache().get_or_compile(key, [&] {
      const lowering::GpuKernel compiled =
          lowering::compile_for_gpu(program.optimized(), target, {.keep_llvm_ir = false});
      const std::string image = ptxas ? assemble_cubin(*ptxas, compiled.ptx, image_arch, display_name_) : compiled.ptx;
      return CachedKernel{compiled.name, compiled.shared_bytes, image}.encode();
    }));
    entry_name_ = cached.entry_name;
    shared_bytes_ = static_cast<unsigned>(cached.shared_bytes);
    if (shared_bytes_ > abi::default_dynamic_shared_limit_bytes &&
        cached.shared_bytes > gpu.info.max_shared_bytes_per_block_optin)
      throw std::runtime_error("cuda: kernel " + display_name_ + " needs " + std::to_string(cached.shared_bytes) +
                               " bytes of shared memory per block, more than the " +
                               std::to_string(gpu.info.max_shared_bytes_per_block_optin) + " bytes " + device.name() +
                               " (" + gpu.info.name + ") allows one block");
    module_.emplace(Driver::instance(), cached.image,
                    display_name_ + (ptxas ? " (cubin for " : " (PTX for ") + image_arch + ")");
    kernel_.emplace(module_->kernel(entry_name_));
    kernel_->allow_dynamic_shared_memory(shared_bytes_);
  }

  runtime::LaunchStats launch(const Device& device, runtime::Grid grid,
                              std::span<const runtime::KernelArgument> args) const override {
    if (args.size() != parameter_count_)
      throw std::invalid_argument("launch " + display_name_ + " on " + device.name() + ": " +
                                  std::to_string(args.size()) + " arguments for " + std::to_string(parameter_count_) +
                                  " parameters");
    const GpuContext& gpu = current_context(device.ordinal());
    const Driver& driver = Driver::instance();
    // Each parameter's value is the argument's bits: zero-extended and
    // little-endian, so its first 1, 2, 4 or 8 bytes are the scalar of that
    // size, and a pointer's are its GPU address.
    std::vector<void*> parameters;
    parameters.reserve(args.size());
    for (const runtime::KernelArgument& argument : args)
      parameters.push_back(const_cast<std::uint64_t*>(&argument.bits));
    LaunchTimer* timer = LaunchTimer::active();
    std::optional<Event> start, stop;
    if (timer) {
      start.emplace(driver);
      stop.emplace(driver);
      start->record(gpu.stream);
    }
    const Dim3 blocks{static_cast<unsigned>(grid[0]), static_cast<unsigned>(grid[1]), static_cast<unsigned>(grid[2])};
    kernel_->launch(blocks, Dim3{threads_per_block_}, shared_bytes_, gpu.stream, parameters.data());
    if (timer) stop->record(gpu.stream);
    driver.check(driver.entry_points().stream_synchronize(gpu.stream.handle()), "cuStreamSynchronize",
                 "running kernel `" + display_name_ + "` on " + device.name() + ", grid " + grid_text(grid));
    if (timer) timer->add_launch(elapsed_milliseconds(driver, *start, *stop) / 1e3);
    // A GPU does not count the bytes its loads and stores move.
    return {};
  }

 private:
  std::string display_name_;
  std::size_t parameter_count_;
  unsigned threads_per_block_;
  std::string entry_name_;
  unsigned shared_bytes_ = 0;  // dynamic shared memory per block
  std::optional<Module> module_;
  mutable std::optional<Kernel> kernel_;  // launching changes only its shared-memory allowance, under a lock
};

}  // namespace

std::unique_ptr<runtime::CompiledKernel> compile_for_cuda(const runtime::Program& program, const Device& device) {
  return std::make_unique<CudaKernel>(program, device);
}

}  // namespace kiln::cuda
