// The command-line face shared by the conv2d_bn_silu and
// conv2d_bn_silu_unfused registry entries: their dims and choices, and the
// layer shape and plan a run's options describe.
#pragma once

#include <optional>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <vector>

#include "kiln/ir/numeric.hpp"
#include "kiln/kernels/conv2d_select.hpp"
#include "kiln/kernels/registry.hpp"

namespace kiln::kernels {

/// The layer's dims. The defaults, a mid-network ResNet-like layer, keep
/// --check under half a second on the cpu interpreter with two threads
/// (measured: gemm 0.14 s, scalar 0.26 s, including the double reference).
inline std::vector<Dim> conv2d_dims() {
  return {{"n", 2, "batch"},
          {"c", 32, "input channels"},
          {"h", 28, "input height"},
          {"w", 28, "input width"},
          {"k", 48, "output channels"},
          {"r", 3, "kernel height"},
          {"s", 3, "kernel width"},
          {"stride", 1, "stride (both axes)"},
          {"pad", 1, "zero padding (both axes)", 0},
          {"dilation", 1, "dilation (both axes)"},
          {"groups", 1, "groups (c and k must be multiples; groups = c is depthwise)"}};
}

inline std::vector<Choice> conv2d_choices() {
  return {{"variant",
           "auto",
           "scalar strips, tiled outer products, implicit gemm with dot, or auto (chosen from the shape)",
           {"auto", "scalar", "tiled", "gemm"}}};
}

inline Conv2dShape conv2d_shape_of(const RunOptions& options) {
  const auto& d = options.dims;
  Conv2dShape s;
  s.n = d.at("n");
  s.c = d.at("c");
  s.h = d.at("h");
  s.w = d.at("w");
  s.k = d.at("k");
  s.r = d.at("r");
  s.s = d.at("s");
  s.stride = d.at("stride");
  s.pad = d.at("pad");
  s.dilation = d.at("dilation");
  s.groups = d.at("groups");
  return s;
}

/// The plan for the options' shape and --variant on a device with
/// `compute_units`; throws std::invalid_argument for an invalid shape or a
/// variant that cannot run it.
inline Conv2dPlan conv2d_plan_of(const RunOptions& options, int compute_units) {
  const std::string& v = options.choices.at("variant");
  std::optional<Conv2dVariant> requested;
  if (v == "scalar") requested = Conv2dVariant::scalar;
  else if (v == "tiled") requested = Conv2dVariant::tiled;
  else if (v == "gemm") requested = Conv2dVariant::gemm;
  return plan_conv2d(conv2d_shape_of(options), compute_units, requested);
}

}  // namespace kiln::kernels
