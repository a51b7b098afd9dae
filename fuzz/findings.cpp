// Findings: a failed check printed with its texts, then abort().
#include "findings.hpp"

#include <cstdio>
#include <cstdlib>
#include <string>

namespace kiln::fuzz {

namespace {

void print_text(const char* label, std::string_view text) {
  std::fprintf(stderr, "---- %s (%zu bytes) ----\n%.*s\n", label, text.size(), static_cast<int>(text.size()),
               text.data());
}

}  // namespace

void fail(std::string_view what, std::string_view first, std::string_view second) {
  std::fprintf(stderr, "finding: %.*s\n", static_cast<int>(what.size()), what.data());
  print_text("first", first);
  if (!second.empty()) print_text("second", second);
  std::fflush(stderr);
  std::abort();
}

void require_one_line(std::string_view context, std::string_view message) {
  if (message.empty()) fail(std::string(context) + ": an error with an empty message", message);
  if (message.find_first_of("\n\r") != std::string_view::npos)
    fail(std::string(context) + ": an error message over several lines", message);
}

}  // namespace kiln::fuzz
