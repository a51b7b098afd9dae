// Recording what a program would launch instead of running it: while a
// LaunchRecorder lives on a thread, each kernel launch on that thread builds
// the program variant its arguments select (Triton's specialisation) and
// records it with its grid, and runs nothing. `kiln dump` uses it to show the
// code a sample kernel's run really launches.
#pragma once

#include <array>
#include <memory>
#include <string>
#include <vector>

#include "kiln/runtime/program.hpp"

namespace kiln {

class LaunchRecorder {
 public:
  /// One launch that did not run.
  struct Launch {
    /// The variant specialised for the launch's argument values.
    std::shared_ptr<const runtime::Program> program;
    std::array<int, 3> grid{1, 1, 1};
    /// Wall time of selecting (and, on first use, specialising) the variant.
    double specialize_milliseconds = 0;
  };
  /// One kernel traced by kl::compile while recording (a kernel compiled
  /// earlier in the process is cached and not listed); the IR passes run
  /// later, on the first use of a program's optimized IR.
  struct Compile {
    std::string name;
    double milliseconds = 0;  // tracing
  };

  LaunchRecorder() : outer_(innermost()) { innermost() = this; }
  ~LaunchRecorder() { innermost() = outer_; }
  LaunchRecorder(const LaunchRecorder&) = delete;
  LaunchRecorder& operator=(const LaunchRecorder&) = delete;

  /// The innermost recorder alive on this thread, or null.
  static LaunchRecorder* active() { return innermost(); }

  std::vector<Launch> launches;
  std::vector<Compile> compiles;

 private:
  static LaunchRecorder*& innermost() {
    static thread_local LaunchRecorder* recorder = nullptr;
    return recorder;
  }
  LaunchRecorder* outer_;
};

}  // namespace kiln
