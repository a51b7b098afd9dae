// Element type names.
#include "kiln/ir/dtype.hpp"

#include <array>

namespace kiln::ir {

namespace {
constexpr std::array<std::string_view, kDTypeCount> kNames = {
    "i1", "i8", "i16", "i32", "i64", "u8", "u16", "u32", "u64", "f16", "bf16", "f32", "f64", "f8e4m3", "f8e5m2",
};
}  // namespace

std::string_view dtype_name(DType t) { return kNames[static_cast<int>(t)]; }

std::optional<DType> parse_dtype(std::string_view name) {
  for (int i = 0; i < kDTypeCount; ++i)
    if (kNames[i] == name) return static_cast<DType>(i);
  return std::nullopt;
}

}  // namespace kiln::ir
