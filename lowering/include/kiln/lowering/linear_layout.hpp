// Linear layouts: a layout is a linear map over GF(2) from the bits of named
// hardware indices (register, lane, warp; or a shared-memory offset) to the
// bits of the tile coordinates (dim0, dim1, …). Every layout the GPU lowering
// uses is one of these (docs/architecture.md, "The GPU lowering"; arXiv 2505.23819).
#pragma once

#include <cstdint>
#include <iosfwd>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace kiln::lowering {

/// A linear map from named input dimensions to named output dimensions, all
/// of power-of-two size. Input bit `k` of input dimension `d` contributes its
/// basis vector (one value per output dimension); the image of an input is the
/// XOR of the basis vectors of its set bits. Values are immutable: every
/// operation returns a new layout. Bad arguments throw std::invalid_argument
/// with a one-line message naming the dimension and the values.
class LinearLayout {
 public:
  /// The output coordinates one input bit XORs in, in output-dimension order.
  using Basis = std::vector<std::int32_t>;
  /// An input dimension: its name and one basis per bit (its size is 2^bases.size()).
  struct InDim {
    std::string name;
    std::vector<Basis> bases;
    friend bool operator==(const InDim&, const InDim&) = default;
  };
  /// An output dimension: its name and log2 of its size.
  struct OutDim {
    std::string name;
    int log2_size = 0;
    friend bool operator==(const OutDim&, const OutDim&) = default;
  };
  /// Named coordinates, e.g. {{"register", 3}, {"lane", 17}, {"warp", 1}}.
  using Coordinates = std::vector<std::pair<std::string, std::int32_t>>;

  /// The empty layout: no input, no output dimensions.
  LinearLayout() = default;
  /// Checks that names are unique, each basis has one value per output
  /// dimension, and every value lies inside its output dimension.
  LinearLayout(std::vector<InDim> in_dims, std::vector<OutDim> out_dims);

  /// `in` = i maps to `out` = i, both of `size` (a power of two).
  static LinearLayout identity_1d(std::int32_t size, std::string in, std::string out);
  /// Every `in` of `size` maps to `out` = 0; `out` has size 1 (broadcast).
  static LinearLayout zeros_1d(std::int32_t size, std::string in, std::string out);

  const std::vector<InDim>& in_dims() const { return in_dims_; }
  const std::vector<OutDim>& out_dims() const { return out_dims_; }
  bool has_in_dim(std::string_view name) const;
  bool has_out_dim(std::string_view name) const;
  int in_dim_size_log2(std::string_view name) const;
  std::int32_t in_dim_size(std::string_view name) const { return std::int32_t{1} << in_dim_size_log2(name); }
  int out_dim_size_log2(std::string_view name) const;
  std::int32_t out_dim_size(std::string_view name) const { return std::int32_t{1} << out_dim_size_log2(name); }
  /// Sum of log2 sizes of all input (output) dimensions.
  int total_in_bits() const;
  int total_out_bits() const;
  /// The basis vector of bit `bit` of input dimension `in`.
  const Basis& basis(std::string_view in, int bit) const;

  /// The output coordinates of `in`, which names every input dimension once
  /// (in any order); the result lists the output dimensions in layout order.
  Coordinates apply(const Coordinates& in) const;

  /// `outer ∘ this`: this layout's outputs fed to `outer`, whose input
  /// dimensions must be this layout's output dimensions, each at least as large.
  LinearLayout compose(const LinearLayout& outer) const;
  /// The product (Triton's `*`): input and output dimensions are united; in a
  /// shared input dimension this layout's bits come first (low), in a shared
  /// output dimension `rhs`'s values are placed above this layout's.
  LinearLayout operator*(const LinearLayout& rhs) const;

  /// Whether distinct inputs give distinct outputs (no broadcast).
  bool is_injective() const;
  /// A basis of the inputs that map to zero: x and x ^ k hold the same
  /// element for each k listed (the ways an element is replicated).
  std::vector<Coordinates> kernel_basis() const;
  /// Whether every output is reached.
  bool is_surjective() const;
  /// The inverse of a bijective layout (outputs become inputs).
  LinearLayout invert() const;
  /// A linear P with this(P(y)) == y for every y in the image (so P is a right
  /// inverse of a surjective layout and a left inverse of an injective one).
  /// Among several preimages it picks the one built from the earliest input
  /// bits (registers before lanes before warps), with broadcast bits 0.
  LinearLayout pseudo_invert() const;
  /// A layout C from this layout's inputs to `outer`'s inputs with
  /// outer(C(x)) == this(x) (C = outer⁻¹ ∘ this, Triton's invertAndCompose):
  /// "where does `outer` hold the element this layout holds at x". Both must
  /// have the same output dimensions; throws if this layout's image is not
  /// inside `outer`'s.
  LinearLayout invert_and_compose(const LinearLayout& outer) const;

  /// The same map with the output dimensions listed in `order` (a permutation of their names).
  LinearLayout transpose_outs(const std::vector<std::string>& order) const;
  /// The same map with the input dimensions listed in `order`.
  LinearLayout transpose_ins(const std::vector<std::string>& order) const;
  /// Reinterprets the outputs as a tile of shape `dims` with the same
  /// row-major element order (the tile IR's `reshape`): the last listed
  /// dimension is the fastest. Total sizes must agree.
  LinearLayout reshape_outs(const std::vector<std::pair<std::string, std::int32_t>>& dims) const;
  /// The restriction to the named input dimensions (the others are fixed at
  /// 0) and the named output dimensions (the others are dropped); dimension
  /// order is kept.
  LinearLayout sublayout(const std::vector<std::string>& ins, const std::vector<std::string>& outs) const;

  /// How many consecutive values of input dimension `in` (from 0) map to
  /// consecutive coordinates along `out`, with every other output fixed: the
  /// widest vector one thread can load or store along `out` (for "register"),
  /// or the widest contiguous shared-memory access (for "offset"). 1 when
  /// the layout has no input `in`.
  std::int32_t contiguous_elements(std::string_view out, std::string_view in = "register") const;

  /// Structural equality: same dimensions in the same order, same bases.
  friend bool operator==(const LinearLayout&, const LinearLayout&) = default;

 private:
  std::vector<InDim> in_dims_;
  std::vector<OutDim> out_dims_;
};

/// One line per input dimension with its bases, then a line naming the
/// outputs: "register[4]: (0,1) (0,2)\nlane[32]: (0,4) …\n-> dim0[16] dim1[64]".
std::string to_string(const LinearLayout& layout);
std::ostream& operator<<(std::ostream& os, const LinearLayout& layout);

}  // namespace kiln::lowering
