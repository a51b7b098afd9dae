// Block pointers, Triton's tl.make_block_ptr / tl.advance: a pointer to one
// block of a strided tensor, described by the tensor's shape and strides and
// the block's offsets. They are sugar over the ordinary ops: loading through
// one traces the pointer tile base + (offset + arange) * stride and, on the
// axes asked for, the mask 0 <= index < shape.
//
//   kl::Var a_block = kl::make_block_ptr<BM, BK>(a, {m, k}, {stride_am, stride_ak}, {row0, 0});
//   for (auto k0 : kl::range(0, k, BK)) {
//     acc = kl::dot(kl::load(a_block, {.boundary_check = {0, 1}}), ..., acc);
//     a_block = kl::advance(a_block, {0, BK});
//   }
#pragma once

#include <array>
#include <cstdint>
#include <source_location>
#include <span>
#include <vector>

#include "kiln/dsl/control.hpp"
#include "kiln/dsl/memory.hpp"

namespace kiln {

/// The value a boundary-checked load gives outside the tensor.
enum class Padding { zero, nan };

struct BlockLoadOptions {
  /// The axes whose indices are checked against the shape; elements outside
  /// [0, shape) on them are not read and take the padding value.
  std::vector<int> boundary_check{};
  Padding padding = Padding::zero;
  Cache cache = Cache::none;
  Evict evict = Evict::none;
};

struct BlockStoreOptions {
  /// The axes whose indices are checked; elements outside [0, shape) on them are not written.
  std::vector<int> boundary_check{};
  Cache cache = Cache::none;
  Evict evict = Evict::none;
};

namespace detail {

template <std::size_t BlockRank, std::size_t Entries>
struct block_rank_check {
  static_assert(BlockRank == Entries,
                "kiln: a block pointer's shape, strides, offsets and advance lists need one entry per block dimension");
  static constexpr bool value = true;
};

template <class Block, class Stored>
struct block_store_shape_check {
  static_assert(std::is_same_v<Block, Stored>,
                "kiln: a tile stored through a block pointer must have the block's shape");
  static constexpr bool value = true;
};

/// One entry of a shape, strides or offsets list: an i32 value or a C++ integer.
struct BlockIndex {
  ir::Value* value = nullptr;
  std::int64_t literal = 0;
};

/// The pointer tile and mask (null when no axis is checked) of one access.
struct BlockAccess {
  ir::Value* pointers;
  ir::Value* mask;
};

/// The entries as i32 scalars (constants for the C++ integers), written to `out`.
void block_indices(std::span<const BlockIndex> entries, std::span<ir::Value*> out, const std::source_location& loc);
/// offsets + delta, entry by entry (kl::advance), written to `out`.
void advanced_offsets(std::span<ir::Value* const> offsets, std::span<ir::Value* const> delta, std::span<ir::Value*> out,
                      const std::source_location& loc);
/// The pointers base + sum_i (offset_i + arange(block_i)) * stride_i and the
/// mask 0 <= offset_i + arange(block_i) < shape_i of the `checked` axes;
/// `what` names the access in errors.
BlockAccess block_access(ir::Value* base, std::span<ir::Value* const> shape, std::span<ir::Value* const> strides,
                         std::span<ir::Value* const> offsets, const ir::Shape& block, const std::vector<int>& checked,
                         const char* what, const std::source_location& loc);
/// The `other` operand of a masked load of `type` with this padding: none
/// for zero (a masked load gives 0), a NaN tile for nan (floats only).
ir::Value* padding_value(Padding padding, const ir::Type& type, const std::source_location& loc);

template <class Block>
BlockAccess block_access(const Block& block, const std::vector<int>& checked, const char* what,
                         const std::source_location& loc) {
  return block_access(block.base(), block.tensor_shape(), block.strides(), block.offsets(),
                      Block::block_shape::vector(), checked, what, loc);
}

}  // namespace detail

/// R entries, one per block dimension: `{m, k}`, `{0, BLOCK_K}`. Each is an
/// i32 (or narrower integer) scalar or a C++ integer.
template <std::size_t R>
class BlockIndices {
 public:
  template <class... A>
    requires((Numeric<A> || std::is_integral_v<A>) && ...)
  BlockIndices(const A&... entries) {
    static_assert(detail::block_rank_check<R, sizeof...(A)>::value);
    std::size_t i = 0;
    (set(i++, entries), ...);
  }
  const std::array<detail::BlockIndex, R>& entries() const { return entries_; }

 private:
  template <class A>
  void set(std::size_t i, const A& entry) {
    if constexpr (std::is_integral_v<A>) {
      entries_[i].literal = entry;
    } else {
      static_assert(shape_t<A>::rank == 0 && ir::is_integer(dtype_of<A>) && !ir::is_bool(dtype_of<A>) &&
                        ir::dtype_bits(dtype_of<A>) <= 32,
                    "kiln: block pointer shapes, strides and offsets are integer scalars of at most 32 bits");
      entries_[i].value = entry.value();
    }
  }
  std::array<detail::BlockIndex, R> entries_{};
};

/// A pointer to one B0 x B1 x … block of a tensor of E with runtime shape
/// and strides (Triton's block pointer), indexed row-major. A value: advance
/// returns a new one; a kl::Var of it is carried through runtime loops.
template <class E, std::size_t... B>
class BlockPtr {
  static_assert(sizeof...(B) > 0, "kiln::BlockPtr needs at least one block dimension");

 public:
  static constexpr std::size_t rank = sizeof...(B);
  using element_type = E;
  using block_shape = shape<B...>;
  using Indices = std::array<ir::Value*, rank>;

  BlockPtr(ir::Value* base, const Indices& shape, const Indices& strides, const Indices& offsets,
           const std::source_location& loc)
      : base_(base),
        shape_(shape),
        strides_(strides),
        offsets_(offsets),
        loc_(loc),
        home_(detail::TraceContext::current("kl::BlockPtr").block()) {}
  BlockPtr(const BlockPtr&) = default;
  /// Rebinds this block pointer; inside runtime control flow only a kl::Var may be rebound.
  BlockPtr& operator=(const BlockPtr& other) {
    detail::check_assignment(home_, other.loc_);
    base_ = other.base_;
    shape_ = other.shape_;
    strides_ = other.strides_;
    offsets_ = other.offsets_;
    loc_ = other.loc_;
    return *this;
  }

  ir::Value* base() const { return base_; }
  const Indices& tensor_shape() const { return shape_; }
  const Indices& strides() const { return strides_; }
  const Indices& offsets() const { return offsets_; }
  /// Where this block pointer was made or advanced.
  const std::source_location& location() const { return loc_; }

 protected:
  Indices& mutable_offsets() { return offsets_; }
  void make_assignable_anywhere() { home_ = nullptr; }

 private:
  ir::Value* base_;
  Indices shape_, strides_, offsets_;
  std::source_location loc_;
  const ir::Block* home_;
};

namespace detail {
/// A block pointer, in a kl::Var or not, is not a value of the language: no
/// element type or shape of its own, so value operations do not apply.
template <class E, std::size_t... B>
struct value_traits<Var<BlockPtr<E, B...>>> {};
}  // namespace detail

/// A block pointer to the B0 x B1 x … block at `offsets` of the tensor at
/// `base` with `shape` and `strides` (in elements). Triton's `order` is not
/// needed: the block is indexed row-major, whatever the strides.
template <std::size_t... B, class E>
BlockPtr<E, B...> make_block_ptr(const Ptr<E>& base, const BlockIndices<sizeof...(B)>& shape,
                                 const BlockIndices<sizeof...(B)>& strides, const BlockIndices<sizeof...(B)>& offsets,
                                 std::source_location loc = std::source_location::current()) {
  typename BlockPtr<E, B...>::Indices s, t, o;
  detail::block_indices(shape.entries(), s, loc);
  detail::block_indices(strides.entries(), t, loc);
  detail::block_indices(offsets.entries(), o, loc);
  return BlockPtr<E, B...>(base.value(), s, t, o, loc);
}

/// The block pointer moved by `delta` elements along each axis.
template <class E, std::size_t... B>
BlockPtr<E, B...> advance(const BlockPtr<E, B...>& block, const BlockIndices<sizeof...(B)>& delta,
                          std::source_location loc = std::source_location::current()) {
  typename BlockPtr<E, B...>::Indices d, o;
  detail::block_indices(delta.entries(), d, loc);
  detail::advanced_offsets(block.offsets(), d, o, loc);
  return BlockPtr<E, B...>(block.base(), block.tensor_shape(), block.strides(), o, loc);
}

/// Loads the block; elements outside [0, shape) on the boundary-checked axes
/// take the padding value (an unchecked axis must stay inside the tensor).
template <class E, std::size_t... B>
Tile<E, B...> load(const BlockPtr<E, B...>& block, BlockLoadOptions opts = {},
                   std::source_location loc = std::source_location::current()) {
  using R = Tile<E, B...>;
  const detail::BlockAccess access = detail::block_access(block, opts.boundary_check, "load", loc);
  std::vector<ir::Value*> operands{access.pointers};
  if (access.mask) {
    operands.push_back(access.mask);
    if (ir::Value* other = detail::padding_value(opts.padding, ir_type<R>(), loc)) operands.push_back(other);
  }
  return R(detail::emit(ir::OpCode::load, operands, ir_type<R>(),
                        {{"cache", ir::symbol_attribute(opts.cache)}, {"evict", ir::symbol_attribute(opts.evict)}},
                        loc));
}

/// Stores `value` (a tile of the block's shape, converted to E) into the
/// block; elements outside [0, shape) on the boundary-checked axes are not written.
template <class E, std::size_t... B, Numeric V>
void store(const BlockPtr<E, B...>& block, const V& value, BlockStoreOptions opts = {},
           std::source_location loc = std::source_location::current()) {
  static_assert(detail::block_store_shape_check<shape<B...>, shape_t<V>>::value);
  const detail::BlockAccess access = detail::block_access(block, opts.boundary_check, "store", loc);
  std::vector<ir::Value*> operands{access.pointers,
                                   detail::emit_cast(value.value(), ir_type<Tile<E, B...>>().dtype, loc)};
  if (access.mask) operands.push_back(access.mask);
  detail::emit_op(ir::OpCode::store, operands, {},
                  {{"cache", ir::symbol_attribute(opts.cache)}, {"evict", ir::symbol_attribute(opts.evict)}}, 0, loc);
}

/// A block pointer that may be advanced inside runtime loops and branches:
/// its offsets are carried like kl::Var<kl::i32>s. Base, shape and strides
/// stay those it was made with.
template <class E, std::size_t... B>
class Var<BlockPtr<E, B...>> : public BlockPtr<E, B...> {
  using Block = BlockPtr<E, B...>;

 public:
  Var(const Block& init) : Block(init) {
    this->make_assignable_anywhere();
    auto& vars = detail::TraceContext::current("kl::Var").live_vars();
    for (std::size_t i = 0; i < Block::rank; ++i) {
      carried_[i].slot = &this->mutable_offsets()[i];
      vars.push_back(&carried_[i]);
    }
  }
  Var(const Var& other) : Var(static_cast<const Block&>(other)) {}
  Var& operator=(const Var& other) { return *this = static_cast<const Block&>(other); }
  Var& operator=(const Block& other) {
    if (other.base() != this->base() || other.tensor_shape() != this->tensor_shape() ||
        other.strides() != this->strides())
      detail::TraceContext::current("kl::Var").fail(
          "kl::Var<BlockPtr>: only the offsets are carried; assign a block pointer advanced from this one "
          "(same base, shape and strides)",
          other.location());
    this->mutable_offsets() = other.offsets();
    return *this;
  }
  ~Var() {
    if (!detail::TraceContext::active()) return;
    auto& vars = detail::TraceContext::current("kl::Var").live_vars();
    for (auto& c : carried_) std::erase(vars, static_cast<detail::VarBase*>(&c));
  }

 private:
  struct CarriedOffset final : detail::VarBase {
    ir::Value** slot = nullptr;
    ir::Value* get() const override { return *slot; }
    void set(ir::Value* v) override { *slot = v; }
  };
  std::array<CarriedOffset, Block::rank> carried_;
};

template <class E, std::size_t... B>
Var(BlockPtr<E, B...>) -> Var<BlockPtr<E, B...>>;

}  // namespace kiln
