// Launching a kernel compiled ahead of time: the embedded tile IR on `cpu`,
// the embedded host code on `emu`, an embedded GPU image on `cuda`.
#include "kiln/runtime/aot_kernel.hpp"

#include <map>
#include <optional>
#include <stdexcept>

#include "../emu/emu_launch.hpp"
#include "cuda/gpu_context.hpp"
#include "cuda/loaded_kernel.hpp"
#include "kiln/ir/parameter_label.hpp"
#include "kiln/ir/parser.hpp"
#include "kiln/runtime/cuda/driver.hpp"

namespace kiln::aot {

namespace {

/// The integer value of argument `a` of type `type` (an integer dtype).
std::int64_t integer_value(const ir::Type& type, const runtime::KernelArgument& a) {
  const int bits = ir::dtype_bits(type.dtype);
  std::uint64_t value = bits >= 64 ? a.bits : a.bits & ((std::uint64_t{1} << bits) - 1);
  if (ir::is_signed_int(type.dtype) && bits < 64 && (value >> (bits - 1)) != 0) value |= ~std::uint64_t{0} << bits;
  return static_cast<std::int64_t>(value);
}

/// Throws when an argument breaks a fact `fn` was specialised for.
void check_facts(const ir::Function& fn, std::span<const runtime::KernelArgument> args) {
  if (args.size() != fn.body.arguments.size())
    throw std::invalid_argument("kernel " + fn.name + ": takes " + std::to_string(fn.body.arguments.size()) +
                                " arguments, launched with " + std::to_string(args.size()));
  for (std::size_t i = 0; i < fn.argument_facts.size(); ++i) {
    const ir::ArgumentFacts& facts = fn.argument_facts[i];
    if (facts.trivial()) continue;
    const ir::Type& type = fn.body.arguments[i]->type;
    const std::string name = ir::parameter_label(fn, i);
    if (type.is_pointer) {
      if (args[i].bits % static_cast<std::uint64_t>(facts.divisibility) != 0)
        throw std::invalid_argument("kernel " + fn.name + ": " + name + " points to address " +
                                    std::to_string(args[i].bits) + ", not aligned to " +
                                    std::to_string(facts.divisibility) +
                                    " bytes as its ahead-of-time specialisation assumes");
      continue;
    }
    const std::int64_t value = integer_value(type, args[i]);
    if (facts.equal_to_1 && value != 1)
      throw std::invalid_argument("kernel " + fn.name + ": " + name + " is " + std::to_string(value) +
                                  ", not 1 as its ahead-of-time specialisation assumes");
    if (value % facts.divisibility != 0)
      throw std::invalid_argument("kernel " + fn.name + ": " + name + " is " + std::to_string(value) +
                                  ", not a multiple of " + std::to_string(facts.divisibility) +
                                  " as its ahead-of-time specialisation assumes");
  }
}

/// The embedded image the GPU runs: a cubin for its own architecture (sm_90a
/// on compute capability 9.0), else the PTX of the newest architecture it
/// can run, compiled by the driver.
const GpuImage& pick_image(const EmbeddedKernel& embedded, const cuda::DeviceInfo& gpu) {
  const std::string own = gpu.arch() == "sm_90" ? "sm_90a" : gpu.arch();
  const int capability = gpu.compute_capability_major * 10 + gpu.compute_capability_minor;
  const GpuImage* best = nullptr;
  int best_capability = 0;
  for (const GpuImage& image : embedded.gpu_images) {
    if (image.cubin && image.arch == own) return image;
    const int image_capability = std::stoi(std::string(image.arch).substr(3, 2));
    const bool runs = image_capability < 90 || std::string(image.arch) != "sm_90a" || capability == 90;
    if (!image.cubin && runs && image_capability <= capability && image_capability > best_capability) {
      best = &image;
      best_capability = image_capability;
    }
  }
  if (!best) {
    std::string archs;
    for (const GpuImage& image : embedded.gpu_images)
      archs += (archs.empty() ? "" : ", ") + std::string(image.cubin ? "cubin " : "PTX ") + image.arch;
    throw std::invalid_argument("kernel " + std::string(embedded.name) + ": no embedded image runs on " + gpu.name +
                                " (" + gpu.arch() + "); the build embedded: " + (archs.empty() ? "none" : archs) +
                                " (kiln_add_kernels ARCHS)");
  }
  return *best;
}

}  // namespace

struct Kernel::State {
  std::once_flag parsed;
  std::unique_ptr<ir::Function> function;
  std::optional<runtime::InterpretedKernel> interpreter;
  runtime::emu::KernelDescription emu;
  std::mutex loaded_mutex;
  std::map<int, std::unique_ptr<cuda::LoadedKernel>> loaded;  // by GPU ordinal
};

Kernel::Kernel(const EmbeddedKernel& embedded) : embedded_(embedded), state_(std::make_unique<State>()) {}

Kernel::~Kernel() = default;

runtime::LaunchStats Kernel::launch(const Device& device, Grid grid,
                                    std::span<const runtime::KernelArgument> args) const {
  std::call_once(state_->parsed, [&] {
    state_->function = ir::parse_function(embedded_.ir_text, embedded_.name);
    state_->emu = runtime::emu::describe_kernel(*state_->function, embedded_.num_warps);
    for (const EmuAccessSite& site : embedded_.emu_access_sites)
      state_->emu.access_sites.push_back({static_cast<runtime::emu::AccessSite::Kind>(site.kind), site.op_name,
                                          site.place, site.active_lanes,
                                          site.dtype ? ir::parse_dtype(site.dtype) : std::nullopt, site.source});
    state_->emu.barrier_places.assign(embedded_.emu_barrier_places.begin(), embedded_.emu_barrier_places.end());
    state_->emu.shared_bytes = embedded_.emu_shared_bytes;
  });
  const ir::Function& fn = *state_->function;
  if (grid.x < 1 || grid.y < 1 || grid.z < 1)
    throw std::invalid_argument("launch " + fn.name + ": grid dimensions must be positive, got (" +
                                std::to_string(grid.x) + ", " + std::to_string(grid.y) + ", " + std::to_string(grid.z) +
                                ")");
  check_facts(fn, args);
  const runtime::Grid dims{grid.x, grid.y, grid.z};
  switch (device.kind()) {
    case Device::Kind::cpu: {
      {
        std::lock_guard lock(state_->loaded_mutex);
        if (!state_->interpreter) state_->interpreter.emplace(fn);
      }
      return state_->interpreter->launch(dims, args, device.threads());
    }
    case Device::Kind::emu: return runtime::emu::launch_emulated(state_->emu, embedded_.emu_entry, device, dims, args);
    case Device::Kind::cuda: {
      const cuda::LoadedKernel* loaded = nullptr;
      {
        std::lock_guard lock(state_->loaded_mutex);
        auto& slot = state_->loaded[device.ordinal()];
        if (!slot) {
          const GpuImage& image = pick_image(embedded_, cuda::current_context(device.ordinal()).info);
          slot = std::make_unique<cuda::LoadedKernel>(
              cuda::KernelImage{.display_name = embedded_.name,
                                .parameter_count = fn.body.arguments.size(),
                                .threads_per_block = static_cast<unsigned>(embedded_.num_warps) * 32,
                                .entry_name = embedded_.gpu_entry,
                                .shared_bytes = embedded_.gpu_shared_bytes,
                                .image = std::string(reinterpret_cast<const char*>(image.data), image.size),
                                .image_description = std::string(image.cubin ? "cubin for " : "PTX for ") + image.arch +
                                                     ", compiled ahead of time"},
              device);
        }
        loaded = slot.get();
      }
      return loaded->launch(device, dims, args);
    }
  }
  throw std::invalid_argument("launch " + fn.name + ": unknown device " + device.name());
}

namespace detail {

void fail_argument_range(std::string_view kernel, std::size_t index, std::string_view value) {
  throw std::invalid_argument("launch " + std::string(kernel) + ": parameter " + std::to_string(index + 1) +
                              ": the value " + std::string(value) + " does not fit the parameter's type");
}

}  // namespace detail

}  // namespace kiln::aot
