// The CUDA driver loader and resource owners: messages without a driver and
// with the stub library, kiln's ABI declarations against cuda.h, every
// wrapper against an in-process fake driver, and a real GPU where there is one.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <map>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <vector>

#include "kiln/runtime/cuda/driver.hpp"
#include "kiln/runtime/cuda/entry_points.hpp"
#include "kiln/runtime/cuda/resources.hpp"
#include "scoped_environment.hpp"

#if __has_include(</usr/local/cuda/include/cuda.h>)
#include </usr/local/cuda/include/cuda.h>
#define KILN_TEST_HAS_CUDA_H 1
#endif

namespace kiln::cuda {
namespace {

constexpr const char* stub_library = "/usr/local/cuda/lib64/stubs/libcuda.so";

using kiln::test::ScopedEnvironment;

// ---- Loading -------------------------------------------------------------------

TEST(CudaDriver, MissingLibraryGivesOneLineReason) {
  ScopedEnvironment library("KILN_LIBCUDA", "/nonexistent/libcuda.so.1");
  EXPECT_EQ(Driver::library_path(), "/nonexistent/libcuda.so.1");
  try {
    Driver::load(Driver::library_path());
    FAIL() << "loading a missing library succeeded";
  } catch (const DriverError& error) {
    std::string message = error.what();
    EXPECT_TRUE(message.starts_with("cuda: /nonexistent/libcuda.so.1 not found (named by KILN_LIBCUDA): ")) << message;
    EXPECT_NE(message.find("No such file"), std::string::npos) << message;
    EXPECT_EQ(message.find('\n'), std::string::npos) << message;
    EXPECT_EQ(error.result(), abi::CUDA_SUCCESS);
  }
}

TEST(CudaDriver, DefaultLibraryNameWithoutOverride) {
  ScopedEnvironment library("KILN_LIBCUDA", "");
  EXPECT_EQ(Driver::library_path(), "libcuda.so.1");
}

TEST(CudaDriver, ProbeWithoutDriverIsUnavailable) {
  ScopedEnvironment library("KILN_LIBCUDA", "/nonexistent/libcuda.so.1");
  // probe() would reuse a driver an earlier test in this process loaded on a
  // GPU machine; probing the library KILN_LIBCUDA names does not.
  ProbeResult result = probe(Driver::library_path());
  EXPECT_FALSE(result.available);
  EXPECT_TRUE(result.devices.empty());
  EXPECT_TRUE(result.message.starts_with("cuda: /nonexistent/libcuda.so.1 not found")) << result.message;
  EXPECT_EQ(result.message.find('\n'), std::string::npos) << result.message;
}

TEST(CudaDriver, StubLibraryFailsInCuInit) {
  if (!std::filesystem::exists(stub_library)) GTEST_SKIP() << "no CUDA toolkit stub library at " << stub_library;
  try {
    Driver::load(stub_library);
    FAIL() << "the stub library initialised";
  } catch (const DriverError& error) {
    EXPECT_STREQ(error.what(), "cuInit failed: CUDA_ERROR_STUB_LIBRARY (34)");
    EXPECT_EQ(error.result(), abi::CUDA_ERROR_STUB_LIBRARY);
  }
  ProbeResult result = probe(stub_library);
  EXPECT_FALSE(result.available);
  EXPECT_EQ(result.message, "cuInit failed: CUDA_ERROR_STUB_LIBRARY (34)");
}

TEST(CudaDriver, LibraryWithoutEntryPointsNamesTheSymbol) {
  try {
    Driver::load("libm.so.6");
    FAIL() << "libm loaded as a CUDA driver";
  } catch (const DriverError& error) {
    std::string message = error.what();
    EXPECT_TRUE(message.starts_with("cuda: libm.so.6 does not export cuInit (not a CUDA driver")) << message;
    EXPECT_EQ(message.find('\n'), std::string::npos) << message;
  }
}

// ---- Error names -----------------------------------------------------------------

TEST(CudaDriver, ErrorNamesAndMessages) {
  EXPECT_EQ(error_name(0), "CUDA_SUCCESS");
  EXPECT_EQ(error_name(2), "CUDA_ERROR_OUT_OF_MEMORY");
  EXPECT_EQ(error_name(34), "CUDA_ERROR_STUB_LIBRARY");
  EXPECT_EQ(error_name(218), "CUDA_ERROR_INVALID_PTX");
  EXPECT_EQ(error_name(700), "CUDA_ERROR_ILLEGAL_ADDRESS");
  EXPECT_EQ(error_name(999), "CUDA_ERROR_UNKNOWN");
  EXPECT_EQ(error_name(12345), "CUDA_ERROR_UNRECOGNIZED");
  EXPECT_EQ(error_name(-1), "CUDA_ERROR_UNRECOGNIZED");
  EXPECT_EQ(format_driver_error("cuInit", 34, error_name(34), ""), "cuInit failed: CUDA_ERROR_STUB_LIBRARY (34)");
  EXPECT_EQ(format_driver_error("cuMemAlloc_v2", 2, error_name(2), "allocating 64 bytes"),
            "cuMemAlloc_v2 failed: CUDA_ERROR_OUT_OF_MEMORY (2): allocating 64 bytes");
}

#ifdef KILN_TEST_HAS_CUDA_H
/// Two types pass a value the same way: same size, both pointers or neither,
/// both floating point or neither (enums and ints agree).
template <typename A, typename B>
constexpr bool same_abi_type = sizeof(A) == sizeof(B) && std::is_pointer_v<A> == std::is_pointer_v<B> &&
                               std::is_floating_point_v<A> == std::is_floating_point_v<B>;

template <typename R1, typename... A1, typename R2, typename... A2>
constexpr bool same_abi(R1 (*)(A1...), R2 (*)(A2...)) {
  if constexpr (sizeof...(A1) != sizeof...(A2)) return false;
  else return same_abi_type<R1, R2> && (same_abi_type<A1, A2> && ...);
}

// kiln declares the driver ABI itself; this checks each declaration against
// the toolkit's header where one is installed.
TEST(CudaDriver, AbiMatchesCudaHeader) {
  static_assert(sizeof(abi::CUdeviceptr) == sizeof(::CUdeviceptr));
  static_assert(sizeof(abi::CUdevice) == sizeof(::CUdevice));
  static_assert(sizeof(abi::CUresult) == sizeof(::CUresult));
  static_assert(sizeof(::CUdevice_attribute) == sizeof(int) && sizeof(::CUjit_option) == sizeof(int) &&
                sizeof(::CUfunction_attribute) == sizeof(int));
  static_assert(abi::CUDA_ERROR_STUB_LIBRARY == ::CUDA_ERROR_STUB_LIBRARY);
  static_assert(abi::CUDA_ERROR_NO_DEVICE == ::CUDA_ERROR_NO_DEVICE);
  static_assert(abi::CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT == ::CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT);
  static_assert(abi::CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR == ::CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR);
  static_assert(abi::CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR == ::CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR);
  static_assert(abi::CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN ==
                ::CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN);
  static_assert(abi::CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES ==
                ::CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES);
  static_assert(abi::CU_JIT_ERROR_LOG_BUFFER == ::CU_JIT_ERROR_LOG_BUFFER);
  static_assert(abi::CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES == ::CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES);
  static_assert(abi::CU_STREAM_NON_BLOCKING == ::CU_STREAM_NON_BLOCKING);
  static_assert(abi::CU_EVENT_DEFAULT == ::CU_EVENT_DEFAULT);
  // The same calling signatures: cuda.h's enums and opaque handles have the
  // size and kind of kiln's ints and handles.
  static_assert(same_abi(abi::cuInit_t{}, &::cuInit));
  static_assert(same_abi(abi::cuGetErrorName_t{}, &::cuGetErrorName));
  static_assert(same_abi(abi::cuDeviceGetCount_t{}, &::cuDeviceGetCount));
  static_assert(same_abi(abi::cuDeviceGet_t{}, &::cuDeviceGet));
  static_assert(same_abi(abi::cuDeviceGetName_t{}, &::cuDeviceGetName));
  static_assert(same_abi(abi::cuDeviceGetAttribute_t{}, &::cuDeviceGetAttribute));
  static_assert(same_abi(abi::cuDevicePrimaryCtxRetain_t{}, &::cuDevicePrimaryCtxRetain));
  static_assert(same_abi(abi::cuDevicePrimaryCtxRelease_v2_t{}, &::cuDevicePrimaryCtxRelease_v2));
  static_assert(same_abi(abi::cuCtxSetCurrent_t{}, &::cuCtxSetCurrent));
  static_assert(same_abi(abi::cuModuleLoadDataEx_t{}, &::cuModuleLoadDataEx));
  static_assert(same_abi(abi::cuModuleGetFunction_t{}, &::cuModuleGetFunction));
  static_assert(same_abi(abi::cuModuleUnload_t{}, &::cuModuleUnload));
  static_assert(same_abi(abi::cuFuncSetAttribute_t{}, &::cuFuncSetAttribute));
  static_assert(same_abi(abi::cuLaunchKernel_t{}, &::cuLaunchKernel));
  static_assert(same_abi(abi::cuMemAlloc_v2_t{}, &::cuMemAlloc_v2));
  static_assert(same_abi(abi::cuMemFree_v2_t{}, &::cuMemFree_v2));
  static_assert(same_abi(abi::cuMemcpyHtoD_v2_t{}, &::cuMemcpyHtoD_v2));
  static_assert(same_abi(abi::cuMemcpyDtoH_v2_t{}, &::cuMemcpyDtoH_v2));
  static_assert(same_abi(abi::cuMemsetD8_v2_t{}, &::cuMemsetD8_v2));
  static_assert(same_abi(abi::cuStreamCreate_t{}, &::cuStreamCreate));
  static_assert(same_abi(abi::cuStreamDestroy_v2_t{}, &::cuStreamDestroy_v2));
  static_assert(same_abi(abi::cuStreamSynchronize_t{}, &::cuStreamSynchronize));
  static_assert(same_abi(abi::cuEventCreate_t{}, &::cuEventCreate));
  static_assert(same_abi(abi::cuEventRecord_t{}, &::cuEventRecord));
  static_assert(same_abi(abi::cuEventSynchronize_t{}, &::cuEventSynchronize));
  static_assert(same_abi(abi::cuEventElapsedTime_t{}, &::cuEventElapsedTime_v2));
  static_assert(same_abi(abi::cuEventDestroy_v2_t{}, &::cuEventDestroy_v2));
  // Every name in kiln's table is cuda.h's name for that value.
#define KILN_EXPECT_RESULT_NAME(result) EXPECT_EQ(error_name(result), #result)
  KILN_EXPECT_RESULT_NAME(CUDA_ERROR_INVALID_VALUE);
  KILN_EXPECT_RESULT_NAME(CUDA_ERROR_NOT_INITIALIZED);
  KILN_EXPECT_RESULT_NAME(CUDA_ERROR_NO_DEVICE);
  KILN_EXPECT_RESULT_NAME(CUDA_ERROR_INVALID_IMAGE);
  KILN_EXPECT_RESULT_NAME(CUDA_ERROR_INVALID_CONTEXT);
  KILN_EXPECT_RESULT_NAME(CUDA_ERROR_NO_BINARY_FOR_GPU);
  KILN_EXPECT_RESULT_NAME(CUDA_ERROR_UNSUPPORTED_PTX_VERSION);
  KILN_EXPECT_RESULT_NAME(CUDA_ERROR_NOT_FOUND);
  KILN_EXPECT_RESULT_NAME(CUDA_ERROR_NOT_READY);
  KILN_EXPECT_RESULT_NAME(CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES);
  KILN_EXPECT_RESULT_NAME(CUDA_ERROR_LAUNCH_FAILED);
  KILN_EXPECT_RESULT_NAME(CUDA_ERROR_MISALIGNED_ADDRESS);
  KILN_EXPECT_RESULT_NAME(CUDA_ERROR_NOT_SUPPORTED);
  KILN_EXPECT_RESULT_NAME(CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED);
  KILN_EXPECT_RESULT_NAME(CUDA_ERROR_KEY_ROTATION);
#undef KILN_EXPECT_RESULT_NAME
}
#else
TEST(CudaDriver, AbiMatchesCudaHeader) {
  GTEST_SKIP() << "no CUDA toolkit header at /usr/local/cuda/include/cuda.h to check kiln's declarations against";
}
#endif

// ---- Resource owners against an in-process fake driver ----------------------------

/// What the fake driver was asked to do; reset by each test.
struct FakeDriverState {
  int contexts_retained = 0;
  int contexts_released = 0;
  abi::CUresult set_current_result = abi::CUDA_SUCCESS;
  std::map<abi::CUdeviceptr, std::vector<unsigned char>> allocations;
  int frees_of_unknown_addresses = 0;
  abi::CUdeviceptr next_address = 0x10000;
  int streams_alive = 0;
  int events_alive = 0;
  int modules_alive = 0;
  std::vector<std::string> calls;
  int allowed_shared_bytes = 48 * 1024;
  std::uint64_t launched_pointer_argument = 0;
  int host_allocations_alive = 0;
  std::uint64_t fault_record_global = 0;  // the module's one .global, kiln_fault_record
};
FakeDriverState fake;

abi::CUfunction fake_function() { return reinterpret_cast<abi::CUfunction>(std::uintptr_t(0xF0)); }

EntryPoints fake_entry_points() {
  EntryPoints entry;
  entry.init = [](unsigned) { return abi::CUDA_SUCCESS; };
  entry.get_error_name = [](abi::CUresult, const char**) { return abi::CUresult(1); };
  entry.device_get_count = [](int* count) { return *count = 1, abi::CUDA_SUCCESS; };
  entry.device_get = [](abi::CUdevice* device, int ordinal) {
    return ordinal == 0 ? (*device = 0, abi::CUDA_SUCCESS) : abi::CUresult(101);
  };
  entry.device_get_name = [](char* name, int length, abi::CUdevice) {
    std::strncpy(name, "Fake GPU", static_cast<std::size_t>(length));
    return abi::CUDA_SUCCESS;
  };
  entry.device_get_attribute = [](int* value, int attribute, abi::CUdevice) {
    *value = attribute == abi::CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT       ? 132
             : attribute == abi::CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR ? 9
                                                                              : 0;
    return abi::CUDA_SUCCESS;
  };
  entry.primary_context_retain = [](abi::CUcontext* context, abi::CUdevice) {
    ++fake.contexts_retained;
    *context = reinterpret_cast<abi::CUcontext>(std::uintptr_t(0xC0));
    return abi::CUDA_SUCCESS;
  };
  entry.primary_context_release = [](abi::CUdevice) { return ++fake.contexts_released, abi::CUDA_SUCCESS; };
  entry.context_set_current = [](abi::CUcontext) { return fake.set_current_result; };
  entry.module_load_data_ex = [](abi::CUmodule* module, const void* image, unsigned count, int* options,
                                 void** values) {
    if (std::string(static_cast<const char*>(image)).find(".entry") == std::string::npos) {
      for (unsigned i = 0; i < count; ++i)
        if (options[i] == abi::CU_JIT_ERROR_LOG_BUFFER)
          std::strcpy(static_cast<char*>(values[i]),
                      "ptxas application ptx input, line 1; error   : bad\n\nsecond line\n");
      return abi::CUresult(218);
    }
    ++fake.modules_alive;
    *module = reinterpret_cast<abi::CUmodule>(std::uintptr_t(0xA0));
    return abi::CUDA_SUCCESS;
  };
  entry.module_get_function = [](abi::CUfunction* function, abi::CUmodule, const char* name) {
    if (std::string(name) != "add_index") return abi::CUresult(500);
    *function = fake_function();
    return abi::CUDA_SUCCESS;
  };
  entry.module_unload = [](abi::CUmodule) { return --fake.modules_alive, abi::CUDA_SUCCESS; };
  entry.function_set_attribute = [](abi::CUfunction, int attribute, int value) {
    fake.calls.push_back("set attribute " + std::to_string(attribute) + " = " + std::to_string(value));
    fake.allowed_shared_bytes = value;
    return abi::CUDA_SUCCESS;
  };
  entry.launch_kernel = [](abi::CUfunction function, unsigned gx, unsigned, unsigned, unsigned bx, unsigned, unsigned,
                           unsigned shared, abi::CUstream, void** parameters, void**) {
    fake.calls.push_back("launch " + std::to_string(gx) + "x" + std::to_string(bx) + " shared " +
                         std::to_string(shared));
    if (function != fake_function() || static_cast<int>(shared) > fake.allowed_shared_bytes || bx > 1024)
      return abi::CUresult(1);
    std::memcpy(&fake.launched_pointer_argument, parameters[0], sizeof(std::uint64_t));
    return abi::CUDA_SUCCESS;
  };
  entry.memory_allocate = [](abi::CUdeviceptr* address, std::size_t bytes) {
    if (bytes > (std::size_t(1) << 30)) return abi::CUresult(2);
    *address = fake.next_address;
    fake.next_address += bytes;
    fake.allocations[*address].resize(bytes);
    return abi::CUDA_SUCCESS;
  };
  entry.memory_free = [](abi::CUdeviceptr address) {
    if (fake.allocations.erase(address)) return abi::CUDA_SUCCESS;
    ++fake.frees_of_unknown_addresses;
    return abi::CUresult(1);
  };
  entry.copy_host_to_device = [](abi::CUdeviceptr address, const void* source, std::size_t bytes) {
    std::memcpy(fake.allocations.at(address).data(), source, bytes);
    return abi::CUDA_SUCCESS;
  };
  entry.copy_device_to_host = [](void* destination, abi::CUdeviceptr address, std::size_t bytes) {
    std::memcpy(destination, fake.allocations.at(address).data(), bytes);
    return abi::CUDA_SUCCESS;
  };
  entry.memory_set_bytes = [](abi::CUdeviceptr address, unsigned char value, std::size_t count) {
    std::vector<unsigned char>& bytes = fake.allocations.at(address);
    std::fill(bytes.begin(), bytes.begin() + static_cast<std::ptrdiff_t>(count), value);
    fake.calls.push_back("memset " + std::to_string(count));
    return abi::CUDA_SUCCESS;
  };
  entry.stream_create = [](abi::CUstream* stream, unsigned flags) {
    if (flags != abi::CU_STREAM_NON_BLOCKING) return abi::CUresult(1);
    ++fake.streams_alive;
    *stream = reinterpret_cast<abi::CUstream>(std::uintptr_t(0x50));
    return abi::CUDA_SUCCESS;
  };
  entry.stream_destroy = [](abi::CUstream) { return --fake.streams_alive, abi::CUDA_SUCCESS; };
  entry.stream_synchronize = [](abi::CUstream stream) {
    if (!stream) fake.calls.push_back("synchronize the legacy stream");
    return abi::CUDA_SUCCESS;
  };
  entry.event_create = [](abi::CUevent* event, unsigned) {
    *event = reinterpret_cast<abi::CUevent>(std::uintptr_t(0xE0 + fake.events_alive++));
    return abi::CUDA_SUCCESS;
  };
  entry.event_record = [](abi::CUevent, abi::CUstream) { return abi::CUDA_SUCCESS; };
  entry.event_synchronize = [](abi::CUevent) { return abi::CUDA_SUCCESS; };
  entry.event_elapsed_time = [](float* milliseconds, abi::CUevent start, abi::CUevent end) {
    *milliseconds = start == end ? 0.0f : 1.5f;
    return abi::CUDA_SUCCESS;
  };
  entry.event_destroy = [](abi::CUevent) { return --fake.events_alive, abi::CUDA_SUCCESS; };
  entry.host_memory_allocate = [](void** host, std::size_t bytes, unsigned flags) {
    if (flags != abi::host_alloc_device_map) return abi::CUresult(1);
    *host = std::malloc(bytes);
    return ++fake.host_allocations_alive, abi::CUDA_SUCCESS;
  };
  entry.host_memory_free = [](void* host) {
    std::free(host);
    return --fake.host_allocations_alive, abi::CUDA_SUCCESS;
  };
  entry.host_memory_device_address = [](abi::CUdeviceptr* address, void* host, unsigned) {
    *address = reinterpret_cast<abi::CUdeviceptr>(host) + 0x100000;
    return abi::CUDA_SUCCESS;
  };
  entry.module_get_global = [](abi::CUdeviceptr* address, std::size_t* bytes, abi::CUmodule, const char* name) {
    if (std::string(name) != "kiln_fault_record") return abi::CUDA_ERROR_NOT_FOUND;
    *address = reinterpret_cast<abi::CUdeviceptr>(&fake.fault_record_global);
    *bytes = sizeof fake.fault_record_global;
    return abi::CUDA_SUCCESS;
  };
  return entry;
}

class FakeCudaDriver : public ::testing::Test {
 protected:
  void SetUp() override { fake = FakeDriverState(); }
  std::unique_ptr<Driver> driver = Driver::from_entry_points(fake_entry_points(), "the fake driver");
};

TEST_F(FakeCudaDriver, ProbeListsDevices) {
  ProbeResult result = probe(*driver);
  EXPECT_TRUE(result.available);
  EXPECT_EQ(result.message, "cuda: 1 GPU: Fake GPU (sm_90, 132 SMs)");
  ASSERT_EQ(result.devices.size(), 1u);
  EXPECT_EQ(result.devices[0].compute_capability_major, 9);
  EXPECT_EQ(result.devices[0].arch(), "sm_90");
}

TEST_F(FakeCudaDriver, MissingEntryPointIsNamed) {
  EntryPoints entry = fake_entry_points();
  entry.event_elapsed_time = nullptr;
  EXPECT_THROW(
      {
        try {
          Driver::from_entry_points(entry, "a partial driver");
        } catch (const DriverError& error) {
          EXPECT_STREQ(error.what(), "cuda: a partial driver lacks the entry point cuEventElapsedTime_v2");
          throw;
        }
      },
      DriverError);
}

TEST_F(FakeCudaDriver, FailedCallNamesCallResultAndContext) {
  // The fake's cuGetErrorName fails, so the name comes from kiln's table.
  try {
    driver->device_info(3);
    FAIL() << "device 3 exists";
  } catch (const DriverError& error) {
    EXPECT_STREQ(error.what(), "cuDeviceGet failed: CUDA_ERROR_INVALID_DEVICE (101): device 3");
    EXPECT_EQ(error.result(), 101);
  }
}

TEST_F(FakeCudaDriver, ContextIsReleasedEvenWhenMakingItCurrentFails) {
  {
    PrimaryContext context(*driver, 0);
    EXPECT_EQ(fake.contexts_retained, 1);
    EXPECT_EQ(fake.contexts_released, 0);
  }
  EXPECT_EQ(fake.contexts_released, 1);
  fake.set_current_result = 201;
  EXPECT_THROW(PrimaryContext(*driver, 0), DriverError);
  EXPECT_EQ(fake.contexts_retained, 2);
  EXPECT_EQ(fake.contexts_released, 2);
}

TEST_F(FakeCudaDriver, MemoryRoundTripAndBounds) {
  {
    DeviceMemory memory(*driver, 16);
    std::vector<std::uint32_t> in = {1, 2, 3, 4}, out(4);
    memory.copy_from_host(in.data(), 16);
    memory.copy_to_host(out.data(), 16);
    EXPECT_EQ(in, out);
    try {
      memory.copy_from_host(in.data(), 32);
      FAIL() << "copied past the allocation";
    } catch (const std::out_of_range& error) {
      EXPECT_STREQ(error.what(), "cuda: copying 32 bytes into a 16-byte device allocation");
    }
    DeviceMemory empty(*driver, 0);
    EXPECT_EQ(empty.address(), 0u);
    EXPECT_EQ(fake.allocations.size(), 1u);
  }
  EXPECT_TRUE(fake.allocations.empty());
  try {
    DeviceMemory huge(*driver, std::size_t(1) << 40);
    FAIL() << "allocated a terabyte";
  } catch (const DriverError& error) {
    EXPECT_STREQ(error.what(), "cuMemAlloc_v2 failed: CUDA_ERROR_OUT_OF_MEMORY (2): allocating 1099511627776 bytes");
  }
}

TEST_F(FakeCudaDriver, FillZerosClearsEveryByteAndWaitsForIt) {
  DeviceMemory memory(*driver, 12);
  std::vector<std::uint32_t> in = {7, 8, 9}, out(3);
  memory.copy_from_host(in.data(), 12);
  memory.fill_zeros();
  memory.copy_to_host(out.data(), 12);
  EXPECT_EQ(out, std::vector<std::uint32_t>(3, 0));
  // The memset runs in the legacy stream, so kiln waits for it there.
  EXPECT_EQ(fake.calls, (std::vector<std::string>{"memset 12", "synchronize the legacy stream"}));
  DeviceMemory empty(*driver, 0);
  empty.fill_zeros();
  EXPECT_EQ(fake.calls.size(), 2u);
}

TEST_F(FakeCudaDriver, MovedOwnersReleaseOnce) {
  {
    std::vector<DeviceMemory> buffers;
    for (int i = 0; i < 4; ++i) buffers.emplace_back(*driver, 64);  // reallocation moves them
    DeviceMemory taken = std::move(buffers[0]);
    EXPECT_EQ(buffers[0].address(), 0u);
    EXPECT_EQ(buffers[0].size(), 0u);
    EXPECT_EQ(taken.size(), 64u);
    taken = DeviceMemory(*driver, 8);
    EXPECT_EQ(fake.allocations.size(), 4u);
    std::vector<Stream> streams;
    for (int i = 0; i < 3; ++i) streams.emplace_back(*driver);
    std::vector<Event> events;
    for (int i = 0; i < 3; ++i) events.emplace_back(*driver);
    EXPECT_EQ(fake.streams_alive, 3);
    EXPECT_EQ(fake.events_alive, 3);
  }
  EXPECT_TRUE(fake.allocations.empty());
  EXPECT_EQ(fake.frees_of_unknown_addresses, 0);
  EXPECT_EQ(fake.streams_alive, 0);
  EXPECT_EQ(fake.events_alive, 0);
}

TEST_F(FakeCudaDriver, ModuleLoadFailureCarriesTheJitLogOnOneLine) {
  try {
    Module module(*driver, "not ptx", "softmax.ptx");
    FAIL() << "loaded an invalid image";
  } catch (const DriverError& error) {
    EXPECT_STREQ(error.what(),
                 "cuModuleLoadDataEx failed: CUDA_ERROR_INVALID_PTX (218): loading softmax.ptx: ptxas application "
                 "ptx input, line 1; error   : bad; second line");
  }
  EXPECT_EQ(fake.modules_alive, 0);
}

TEST_F(FakeCudaDriver, MappedHostMemoryAndModuleGlobals) {
  {
    MappedHostMemory memory(*driver, 1024);
    EXPECT_EQ(fake.host_allocations_alive, 1);
    EXPECT_EQ(memory.device_address(), reinterpret_cast<abi::CUdeviceptr>(memory.host()) + 0x100000);
    Module module(*driver, ".entry add_index", "test.ptx");
    EXPECT_EQ(module.global("kiln_fault_record"), reinterpret_cast<abi::CUdeviceptr>(&fake.fault_record_global));
    EXPECT_EQ(module.global("missing"), std::nullopt);
  }
  EXPECT_EQ(fake.host_allocations_alive, 0);
}

TEST_F(FakeCudaDriver, LaunchOptsIntoLargeSharedMemoryOnce) {
  Module module(*driver, ".entry add_index", "test.ptx");
  EXPECT_EQ(fake.modules_alive, 1);
  EXPECT_THROW(module.kernel("missing"), DriverError);
  Kernel kernel = module.kernel("add_index");
  Stream stream(*driver);
  std::uint64_t pointer = 0x1234;
  void* parameters[] = {&pointer};
  kernel.launch({4}, {128}, 32 * 1024, stream, parameters);
  kernel.launch({4}, {128}, 64 * 1024, stream, parameters);
  kernel.launch({4}, {128}, 64 * 1024, stream, parameters);
  // Another handle of the same function shares the allowance: it raises it
  // but never lowers it under the first handle's launches.
  Kernel other = module.kernel("add_index");
  other.launch({1}, {32}, 96 * 1024, stream, parameters);
  kernel.launch({1}, {32}, 64 * 1024, stream, parameters);
  EXPECT_EQ(fake.calls, (std::vector<std::string>{"launch 4x128 shared 32768", "set attribute 8 = 65536",
                                                  "launch 4x128 shared 65536", "launch 4x128 shared 65536",
                                                  "set attribute 8 = 98304", "launch 1x32 shared 98304",
                                                  "launch 1x32 shared 65536"}));
  EXPECT_EQ(fake.launched_pointer_argument, 0x1234u);
  try {
    kernel.launch({4, 2}, {2048}, 0, stream, parameters);
    FAIL() << "launched 2048 threads per block";
  } catch (const DriverError& error) {
    EXPECT_STREQ(error.what(),
                 "cuLaunchKernel failed: CUDA_ERROR_INVALID_VALUE (1): kernel `add_index`, grid (4, 2, 1), block "
                 "(2048, 1, 1), 0 bytes of dynamic shared memory");
  }
}

TEST_F(FakeCudaDriver, EventsTimeAndAreDestroyed) {
  {
    Stream stream(*driver);
    Event start(*driver), end(*driver);
    start.record(stream);
    end.record(stream);
    end.synchronize();
    EXPECT_FLOAT_EQ(elapsed_milliseconds(*driver, start, end), 1.5f);
    EXPECT_EQ(fake.events_alive, 2);
  }
  EXPECT_EQ(fake.events_alive, 0);
  EXPECT_EQ(fake.streams_alive, 0);
}

// ---- A real GPU ---------------------------------------------------------------------

// Stores value + threadIdx.x through dynamic shared memory at offset 60 KiB,
// so it needs the opt-in above 48 KiB.
constexpr const char* add_index_ptx = R"(.version 7.0
.target sm_80
.address_size 64
.extern .shared .align 16 .b8 dynamic_shared[];
.visible .entry add_index(.param .u64 out, .param .u32 value)
{
  .reg .b32 %r<6>;
  .reg .b64 %rd<5>;
  ld.param.u64 %rd1, [out];
  ld.param.u32 %r1, [value];
  mov.u32 %r2, %tid.x;
  add.u32 %r3, %r1, %r2;
  mov.u32 %r4, dynamic_shared;
  mad.lo.u32 %r5, %r2, 4, %r4;
  add.u32 %r5, %r5, 61440;
  st.shared.u32 [%r5], %r3;
  bar.sync 0;
  ld.shared.u32 %r3, [%r5];
  cvta.to.global.u64 %rd2, %rd1;
  mul.wide.u32 %rd3, %r2, 4;
  add.u64 %rd4, %rd2, %rd3;
  st.global.u32 [%rd4], %r3;
  ret;
}
)";

TEST(CudaGpu, AllocateCopyAndTimeAnEmptyEventPair) {
  ProbeResult found = probe();
  if (!found.available) GTEST_SKIP() << "no GPU: " << found.message;
  const Driver& driver = Driver::instance();
  PrimaryContext context(driver, 0);
  std::vector<std::uint32_t> in(1000), out(1000);
  for (std::size_t i = 0; i < in.size(); ++i) in[i] = static_cast<std::uint32_t>(i * 2654435761u);
  DeviceMemory memory(driver, in.size() * 4);
  memory.copy_from_host(in.data(), in.size() * 4);
  memory.copy_to_host(out.data(), out.size() * 4);
  EXPECT_EQ(in, out);
  Stream stream(driver);
  Event start(driver), end(driver);
  start.record(stream);
  end.record(stream);
  end.synchronize();
  float milliseconds = elapsed_milliseconds(driver, start, end);
  EXPECT_GE(milliseconds, 0.0f);
  EXPECT_LT(milliseconds, 100.0f);
}

TEST(CudaGpu, LaunchWithLargeDynamicSharedMemory) {
  ProbeResult found = probe();
  if (!found.available) GTEST_SKIP() << "no GPU: " << found.message;
  const Driver& driver = Driver::instance();
  PrimaryContext context(driver, 0);
  Module module(driver, add_index_ptx, "add_index.ptx");
  Kernel kernel = module.kernel("add_index");
  DeviceMemory memory(driver, 256 * 4);
  Stream stream(driver);
  abi::CUdeviceptr address = memory.address();
  std::uint32_t value = 1000;
  void* parameters[] = {&address, &value};
  kernel.launch({1}, {256}, 64 * 1024, stream, parameters);
  stream.synchronize();
  std::vector<std::uint32_t> out(256);
  memory.copy_to_host(out.data(), out.size() * 4);
  for (std::uint32_t i = 0; i < 256; ++i) EXPECT_EQ(out[i], 1000 + i) << "thread " << i;
}

}  // namespace
}  // namespace kiln::cuda
