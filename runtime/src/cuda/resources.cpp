// The driver-object owners and kernel launch declared in resources.hpp.
#include "kiln/runtime/cuda/resources.hpp"

#include <memory>
#include <mutex>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "kiln/runtime/cuda/entry_points.hpp"

namespace kiln::cuda {
namespace {

std::string dims(Dim3 d) {
  return "(" + std::to_string(d.x) + ", " + std::to_string(d.y) + ", " + std::to_string(d.z) + ")";
}

/// The driver's JIT log as one line: lines joined with "; ", blanks dropped.
std::string single_line(const char* log) {
  std::string line;
  std::string current;
  auto flush = [&] {
    if (current.find_first_not_of(" \t\r") != std::string::npos) line += (line.empty() ? "" : "; ") + current;
    current.clear();
  };
  for (const char* c = log; *c; ++c) {
    if (*c == '\n') flush();
    else current += *c;
  }
  flush();
  return line;
}

}  // namespace

PrimaryContext::PrimaryContext(const Driver& driver, int ordinal) : driver_(driver), ordinal_(ordinal) {
  const EntryPoints& entry = driver_.entry_points();
  std::string context = "device " + std::to_string(ordinal);
  driver_.check(entry.device_get(&device_, ordinal), "cuDeviceGet", context);
  driver_.check(entry.primary_context_retain(&context_, device_), "cuDevicePrimaryCtxRetain", context);
  try {
    make_current();
  } catch (...) {
    entry.primary_context_release(device_);
    throw;
  }
}

PrimaryContext::~PrimaryContext() { driver_.entry_points().primary_context_release(device_); }

void PrimaryContext::make_current() const {
  driver_.check(driver_.entry_points().context_set_current(context_), "cuCtxSetCurrent",
                "device " + std::to_string(ordinal_));
}

MappedHostMemory::MappedHostMemory(const Driver& driver, std::size_t bytes) : driver_(driver) {
  const EntryPoints& entry = driver_.entry_points();
  const std::string context = std::to_string(bytes) + " bytes of mapped host memory";
  driver_.check(entry.host_memory_allocate(&host_, bytes, abi::host_alloc_device_map), "cuMemHostAlloc", context);
  const abi::CUresult result = entry.host_memory_device_address(&device_address_, host_, 0);
  if (result != abi::CUDA_SUCCESS) {
    entry.host_memory_free(host_);
    driver_.check(result, "cuMemHostGetDevicePointer", context);
  }
}

MappedHostMemory::~MappedHostMemory() { driver_.entry_points().host_memory_free(host_); }

DeviceMemory::DeviceMemory(const Driver& driver, std::size_t bytes) : driver_(&driver), bytes_(bytes) {
  if (bytes == 0) return;
  driver_->check(driver_->entry_points().memory_allocate(&address_, bytes), "cuMemAlloc_v2",
                 "allocating " + std::to_string(bytes) + " bytes");
}

DeviceMemory::~DeviceMemory() {
  if (address_ != 0) driver_->entry_points().memory_free(address_);
}

DeviceMemory::DeviceMemory(DeviceMemory&& other) noexcept
    : driver_(other.driver_), address_(std::exchange(other.address_, 0)), bytes_(std::exchange(other.bytes_, 0)) {}

DeviceMemory& DeviceMemory::operator=(DeviceMemory&& other) noexcept {
  std::swap(driver_, other.driver_);
  std::swap(address_, other.address_);
  std::swap(bytes_, other.bytes_);
  return *this;
}

void DeviceMemory::check_fits(std::size_t bytes, const char* direction) const {
  if (bytes > bytes_)
    throw std::out_of_range("cuda: copying " + std::to_string(bytes) + " bytes " + direction + " a " +
                            std::to_string(bytes_) + "-byte device allocation");
}

void DeviceMemory::copy_from_host(const void* source, std::size_t bytes) {
  check_fits(bytes, "into");
  if (bytes == 0) return;
  driver_->check(driver_->entry_points().copy_host_to_device(address_, source, bytes), "cuMemcpyHtoD_v2",
                 "copying " + std::to_string(bytes) + " bytes to the device");
}

void DeviceMemory::copy_to_host(void* destination, std::size_t bytes) const {
  check_fits(bytes, "out of");
  if (bytes == 0) return;
  driver_->check(driver_->entry_points().copy_device_to_host(destination, address_, bytes), "cuMemcpyDtoH_v2",
                 "copying " + std::to_string(bytes) + " bytes to the host");
}

void DeviceMemory::fill_zeros() {
  if (bytes_ == 0) return;
  const EntryPoints& entry = driver_->entry_points();
  const std::string context = "zero-filling " + std::to_string(bytes_) + " bytes";
  driver_->check(entry.memory_set_bytes(address_, 0, bytes_), "cuMemsetD8_v2", context);
  driver_->check(entry.stream_synchronize(nullptr), "cuStreamSynchronize", context);
}

Stream::Stream(const Driver& driver) : driver_(&driver) {
  driver_->check(driver_->entry_points().stream_create(&stream_, abi::CU_STREAM_NON_BLOCKING), "cuStreamCreate");
}

// A null handle is the legacy default stream, which must never be destroyed.
Stream::~Stream() {
  if (stream_) driver_->entry_points().stream_destroy(stream_);
}

Stream::Stream(Stream&& other) noexcept : driver_(other.driver_), stream_(std::exchange(other.stream_, nullptr)) {}

Stream& Stream::operator=(Stream&& other) noexcept {
  std::swap(driver_, other.driver_);
  std::swap(stream_, other.stream_);
  return *this;
}

void Stream::synchronize() const {
  driver_->check(driver_->entry_points().stream_synchronize(stream_), "cuStreamSynchronize");
}

Event::Event(const Driver& driver) : driver_(&driver) {
  driver_->check(driver_->entry_points().event_create(&event_, abi::CU_EVENT_DEFAULT), "cuEventCreate");
}

Event::~Event() {
  if (event_) driver_->entry_points().event_destroy(event_);
}

Event::Event(Event&& other) noexcept : driver_(other.driver_), event_(std::exchange(other.event_, nullptr)) {}

Event& Event::operator=(Event&& other) noexcept {
  std::swap(driver_, other.driver_);
  std::swap(event_, other.event_);
  return *this;
}

void Event::record(const Stream& stream) {
  driver_->check(driver_->entry_points().event_record(event_, stream.handle()), "cuEventRecord");
}

void Event::synchronize() const {
  driver_->check(driver_->entry_points().event_synchronize(event_), "cuEventSynchronize");
}

float elapsed_milliseconds(const Driver& driver, const Event& start, const Event& end) {
  float milliseconds = 0;
  driver.check(driver.entry_points().event_elapsed_time(&milliseconds, start.handle(), end.handle()),
               "cuEventElapsedTime");
  return milliseconds;
}

void Kernel::launch(Dim3 grid, Dim3 block, unsigned dynamic_shared_bytes, const Stream& stream, void** parameters) {
  const EntryPoints& entry = driver_->entry_points();
  // Built only on failure, to keep string building off the launch path.
  auto describe = [&] {
    return "kernel `" + name_ + "`, grid " + dims(grid) + ", block " + dims(block) + ", " +
           std::to_string(dynamic_shared_bytes) + " bytes of dynamic shared memory";
  };
  allow_dynamic_shared_memory(dynamic_shared_bytes);
  abi::CUresult result = entry.launch_kernel(function_, grid.x, grid.y, grid.z, block.x, block.y, block.z,
                                             dynamic_shared_bytes, stream.handle(), parameters, nullptr);
  if (result != abi::CUDA_SUCCESS) driver_->check(result, "cuLaunchKernel", describe());
}

void Kernel::allow_dynamic_shared_memory(unsigned dynamic_shared_bytes) {
  if (dynamic_shared_bytes <= abi::default_dynamic_shared_limit_bytes) return;
  std::lock_guard lock(allowance_->mutex);
  if (dynamic_shared_bytes <= allowance_->allowed_bytes) return;
  abi::CUresult result = driver_->entry_points().function_set_attribute(
      function_, abi::CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, static_cast<int>(dynamic_shared_bytes));
  if (result != abi::CUDA_SUCCESS)
    driver_->check(
        result, "cuFuncSetAttribute",
        "kernel `" + name_ + "`, " + std::to_string(dynamic_shared_bytes) + " bytes of dynamic shared memory");
  allowance_->allowed_bytes = dynamic_shared_bytes;
}

Module::Module(const Driver& driver, const std::string& image, std::string name)
    : driver_(driver), name_(std::move(name)) {
  std::vector<char> error_log(16 * 1024, '\0');
  int options[] = {abi::CU_JIT_ERROR_LOG_BUFFER, abi::CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES};
  void* values[] = {error_log.data(), reinterpret_cast<void*>(error_log.size() - 1)};
  abi::CUresult result = driver_.entry_points().module_load_data_ex(&module_, image.c_str(), 2, options, values);
  std::string log = single_line(error_log.data());
  driver_.check(result, "cuModuleLoadDataEx", "loading " + name_ + (log.empty() ? "" : ": " + log));
}

Module::~Module() { driver_.entry_points().module_unload(module_); }

Kernel Module::kernel(const std::string& kernel_name) const {
  abi::CUfunction function = nullptr;
  driver_.check(driver_.entry_points().module_get_function(&function, module_, kernel_name.c_str()),
                "cuModuleGetFunction", "kernel `" + kernel_name + "` in " + name_);
  std::lock_guard lock(allowances_mutex_);
  auto& allowance = allowances_[kernel_name];
  if (!allowance) allowance = std::make_shared<DynamicSharedAllowance>();
  return Kernel(driver_, function, kernel_name, allowance);
}

std::optional<abi::CUdeviceptr> Module::global(const std::string& name) const {
  abi::CUdeviceptr address = 0;
  std::size_t bytes = 0;
  const abi::CUresult result = driver_.entry_points().module_get_global(&address, &bytes, module_, name.c_str());
  if (result == abi::CUDA_ERROR_NOT_FOUND) return std::nullopt;
  driver_.check(result, "cuModuleGetGlobal", "global `" + name + "` in " + name_);
  return address;
}

}  // namespace kiln::cuda
