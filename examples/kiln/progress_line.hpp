// The kiln tool's progress line: one line on stderr, rewritten in place with
// '\r' while a long command runs (the suite's kernels, a launch's programs)
// and cleared at the end. Shown only when asked for and stderr is a terminal.
#pragma once

#include <cstddef>
#include <cstdint>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>

#include "kiln/runtime/launch_progress.hpp"

namespace kiln::tool {

/// "softmax 1200/4096 programs (29%)".
std::string count_text(std::string_view what, std::int64_t done, std::int64_t total, std::string_view unit);

/// `stage` and `launch` joined by ": " (either may be empty), cut to fit a
/// terminal of `columns` columns with one to spare (ending in "..." when cut).
std::string progress_text(std::string_view stage, std::string_view launch, std::size_t columns);

class ProgressLine {
 public:
  /// Shows nothing unless `wanted` and stderr is a terminal. While it shows,
  /// the cpu and emu launches this thread makes report their programs done.
  explicit ProgressLine(bool wanted);
  /// Clears the line.
  ~ProgressLine();
  ProgressLine(const ProgressLine&) = delete;
  ProgressLine& operator=(const ProgressLine&) = delete;

  /// Sets the line's first part ("bench 3/9 kernels: softmax"), drops the
  /// launch part and redraws.
  void stage(std::string text);
  /// Erases the line (a later stage() or launch report draws it again).
  void clear();

 private:
  void launch(const std::string& kernel, std::int64_t done, std::int64_t total);
  void draw();  // with mutex_ held

  bool shown_;
  std::mutex mutex_;
  std::string stage_, launch_;
  std::size_t drawn_ = 0;  // characters on the line now
  std::optional<runtime::LaunchProgress> launches_;
};

}  // namespace kiln::tool
