// Owners of driver objects (primary context, module, device memory, stream,
// event) and kernel launch. Each releases its object when destroyed, and each
// failing call throws DriverError naming the call, the result and what was
// being done.
#pragma once

#include <cstddef>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <utility>

#include "kiln/runtime/cuda/driver.hpp"

namespace kiln::cuda {

/// A device's primary context, retained and made current on the calling
/// thread. The primary context is the one the CUDA runtime (and so PyTorch)
/// uses, so kiln's buffers and theirs live in the same address space.
class PrimaryContext {
 public:
  PrimaryContext(const Driver& driver, int ordinal);
  ~PrimaryContext();
  PrimaryContext(const PrimaryContext&) = delete;
  PrimaryContext& operator=(const PrimaryContext&) = delete;

  /// Makes the context current on the calling thread (each thread that calls
  /// the driver needs this once).
  void make_current() const;
  int ordinal() const { return ordinal_; }
  abi::CUcontext handle() const { return context_; }

 private:
  const Driver& driver_;
  int ordinal_;
  abi::CUdevice device_ = 0;
  abi::CUcontext context_ = nullptr;
};

/// A device allocation in the current context. Zero bytes allocate nothing
/// and have address 0. Movable; a moved-from allocation is empty.
class DeviceMemory {
 public:
  DeviceMemory(const Driver& driver, std::size_t bytes);
  ~DeviceMemory();
  DeviceMemory(DeviceMemory&& other) noexcept;
  DeviceMemory& operator=(DeviceMemory&& other) noexcept;

  /// Copies `bytes` from host memory to the start of this allocation
  /// (synchronous). Throws std::out_of_range when bytes exceed size().
  void copy_from_host(const void* source, std::size_t bytes);
  /// Copies the first `bytes` of this allocation to host memory (synchronous).
  void copy_to_host(void* destination, std::size_t bytes) const;
  /// Sets every byte to zero with cuMemsetD8 and waits for it: the memset
  /// runs in the legacy default stream, which work queued later on a
  /// non-blocking stream would not wait for.
  void fill_zeros();

  abi::CUdeviceptr address() const { return address_; }
  std::size_t size() const { return bytes_; }

 private:
  void check_fits(std::size_t bytes, const char* direction) const;

  const Driver* driver_;
  abi::CUdeviceptr address_ = 0;
  std::size_t bytes_;
};

/// A non-blocking stream in the current context (it does not wait for the
/// legacy default stream). Movable; a moved-from stream owns nothing.
class Stream {
 public:
  explicit Stream(const Driver& driver);
  ~Stream();
  Stream(Stream&& other) noexcept;
  Stream& operator=(Stream&& other) noexcept;

  /// Waits for all work queued on the stream.
  void synchronize() const;
  abi::CUstream handle() const { return stream_; }

 private:
  const Driver* driver_;
  abi::CUstream stream_ = nullptr;
};

/// A timing event in the current context. Movable; a moved-from event owns
/// nothing.
class Event {
 public:
  explicit Event(const Driver& driver);
  ~Event();
  Event(Event&& other) noexcept;
  Event& operator=(Event&& other) noexcept;

  void record(const Stream& stream);
  /// Waits until the work before the last record() has finished.
  void synchronize() const;
  abi::CUevent handle() const { return event_; }

 private:
  const Driver* driver_;
  abi::CUevent event_ = nullptr;
};

/// Milliseconds between two recorded events (the later one must have
/// completed: synchronize it first).
float elapsed_milliseconds(const Driver& driver, const Event& start, const Event& end);

/// Grid or block extents.
struct Dim3 {
  unsigned x = 1, y = 1, z = 1;
};

/// How much dynamic shared memory a kernel has been allowed, shared by every
/// Kernel handle of one module function: the attribute belongs to the
/// function, so handles must never lower it under each other's launches.
struct DynamicSharedAllowance {
  std::mutex mutex;
  unsigned allowed_bytes = abi::default_dynamic_shared_limit_bytes;
};

/// Pinned host memory mapped into the GPU's address space (the
/// current context's): what kernels write there the host reads directly,
/// even after a kernel stopped the context.
class MappedHostMemory {
 public:
  MappedHostMemory(const Driver& driver, std::size_t bytes);
  ~MappedHostMemory();
  MappedHostMemory(const MappedHostMemory&) = delete;
  MappedHostMemory& operator=(const MappedHostMemory&) = delete;

  void* host() const { return host_; }
  abi::CUdeviceptr device_address() const { return device_address_; }

 private:
  const Driver& driver_;
  void* host_ = nullptr;
  abi::CUdeviceptr device_address_ = 0;
};

/// A kernel of a loaded module. Copies share the handle and the allowance;
/// the module must outlive them.
class Kernel {
 public:
  Kernel(const Driver& driver, abi::CUfunction function, std::string name,
         std::shared_ptr<DynamicSharedAllowance> allowance)
      : driver_(&driver), function_(function), name_(std::move(name)), allowance_(std::move(allowance)) {}

  /// Queues the kernel on `stream`. `parameters` holds one pointer per kernel
  /// parameter, to that parameter's value. Dynamic shared memory above 48 KiB
  /// is opted into first; the allowance only grows, once per new maximum.
  void launch(Dim3 grid, Dim3 block, unsigned dynamic_shared_bytes, const Stream& stream, void** parameters);
  /// Opts the function into `dynamic_shared_bytes` of dynamic shared memory
  /// per block when that is above 48 KiB and above what it was allowed before
  /// (one cuFuncSetAttribute); nothing otherwise.
  void allow_dynamic_shared_memory(unsigned dynamic_shared_bytes);

  const std::string& name() const { return name_; }
  abi::CUfunction handle() const { return function_; }

 private:
  const Driver* driver_;
  abi::CUfunction function_;
  std::string name_;
  std::shared_ptr<DynamicSharedAllowance> allowance_;
};

/// A module loaded into the current context from PTX text or a cubin image.
class Module {
 public:
  /// `name` says where the image came from, for messages. A PTX image is
  /// JIT-compiled by the driver; its error log becomes part of the message.
  Module(const Driver& driver, const std::string& image, std::string name);
  ~Module();
  Module(const Module&) = delete;
  Module& operator=(const Module&) = delete;

  /// The kernel called `kernel_name` (its PTX entry name). Thread safe.
  Kernel kernel(const std::string& kernel_name) const;
  /// The address of the module's global variable `name`; nullopt when it has none.
  std::optional<abi::CUdeviceptr> global(const std::string& name) const;
  abi::CUmodule handle() const { return module_; }

 private:
  const Driver& driver_;
  std::string name_;
  abi::CUmodule module_ = nullptr;
  mutable std::mutex allowances_mutex_;
  mutable std::map<std::string, std::shared_ptr<DynamicSharedAllowance>> allowances_;
};

}  // namespace kiln::cuda
