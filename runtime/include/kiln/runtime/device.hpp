// Devices kernels run on. Now: `cpu`, the tile-IR interpreter.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace kiln {

class Device {
 public:
  enum class Kind { cpu };

  /// The interpreter on this machine's cores (0 threads: all hardware threads).
  static Device cpu(int threads = 0);
  /// "cpu" (or "cpu:N" for N threads). Unknown or unavailable devices throw
  /// std::invalid_argument naming the device and what is available.
  static Device from_name(std::string_view name);
  /// $KILN_DEVICE if set, else the best device present (cpu now).
  static Device default_device();
  /// Every device name that can be used here.
  static std::vector<std::string> available();

  Kind kind() const { return kind_; }
  std::string name() const;
  int threads() const { return threads_; }

  friend bool operator==(const Device&, const Device&) = default;

 private:
  Device(Kind kind, int threads) : kind_(kind), threads_(threads) {}
  Kind kind_;
  int threads_;
};

}  // namespace kiln
