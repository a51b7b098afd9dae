// The C API's entry points (kiln/kiln.h): each runs its body through
// guarded(), so every failure is a status and a last-error line and no C++
// exception leaves the library.
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "api_error.hpp"
#include "ir_kernel.hpp"
#include "kiln/kiln.h"
#include "kiln/runtime/device.hpp"
#include "library_kernels.hpp"

struct kiln_device {
  kiln::Device device;
  std::string name;
};

struct kiln_kernel {
  std::string name;
  const kiln::capi::LibraryKernel* library = nullptr;     // a library kernel, or
  std::shared_ptr<const kiln::runtime::Program> program;  // an IR kernel
};

namespace kiln::capi {
namespace {

template <class T>
void require_non_null(const T* pointer, const char* name) {
  require(pointer != nullptr, std::string(name) + " is a null pointer");
}

void launch_library(const LibraryKernel& kernel, const Device& device, std::span<const kiln_argument> arguments,
                    const std::int32_t* grid) {
  const std::string name(kernel.name);
  require(grid == nullptr, name + " is a library kernel and chooses its own grid: pass a null grid");
  require(arguments.size() == kernel.parameters.size(), name + " takes " + std::to_string(kernel.parameters.size()) +
                                                            " tensors, " + std::to_string(arguments.size()) +
                                                            " arguments were given");
  std::vector<TensorArgument> tensors;
  for (std::size_t i = 0; i < arguments.size(); ++i) {
    const std::string label = name + " argument " + std::to_string(i) + " '" + std::string(kernel.parameters[i]) + "'";
    require(arguments[i].kind == KILN_ARGUMENT_TENSOR,
            label + " is not a tensor (kind " + std::to_string(static_cast<int>(arguments[i].kind)) + ")");
    tensors.emplace_back(arguments[i].value.tensor, device, label);
  }
  kernel.launch(device, tensors);
}

}  // namespace
}  // namespace kiln::capi

using kiln::capi::guarded;
using kiln::capi::require;
using kiln::capi::require_non_null;

extern "C" {

const char* kiln_last_error(void) { return kiln::capi::last_error(); }

const char* kiln_status_name(kiln_status status) {
  switch (status) {
    case KILN_OK: return "KILN_OK";
    case KILN_ERROR_INVALID_ARGUMENT: return "KILN_ERROR_INVALID_ARGUMENT";
    case KILN_ERROR_NOT_FOUND: return "KILN_ERROR_NOT_FOUND";
    case KILN_ERROR_COMPILE: return "KILN_ERROR_COMPILE";
    case KILN_ERROR_KERNEL_FAULT: return "KILN_ERROR_KERNEL_FAULT";
    case KILN_ERROR_RUNTIME: return "KILN_ERROR_RUNTIME";
  }
  return "unknown status";
}

kiln_status kiln_device_open(const char* name, kiln_device** device) {
  return guarded("kiln_device_open", [&] {
    require_non_null(device, "device");
    *device = nullptr;
    require_non_null(name, "name");
    const kiln::Device opened = [&] {
      try {
        return kiln::Device::from_name(name);
      } catch (const std::invalid_argument& e) {  // unknown, or unavailable here
        kiln::capi::fail(KILN_ERROR_NOT_FOUND, e.what());
      }
    }();
    *device = new kiln_device{opened, opened.name()};
  });
}

kiln_status kiln_device_close(kiln_device* device) {
  return guarded("kiln_device_close", [&] { delete device; });
}

kiln_status kiln_device_name(const kiln_device* device, const char** name) {
  return guarded("kiln_device_name", [&] {
    require_non_null(name, "name");
    require_non_null(device, "device");
    *name = device->name.c_str();
  });
}

kiln_status kiln_kernel_from_library(const char* name, kiln_kernel** kernel) {
  return guarded("kiln_kernel_from_library", [&] {
    require_non_null(kernel, "kernel");
    *kernel = nullptr;
    require_non_null(name, "name");
    const kiln::capi::LibraryKernel* found = kiln::capi::find_library_kernel(name);
    if (!found)
      kiln::capi::fail(KILN_ERROR_NOT_FOUND, "unknown kernel '" + std::string(name) +
                                                 "' (the library offers: " + kiln::capi::library_kernel_names() + ")");
    *kernel = new kiln_kernel{std::string(found->name), found, nullptr};
  });
}

kiln_status kiln_kernel_from_ir(const char* text, kiln_kernel** kernel) {
  return guarded("kiln_kernel_from_ir", [&] {
    require_non_null(kernel, "kernel");
    *kernel = nullptr;
    require_non_null(text, "text");
    auto program = kiln::capi::compile_ir(text);
    std::string name = program->traced().name;
    *kernel = new kiln_kernel{std::move(name), nullptr, std::move(program)};
  });
}

kiln_status kiln_kernel_release(kiln_kernel* kernel) {
  return guarded("kiln_kernel_release", [&] { delete kernel; });
}

kiln_status kiln_kernel_name(const kiln_kernel* kernel, const char** name) {
  return guarded("kiln_kernel_name", [&] {
    require_non_null(name, "name");
    require_non_null(kernel, "kernel");
    *name = kernel->name.c_str();
  });
}

kiln_status kiln_launch(kiln_device* device, const kiln_kernel* kernel, const kiln_argument* arguments,
                        size_t num_arguments, const int32_t* grid) {
  return guarded("kiln_launch", [&] {
    require_non_null(device, "device");
    require_non_null(kernel, "kernel");
    require(arguments != nullptr || num_arguments == 0,
            "arguments is a null pointer and num_arguments is " + std::to_string(num_arguments));
    const std::span<const kiln_argument> given(arguments, num_arguments);
    if (kernel->library) kiln::capi::launch_library(*kernel->library, device->device, given, grid);
    else kiln::capi::launch_ir(*kernel->program, device->device, given, grid);
  });
}

}  // extern "C"
