// Linear layouts over GF(2): validation, application, the algebra (product,
// composition, inversion, reshape, restriction) and the queries codegen asks.
#include "kiln/lowering/linear_layout.hpp"

#include <algorithm>
#include <bit>
#include <ostream>
#include <sstream>
#include <stdexcept>

#include "gf2_basis.hpp"

namespace kiln::lowering {

namespace {

// Coordinates are int32; the solver packs all input (or output) bits of a
// layout into one 64-bit word.
constexpr int kMaxDimBits = 30;
constexpr int kMaxTotalBits = 64;

[[noreturn]] void fail(const std::string& message) { throw std::invalid_argument(message); }

int exact_log2(std::int64_t size, const std::string& what) {
  if (size <= 0 || !std::has_single_bit(static_cast<std::uint64_t>(size)))
    fail(what + " must be a power of two, got " + std::to_string(size));
  const int log = std::countr_zero(static_cast<std::uint64_t>(size));
  if (log > kMaxDimBits) fail(what + " is " + std::to_string(size) + ", above the 2^30 a dimension may have");
  return log;
}

template <class Dims>
int index_of(const Dims& dims, std::string_view name) {
  for (std::size_t i = 0; i < dims.size(); ++i)
    if (dims[i].name == name) return static_cast<int>(i);
  return -1;
}

template <class Dims>
std::string names_of(const Dims& dims) {
  std::string s = "[";
  for (std::size_t i = 0; i < dims.size(); ++i) s += (i ? ", " : "") + dims[i].name;
  return s + "]";
}

std::string names_of(const std::vector<std::string>& names) {
  std::string s = "[";
  for (std::size_t i = 0; i < names.size(); ++i) s += (i ? ", " : "") + names[i];
  return s + "]";
}

std::string basis_string(const LinearLayout::Basis& basis) {
  std::string s = "(";
  for (std::size_t i = 0; i < basis.size(); ++i) s += (i ? "," : "") + std::to_string(basis[i]);
  return s + ")";
}

/// Bit offsets of each dimension inside the packed word (first dimension lowest).
template <class Sizes>
std::vector<int> bit_offsets(const Sizes& log2_sizes) {
  std::vector<int> offsets;
  int offset = 0;
  for (int log : log2_sizes) {
    offsets.push_back(offset);
    offset += log;
  }
  return offsets;
}

std::vector<int> out_offsets(const LinearLayout& layout) {
  std::vector<int> logs;
  for (const auto& out : layout.out_dims()) logs.push_back(out.log2_size);
  return bit_offsets(logs);
}

std::uint64_t pack(const LinearLayout::Basis& values, const std::vector<int>& offsets) {
  std::uint64_t word = 0;
  for (std::size_t j = 0; j < values.size(); ++j) word |= static_cast<std::uint64_t>(values[j]) << offsets[j];
  return word;
}

/// The inverse of pack() for dimensions of the given log2 sizes.
LinearLayout::Basis unpack(std::uint64_t word, const std::vector<int>& log2_sizes) {
  LinearLayout::Basis values;
  for (int log : log2_sizes) {
    values.push_back(static_cast<std::int32_t>(word & ((std::uint64_t{1} << log) - 1)));
    word >>= log;
  }
  return values;
}

/// One packed output word per input bit, in input order.
std::vector<std::uint64_t> columns(const LinearLayout& layout) {
  const std::vector<int> offsets = out_offsets(layout);
  std::vector<std::uint64_t> result;
  for (const auto& in : layout.in_dims())
    for (const auto& basis : in.bases) result.push_back(pack(basis, offsets));
  return result;
}

gf2::Basis column_basis(const LinearLayout& layout) {
  gf2::Basis basis;
  for (std::uint64_t column : columns(layout)) basis.add(column);
  return basis;
}

std::vector<int> in_log2_sizes(const LinearLayout& layout) {
  std::vector<int> logs;
  for (const auto& in : layout.in_dims()) logs.push_back(static_cast<int>(in.bases.size()));
  return logs;
}

/// The layout's inputs turned into output dimensions of the same sizes.
std::vector<LinearLayout::OutDim> inputs_as_outputs(const LinearLayout& layout) {
  std::vector<LinearLayout::OutDim> outs;
  for (const auto& in : layout.in_dims()) outs.push_back({in.name, static_cast<int>(in.bases.size())});
  return outs;
}

/// XOR of the bases of the set bits of `values` (one value per input dimension, layout order).
LinearLayout::Basis apply_ordered(const LinearLayout& layout, const std::vector<std::int32_t>& values) {
  LinearLayout::Basis out(layout.out_dims().size(), 0);
  for (std::size_t i = 0; i < values.size(); ++i) {
    const auto& in = layout.in_dims()[i];
    for (std::size_t bit = 0; bit < in.bases.size(); ++bit)
      if ((values[i] >> bit) & 1)
        for (std::size_t j = 0; j < out.size(); ++j) out[j] ^= in.bases[bit][j];
  }
  return out;
}

}  // namespace

LinearLayout::LinearLayout(std::vector<InDim> in_dims, std::vector<OutDim> out_dims)
    : in_dims_(std::move(in_dims)), out_dims_(std::move(out_dims)) {
  int out_bits = 0;
  for (std::size_t j = 0; j < out_dims_.size(); ++j) {
    const OutDim& out = out_dims_[j];
    if (index_of(out_dims_, out.name) != static_cast<int>(j))
      fail("linear layout: output dimension '" + out.name + "' appears twice in " + names_of(out_dims_));
    if (out.log2_size < 0 || out.log2_size > kMaxDimBits)
      fail("linear layout: output dimension '" + out.name + "' has log2 size " + std::to_string(out.log2_size) +
           ", outside 0..30");
    out_bits += out.log2_size;
  }
  int in_bits = 0;
  for (std::size_t i = 0; i < in_dims_.size(); ++i) {
    const InDim& in = in_dims_[i];
    if (index_of(in_dims_, in.name) != static_cast<int>(i))
      fail("linear layout: input dimension '" + in.name + "' appears twice in " + names_of(in_dims_));
    if (in.bases.size() > static_cast<std::size_t>(kMaxDimBits))
      fail("linear layout: input dimension '" + in.name + "' has " + std::to_string(in.bases.size()) +
           " bits, above 30");
    in_bits += static_cast<int>(in.bases.size());
    for (std::size_t bit = 0; bit < in.bases.size(); ++bit) {
      const Basis& basis = in.bases[bit];
      if (basis.size() != out_dims_.size())
        fail("linear layout: basis " + std::to_string(bit) + " of '" + in.name + "' has " +
             std::to_string(basis.size()) + " values for " + std::to_string(out_dims_.size()) + " output dimensions " +
             names_of(out_dims_));
      for (std::size_t j = 0; j < basis.size(); ++j)
        if (basis[j] < 0 || basis[j] >= (std::int32_t{1} << out_dims_[j].log2_size))
          fail("linear layout: basis " + std::to_string(bit) + " of '" + in.name + "' is " + basis_string(basis) +
               ", outside '" + out_dims_[j].name + "' of size " + std::to_string(1 << out_dims_[j].log2_size));
    }
  }
  if (in_bits > kMaxTotalBits || out_bits > kMaxTotalBits)
    fail("linear layout: " + std::to_string(in_bits) + " input and " + std::to_string(out_bits) +
         " output bits, above the 64 each may have");
}

LinearLayout LinearLayout::identity_1d(std::int32_t size, std::string in, std::string out) {
  const int log = exact_log2(size, "identity_1d size of '" + in + "'");
  std::vector<Basis> bases;
  for (int bit = 0; bit < log; ++bit) bases.push_back({std::int32_t{1} << bit});
  return LinearLayout({{std::move(in), std::move(bases)}}, {{std::move(out), log}});
}

LinearLayout LinearLayout::zeros_1d(std::int32_t size, std::string in, std::string out) {
  const int log = exact_log2(size, "zeros_1d size of '" + in + "'");
  return LinearLayout({{std::move(in), std::vector<Basis>(log, Basis{0})}}, {{std::move(out), 0}});
}

bool LinearLayout::has_in_dim(std::string_view name) const { return index_of(in_dims_, name) >= 0; }
bool LinearLayout::has_out_dim(std::string_view name) const { return index_of(out_dims_, name) >= 0; }

int LinearLayout::in_dim_size_log2(std::string_view name) const {
  const int i = index_of(in_dims_, name);
  if (i < 0) fail("linear layout: no input dimension '" + std::string(name) + "' in " + names_of(in_dims_));
  return static_cast<int>(in_dims_[i].bases.size());
}

int LinearLayout::out_dim_size_log2(std::string_view name) const {
  const int j = index_of(out_dims_, name);
  if (j < 0) fail("linear layout: no output dimension '" + std::string(name) + "' in " + names_of(out_dims_));
  return out_dims_[j].log2_size;
}

int LinearLayout::total_in_bits() const {
  int bits = 0;
  for (const auto& in : in_dims_) bits += static_cast<int>(in.bases.size());
  return bits;
}

int LinearLayout::total_out_bits() const {
  int bits = 0;
  for (const auto& out : out_dims_) bits += out.log2_size;
  return bits;
}

const LinearLayout::Basis& LinearLayout::basis(std::string_view in, int bit) const {
  const int log = in_dim_size_log2(in);
  if (bit < 0 || bit >= log)
    fail("linear layout: bit " + std::to_string(bit) + " of '" + std::string(in) + "', which has " +
         std::to_string(log) + " bits");
  return in_dims_[index_of(in_dims_, in)].bases[bit];
}

LinearLayout::Coordinates LinearLayout::apply(const Coordinates& in) const {
  std::vector<std::int32_t> values(in_dims_.size(), 0);
  std::vector<bool> seen(in_dims_.size(), false);
  for (const auto& [name, value] : in) {
    const int i = index_of(in_dims_, name);
    if (i < 0) fail("apply: no input dimension '" + name + "' in " + names_of(in_dims_));
    if (seen[i]) fail("apply: input dimension '" + name + "' given twice");
    const std::int64_t size = std::int64_t{1} << in_dims_[i].bases.size();
    if (value < 0 || value >= size)
      fail("apply: '" + name + "' = " + std::to_string(value) + " is outside 0.." + std::to_string(size - 1));
    seen[i] = true;
    values[i] = value;
  }
  for (std::size_t i = 0; i < in_dims_.size(); ++i)
    if (!seen[i]) fail("apply: input dimension '" + in_dims_[i].name + "' is missing");
  const Basis out = apply_ordered(*this, values);
  Coordinates result;
  for (std::size_t j = 0; j < out_dims_.size(); ++j) result.emplace_back(out_dims_[j].name, out[j]);
  return result;
}

LinearLayout LinearLayout::compose(const LinearLayout& outer) const {
  if (outer.in_dims_.size() != out_dims_.size())
    fail("compose: outer inputs " + names_of(outer.in_dims_) + " differ from outputs " + names_of(out_dims_));
  std::vector<int> position;  // position[j]: outer input index of this output j
  for (const OutDim& out : out_dims_) {
    const int i = index_of(outer.in_dims_, out.name);
    if (i < 0) fail("compose: outer inputs " + names_of(outer.in_dims_) + " lack output '" + out.name + "'");
    if (static_cast<int>(outer.in_dims_[i].bases.size()) < out.log2_size)
      fail("compose: outer input '" + out.name + "' has size " + std::to_string(1 << outer.in_dims_[i].bases.size()) +
           ", smaller than " + std::to_string(1 << out.log2_size));
    position.push_back(i);
  }
  std::vector<InDim> ins;
  for (const InDim& in : in_dims_) {
    InDim composed{in.name, {}};
    for (const Basis& basis : in.bases) {
      std::vector<std::int32_t> values(outer.in_dims_.size(), 0);
      for (std::size_t j = 0; j < basis.size(); ++j) values[position[j]] = basis[j];
      composed.bases.push_back(apply_ordered(outer, values));
    }
    ins.push_back(std::move(composed));
  }
  return LinearLayout(std::move(ins), outer.out_dims_);
}

LinearLayout LinearLayout::operator*(const LinearLayout& rhs) const {
  std::vector<OutDim> outs = out_dims_;
  std::vector<int> rhs_index, rhs_shift;
  for (const OutDim& out : rhs.out_dims_) {
    const int j = index_of(outs, out.name);
    if (j < 0) {
      rhs_index.push_back(static_cast<int>(outs.size()));
      rhs_shift.push_back(0);
      outs.push_back(out);
    } else {
      rhs_index.push_back(j);
      rhs_shift.push_back(outs[j].log2_size);
      outs[j].log2_size += out.log2_size;
    }
  }
  std::vector<InDim> ins;
  for (const InDim& in : in_dims_) {
    InDim widened{in.name, {}};
    for (Basis basis : in.bases) {
      basis.resize(outs.size(), 0);
      widened.bases.push_back(std::move(basis));
    }
    ins.push_back(std::move(widened));
  }
  for (const InDim& in : rhs.in_dims_) {
    int i = index_of(ins, in.name);
    if (i < 0) {
      i = static_cast<int>(ins.size());
      ins.push_back({in.name, {}});
    }
    for (const Basis& basis : in.bases) {
      Basis placed(outs.size(), 0);
      for (std::size_t j = 0; j < basis.size(); ++j) placed[rhs_index[j]] = basis[j] << rhs_shift[j];
      ins[i].bases.push_back(std::move(placed));
    }
  }
  return LinearLayout(std::move(ins), std::move(outs));
}

bool LinearLayout::is_injective() const { return column_basis(*this).kernel().empty(); }

bool LinearLayout::is_surjective() const { return column_basis(*this).rank() == total_out_bits(); }

std::vector<LinearLayout::Coordinates> LinearLayout::kernel_basis() const {
  const std::vector<int> logs = in_log2_sizes(*this);
  const gf2::Basis basis = column_basis(*this);
  std::vector<Coordinates> result;
  for (std::uint64_t combination : basis.kernel()) {
    const Basis values = unpack(combination, logs);
    Coordinates coordinates;
    for (std::size_t i = 0; i < in_dims_.size(); ++i) coordinates.emplace_back(in_dims_[i].name, values[i]);
    result.push_back(std::move(coordinates));
  }
  return result;
}

LinearLayout LinearLayout::invert() const {
  if (!is_injective() || !is_surjective())
    fail("invert: the layout is not bijective (" + std::to_string(total_in_bits()) + " input bits, " +
         std::to_string(total_out_bits()) + " output bits, injective " + (is_injective() ? "yes" : "no") +
         ", surjective " + (is_surjective() ? "yes" : "no") + ")");
  return pseudo_invert();
}

LinearLayout LinearLayout::pseudo_invert() const {
  const gf2::Basis basis = column_basis(*this);
  const std::vector<int> logs = in_log2_sizes(*this);
  const std::vector<int> offsets = out_offsets(*this);
  // The projection onto the span is linear, so sending each unit output
  // vector to the preimage of its in-span part gives a linear map.
  std::vector<InDim> ins;
  for (std::size_t j = 0; j < out_dims_.size(); ++j) {
    InDim in{out_dims_[j].name, {}};
    for (int bit = 0; bit < out_dims_[j].log2_size; ++bit)
      in.bases.push_back(unpack(basis.reduce(std::uint64_t{1} << (offsets[j] + bit)).second, logs));
    ins.push_back(std::move(in));
  }
  return LinearLayout(std::move(ins), inputs_as_outputs(*this));
}

LinearLayout LinearLayout::invert_and_compose(const LinearLayout& outer) const {
  if (outer.out_dims_.size() != out_dims_.size())
    fail("invert_and_compose: outputs " + names_of(out_dims_) + " differ from outer outputs " +
         names_of(outer.out_dims_));
  const gf2::Basis basis = column_basis(outer);
  const std::vector<int> outer_offsets = out_offsets(outer);
  const std::vector<int> logs = in_log2_sizes(outer);
  std::vector<int> position;
  for (const OutDim& out : out_dims_) {
    const int j = index_of(outer.out_dims_, out.name);
    if (j < 0) fail("invert_and_compose: outer outputs " + names_of(outer.out_dims_) + " lack '" + out.name + "'");
    position.push_back(j);
  }
  std::vector<InDim> ins;
  for (const InDim& in : in_dims_) {
    InDim composed{in.name, {}};
    for (std::size_t bit = 0; bit < in.bases.size(); ++bit) {
      const Basis& value = in.bases[bit];
      std::uint64_t word = 0;
      bool fits = true;
      for (std::size_t j = 0; j < value.size(); ++j) {
        fits = fits && value[j] < (std::int32_t{1} << outer.out_dims_[position[j]].log2_size);
        word |= static_cast<std::uint64_t>(value[j]) << outer_offsets[position[j]];
      }
      const auto [rest, combination] = basis.reduce(word);
      if (!fits || rest != 0)
        fail("invert_and_compose: '" + in.name + "' bit " + std::to_string(bit) + " maps to " + basis_string(value) +
             ", which the outer layout never holds");
      composed.bases.push_back(unpack(combination, logs));
    }
    ins.push_back(std::move(composed));
  }
  return LinearLayout(std::move(ins), inputs_as_outputs(outer));
}

LinearLayout LinearLayout::transpose_outs(const std::vector<std::string>& order) const {
  std::vector<int> source;
  for (const std::string& name : order) {
    const int j = index_of(out_dims_, name);
    if (j < 0 || std::count(order.begin(), order.end(), name) != 1)
      fail("transpose_outs: " + names_of(order) + " is not a permutation of " + names_of(out_dims_));
    source.push_back(j);
  }
  if (order.size() != out_dims_.size())
    fail("transpose_outs: " + names_of(order) + " is not a permutation of " + names_of(out_dims_));
  std::vector<OutDim> outs;
  for (int j : source) outs.push_back(out_dims_[j]);
  std::vector<InDim> ins;
  for (const InDim& in : in_dims_) {
    InDim permuted{in.name, {}};
    for (const Basis& basis : in.bases) {
      Basis reordered;
      for (int j : source) reordered.push_back(basis[j]);
      permuted.bases.push_back(std::move(reordered));
    }
    ins.push_back(std::move(permuted));
  }
  return LinearLayout(std::move(ins), std::move(outs));
}

LinearLayout LinearLayout::transpose_ins(const std::vector<std::string>& order) const {
  std::vector<InDim> ins;
  for (const std::string& name : order) {
    const int i = index_of(in_dims_, name);
    if (i < 0 || std::count(order.begin(), order.end(), name) != 1)
      fail("transpose_ins: " + names_of(order) + " is not a permutation of " + names_of(in_dims_));
    ins.push_back(in_dims_[i]);
  }
  if (order.size() != in_dims_.size())
    fail("transpose_ins: " + names_of(order) + " is not a permutation of " + names_of(in_dims_));
  return LinearLayout(std::move(ins), out_dims_);
}

LinearLayout LinearLayout::reshape_outs(const std::vector<std::pair<std::string, std::int32_t>>& dims) const {
  std::vector<OutDim> outs;
  int bits = 0;
  for (const auto& [name, size] : dims) {
    outs.push_back({name, exact_log2(size, "reshape_outs size of '" + name + "'")});
    bits += outs.back().log2_size;
  }
  if (bits != total_out_bits())
    fail("reshape_outs: " + std::to_string(std::uint64_t{1} << bits) + " elements for a layout over " +
         std::to_string(std::uint64_t{1} << total_out_bits()));
  // Row-major: the last dimension takes the lowest bits of the flat index.
  auto row_major_logs = [](const std::vector<OutDim>& dims) {
    std::vector<int> logs;
    for (auto it = dims.rbegin(); it != dims.rend(); ++it) logs.push_back(it->log2_size);
    return logs;
  };
  const std::vector<int> old_logs = row_major_logs(out_dims_);
  const std::vector<int> new_logs = row_major_logs(outs);
  const std::vector<int> old_offsets = bit_offsets(old_logs);
  std::vector<InDim> ins;
  for (const InDim& in : in_dims_) {
    InDim reshaped{in.name, {}};
    for (const Basis& basis : in.bases) {
      const Basis reversed(basis.rbegin(), basis.rend());
      Basis values = unpack(pack(reversed, old_offsets), new_logs);
      std::reverse(values.begin(), values.end());
      reshaped.bases.push_back(std::move(values));
    }
    ins.push_back(std::move(reshaped));
  }
  return LinearLayout(std::move(ins), std::move(outs));
}

LinearLayout LinearLayout::sublayout(const std::vector<std::string>& ins, const std::vector<std::string>& outs) const {
  for (const std::string& name : ins)
    if (!has_in_dim(name)) fail("sublayout: no input dimension '" + name + "' in " + names_of(in_dims_));
  for (const std::string& name : outs)
    if (!has_out_dim(name)) fail("sublayout: no output dimension '" + name + "' in " + names_of(out_dims_));
  auto listed = [](const std::vector<std::string>& names, const std::string& name) {
    return std::find(names.begin(), names.end(), name) != names.end();
  };
  std::vector<int> kept_outs;
  std::vector<OutDim> new_outs;
  for (std::size_t j = 0; j < out_dims_.size(); ++j)
    if (listed(outs, out_dims_[j].name)) {
      kept_outs.push_back(static_cast<int>(j));
      new_outs.push_back(out_dims_[j]);
    }
  std::vector<InDim> new_ins;
  for (const InDim& in : in_dims_) {
    if (!listed(ins, in.name)) continue;
    InDim kept{in.name, {}};
    for (const Basis& basis : in.bases) {
      Basis restricted;
      for (int j : kept_outs) restricted.push_back(basis[j]);
      kept.bases.push_back(std::move(restricted));
    }
    new_ins.push_back(std::move(kept));
  }
  return LinearLayout(std::move(new_ins), std::move(new_outs));
}

std::int32_t LinearLayout::contiguous_elements(std::string_view out, std::string_view in) const {
  const int j = index_of(out_dims_, out);
  if (j < 0) fail("contiguous_elements: no output dimension '" + std::string(out) + "' in " + names_of(out_dims_));
  const int i = index_of(in_dims_, in);
  if (i < 0) return 1;
  int run = 0;
  for (const Basis& basis : in_dims_[i].bases) {
    Basis unit(out_dims_.size(), 0);
    unit[j] = std::int32_t{1} << run;
    if (basis != unit) break;
    ++run;
  }
  return std::int32_t{1} << run;
}

std::string to_string(const LinearLayout& layout) {
  std::string s;
  for (const auto& in : layout.in_dims()) {
    s += in.name + "[" + std::to_string(1 << in.bases.size()) + "]:";
    for (const auto& basis : in.bases) s += " " + basis_string(basis);
    s += "\n";
  }
  s += "->";
  for (const auto& out : layout.out_dims()) s += " " + out.name + "[" + std::to_string(1 << out.log2_size) + "]";
  return s;
}

std::ostream& operator<<(std::ostream& os, const LinearLayout& layout) { return os << to_string(layout); }

}  // namespace kiln::lowering
