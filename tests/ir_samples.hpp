// Tile-IR kernels in text form (ir/OPS.md) shared by the test suites that
// parse IR (the verifier's, the code generator's, the emu's), and the filling
// of kernel templates.
#pragma once

#include <cstddef>
#include <string>
#include <utility>
#include <vector>

namespace kiln::ir_samples {

/// `text` with each `{name}` replaced by its value.
inline std::string fill(std::string text, const std::vector<std::pair<std::string, std::string>>& values) {
  for (const auto& [name, value] : values)
    for (std::size_t at = text.find("{" + name + "}"); at != std::string::npos;
         at = text.find("{" + name + "}", at + value.size()))
      text.replace(at, name.size() + 2, value);
  return text;
}

/// vector_add with BLOCK = 1024; `pointer_facts` and `n_facts` follow the
/// arguments' types (e.g. " {divisibility = 16}", or "" for none).
inline std::string vector_add_text(const std::string& pointer_facts, const std::string& n_facts) {
  return "kernel @vector_add(%0: ptr<f32>" + pointer_facts + ", %1: ptr<f32>" + pointer_facts + ", %2: ptr<f32>" +
         pointer_facts + ", %3: i32" + n_facts + R"() {
  %4 = program_id {axis = 0} : i32
  %5 = constant {value = 1024} : i32
  %6 = mul %4, %5 : i32
  %7 = arange {start = 0} : tile<1024xi32>
  %8 = splat %6 : tile<1024xi32>
  %9 = add %8, %7 : tile<1024xi32>
  %10 = splat %3 : tile<1024xi32>
  %11 = cmp %9, %10 {pred = lt} : tile<1024xi1>
  %12 = splat %0 : tile<1024xptr<f32>>
  %13 = addptr %12, %9 : tile<1024xptr<f32>>
  %14 = load %13, %11 {cache = none, evict = none} : tile<1024xf32>
  %15 = splat %1 : tile<1024xptr<f32>>
  %16 = addptr %15, %9 : tile<1024xptr<f32>>
  %17 = load %16, %11 {cache = none, evict = none} : tile<1024xf32>
  %18 = add %14, %17 : tile<1024xf32>
  %19 = splat %2 : tile<1024xptr<f32>>
  %20 = addptr %19, %9 : tile<1024xptr<f32>>
  store %20, %18, %11 {cache = none, evict = none}
}
)";
}

}  // namespace kiln::ir_samples
