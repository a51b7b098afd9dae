// Creation and shape ops: constant, grid queries, arange, splat, broadcast,
// expand_dims, reshape, trans, join, split. Only element widths matter here.

#include <algorithm>
#include <cstring>
#include <variant>

#include "convert.hpp"
#include "fault.hpp"
#include "program.hpp"

namespace kiln::runtime::interp {

namespace {

constexpr std::size_t kMaxRank = 16;

template <class U>
KILN_ROUTINE void run_fill(const Instr& ins, Exec& ex) {
  U value;
  std::memcpy(&value, &ins.bits, sizeof(U));
  std::fill_n(ex.at<U>(ins.out[0]), ins.n, value);
}

template <class U>
KILN_ROUTINE void run_splat(const Instr& ins, Exec& ex) {
  std::fill_n(ex.at<U>(ins.out[0]), ins.n, *ex.at<U>(ins.in[0]));
}

KILN_ROUTINE void run_program_id(const Instr& ins, Exec& ex) {
  *ex.at<std::int32_t>(ins.out[0]) = ex.pid[ins.param[0]];
}
KILN_ROUTINE void run_num_programs(const Instr& ins, Exec& ex) {
  *ex.at<std::int32_t>(ins.out[0]) = ex.grid[ins.param[0]];
}

KILN_ROUTINE void run_arange(const Instr& ins, Exec& ex) {
  const std::int64_t n = ins.n;
  std::int32_t* out = ex.at<std::int32_t>(ins.out[0]);
  const auto start = static_cast<std::int32_t>(ins.param[0]);
  for (std::int64_t i = 0; i < n; ++i) out[i] = start + static_cast<std::int32_t>(i);
}

KILN_ROUTINE void run_copy(const Instr& ins, Exec& ex) {
  std::memcpy(ex.frame + ins.out[0].offset, ex.frame + ins.in[0].offset, ins.out[0].bytes);
}

/// out[i] = in[sum of index_d * stride_d] over the result's row-major index;
/// `dims` holds the (merged) result shape, then the input strides.
template <class U>
KILN_ROUTINE void run_gather(const Instr& ins, Exec& ex) {
  const std::int64_t n = ins.n;
  const U* src = ex.at<U>(ins.in[0]);
  U* dst = ex.at<U>(ins.out[0]);
  const std::size_t rank = ins.dims.size() / 2;
  const std::int64_t* shape = ins.dims.data();
  const std::int64_t* stride = shape + rank;
  const std::int64_t inner = shape[rank - 1];
  const std::int64_t inner_stride = stride[rank - 1];
  std::array<std::int64_t, kMaxRank> index{};
  std::int64_t base = 0;
  for (std::int64_t done = 0; done < n; done += inner, dst += inner) {
    if (inner_stride == 1) std::memcpy(dst, src + base, inner * sizeof(U));
    else if (inner_stride == 0) std::fill_n(dst, inner, src[base]);
    else
      for (std::int64_t i = 0; i < inner; ++i) dst[i] = src[base + i * inner_stride];
    for (std::size_t d = rank - 1; d-- > 0;) {
      base += stride[d];
      if (++index[d] < shape[d]) break;
      base -= stride[d] * shape[d];
      index[d] = 0;
    }
  }
}

template <class U>
KILN_ROUTINE void run_join(const Instr& ins, Exec& ex) {
  const std::int64_t n = ins.n;
  const U* a = ex.at<U>(ins.in[0]);
  const U* b = ex.at<U>(ins.in[1]);
  U* out = ex.at<U>(ins.out[0]);
  for (std::int64_t i = 0; i < n / 2; ++i) {
    out[2 * i] = a[i];
    out[2 * i + 1] = b[i];
  }
}

template <class U>
KILN_ROUTINE void run_split(const Instr& ins, Exec& ex) {
  const std::int64_t n = ins.n;
  const U* x = ex.at<U>(ins.in[0]);
  U* a = ex.at<U>(ins.out[0]);
  U* b = ex.at<U>(ins.out[1]);
  for (std::int64_t i = 0; i < n; ++i) {
    a[i] = x[2 * i];
    b[i] = x[2 * i + 1];
  }
}

std::vector<std::int64_t> row_major_strides(const ir::Shape& shape) {
  std::vector<std::int64_t> strides(shape.size(), 1);
  for (std::size_t d = shape.size(); d-- > 1;) strides[d - 1] = strides[d] * shape[d];
  return strides;
}

/// Binds a gather: drops unit dims and merges dims that are contiguous in
/// the input, so the inner loop runs as long as possible.
void bind_gather(const ir::Operation& op, Instr& ins, const ir::Shape& shape, const std::vector<std::int64_t>& stride) {
  std::vector<std::int64_t> s, t;
  for (std::size_t d = 0; d < shape.size(); ++d) {
    if (shape[d] == 1) continue;
    if (!s.empty() && t.back() == stride[d] * shape[d]) {
      s.back() *= shape[d];
      t.back() = stride[d];
    } else {
      s.push_back(shape[d]);
      t.push_back(stride[d]);
    }
  }
  if (s.empty()) {
    s.push_back(1);
    t.push_back(0);
  }
  if (s.size() > kMaxRank)
    unsupported(op, "rank " + std::to_string(s.size()) + " is above " + std::to_string(kMaxRank));
  ins.dims = s;
  ins.dims.insert(ins.dims.end(), t.begin(), t.end());
  ins.run = with_width(ins.out[0].element_bytes, [](auto u) -> Routine { return &run_gather<decltype(u)>; });
}

int grid_axis(const ir::Operation& op) {
  const std::int64_t axis = op.int_attribute("axis");
  if (axis < 0 || axis > 2) unsupported(op, "axis " + std::to_string(axis) + " is not 0, 1 or 2");
  if (op.result()->type != ir::Type::scalar(ir::DType::i32))
    unsupported(op, "result is " + ir::to_string(op.result()->type) + ", not i32");
  return static_cast<int>(axis);
}

}  // namespace

std::uint64_t constant_bits(const ir::Type& type, const ir::Attribute& value) {
  return with_element(type, [&](auto e) -> std::uint64_t {
    using E = decltype(e);
    typename E::S s{};
    if (const auto* i = std::get_if<std::int64_t>(&value)) {
      s = convert<Element<ir::DType::i64>, E>(*i);
    } else if (const auto* d = std::get_if<double>(&value)) {
      if constexpr (E::is_pointer)
        throw std::invalid_argument("interpreter: constant: a pointer constant must be an integer");
      else s = convert<Element<ir::DType::f64>, E>(*d);
    } else {
      throw std::invalid_argument("interpreter: constant: value must be an integer or a float");
    }
    std::uint64_t bits = 0;
    std::memcpy(&bits, &s, sizeof(s));
    return bits;
  });
}

void bind_shape(const ir::Operation& op, Instr& ins) {
  const ir::Type& result = op.results.at(0)->type;
  const int width = ins.out[0].element_bytes;
  switch (op.code) {
    case ir::OpCode::constant: {
      const ir::Attribute* value = op.find_attribute("value");
      if (!value) unsupported(op, "missing attribute 'value'");
      try {
        ins.bits = constant_bits(result, *value);
      } catch (const std::invalid_argument& e) {
        unsupported(op, e.what());
      }
      ins.run = with_width(width, [](auto u) -> Routine { return &run_fill<decltype(u)>; });
      return;
    }
    case ir::OpCode::program_id:
      ins.param[0] = grid_axis(op);
      ins.run = &run_program_id;
      return;
    case ir::OpCode::num_programs:
      ins.param[0] = grid_axis(op);
      ins.run = &run_num_programs;
      return;
    case ir::OpCode::arange:
      if (result.dtype != ir::DType::i32 || result.is_pointer || result.shape.size() != 1)
        unsupported(op, "result is " + ir::to_string(result) + ", not a 1-D tile of i32");
      ins.param[0] = op.int_attribute("start");
      ins.run = &run_arange;
      return;
    case ir::OpCode::splat:
      ins.run = with_width(width, [](auto u) -> Routine { return &run_splat<decltype(u)>; });
      return;
    case ir::OpCode::expand_dims:
    case ir::OpCode::reshape:
      if (ins.in[0].bytes != ins.out[0].bytes)
        unsupported(op, ir::to_string(op.operands[0]->type) + " and " + ir::to_string(result) + " differ in size");
      ins.run = &run_copy;
      return;
    case ir::OpCode::broadcast: {
      const ir::Shape& from = op.operands[0]->type.shape;
      if (from.size() != result.shape.size())
        unsupported(op, "cannot broadcast " + ir::to_string(op.operands[0]->type) + " to " + ir::to_string(result));
      std::vector<std::int64_t> stride = row_major_strides(from);
      for (std::size_t d = 0; d < from.size(); ++d)
        if (from[d] == 1 && result.shape[d] != 1) stride[d] = 0;
      bind_gather(op, ins, result.shape, stride);
      return;
    }
    case ir::OpCode::trans: {
      const ir::Shape& from = op.operands[0]->type.shape;
      const std::vector<std::int64_t>& order = op.ints_attribute("order");
      if (order.size() != from.size())
        unsupported(op,
                    "order has " + std::to_string(order.size()) + " entries for rank " + std::to_string(from.size()));
      const std::vector<std::int64_t> in_stride = row_major_strides(from);
      std::vector<std::int64_t> stride;
      for (std::int64_t o : order) {
        if (o < 0 || o >= static_cast<std::int64_t>(from.size()))
          unsupported(op, "order entry " + std::to_string(o) + " is out of range");
        stride.push_back(in_stride[o]);
      }
      bind_gather(op, ins, result.shape, stride);
      return;
    }
    case ir::OpCode::join:
      ins.run = with_width(width, [](auto u) -> Routine { return &run_join<decltype(u)>; });
      return;
    case ir::OpCode::split:
      ins.n = ins.out[0].numel();
      ins.run = with_width(width, [](auto u) -> Routine { return &run_split<decltype(u)>; });
      return;
    default: unsupported(op, "not a shape op");
  }
}

}  // namespace kiln::runtime::interp
