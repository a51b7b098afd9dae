// A stand-in for libcuda.so.1 that the `cuda` device's tests load through
// KILN_LIBCUDA where there is no GPU: one "Fake GPU" (sm_90, 132 SMs) whose
// memory is host memory and whose launches run nothing but are recorded, with
// the bytes of each parameter (read from the loaded PTX's .entry signature;
// a cubin's parameters are not parsed). kiln_fake_cuda_record() hands the
// record to the tests; kiln_fake_cuda_set_shared_memory_optin() sets the
// shared memory one block may opt into (227 KiB, as on an H100, until set);
// kiln_fake_cuda_fault_next_launch() makes the next launch stop as a kernel
// at a fault does: it fills the fault record the module's kiln_fault_record
// global points to (kiln/lowering/fault_record.hpp), if any, and the next
// cuStreamSynchronize fails with CUDA_ERROR_ILLEGAL_INSTRUCTION.
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <map>
#include <memory>
#include <mutex>
#include <regex>
#include <string>
#include <vector>

namespace {

using CUresult = int;
using CUdeviceptr = unsigned long long;

constexpr CUresult success = 0;
constexpr CUresult invalid_value = 1;
constexpr CUresult invalid_device = 101;
constexpr CUresult not_found = 500;
constexpr CUresult illegal_instruction = 715;

struct Function;
struct Module {
  bool is_cubin = false;
  std::map<std::string, std::vector<int>> parameter_sizes;  // by entry name
  std::map<std::string, std::uint64_t> u64_globals;         // the .global .u64 variables of the PTX, by name
  std::vector<std::unique_ptr<Function>> functions;         // handed out; unloading frees them, as in CUDA
};

struct Function {
  const Module* module;
  std::string name;
};

/// What the tests read back: one line per event ("alloc 4000", "memset
/// 4000", "load ptx", "set attribute add_one 8 = 65536", "launch add_one grid
/// 2x1x1 block 128 shared 0 params <address>:8 <address>:8 3:4", "unload",
/// "free").
struct Record {
  std::mutex mutex;
  std::vector<std::string> events;
};

Record record;
int shared_memory_optin_bytes = 227 * 1024;

/// The fault the next launch stops at (kiln_fake_cuda_fault_next_launch).
struct PendingFault {
  bool next_launch = false;
  bool at_synchronize = false;
  std::string format;
  std::int64_t values[6] = {};
};
PendingFault pending_fault;

void log(const std::string& event) {
  std::lock_guard lock(record.mutex);
  record.events.push_back(event);
}

/// The bytes of a PTX parameter type: "u64" is 8.
int size_of(const std::string& type) { return std::stoi(type.substr(1)) / 8; }

}  // namespace

extern "C" {

const std::vector<std::string>* kiln_fake_cuda_record() { return &record.events; }
void kiln_fake_cuda_set_shared_memory_optin(int bytes) { shared_memory_optin_bytes = bytes; }
void kiln_fake_cuda_fault_next_launch(const char* format, const std::int64_t* values) {
  pending_fault.next_launch = true;
  pending_fault.format = format;
  std::memcpy(pending_fault.values, values, sizeof pending_fault.values);
}

CUresult cuInit(unsigned) { return success; }
CUresult cuGetErrorName(CUresult, const char** name) {
  *name = "CUDA_ERROR_FAKE";
  return success;
}
CUresult cuDeviceGetCount(int* count) { return *count = 1, success; }
CUresult cuDeviceGet(int* device, int ordinal) { return ordinal == 0 ? (*device = 0, success) : invalid_device; }
CUresult cuDeviceGetName(char* name, int length, int) {
  std::strncpy(name, "Fake GPU", static_cast<std::size_t>(length));
  return success;
}
CUresult cuDeviceGetAttribute(int* value, int attribute, int) {
  // SM count, compute capability 9.0, opt-in shared memory per block.
  *value = attribute == 16 ? 132 : attribute == 75 ? 9 : attribute == 97 ? shared_memory_optin_bytes : 0;
  return success;
}
CUresult cuDevicePrimaryCtxRetain(void** context, int) { return *context = reinterpret_cast<void*>(0xC0), success; }
CUresult cuDevicePrimaryCtxRelease_v2(int) { return success; }
CUresult cuCtxSetCurrent(void*) { return success; }

CUresult cuModuleLoadDataEx(void** module, const void* image, unsigned, int*, void**) {
  auto* loaded = new Module;
  const char* bytes = static_cast<const char*>(image);
  loaded->is_cubin = std::memcmp(bytes,
                                 "\x7f"
                                 "ELF",
                                 4) == 0;
  if (!loaded->is_cubin) {
    const std::string ptx = bytes;
    const std::regex entry(R"(\.entry\s+([A-Za-z0-9_$]+)\s*\(([^)]*)\))");
    const std::regex parameter(R"(\.param\s+\.([a-z]+[0-9]+))");
    for (std::sregex_iterator it(ptx.begin(), ptx.end(), entry), end; it != end; ++it) {
      std::vector<int>& sizes = loaded->parameter_sizes[(*it)[1]];
      const std::string list = (*it)[2];
      for (std::sregex_iterator p(list.begin(), list.end(), parameter); p != end; ++p)
        sizes.push_back(size_of((*p)[1]));
    }
    const std::regex global(R"(\.global\s+\.align\s+8\s+\.u64\s+([A-Za-z0-9_$]+);)");
    for (std::sregex_iterator it(ptx.begin(), ptx.end(), global), end; it != end; ++it)
      loaded->u64_globals[(*it)[1]] = 0;
  }
  log(loaded->is_cubin ? "load cubin" : "load ptx");
  *module = loaded;
  return success;
}
CUresult cuModuleGetFunction(void** function, void* module, const char* name) {
  auto* loaded = static_cast<Module*>(module);
  if (!loaded->is_cubin && !loaded->parameter_sizes.count(name)) return not_found;
  *function = loaded->functions.emplace_back(new Function{loaded, name}).get();
  return success;
}
CUresult cuModuleGetGlobal_v2(CUdeviceptr* address, std::size_t* bytes, void* module, const char* name) {
  auto* loaded = static_cast<Module*>(module);
  const auto found = loaded->u64_globals.find(name);
  if (found == loaded->u64_globals.end()) return not_found;
  *address = reinterpret_cast<CUdeviceptr>(&found->second);
  *bytes = sizeof found->second;
  return success;
}
CUresult cuModuleUnload(void* module) {
  delete static_cast<Module*>(module);
  log("unload");
  return success;
}
CUresult cuFuncSetAttribute(void* function, int attribute, int value) {
  log("set attribute " + static_cast<const Function*>(function)->name + " " + std::to_string(attribute) + " = " +
      std::to_string(value));
  return success;
}
CUresult cuLaunchKernel(void* function, unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by, unsigned bz,
                        unsigned shared, void*, void** parameters, void**) {
  const auto* f = static_cast<const Function*>(function);
  std::string event = "launch " + f->name + " grid " + std::to_string(gx) + "x" + std::to_string(gy) + "x" +
                      std::to_string(gz) + " block " + std::to_string(bx * by * bz) + " shared " +
                      std::to_string(shared) + " params";
  if (!f->module->is_cubin) {
    const std::vector<int>& sizes = f->module->parameter_sizes.at(f->name);
    for (std::size_t i = 0; i < sizes.size(); ++i) {
      std::uint64_t value = 0;
      std::memcpy(&value, parameters[i], static_cast<std::size_t>(sizes[i]));
      event += " " + std::to_string(value) + ":" + std::to_string(sizes[i]);
    }
  }
  log(event);
  if (pending_fault.next_launch) {
    pending_fault.next_launch = false;
    pending_fault.at_synchronize = true;
    const auto global = f->module->u64_globals.find("kiln_fault_record");
    if (global != f->module->u64_globals.end() && global->second != 0) {
      auto* fault_record = reinterpret_cast<char*>(global->second);
      const std::uint32_t written = 2;
      std::memcpy(fault_record + 8, pending_fault.values, sizeof pending_fault.values);
      std::memcpy(fault_record + 56, pending_fault.format.c_str(), pending_fault.format.size() + 1);
      std::memcpy(fault_record, &written, sizeof written);
    }
  }
  return success;
}

CUresult cuMemAlloc_v2(CUdeviceptr* address, std::size_t bytes) {
  void* memory = std::aligned_alloc(256, (bytes + 255) / 256 * 256);
  std::memset(memory, 0xAB, bytes);  // garbage until cuMemsetD8 zeroes it
  *address = reinterpret_cast<CUdeviceptr>(memory);
  log("alloc " + std::to_string(bytes));
  return success;
}
CUresult cuMemFree_v2(CUdeviceptr address) {
  std::free(reinterpret_cast<void*>(address));
  log("free");
  return success;
}
CUresult cuMemcpyHtoD_v2(CUdeviceptr destination, const void* source, std::size_t bytes) {
  std::memcpy(reinterpret_cast<void*>(destination), source, bytes);
  return success;
}
CUresult cuMemcpyDtoH_v2(void* destination, CUdeviceptr source, std::size_t bytes) {
  std::memcpy(destination, reinterpret_cast<const void*>(source), bytes);
  return success;
}
CUresult cuMemsetD8_v2(CUdeviceptr destination, unsigned char value, std::size_t count) {
  std::memset(reinterpret_cast<void*>(destination), value, count);
  log("memset " + std::to_string(count));
  return success;
}
CUresult cuStreamCreate(void** stream, unsigned) { return *stream = reinterpret_cast<void*>(0x50), success; }
CUresult cuStreamDestroy_v2(void*) { return success; }
CUresult cuStreamSynchronize(void*) {
  if (!pending_fault.at_synchronize) return success;
  pending_fault.at_synchronize = false;
  return illegal_instruction;
}
CUresult cuEventCreate(void** event, unsigned) { return *event = new int(0), success; }
CUresult cuEventRecord(void* event, void*) {
  static int clock = 0;
  *static_cast<int*>(event) = ++clock;
  return success;
}
CUresult cuEventSynchronize(void*) { return success; }
/// A quarter of a millisecond per clock tick between the two records.
CUresult cuEventElapsedTime_v2(float* milliseconds, void* start, void* end) {
  if (!start || !end) return invalid_value;
  *milliseconds = 0.25f * static_cast<float>(*static_cast<int*>(end) - *static_cast<int*>(start));
  return success;
}
CUresult cuMemHostAlloc(void** host, std::size_t bytes, unsigned) {
  *host = std::aligned_alloc(256, (bytes + 255) / 256 * 256);
  std::memset(*host, 0xAB, bytes);  // garbage until written
  return success;
}
CUresult cuMemFreeHost(void* host) {
  std::free(host);
  return success;
}
/// Mapped host memory has the same address on the fake GPU.
CUresult cuMemHostGetDevicePointer_v2(CUdeviceptr* address, void* host, unsigned) {
  *address = reinterpret_cast<CUdeviceptr>(host);
  return success;
}
CUresult cuEventDestroy_v2(void* event) {
  delete static_cast<int*>(event);
  return success;
}

}  // extern "C"
