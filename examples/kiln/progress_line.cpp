// The kiln tool's progress line (progress_line.hpp).
#include "progress_line.hpp"

#include <fmt/format.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include <cstdio>

namespace kiln::tool {

namespace {

std::size_t terminal_columns() {
  winsize size{};
  if (::ioctl(STDERR_FILENO, TIOCGWINSZ, &size) == 0 && size.ws_col > 0) return size.ws_col;
  return 80;
}

void write_stderr(const std::string& text) {
  std::fwrite(text.data(), 1, text.size(), stderr);
  std::fflush(stderr);
}

}  // namespace

std::string count_text(std::string_view what, std::int64_t done, std::int64_t total, std::string_view unit) {
  const std::int64_t percent = total > 0 ? done * 100 / total : 100;
  return fmt::format("{} {}/{} {} ({}%)", what, done, total, unit, percent);
}

std::string progress_text(std::string_view stage, std::string_view launch, std::size_t columns) {
  std::string text(stage);
  if (!stage.empty() && !launch.empty()) text += ": ";
  text += launch;
  const std::size_t room = columns > 1 ? columns - 1 : 0;
  if (text.size() <= room) return text;
  if (room <= 3) return text.substr(0, room);
  return text.substr(0, room - 3) + "...";
}

ProgressLine::ProgressLine(bool wanted) : shown_(wanted && ::isatty(STDERR_FILENO) == 1) {
  if (shown_)
    launches_.emplace(
        [this](const std::string& kernel, std::int64_t done, std::int64_t total) { launch(kernel, done, total); });
}

ProgressLine::~ProgressLine() { clear(); }

void ProgressLine::stage(std::string text) {
  if (!shown_) return;
  std::lock_guard lock(mutex_);
  stage_ = std::move(text);
  launch_.clear();
  draw();
}

void ProgressLine::launch(const std::string& kernel, std::int64_t done, std::int64_t total) {
  std::lock_guard lock(mutex_);
  launch_ = count_text(kernel, done, total, "programs");
  draw();
}

void ProgressLine::draw() {
  const std::string text = progress_text(stage_, launch_, terminal_columns());
  const std::size_t pad = drawn_ > text.size() ? drawn_ - text.size() : 0;
  write_stderr("\r" + text + std::string(pad, ' '));
  drawn_ = text.size() + pad;
}

void ProgressLine::clear() {
  if (!shown_) return;
  std::lock_guard lock(mutex_);
  if (drawn_ > 0) write_stderr("\r" + std::string(drawn_, ' ') + "\r");
  drawn_ = 0;
  stage_.clear();
  launch_.clear();
}

}  // namespace kiln::tool
