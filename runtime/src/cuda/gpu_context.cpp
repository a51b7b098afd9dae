// The process's GPU contexts, one per GPU ordinal.
#include "gpu_context.hpp"

#include <map>
#include <memory>
#include <mutex>

namespace kiln::cuda {

const GpuContext& current_context(int ordinal) {
  static std::mutex mutex;
  // Never destroyed: the driver may already be shutting down at exit.
  static auto* contexts = new std::map<int, std::unique_ptr<GpuContext>>();
  const GpuContext* context = nullptr;
  {
    std::lock_guard lock(mutex);
    auto& slot = (*contexts)[ordinal];
    if (!slot) slot = std::make_unique<GpuContext>(Driver::instance(), ordinal);
    context = slot.get();
  }
  context->context.make_current();
  return *context;
}

}  // namespace kiln::cuda
