// Loading libcuda with dlopen, resolving its entry points, and the checked calls
// every other driver wrapper goes through.
#include "kiln/runtime/cuda/driver.hpp"

#include <dlfcn.h>

#include <atomic>
#include <cstdlib>
#include <initializer_list>
#include <memory>
#include <mutex>
#include <string>
#include <utility>

#include "kiln/runtime/cuda/entry_points.hpp"

namespace kiln::cuda {
namespace {

std::string last_dlerror() {
  const char* text = dlerror();
  return text ? text : "no reason given";
}

void* open_library(const std::string& library_path) {
  dlerror();
  if (void* handle = dlopen(library_path.c_str(), RTLD_NOW | RTLD_LOCAL)) return handle;
  std::string reason = last_dlerror();
  bool missing = reason.find("No such file") != std::string::npos;
  const char* override_path = std::getenv("KILN_LIBCUDA");
  std::string origin = override_path && library_path == override_path ? " (named by KILN_LIBCUDA)"
                                                                      : " (no NVIDIA driver on this machine)";
  throw DriverError("cuda: " + library_path + (missing ? " not found" : " could not be loaded") + origin + ": " +
                    reason);
}

/// Resolves the first of `names` the library exports into `entry`.
template <typename Function>
void resolve(void* library, const std::string& library_path, Function& entry,
             std::initializer_list<const char*> names) {
  for (const char* name : names) {
    dlerror();
    if (void* symbol = dlsym(library, name)) {
      entry = reinterpret_cast<Function>(symbol);
      return;
    }
  }
  throw DriverError("cuda: " + library_path + " does not export " + *names.begin() +
                    " (not a CUDA driver, or one older than kiln needs): " + last_dlerror());
}

/// Calls `visit(member, symbol names)` for every entry point, naming the
/// symbols to try in order.
template <typename Entries, typename Visit>
void for_each_entry_point(Entries& entry, Visit visit) {
  visit(entry.init, {"cuInit"});
  visit(entry.get_error_name, {"cuGetErrorName"});
  visit(entry.device_get_count, {"cuDeviceGetCount"});
  visit(entry.device_get, {"cuDeviceGet"});
  visit(entry.device_get_name, {"cuDeviceGetName"});
  visit(entry.device_get_attribute, {"cuDeviceGetAttribute"});
  visit(entry.primary_context_retain, {"cuDevicePrimaryCtxRetain"});
  visit(entry.primary_context_release, {"cuDevicePrimaryCtxRelease_v2"});
  visit(entry.context_set_current, {"cuCtxSetCurrent"});
  visit(entry.module_load_data_ex, {"cuModuleLoadDataEx"});
  visit(entry.module_get_function, {"cuModuleGetFunction"});
  visit(entry.module_unload, {"cuModuleUnload"});
  visit(entry.function_set_attribute, {"cuFuncSetAttribute"});
  visit(entry.launch_kernel, {"cuLaunchKernel"});
  visit(entry.memory_allocate, {"cuMemAlloc_v2"});
  visit(entry.memory_free, {"cuMemFree_v2"});
  visit(entry.copy_host_to_device, {"cuMemcpyHtoD_v2"});
  visit(entry.copy_device_to_host, {"cuMemcpyDtoH_v2"});
  visit(entry.memory_set_bytes, {"cuMemsetD8_v2"});
  visit(entry.stream_create, {"cuStreamCreate"});
  visit(entry.stream_destroy, {"cuStreamDestroy_v2"});
  visit(entry.stream_synchronize, {"cuStreamSynchronize"});
  visit(entry.event_create, {"cuEventCreate"});
  visit(entry.event_record, {"cuEventRecord"});
  visit(entry.event_synchronize, {"cuEventSynchronize"});
  // cuEventElapsedTime_v2 appeared in CUDA 12.8 with the same signature;
  // drivers older than that export only the plain name.
  visit(entry.event_elapsed_time, {"cuEventElapsedTime_v2", "cuEventElapsedTime"});
  visit(entry.event_destroy, {"cuEventDestroy_v2"});
  visit(entry.host_memory_allocate, {"cuMemHostAlloc"});
  visit(entry.host_memory_free, {"cuMemFreeHost"});
  visit(entry.host_memory_device_address, {"cuMemHostGetDevicePointer_v2"});
  visit(entry.module_get_global, {"cuModuleGetGlobal_v2"});
}

}  // namespace

std::string DeviceInfo::arch() const {
  return "sm_" + std::to_string(compute_capability_major) + std::to_string(compute_capability_minor);
}

Driver::Driver(std::string library_path, std::unique_ptr<EntryPoints> entry_points)
    : library_path_(std::move(library_path)), entry_points_(std::move(entry_points)) {}

Driver::~Driver() = default;

std::string Driver::library_path() {
  const char* path = std::getenv("KILN_LIBCUDA");
  return path && *path ? path : "libcuda.so.1";
}

std::unique_ptr<Driver> Driver::load(const std::string& library_path) {
  void* library = open_library(library_path);
  EntryPoints entry_points;
  for_each_entry_point(entry_points, [&](auto& member, std::initializer_list<const char*> names) {
    resolve(library, library_path, member, names);
  });
  return from_entry_points(entry_points, library_path);
}

std::unique_ptr<Driver> Driver::from_entry_points(const EntryPoints& entry_points, std::string description) {
  for_each_entry_point(entry_points, [&](const auto& member, std::initializer_list<const char*> names) {
    if (!member) throw DriverError("cuda: " + description + " lacks the entry point " + *names.begin());
  });
  std::unique_ptr<Driver> driver(new Driver(std::move(description), std::make_unique<EntryPoints>(entry_points)));
  driver->check(driver->entry_points().init(0), "cuInit");
  return driver;
}

const Driver& Driver::instance() {
  // Launch paths call this often: after the first load it is one atomic read.
  static std::atomic<const Driver*> loaded = nullptr;
  static std::mutex mutex;
  static std::unique_ptr<Driver> driver;
  if (const Driver* ready = loaded.load(std::memory_order_acquire)) return *ready;
  std::lock_guard lock(mutex);
  if (!driver) {
    driver = load(library_path());
    loaded.store(driver.get(), std::memory_order_release);
  }
  return *driver;
}

void Driver::check(abi::CUresult result, std::string_view call, std::string_view context) const {
  if (result == abi::CUDA_SUCCESS) return;
  const char* driver_name = nullptr;
  std::string_view name = entry_points_->get_error_name(result, &driver_name) == abi::CUDA_SUCCESS && driver_name
                              ? std::string_view(driver_name)
                              : error_name(result);
  throw DriverError(format_driver_error(call, result, name, context), result);
}

int Driver::device_count() const {
  int count = 0;
  check(entry_points_->device_get_count(&count), "cuDeviceGetCount");
  return count;
}

DeviceInfo Driver::device_info(int ordinal) const {
  const EntryPoints& entry = *entry_points_;
  std::string context = "device " + std::to_string(ordinal);
  abi::CUdevice device = 0;
  check(entry.device_get(&device, ordinal), "cuDeviceGet", context);
  DeviceInfo info;
  info.ordinal = ordinal;
  char name[256] = {};
  check(entry.device_get_name(name, sizeof(name) - 1, device), "cuDeviceGetName", context);
  info.name = name;
  check(entry.device_get_attribute(&info.sm_count, abi::CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, device),
        "cuDeviceGetAttribute", context + ", multiprocessor count");
  check(entry.device_get_attribute(&info.compute_capability_major, abi::CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR,
                                   device),
        "cuDeviceGetAttribute", context + ", compute capability major");
  check(entry.device_get_attribute(&info.compute_capability_minor, abi::CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR,
                                   device),
        "cuDeviceGetAttribute", context + ", compute capability minor");
  check(entry.device_get_attribute(&info.max_shared_bytes_per_block_optin,
                                   abi::CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN, device),
        "cuDeviceGetAttribute", context + ", opt-in shared memory per block");
  return info;
}

}  // namespace kiln::cuda
