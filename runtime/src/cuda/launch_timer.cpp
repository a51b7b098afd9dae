// The thread's stack of launch timers.
#include "kiln/runtime/cuda/launch_timer.hpp"

namespace kiln::cuda {

namespace {

thread_local LaunchTimer* innermost = nullptr;

}  // namespace

LaunchTimer::LaunchTimer() : enclosing_(innermost) { innermost = this; }

LaunchTimer::~LaunchTimer() { innermost = enclosing_; }

LaunchTimer* LaunchTimer::active() { return innermost; }

void LaunchTimer::add_launch(double seconds) {
  ++launches_;
  seconds_ += seconds;
}

}  // namespace kiln::cuda
