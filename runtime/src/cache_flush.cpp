// Evicting a GPU's L2 between timed launches (cache_flush.hpp).
#include "kiln/runtime/cache_flush.hpp"

#include <map>
#include <memory>
#include <mutex>

#include "kiln/runtime/device_memory.hpp"

namespace kiln::runtime {

void flush_caches(const Device& device) {
  if (device.kind() != Device::Kind::cuda) return;
  static std::mutex mutex;
  static std::map<int, std::unique_ptr<DeviceMemory>> buffers;  // by GPU ordinal
  std::lock_guard lock(mutex);
  std::unique_ptr<DeviceMemory>& buffer = buffers[device.ordinal()];
  if (!buffer) buffer = std::make_unique<DeviceMemory>(device, kCacheFlushBytes);
  buffer->fill_zeros();
}

}  // namespace kiln::runtime
