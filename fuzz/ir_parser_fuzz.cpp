// Fuzz target ir_parser_fuzz: any bytes through ir::parse_function and
// ir::verify. An input ends either as a verified kernel, whose printed form
// (with locations) must parse back, verify and print to the same text, or as
// an IRError with a one-line message. Anything else (a crash, a hang, a
// sanitizer report, another exception, a message over several lines) is a
// finding.
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

#include "findings.hpp"
#include "kiln/ir/parser.hpp"
#include "kiln/ir/printer.hpp"
#include "kiln/ir/verifier.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace kiln;
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  std::unique_ptr<ir::Function> fn;
  try {
    fn = ir::parse_function(text, "fuzz.kiln");
    ir::verify(*fn);
  } catch (const ir::IRError& e) {
    fuzz::require_one_line("parse or verify", e.what());
    return 0;
  }
  const ir::PrintOptions with_locations{.locations = true};
  const std::string printed = ir::print(*fn, with_locations);
  std::string reprinted;
  try {
    const std::unique_ptr<ir::Function> again = ir::parse_function(printed, "printed.kiln");
    ir::verify(*again);
    reprinted = ir::print(*again, with_locations);
  } catch (const ir::IRError& e) {
    fuzz::fail(std::string("a verified kernel's printed form does not parse back: ") + e.what(), printed);
  }
  if (reprinted != printed) fuzz::fail("printing a verified kernel, parsed back, changes its text", printed, reprinted);
  return 0;
}
