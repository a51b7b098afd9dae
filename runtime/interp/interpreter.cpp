// InterpretedKernel: prepares the program once, then launches it over a grid
// on a pool of host threads, each with its own reusable frame.
#include "kiln/runtime/interpreter.hpp"

#include <algorithm>
#include <atomic>
#include <cstring>
#include <exception>
#include <memory>
#include <mutex>
#include <new>
#include <optional>
#include <thread>
#include <vector>

#include "../src/footprint_counter.hpp"
#include "kiln/runtime/host_reference.hpp"
#include "kiln/runtime/launch_progress.hpp"
#include "program.hpp"

namespace kiln::runtime {

namespace {

/// One worker's slots, reused by every program the worker runs.
class Frame {
 public:
  explicit Frame(std::size_t bytes)
      : memory_(static_cast<std::byte*>(::operator new(std::max<std::size_t>(bytes, 1), std::align_val_t{64}))) {}
  ~Frame() { ::operator delete(memory_, std::align_val_t{64}); }
  Frame(const Frame&) = delete;
  Frame& operator=(const Frame&) = delete;
  std::byte* data() const { return memory_; }

 private:
  std::byte* memory_;
};

/// Frames kept between launches, so that repeated launches do not fault
/// fresh pages in.
class FramePool {
 public:
  std::unique_ptr<Frame> take(std::size_t bytes) {
    {
      std::lock_guard lock(mutex_);
      if (!free_.empty()) {
        std::unique_ptr<Frame> frame = std::move(free_.back());
        free_.pop_back();
        return frame;
      }
    }
    return std::make_unique<Frame>(bytes);
  }
  void give_back(std::unique_ptr<Frame> frame) {
    std::lock_guard lock(mutex_);
    free_.push_back(std::move(frame));
  }

 private:
  std::mutex mutex_;
  std::vector<std::unique_ptr<Frame>> free_;
};

}  // namespace

struct InterpretedKernel::Plan {
  interp::Program program;
  FramePool frames;
  /// Why the kernel cannot run here (an inline_asm without a host
  /// reference), or empty. A kernel for the cuda device only is still
  /// prepared: every Program has its interpreter.
  std::string missing_reference;
};

InterpretedKernel::InterpretedKernel(const ir::Function& fn) : plan_(std::make_unique<Plan>()) {
  plan_->program = interp::build_program(fn);
  plan_->missing_reference = missing_host_reference(fn, "the cpu device");
}
InterpretedKernel::~InterpretedKernel() = default;
InterpretedKernel::InterpretedKernel(InterpretedKernel&&) noexcept = default;
InterpretedKernel& InterpretedKernel::operator=(InterpretedKernel&&) noexcept = default;

namespace {

std::string count(std::size_t n, const char* noun) { return std::to_string(n) + " " + noun + (n == 1 ? "" : "s"); }

/// Writes the arguments into their slots and runs the once-per-frame code.
void prepare(interp::Exec& ex) {
  const interp::Program& p = *ex.program;
  for (std::size_t i = 0; i < p.arg_slots.size(); ++i) {
    const interp::SlotRef& s = p.arg_slots[i];
    std::uint64_t bits = ex.args[i].bits;
    if (!p.arg_types[i].is_pointer && p.arg_types[i].dtype == ir::DType::i1) bits = bits != 0;
    std::memcpy(ex.frame + s.offset, &bits, s.bytes);  // little-endian: the low bytes
  }
  interp::run_code(p.init, ex);
}

}  // namespace

LaunchStats InterpretedKernel::launch(Grid grid, std::span<const KernelArgument> args, int threads) const {
  const interp::Program& program = plan_->program;
  if (!plan_->missing_reference.empty()) throw std::invalid_argument(plan_->missing_reference);
  if (args.size() != program.arg_types.size())
    throw std::invalid_argument("kernel " + program.name + ": takes " + count(program.arg_types.size(), "argument") +
                                ", launched with " + std::to_string(args.size()));
  for (int axis = 0; axis < 3; ++axis)
    if (grid[axis] < 0)
      throw std::invalid_argument("kernel " + program.name + ": grid size " + std::to_string(grid[axis]) +
                                  " along axis " + std::to_string(axis) + " is negative");
  const std::int64_t total = static_cast<std::int64_t>(grid[0]) * grid[1] * grid[2];
  std::optional<FootprintCounter> footprints;
  if (FootprintCounting::on()) footprints.emplace(args, program.arg_types);
  LaunchStats stats;
  if (total == 0) {
    if (footprints) stats.footprints = footprints->footprints(program.name, args, program.arg_names);
    return stats;
  }
  if (threads <= 0) threads = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  threads = static_cast<int>(std::min<std::int64_t>(threads, total));

  // Programs are handed out in chunks from one counter; small chunks keep the
  // threads balanced when programs differ in cost.
  const std::int64_t chunk = std::max<std::int64_t>(1, total / (static_cast<std::int64_t>(threads) * 16));
  std::atomic<std::int64_t> next{0};
  std::atomic<bool> stop{false};
  std::mutex mutex;
  std::exception_ptr first_fault;
  LaunchProgressCounter progress(program.name, total);

  auto work = [&] {
    LaunchStats local;
    try {
      std::unique_ptr<Frame> frame = plan_->frames.take(program.frame_bytes);
      interp::Exec ex;
      ex.frame = frame->data();
      ex.program = &program;
      ex.grid = grid;
      ex.args = args;
      ex.footprints = footprints ? &*footprints : nullptr;
      prepare(ex);
      while (!stop.load(std::memory_order_relaxed)) {
        const std::int64_t begin = next.fetch_add(chunk, std::memory_order_relaxed);
        if (begin >= total) break;
        const std::int64_t end = std::min(total, begin + chunk);
        for (std::int64_t id = begin; id < end && !stop.load(std::memory_order_relaxed); ++id) {
          ex.pid = {static_cast<int>(id % grid[0]), static_cast<int>(id / grid[0] % grid[1]),
                    static_cast<int>(id / (static_cast<std::int64_t>(grid[0]) * grid[1]))};
          ex.hazards.clear();
          ex.rings.clear();
          interp::run_code(program.body.code, ex);
        }
        progress.add(end - begin);
      }
      local = ex.stats;
      plan_->frames.give_back(std::move(frame));
    } catch (...) {
      stop.store(true, std::memory_order_relaxed);
      std::lock_guard lock(mutex);
      if (!first_fault) first_fault = std::current_exception();
    }
    std::lock_guard lock(mutex);
    stats += local;
  };

  if (threads == 1) {
    work();
  } else {
    std::vector<std::jthread> pool;
    pool.reserve(threads);
    for (int t = 0; t < threads; ++t) pool.emplace_back(work);
  }
  if (first_fault) std::rethrow_exception(first_fault);
  if (footprints) stats.footprints = footprints->footprints(program.name, args, program.arg_names);
  return stats;
}

}  // namespace kiln::runtime
