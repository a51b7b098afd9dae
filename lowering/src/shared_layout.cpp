// Swizzled shared-memory layouts of 2-D tiles (shared_layout.hpp).
#include "kiln/lowering/shared_layout.hpp"

#include <algorithm>
#include <bit>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

namespace kiln::lowering {

namespace {

int log2_of(const char* what, std::int64_t value) {
  if (value <= 0 || !std::has_single_bit(static_cast<std::uint64_t>(value)) || value > (std::int64_t{1} << 30))
    throw std::invalid_argument(std::string("shared layout: ") + what + " is " + std::to_string(value) +
                                ", not a power of two");
  return std::countr_zero(static_cast<std::uint64_t>(value));
}

/// log2 of the elements of a chunk: 16 bytes, or the whole row when it is shorter.
int chunk_bits_of(int row_bits, int element_bits) { return std::min(4 - std::min(element_bits, 4), row_bits); }

}  // namespace

LinearLayout row_major_shared_layout(const std::vector<LinearLayout::OutDim>& dims) {
  std::vector<LinearLayout::Basis> offsets;
  for (auto dim = dims.rbegin(); dim != dims.rend(); ++dim)
    for (int bit = 0; bit < dim->log2_size; ++bit) {
      LinearLayout::Basis basis(dims.size(), 0);
      basis[static_cast<std::size_t>(dims.rend() - dim - 1)] = std::int32_t{1} << bit;
      offsets.push_back(std::move(basis));
    }
  return LinearLayout({{"offset", std::move(offsets)}}, dims);
}

int swizzle_bits_available(std::int64_t row_elements, int element_bytes) {
  const int row_bits = log2_of("the row", row_elements);
  return row_bits - chunk_bits_of(row_bits, log2_of("the element size", element_bytes));
}

LinearLayout swizzled_shared_layout(std::int64_t dim0_size, std::int64_t dim1_size, int contiguous_dim,
                                    int element_bytes, SharedSwizzle swizzle) {
  if (contiguous_dim != 0 && contiguous_dim != 1)
    throw std::invalid_argument("shared layout: the contiguous dimension is " + std::to_string(contiguous_dim) +
                                ", not 0 or 1");
  const int dim_bits[2] = {log2_of("dim0", dim0_size), log2_of("dim1", dim1_size)};
  const int element_bits = log2_of("the element size", element_bytes);
  const int inner = contiguous_dim, outer = 1 - contiguous_dim;
  const int chunk_bits = chunk_bits_of(dim_bits[inner], element_bits);
  if (swizzle.shift < 0 || swizzle.bits < 0 || swizzle.bits > dim_bits[inner] - chunk_bits ||
      swizzle.shift + swizzle.bits > dim_bits[outer])
    throw std::invalid_argument("shared layout: a swizzle of " + std::to_string(swizzle.bits) + " row bits from bit " +
                                std::to_string(swizzle.shift) + " does not fit a [" + std::to_string(dim0_size) + ", " +
                                std::to_string(dim1_size) + "] tile stored along dim" + std::to_string(contiguous_dim) +
                                " with " + std::to_string(element_bytes) + "-byte elements");
  std::vector<LinearLayout::Basis> offsets;
  for (int bit = 0; bit < dim_bits[inner]; ++bit) {
    LinearLayout::Basis basis = {0, 0};
    basis[inner] = std::int32_t{1} << bit;
    offsets.push_back(basis);
  }
  // Offset bit (row bit i) holds row 2^i; a swizzled row bit also flips
  // chunk bit i - shift of the column, so row 2^i itself lies at that
  // chunk of the offset (the XOR is its own inverse).
  for (int bit = 0; bit < dim_bits[outer]; ++bit) {
    LinearLayout::Basis basis = {0, 0};
    basis[outer] = std::int32_t{1} << bit;
    if (bit >= swizzle.shift && bit < swizzle.shift + swizzle.bits)
      basis[inner] = std::int32_t{1} << (chunk_bits + bit - swizzle.shift);
    offsets.push_back(basis);
  }
  return LinearLayout({{"offset", std::move(offsets)}}, {{"dim0", dim_bits[0]}, {"dim1", dim_bits[1]}});
}

int contiguous_dim_of(const LinearLayout& registers) {
  if (!registers.has_in_dim("register") || registers.in_dim_size_log2("register") == 0) return 1;
  const LinearLayout::Basis& first = registers.basis("register", 0);
  if (first.size() == 2 && first[0] == 1 && first[1] == 0) return 0;
  return 1;
}

}  // namespace kiln::lowering
