// Loading a kernel image into a GPU's context and launching it.
#include "loaded_kernel.hpp"

#include <stdexcept>
#include <utility>
#include <vector>

#include "gpu_context.hpp"
#include "kiln/runtime/cuda/driver_abi.hpp"
#include "kiln/runtime/cuda/entry_points.hpp"
#include "kiln/runtime/cuda/launch_timer.hpp"
#include "kiln/runtime/interpreter.hpp"

namespace kiln::cuda {

namespace {

std::string grid_text(runtime::Grid grid) {
  return "(" + std::to_string(grid[0]) + ", " + std::to_string(grid[1]) + ", " + std::to_string(grid[2]) + ")";
}

}  // namespace

LoadedKernel::LoadedKernel(KernelImage image, const Device& device)
    : display_name_(std::move(image.display_name)),
      parameter_count_(image.parameter_count),
      threads_per_block_(image.threads_per_block),
      shared_bytes_(static_cast<unsigned>(image.shared_bytes)) {
  const GpuContext& gpu = current_context(device.ordinal());
  if (shared_bytes_ > abi::default_dynamic_shared_limit_bytes &&
      image.shared_bytes > gpu.info.max_shared_bytes_per_block_optin)
    throw std::runtime_error("cuda: kernel " + display_name_ + " needs " + std::to_string(image.shared_bytes) +
                             " bytes of shared memory per block, more than the " +
                             std::to_string(gpu.info.max_shared_bytes_per_block_optin) + " bytes " + device.name() +
                             " (" + gpu.info.name + ") allows one block");
  const Driver& driver = Driver::instance();
  module_.emplace(driver, image.image, display_name_ + " (" + image.image_description + ")");
  kernel_.emplace(module_->kernel(image.entry_name));
  // A kernel that can fault reports through the context's fault record.
  if (const std::optional<abi::CUdeviceptr> global = module_->global(lowering::kFaultRecordGlobal)) {
    const abi::CUdeviceptr record = gpu.fault_memory.device_address();
    driver.check(driver.entry_points().copy_host_to_device(*global, &record, sizeof record), "cuMemcpyHtoD",
                 "the fault record's address into kernel " + display_name_);
  }
  kernel_->allow_dynamic_shared_memory(shared_bytes_);
}

runtime::LaunchStats LoadedKernel::launch(const Device& device, runtime::Grid grid,
                                          std::span<const runtime::KernelArgument> args) const {
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
  for (const runtime::KernelArgument& argument : args) parameters.push_back(const_cast<std::uint64_t*>(&argument.bits));
  LaunchTimer* timer = LaunchTimer::active();
  std::optional<Event> start, stop;
  if (timer) {
    start.emplace(driver);
    stop.emplace(driver);
    start->record(gpu.stream);
  }
  const Dim3 blocks{static_cast<unsigned>(grid[0]), static_cast<unsigned>(grid[1]), static_cast<unsigned>(grid[2])};
  volatile std::uint32_t& fault_state = gpu.fault_record().state;
  fault_state = static_cast<std::uint32_t>(lowering::FaultRecordState::empty);
  kernel_->launch(blocks, Dim3{threads_per_block_}, shared_bytes_, gpu.stream, parameters.data());
  if (timer) stop->record(gpu.stream);
  const abi::CUresult result = driver.entry_points().stream_synchronize(gpu.stream.handle());
  // A kernel stopped at a fault says which in the record; the context is
  // then unusable, as after any trap.
  if (result != abi::CUDA_SUCCESS && fault_state == static_cast<std::uint32_t>(lowering::FaultRecordState::written))
    throw runtime::KernelError(lowering::fault_message(gpu.fault_record()));
  driver.check(result, "cuStreamSynchronize",
               "running kernel `" + display_name_ + "` on " + device.name() + ", grid " + grid_text(grid));
  if (timer) timer->add_launch(elapsed_milliseconds(driver, *start, *stop) / 1e3);
  // A GPU does not count the bytes its loads and stores move.
  return {};
}

}  // namespace kiln::cuda
