// rownorm: scales each row of a matrix to unit root mean square, on any kiln
// device. The kernel, its configurations and its compilation stay inside the
// library; callers see one function.
#pragma once

#include <cstdint>
#include <string>

#include "kiln/kiln.hpp"

namespace rownorm {

// [book:api]
/// out[r, c] = x[r, c] / sqrt(mean over c of x[r, c]^2 + eps) for a row-major
/// rows x cols matrix. x and out hold rows * cols floats on one device (they
/// may be the same buffer). Throws std::invalid_argument, naming the argument
/// and its value, for a shape the buffers do not match or the kernel cannot
/// index. Blocks until the result is in `out`.
void normalize_rows(const kiln::Buffer<float>& x, kiln::Buffer<float>& out, std::int64_t rows, std::int64_t cols,
                    float eps = 1e-6f);

/// The kernel normalize_rows launches for `cols` columns and its warps per
/// program: "normalize_row_in_tile<1024>, 4 warps".
std::string configuration(std::int64_t cols);
// [/book:api]

}  // namespace rownorm
