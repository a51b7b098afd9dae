// What a run's options describe for the conv2d_bn_silu and
// conv2d_bn_silu_unfused registry entries: the layer shape and the plan (their
// dims and choices: kernel_catalog.cpp).
#pragma once

#include <optional>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <vector>

#include "kiln/ir/numeric.hpp"
#include "kiln/kernels/conv2d_select.hpp"
#include "kiln/kernels/kernel_spec.hpp"

namespace kiln::kernels {

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
