// What the pass tests share: running one pass on IR text.
#pragma once

#include <gtest/gtest.h>

#include <string>

#include "kiln/ir/parser.hpp"
#include "kiln/ir/passes.hpp"
#include "kiln/ir/printer.hpp"
#include "kiln/ir/verifier.hpp"

namespace kiln::ir::test {

using Pass = bool (*)(Function&);

/// Runs `pass` on the parsed kernel, checks that it reports `changed` and that
/// the result still verifies; returns the printed result.
inline std::string after(Pass pass, const std::string& text, bool changed = true) {
  auto fn = parse_function(text);
  verify(*fn);
  EXPECT_EQ(pass(*fn), changed) << text;
  verify(*fn);
  return print(*fn);
}

}  // namespace kiln::ir::test
