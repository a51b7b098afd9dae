// The table of CUDA driver entry points kiln calls: filled from libcuda by
// Driver::load, or by hand where the functions come from elsewhere (tests
// substitute an in-process fake driver this way).
#pragma once

#include "kiln/runtime/cuda/driver_abi.hpp"

namespace kiln::cuda {

/// One function pointer per driver call kiln makes, each resolved by the
/// versioned symbol name that cuda.h's macros would select.
struct EntryPoints {
  abi::cuInit_t init = nullptr;
  abi::cuGetErrorName_t get_error_name = nullptr;
  abi::cuDeviceGetCount_t device_get_count = nullptr;
  abi::cuDeviceGet_t device_get = nullptr;
  abi::cuDeviceGetName_t device_get_name = nullptr;
  abi::cuDeviceGetAttribute_t device_get_attribute = nullptr;
  abi::cuDevicePrimaryCtxRetain_t primary_context_retain = nullptr;
  abi::cuDevicePrimaryCtxRelease_v2_t primary_context_release = nullptr;
  abi::cuCtxSetCurrent_t context_set_current = nullptr;
  abi::cuModuleLoadDataEx_t module_load_data_ex = nullptr;
  abi::cuModuleGetFunction_t module_get_function = nullptr;
  abi::cuModuleUnload_t module_unload = nullptr;
  abi::cuFuncSetAttribute_t function_set_attribute = nullptr;
  abi::cuLaunchKernel_t launch_kernel = nullptr;
  abi::cuMemAlloc_v2_t memory_allocate = nullptr;
  abi::cuMemFree_v2_t memory_free = nullptr;
  abi::cuMemcpyHtoD_v2_t copy_host_to_device = nullptr;
  abi::cuMemcpyDtoH_v2_t copy_device_to_host = nullptr;
  abi::cuMemsetD8_v2_t memory_set_bytes = nullptr;
  abi::cuStreamCreate_t stream_create = nullptr;
  abi::cuStreamDestroy_v2_t stream_destroy = nullptr;
  abi::cuStreamSynchronize_t stream_synchronize = nullptr;
  abi::cuEventCreate_t event_create = nullptr;
  abi::cuEventRecord_t event_record = nullptr;
  abi::cuEventSynchronize_t event_synchronize = nullptr;
  abi::cuEventElapsedTime_t event_elapsed_time = nullptr;
  abi::cuEventDestroy_v2_t event_destroy = nullptr;
  abi::cuMemHostAlloc_t host_memory_allocate = nullptr;
  abi::cuMemFreeHost_t host_memory_free = nullptr;
  abi::cuMemHostGetDevicePointer_v2_t host_memory_device_address = nullptr;
  abi::cuModuleGetGlobal_v2_t module_get_global = nullptr;
};

}  // namespace kiln::cuda
