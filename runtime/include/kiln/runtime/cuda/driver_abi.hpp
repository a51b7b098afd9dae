// The part of the CUDA driver's C ABI that kiln calls, declared by kiln itself.
//
// kiln never links libcuda and must build where the CUDA toolkit is absent, so
// it declares the handful of handle types, enumerators and entry-point
// signatures it uses instead of including cuda.h: one code path, compiled the
// same on every machine. The driver ABI is stable (these values have not
// changed since CUDA 4), and cuda_driver_test.cpp checks every declaration
// here against the toolkit's cuda.h wherever the toolkit is installed.
#pragma once

namespace kiln::cuda::abi {

using CUresult = int;
using CUdevice = int;
/// Device addresses are 64-bit on every platform kiln supports.
using CUdeviceptr = unsigned long long;

struct CUctx_st;
struct CUmod_st;
struct CUfunc_st;
struct CUstream_st;
struct CUevent_st;
using CUcontext = CUctx_st*;
using CUmodule = CUmod_st*;
using CUfunction = CUfunc_st*;
using CUstream = CUstream_st*;
using CUevent = CUevent_st*;

inline constexpr CUresult CUDA_SUCCESS = 0;
inline constexpr CUresult CUDA_ERROR_STUB_LIBRARY = 34;
inline constexpr CUresult CUDA_ERROR_NO_DEVICE = 100;
inline constexpr CUresult CUDA_ERROR_NOT_FOUND = 500;

inline constexpr int CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT = 16;
inline constexpr int CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR = 75;
inline constexpr int CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR = 76;
inline constexpr int CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN = 97;

inline constexpr int CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES = 8;

inline constexpr int CU_JIT_ERROR_LOG_BUFFER = 5;
inline constexpr int CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES = 6;

inline constexpr unsigned CU_STREAM_NON_BLOCKING = 0x1;
inline constexpr unsigned CU_EVENT_DEFAULT = 0x0;
/// cuMemHostAlloc's CU_MEMHOSTALLOC_DEVICEMAP (a macro in cuda.h): map the memory into the GPU.
inline constexpr unsigned host_alloc_device_map = 0x2;

/// Kernels may use this much dynamic shared memory without opting in with
/// CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES.
inline constexpr unsigned default_dynamic_shared_limit_bytes = 48 * 1024;

// Entry-point signatures, named after the versioned symbol they are resolved
// from (cuda.h's macros map the plain names to these).
using cuInit_t = CUresult (*)(unsigned flags);
using cuGetErrorName_t = CUresult (*)(CUresult error, const char** name);
using cuDeviceGetCount_t = CUresult (*)(int* count);
using cuDeviceGet_t = CUresult (*)(CUdevice* device, int ordinal);
using cuDeviceGetName_t = CUresult (*)(char* name, int length, CUdevice device);
using cuDeviceGetAttribute_t = CUresult (*)(int* value, int attribute, CUdevice device);
using cuDevicePrimaryCtxRetain_t = CUresult (*)(CUcontext* context, CUdevice device);
using cuDevicePrimaryCtxRelease_v2_t = CUresult (*)(CUdevice device);
using cuCtxSetCurrent_t = CUresult (*)(CUcontext context);
using cuModuleLoadData_t = CUresult (*)(CUmodule* module, const void* image);
using cuModuleLoadDataEx_t = CUresult (*)(CUmodule* module, const void* image, unsigned option_count, int* options,
                                          void** option_values);
using cuModuleGetFunction_t = CUresult (*)(CUfunction* function, CUmodule module, const char* name);
using cuModuleUnload_t = CUresult (*)(CUmodule module);
using cuFuncSetAttribute_t = CUresult (*)(CUfunction function, int attribute, int value);
using cuLaunchKernel_t = CUresult (*)(CUfunction function, unsigned grid_x, unsigned grid_y, unsigned grid_z,
                                      unsigned block_x, unsigned block_y, unsigned block_z,
                                      unsigned dynamic_shared_bytes, CUstream stream, void** parameters, void** extra);
using cuMemAlloc_v2_t = CUresult (*)(CUdeviceptr* address, decltype(sizeof(0)) bytes);
using cuMemFree_v2_t = CUresult (*)(CUdeviceptr address);
using cuMemcpyHtoD_v2_t = CUresult (*)(CUdeviceptr destination, const void* source, decltype(sizeof(0)) bytes);
using cuMemcpyDtoH_v2_t = CUresult (*)(void* destination, CUdeviceptr source, decltype(sizeof(0)) bytes);
using cuMemsetD8_v2_t = CUresult (*)(CUdeviceptr destination, unsigned char value, decltype(sizeof(0)) count);
using cuStreamCreate_t = CUresult (*)(CUstream* stream, unsigned flags);
using cuStreamDestroy_v2_t = CUresult (*)(CUstream stream);
using cuStreamSynchronize_t = CUresult (*)(CUstream stream);
using cuEventCreate_t = CUresult (*)(CUevent* event, unsigned flags);
using cuEventRecord_t = CUresult (*)(CUevent event, CUstream stream);
using cuEventSynchronize_t = CUresult (*)(CUevent event);
using cuEventElapsedTime_t = CUresult (*)(float* milliseconds, CUevent start, CUevent end);
using cuEventDestroy_v2_t = CUresult (*)(CUevent event);
using cuMemHostAlloc_t = CUresult (*)(void** host, decltype(sizeof(0)) bytes, unsigned flags);
using cuMemFreeHost_t = CUresult (*)(void* host);
using cuMemHostGetDevicePointer_v2_t = CUresult (*)(CUdeviceptr* address, void* host, unsigned flags);
using cuModuleGetGlobal_v2_t = CUresult (*)(CUdeviceptr* address, decltype(sizeof(0))* bytes, CUmodule module,
                                            const char* name);

}  // namespace kiln::cuda::abi
