// The CUDA driver, loaded at run time with dlopen: errors, the loader and the
// probe that tells `kiln info` and the device choice whether a GPU is present.
#pragma once

#include <memory>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "kiln/runtime/cuda/driver_abi.hpp"

namespace kiln::cuda {

/// A failed driver call, a missing libcuda or a missing entry point. what()
/// is one line, e.g. "cuInit failed: CUDA_ERROR_STUB_LIBRARY (34)".
class DriverError : public std::runtime_error {
 public:
  /// `result` is the CUresult of the failed call, or CUDA_SUCCESS when the
  /// failure is not a driver call's (library or symbol missing).
  explicit DriverError(const std::string& message, abi::CUresult result = abi::CUDA_SUCCESS)
      : std::runtime_error(message), result_(result) {}
  abi::CUresult result() const { return result_; }

 private:
  abi::CUresult result_;
};

/// The CUresult enumerator's name ("CUDA_ERROR_OUT_OF_MEMORY" for 2) from
/// kiln's own table, so that it is known even when the driver is not;
/// "CUDA_ERROR_UNRECOGNIZED" for a code the table does not know.
std::string_view error_name(abi::CUresult result);

/// The one-line message of a failed call: "<call> failed: <NAME> (<number>)",
/// then ": <context>" when context is not empty.
std::string format_driver_error(std::string_view call, abi::CUresult result, std::string_view name,
                                std::string_view context);

/// One GPU as the driver describes it.
struct DeviceInfo {
  int ordinal = 0;
  std::string name;
  int sm_count = 0;
  int compute_capability_major = 0;
  int compute_capability_minor = 0;
  /// The most dynamic shared memory one block may have once its kernel opts in
  /// (CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES), in bytes.
  int max_shared_bytes_per_block_optin = 0;

  /// The PTX target of this device, e.g. "sm_90".
  std::string arch() const;
};

struct EntryPoints;

/// The loaded driver library with every entry point kiln uses resolved and
/// cuInit done. The library stays loaded for the life of the process: the
/// driver starts threads and registers exit handlers, so unloading it is unsafe.
class Driver {
 public:
  /// The process's driver, loaded on first use from library_path(). Thread
  /// safe. Throws DriverError when it cannot be loaded or initialised, and
  /// tries again on the next call.
  static const Driver& instance();
  /// Loads the driver from `library_path` (a file name searched the way the
  /// dynamic loader searches, or a path) and calls cuInit. Throws DriverError.
  static std::unique_ptr<Driver> load(const std::string& library_path);
  /// A driver whose entry points were resolved by the caller (every one must
  /// be set); calls cuInit like load(). `description` names it in messages.
  static std::unique_ptr<Driver> from_entry_points(const EntryPoints& entry_points, std::string description);
  /// $KILN_LIBCUDA when set and not empty, else "libcuda.so.1".
  static std::string library_path();

  ~Driver();
  Driver(const Driver&) = delete;
  Driver& operator=(const Driver&) = delete;

  /// Throws DriverError with format_driver_error's line when `result` is not
  /// CUDA_SUCCESS; the name comes from cuGetErrorName, else from error_name().
  void check(abi::CUresult result, std::string_view call, std::string_view context = {}) const;

  int device_count() const;
  DeviceInfo device_info(int ordinal) const;
  /// The resolved entry points, for the resource wrappers.
  const EntryPoints& entry_points() const { return *entry_points_; }
  /// The library path it was loaded from (or the description it was given).
  const std::string& loaded_from() const { return library_path_; }

 private:
  Driver(std::string library_path, std::unique_ptr<EntryPoints> entry_points);

  std::string library_path_;
  std::unique_ptr<EntryPoints> entry_points_;
};

/// Whether CUDA can be used here, and on which devices.
struct ProbeResult {
  bool available = false;
  /// One line: the devices found, or why CUDA is unavailable.
  std::string message;
  std::vector<DeviceInfo> devices;
};

/// Probes the process's driver (Driver::instance()). Never throws.
ProbeResult probe();
/// Lists the devices of an initialised driver. Never throws.
ProbeResult probe(const Driver& driver);
/// Probes the driver at `library_path` without touching the process's one.
/// Never throws.
ProbeResult probe(const std::string& library_path);

}  // namespace kiln::cuda
