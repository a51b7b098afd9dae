// What the fuzz targets report as a finding: a failed check, printed with the
// texts it concerns, then abort() so that libFuzzer keeps the input.
#pragma once

#include <string_view>

namespace kiln::fuzz {

/// Prints "finding: <what>" and each of `texts` on stderr, then aborts.
[[noreturn]] void fail(std::string_view what, std::string_view first, std::string_view second = {});

/// Fails unless `message` (an error's what(), from `context`) is one
/// non-empty line.
void require_one_line(std::string_view context, std::string_view message);

}  // namespace kiln::fuzz
