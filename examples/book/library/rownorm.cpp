// rownorm's kernels, the configuration chosen for each shape, the checks of
// the arguments, and the launch.
#include "rownorm/rownorm.hpp"

#include <limits>
#include <stdexcept>

namespace kl = kiln;

namespace rownorm {
namespace {

// [book:kernels]
/// A row of at most BLOCK columns: loaded once, kept in registers.
template <int BLOCK>
void normalize_row_in_tile(kl::Ptr<kl::f32> x, kl::Ptr<kl::f32> out, kl::i32 n, kl::f32 eps) {
  auto row = kl::program_id(0);
  auto cols = kl::arange<BLOCK>();
  auto values = kl::load(x + row * n + cols, cols < n);
  auto scale = kl::rsqrt(kl::sum(values * values, kl::axis<0>) / kl::cast<kl::f32>(n) + eps);
  kl::store(out + row * n + cols, values * scale, cols < n);
}

/// A row of any length, BLOCK columns at a time: read twice.
template <int BLOCK>
void normalize_row_in_steps(kl::Ptr<kl::f32> x, kl::Ptr<kl::f32> out, kl::i32 n, kl::f32 eps) {
  auto row = kl::program_id(0);
  kl::Var squares = kl::zeros<kl::f32, BLOCK>();
  for (auto start : kl::range(0, n, BLOCK)) {
    auto cols = start + kl::arange<BLOCK>();
    auto values = kl::load(x + row * n + cols, cols < n);
    squares = squares + values * values;
  }
  auto scale = kl::rsqrt(kl::sum(squares, kl::axis<0>) / kl::cast<kl::f32>(n) + eps);
  for (auto start : kl::range(0, n, BLOCK)) {
    auto cols = start + kl::arange<BLOCK>();
    kl::store(out + row * n + cols, kl::load(x + row * n + cols, cols < n) * scale, cols < n);
  }
}
// [/book:kernels]

// [book:compiled]
kl::CompileOptions with_warps(int num_warps) {
  kl::CompileOptions options;
  options.num_warps = num_warps;
  return options;
}

/// Each configuration is traced and optimised once, on first use, and kept:
/// a function-local static is initialised once even when several threads
/// call at the same time.
template <int BLOCK, int WARPS>
const auto& in_tile() {
  static const auto kernel = kl::compile<normalize_row_in_tile<BLOCK>>(with_warps(WARPS));
  return kernel;
}

const auto& in_steps() {
  static const auto kernel = kl::compile<normalize_row_in_steps<4096>>(with_warps(8));
  return kernel;
}
// [/book:compiled]

// [book:checks]
void require(bool ok, const std::string& what) {
  if (!ok) throw std::invalid_argument("rownorm::normalize_rows: " + what);
}

void check_arguments(const kl::Buffer<float>& x, const kl::Buffer<float>& out, std::int64_t rows, std::int64_t cols) {
  const std::string shape = std::to_string(rows) + " x " + std::to_string(cols);
  require(rows >= 1 && cols >= 1, "the shape must be at least 1 x 1, got " + shape);
  // The kernels index with 32-bit integers: row * n + a column of the last tile must fit.
  constexpr std::int64_t largest_tile = 4096, largest_index = std::numeric_limits<std::int32_t>::max();
  require(rows <= (largest_index - largest_tile) / cols,
          "the shape " + shape + " is too large for 32-bit indices (at most 2^31 - 4097 elements)");
  const auto elements = static_cast<std::size_t>(rows * cols);
  require(x.size() == elements,
          "x holds " + std::to_string(x.size()) + " floats, the shape " + shape + " needs " + std::to_string(elements));
  require(out.size() == elements, "out holds " + std::to_string(out.size()) + " floats, the shape " + shape +
                                      " needs " + std::to_string(elements));
  require(x.device() == out.device(), "x is on " + x.device().name() + " and out on " + out.device().name());
}
// [/book:checks]

}  // namespace

// [book:choose]
/// The kernel for rows of `cols` columns: one tile when a row fits in 4096
/// columns, the smallest that holds it, with one warp per 256 columns up to
/// 8; steps of 4096 beyond. All four have the same parameters, so they are
/// the same C++ type.
const auto& choose(std::int64_t cols) {
  if (cols <= 256) return in_tile<256, 1>();
  if (cols <= 1024) return in_tile<1024, 4>();
  if (cols <= 4096) return in_tile<4096, 8>();
  return in_steps();
}

void normalize_rows(const kl::Buffer<float>& x, kl::Buffer<float>& out, std::int64_t rows, std::int64_t cols,
                    float eps) {
  check_arguments(x, out, rows, cols);
  choose(cols).launch(kl::Grid(static_cast<int>(rows)), x, out, static_cast<std::int32_t>(cols), eps);
}

std::string configuration(std::int64_t cols) {
  const auto& kernel = choose(cols);
  const std::string& name = kernel.name();  // with its namespaces: rownorm::…::normalize_row_in_tile<256>
  const int warps = kernel.program().options().num_warps;
  return name.substr(name.rfind("::", name.find('<')) + 2) + ", " + std::to_string(warps) +
         (warps == 1 ? " warp" : " warps");
}
// [/book:choose]

}  // namespace rownorm
