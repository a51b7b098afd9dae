// Correctness of global memory access on the cpu device: masked loads with
// `other` as a literal and as a tile, cache/evict hints, scalar pointers,
// masked stores, strided 2-D pointer tiles, and every atomic (rmw kinds, cas)
// with masks and many programs hitting the same addresses.
#include <algorithm>
#include <bit>
#include <cstdint>
#include <limits>
#include <random>
#include <string>
#include <type_traits>
#include <vector>

#include "kiln/ir/printer.hpp"
#include "reference_support.hpp"

namespace {

namespace kl = kiln;
using kiln::test::as_double;
using kiln::test::expect_equal;
using kiln::test::gamma_bound;
using kiln::test::is_float_v;
using kiln::test::random_values;
using kiln::test::unit_roundoff;
using kiln::test::wrap;

template <class C>
using P = kl::Ptr<kl::Scalar<C>>;

// ---------------------------------------------------------------------------
// Loads and stores, for every dtype.

// out_literal = x where in bounds, else 5; out_tile = x where in bounds, else y.
template <class C, int BLOCK>
void load_other(P<C> x, P<C> y, P<C> out_literal, P<C> out_tile, kl::i32 n) {
  auto offs = kl::program_id(0) * BLOCK + kl::arange<BLOCK>();
  auto mask = offs < n;
  kl::store(out_literal + offs,
            kl::load(x + offs, mask, {.other = 5, .cache = kl::Cache::cg, .evict = kl::Evict::last}));
  auto fallback = kl::load(y + offs, {.cache = kl::Cache::ca});
  kl::store(out_tile + offs, kl::load(x + offs, mask, fallback, {.cache = kl::Cache::cv, .evict = kl::Evict::first}),
            {.cache = kl::Cache::cs});
}

// Copies x to out where the index is in bounds and not a multiple of 3.
template <class C, int BLOCK>
void masked_store(P<C> x, P<C> out, kl::i32 n) {
  auto offs = kl::program_id(0) * BLOCK + kl::arange<BLOCK>();
  auto in_bounds = offs < n;
  auto keep = in_bounds & (offs % 3 != 0);
  kl::store(out + offs, kl::load(x + offs, in_bounds), keep, {.cache = kl::Cache::cg, .evict = kl::Evict::first});
}

// One element per program through scalar pointers: a masked scalar load
// stored reversed (masked), the loaded value echoed (unmasked), and an
// unmasked scalar load at pid % n.
template <class C>
void scalar_access(P<C> x, P<C> reversed, P<C> echoed, P<C> cycled, kl::i32 n) {
  auto pid = kl::program_id(0);
  auto inside = pid < n;
  auto v = kl::load(x + pid, inside, {.other = 5});
  kl::store(reversed + (n - 1 - pid), v, inside);
  kl::store(echoed + pid, v);
  kl::store(cycled + pid, kl::load(x + pid % n));
}

// out[i * som + j * son] = x[i * sxm + j * sxn] over an M x N matrix, one
// BM x BN tile per program of a 2-D grid.
template <class C, int BM, int BN>
void copy_2d(P<C> x, P<C> out, kl::i32 m, kl::i32 n, kl::i32 sxm, kl::i32 sxn, kl::i32 som, kl::i32 son) {
  auto rows = kl::expand_dims<1>(kl::program_id(0) * BM + kl::arange<BM>());
  auto cols = kl::expand_dims<0>(kl::program_id(1) * BN + kl::arange<BN>());
  auto mask = (rows < m) & (cols < n);
  auto tile = kl::load(x + rows * sxm + cols * sxn, mask);
  kl::store(out + rows * som + cols * son, tile, mask);
}

using MemoryTypes =
    ::testing::Types<std::int8_t, std::int16_t, std::int32_t, std::int64_t, std::uint8_t, std::uint16_t, std::uint32_t,
                     std::uint64_t, kl::half, kl::bfloat16, float, double, kl::float8_e4m3, kl::float8_e5m2>;

template <class C>
class LoadStore : public ::testing::Test {};
TYPED_TEST_SUITE(LoadStore, MemoryTypes, kiln::test::DTypeNames);

constexpr int kBlock = 64;

TYPED_TEST(LoadStore, MaskedLoadTakesOtherAsLiteralAndAsTile) {
  using C = TypeParam;
  const int n = 1000;  // 16 programs of 64, the last one masked after 40
  const int programs = kl::cdiv(n, kBlock);
  const std::size_t padded = static_cast<std::size_t>(programs) * kBlock;
  const auto x = random_values<C>(n, 1);
  const auto y = random_values<C>(padded, 2);
  // x holds exactly n elements: the bounds check faults if a masked-off one is read.
  auto bx = kl::Buffer<C>::from(x);
  auto by = kl::Buffer<C>::from(y);
  auto out_literal = kl::Buffer<C>::from(random_values<C>(padded, 3));
  auto out_tile = kl::Buffer<C>::from(random_values<C>(padded, 4));
  kl::compile<load_other<C, kBlock>>().launch(kl::Grid(programs), bx, by, out_literal, out_tile, n);
  std::vector<C> want_literal(padded), want_tile(padded);
  for (std::size_t i = 0; i < padded; ++i) {
    want_literal[i] = i < static_cast<std::size_t>(n) ? x[i] : kiln::test::from_double<C>(5);
    want_tile[i] = i < static_cast<std::size_t>(n) ? x[i] : y[i];
  }
  expect_equal(out_literal.to_host(), want_literal, "load with other = 5");
  expect_equal(out_tile.to_host(), want_tile, "load with other = a tile");
}

TYPED_TEST(LoadStore, MaskedStoreLeavesMaskedOffElements) {
  using C = TypeParam;
  const int n = 777;
  const auto x = random_values<C>(n, 5);
  const auto before = random_values<C>(n, 6);
  auto bx = kl::Buffer<C>::from(x);
  auto out = kl::Buffer<C>::from(before);
  kl::compile<masked_store<C, kBlock>>().launch(kl::Grid(kl::cdiv(n, kBlock)), bx, out, n);
  std::vector<C> want(n);
  for (int i = 0; i < n; ++i) want[i] = i % 3 != 0 ? x[i] : before[i];
  expect_equal(out.to_host(), want, "masked store");
}

TYPED_TEST(LoadStore, ScalarPointers) {
  using C = TypeParam;
  const int n = 37, programs = n + 4;
  const auto x = random_values<C>(n, 7);
  auto bx = kl::Buffer<C>::from(x);
  auto reversed = kl::Buffer<C>::from(random_values<C>(n, 8));
  auto echoed = kl::Buffer<C>::from(random_values<C>(programs, 9));
  auto cycled = kl::Buffer<C>::from(random_values<C>(programs, 10));
  kl::compile<scalar_access<C>>().launch(kl::Grid(programs), bx, reversed, echoed, cycled, n);
  std::vector<C> want_reversed(x.rbegin(), x.rend()), want_echoed(programs), want_cycled(programs);
  for (int p = 0; p < programs; ++p) {
    want_echoed[p] = p < n ? x[p] : kiln::test::from_double<C>(5);
    want_cycled[p] = x[p % n];
  }
  expect_equal(reversed.to_host(), want_reversed, "masked scalar store");
  expect_equal(echoed.to_host(), want_echoed, "masked scalar load");
  expect_equal(cycled.to_host(), want_cycled, "unmasked scalar load");
}

template <class C>
class Strided : public ::testing::Test {};
using StridedTypes = ::testing::Types<float, kl::half, std::int64_t, std::uint8_t>;
TYPED_TEST_SUITE(Strided, StridedTypes, kiln::test::DTypeNames);

TYPED_TEST(Strided, ColumnMajorToPaddedRowMajor) {
  using C = TypeParam;
  const int m = 37, n = 21, pad = 3;  // tiles of 16 x 8: 3 x 3 programs, both edges masked
  const auto x = random_values<C>(static_cast<std::size_t>(m) * n, 11);
  const auto before = random_values<C>(static_cast<std::size_t>(m) * (n + pad), 12);
  auto bx = kl::Buffer<C>::from(x);
  auto out = kl::Buffer<C>::from(before);
  kl::compile<copy_2d<C, 16, 8>>().launch(kl::Grid(kl::cdiv(m, 16), kl::cdiv(n, 8)), bx, out, m, n, 1, m, n + pad, 1);
  std::vector<C> want = before;
  for (int i = 0; i < m; ++i)
    for (int j = 0; j < n; ++j)
      want[static_cast<std::size_t>(i) * (n + pad) + j] = x[static_cast<std::size_t>(j) * m + i];
  expect_equal(out.to_host(), want, "strided 2-D copy");
}

TEST(LoadStoreHints, ReachTheIr) {
  const std::string text = kiln::ir::print(kl::compile<load_other<float, kBlock>>().ir());
  for (const char* hint : {"cache = cg, evict = last", "cache = ca, evict = none", "cache = cv, evict = first",
                           "cache = cs, evict = none"})
    EXPECT_NE(text.find(hint), std::string::npos) << "missing '" << hint << "' in\n" << text;
}

// ---------------------------------------------------------------------------
// Atomics.

enum class Rmw { add, max, min, and_, or_, xor_, xchg };

// Each kind is traced with different memory-order/scope options (xchg with
// the defaults) so that every option is accepted.
template <Rmw K, class Ptrs, class V, class M>
auto apply_rmw(const Ptrs& p, const V& v, const M& mask) {
  using kl::MemoryOrder;
  using kl::Scope;
  if constexpr (K == Rmw::add) return kl::atomic_add(p, v, mask, {.order = MemoryOrder::relaxed, .scope = Scope::gpu});
  else if constexpr (K == Rmw::max)
    return kl::atomic_max(p, v, mask, {.order = MemoryOrder::acquire, .scope = Scope::cta});
  else if constexpr (K == Rmw::min)
    return kl::atomic_min(p, v, mask, {.order = MemoryOrder::release, .scope = Scope::sys});
  else if constexpr (K == Rmw::and_)
    return kl::atomic_and(p, v, mask, {.order = MemoryOrder::acq_rel, .scope = Scope::gpu});
  else if constexpr (K == Rmw::or_)
    return kl::atomic_or(p, v, mask, {.order = MemoryOrder::relaxed, .scope = Scope::cta});
  else if constexpr (K == Rmw::xor_)
    return kl::atomic_xor(p, v, mask, {.order = MemoryOrder::acquire, .scope = Scope::sys});
  else return kl::atomic_xchg(p, v, mask);
}

constexpr int kTargetStride = 128;  // slots of targets per kind, at least every bin count

// For each kind slot s: element i (active unless i % 7 == 3) applies
// values[s n + i] to targets[s kTargetStride + i % bins] and records the old
// value in olds[s n + i]; inactive in-bounds lanes record what the masked
// atomic returned for them (0).
template <Rmw K, class C, class Offsets, class InBounds, class Active>
void rmw_slot(int s, P<C> targets, P<C> values, P<C> olds, const Offsets& offs, const InBounds& in_bounds,
              const Active& active, kl::i32 n, kl::i32 bins) {
  auto v = kl::load(values + s * n + offs, in_bounds);
  kl::store(olds + s * n + offs, apply_rmw<K>(targets + s * kTargetStride + offs % bins, v, active), in_bounds);
}

// The kinds each dtype takes, in the order of their slots: add, max, min and
// xchg, then for ints (bitwise atomics are for ints only) and, or, xor.
template <class C>
std::vector<Rmw> kinds_of() {
  if constexpr (is_float_v<C>) return {Rmw::add, Rmw::max, Rmw::min, Rmw::xchg};
  else return {Rmw::add, Rmw::max, Rmw::min, Rmw::xchg, Rmw::and_, Rmw::or_, Rmw::xor_};
}

template <class C, int BLOCK>
void atomic_rmw_kernel(P<C> targets, P<C> values, P<C> olds, kl::i32 n, kl::i32 bins, kl::i32 bitwise_bins) {
  auto offs = kl::program_id(0) * BLOCK + kl::arange<BLOCK>();
  auto in_bounds = offs < n;
  auto active = in_bounds & (offs % 7 != 3);
  rmw_slot<Rmw::add>(0, targets, values, olds, offs, in_bounds, active, n, bins);
  rmw_slot<Rmw::max>(1, targets, values, olds, offs, in_bounds, active, n, bins);
  rmw_slot<Rmw::min>(2, targets, values, olds, offs, in_bounds, active, n, bins);
  rmw_slot<Rmw::xchg>(3, targets, values, olds, offs, in_bounds, active, n, bins);
  if constexpr (!is_float_v<C>) {
    rmw_slot<Rmw::and_>(4, targets, values, olds, offs, in_bounds, active, n, bitwise_bins);
    rmw_slot<Rmw::or_>(5, targets, values, olds, offs, in_bounds, active, n, bitwise_bins);
    rmw_slot<Rmw::xor_>(6, targets, values, olds, offs, in_bounds, active, n, bitwise_bins);
  }
}

template <class C>
C apply_host(Rmw k, C old, C v) {
  if constexpr (is_float_v<C>) {
    // Narrow floats: the f32 sum of two of the values drawn below is exact (their
    // exponents differ by at most 8 and they have at most 11 significant bits),
    // so rounding it to C once is the correctly rounded sum.
    if (k == Rmw::add) {
      if constexpr (kiln::test::is_narrow_float_v<C>) return C(static_cast<float>(old) + static_cast<float>(v));
      else return old + v;
    }
    if (k == Rmw::max) return as_double(v) > as_double(old) ? v : old;
    if (k == Rmw::min) return as_double(v) < as_double(old) ? v : old;
    return v;
  } else {
    switch (k) {
      case Rmw::add: return wrap<C>(static_cast<std::uint64_t>(old) + static_cast<std::uint64_t>(v));
      case Rmw::max: return std::max(old, v);
      case Rmw::min: return std::min(old, v);
      case Rmw::and_: return static_cast<C>(old & v);
      case Rmw::or_: return static_cast<C>(old | v);
      case Rmw::xor_: return static_cast<C>(old ^ v);
      default: return v;
    }
  }
}

template <class C>
std::uint64_t bits_of(C v) {
  if constexpr (kiln::test::is_narrow_float_v<C>) return v.bits;
  else if constexpr (std::is_same_v<C, float>) return std::bit_cast<std::uint32_t>(v);
  else if constexpr (std::is_same_v<C, double>) return std::bit_cast<std::uint64_t>(v);
  else return static_cast<std::uint64_t>(v);
}

template <class C>
class AtomicRmw : public ::testing::Test {};
using AtomicTypes = ::testing::Types<std::int32_t, std::uint32_t, std::int64_t, std::uint64_t, kl::half, kl::bfloat16,
                                     float, double, kl::float8_e4m3, kl::float8_e5m2>;
TYPED_TEST_SUITE(AtomicRmw, AtomicTypes, kiln::test::DTypeNames);

const char* kind_name(Rmw k) {
  static const char* names[] = {"add", "max", "min", "and", "or", "xor", "xchg"};
  return names[static_cast<int>(k)];
}

// Draws values suited to the kind: positive for add (so that each bin's old
// values increase strictly and sort into the order they were applied), dense
// bit patterns for and, sparse ones for or.
template <class C>
std::vector<C> rmw_values(Rmw k, std::size_t n, std::uint64_t seed) {
  if constexpr (is_float_v<C>) {
    return k == Rmw::add ? random_values<C>(n, seed, 0.5, 1.0) : random_values<C>(n, seed);
  } else {
    if (k == Rmw::add) return random_values<C>(n, seed, 1, 1000);
    if (k == Rmw::max || k == Rmw::min) return random_values<C>(n, seed, -1000, 1000);
    const double lo = static_cast<double>(std::numeric_limits<C>::min()),
                 hi = static_cast<double>(std::numeric_limits<C>::max());
    auto a = random_values<C>(n, seed, lo, hi), b = random_values<C>(n, seed + 100, lo, hi),
         c = random_values<C>(n, seed + 200, lo, hi);
    for (std::size_t i = 0; i < n; ++i)
      a[i] = k == Rmw::and_  ? static_cast<C>(a[i] | b[i] | c[i])
             : k == Rmw::or_ ? static_cast<C>(a[i] & b[i] & c[i])
                             : a[i];
    return a;
  }
}

TYPED_TEST(AtomicRmw, ManyProgramsOnSharedBins) {
  using C = TypeParam;
  const int n = 1001, block = 64, programs = kl::cdiv(n, block);
  // The arithmetic kinds put ~77 updates from all programs on each of 13 bins;
  // the bitwise ones use 125 bins so that a bin's bits are not all set or
  // cleared after its ~8 updates.
  const int bins = 13, bitwise_bins = 125;
  const std::vector<Rmw> kinds = kinds_of<C>();
  std::vector<C> targets = random_values<C>(kinds.size() * kTargetStride, 20), values;
  std::vector<std::vector<C>> init(kinds.size());
  for (std::size_t s = 0; s < kinds.size(); ++s) {
    const bool bitwise = kinds[s] == Rmw::and_ || kinds[s] == Rmw::or_ || kinds[s] == Rmw::xor_;
    init[s] = rmw_values<C>(kinds[s], bitwise ? bitwise_bins : bins, 21 + s);
    std::copy(init[s].begin(), init[s].end(), targets.begin() + static_cast<long>(s) * kTargetStride);
    const auto v = rmw_values<C>(kinds[s], n, 31 + s);
    values.insert(values.end(), v.begin(), v.end());
  }
  auto btargets = kl::Buffer<C>::from(targets);
  auto bvalues = kl::Buffer<C>::from(values);
  auto bolds = kl::Buffer<C>::from(random_values<C>(values.size(), 23, 1, 100));
  kl::compile<atomic_rmw_kernel<C, 64>>().launch(kl::Grid(programs), btargets, bvalues, bolds, n, bins, bitwise_bins);
  const auto all_final = btargets.to_host();
  const auto all_olds = bolds.to_host();

  for (std::size_t s = 0; s < kinds.size(); ++s) {
    const Rmw kind = kinds[s];
    SCOPED_TRACE(std::string("atomic ") + kind_name(kind));
    const int kind_bins = static_cast<int>(init[s].size());
    const C* got_final = all_final.data() + s * kTargetStride;
    const C* got_olds = all_olds.data() + s * n;
    const C* v = values.data() + s * n;
    std::vector<std::vector<int>> lanes(kind_bins);
    for (int i = 0; i < n; ++i) {
      if (i % 7 == 3) {
        EXPECT_EQ(bits_of(got_olds[i]), 0u) << "masked-off lane " << i << " must return 0";
      } else {
        lanes[i % kind_bins].push_back(i);
      }
    }
    for (int b = 0; b < kind_bins; ++b) {
      // Whatever the order the updates ran in, they form a chain init -> … ->
      // final in which each update turns its old value into op(old, value):
      // so {init} + {op(old_i, v_i)} and {final} + {old_i} are the same multiset.
      std::vector<std::uint64_t> produced{bits_of(init[s][b])}, consumed{bits_of(got_final[b])};
      for (int i : lanes[b]) {
        produced.push_back(bits_of(apply_host(kind, got_olds[i], v[i])));
        consumed.push_back(bits_of(got_olds[i]));
      }
      std::sort(produced.begin(), produced.end());
      std::sort(consumed.begin(), consumed.end());
      EXPECT_EQ(produced, consumed) << "bin " << b << ": the old values do not form one chain of updates";
      constexpr bool is_fp8 = std::is_same_v<C, kl::float8_e4m3> || std::is_same_v<C, kl::float8_e5m2>;
      if (is_float_v<C> && kind == Rmw::add && !is_fp8) {
        // Float addition depends on the order: replay the chain in the order
        // of increasing old values (values are positive) and check each step.
        // (An fp8 sum stalls once its ulp reaches twice the largest update,
        // at 16 in e4m3 and 8 in e5m2, so its old values repeat and give no
        // order: the chain check above is what holds for it.)
        std::vector<int> order = lanes[b];
        std::sort(order.begin(), order.end(),
                  [&](int p, int q) { return as_double(got_olds[p]) < as_double(got_olds[q]); });
        C running = init[s][b];
        double exact = as_double(running), magnitude = std::abs(as_double(running));
        for (int i : order) {
          EXPECT_EQ(bits_of(got_olds[i]), bits_of(running)) << "bin " << b << " lane " << i;
          running = apply_host(kind, running, v[i]);
          exact += as_double(v[i]);
          magnitude += std::abs(as_double(v[i]));
        }
        EXPECT_EQ(bits_of(got_final[b]), bits_of(running)) << "bin " << b;
        // And the total is within the bound of a recursive sum of the updates.
        EXPECT_LE(std::abs(as_double(got_final[b]) - exact),
                  gamma_bound(static_cast<double>(order.size()), unit_roundoff<C>()) * magnitude)
            << "bin " << b;
      } else if (kind != Rmw::xchg) {
        // The other kinds are commutative and associative (xchg is checked by
        // the chain above alone): fold in lane order.
        C want = init[s][b];
        for (int i : lanes[b]) want = apply_host(kind, want, v[i]);
        EXPECT_EQ(bits_of(got_final[b]), bits_of(want)) << "bin " << b;
      }
    }
  }
}

TEST(AtomicOptions, ReachTheIr) {
  const std::string text = kiln::ir::print(kl::compile<atomic_rmw_kernel<std::int32_t, 64>>().ir());
  for (const char* attributes : {"kind = add, order = relaxed, scope = gpu", "kind = max, order = acquire, scope = cta",
                                 "kind = min, order = release, scope = sys", "kind = and, order = acq_rel, scope = gpu",
                                 "kind = or, order = relaxed, scope = cta", "kind = xor, order = acquire, scope = sys",
                                 "kind = xchg, order = acq_rel, scope = gpu"})
    EXPECT_NE(text.find(attributes), std::string::npos) << "missing '" << attributes << "' in\n" << text;
}

// Every lane compares target[bin] with the bin's initial value and swaps in
// its own (distinct) value: in each bin exactly one lane wins. Lanes past n
// work on a scratch slot (index `bins`) with a compare value that never matches.
template <class C, int BLOCK>
void cas_kernel(P<C> target, P<C> initial, P<C> values, P<C> olds, kl::i32 n, kl::i32 bins) {
  auto offs = kl::program_id(0) * BLOCK + kl::arange<BLOCK>();
  auto in_bounds = offs < n;
  auto bin = kl::where(in_bounds, offs % bins, bins);
  auto expected = kl::load(initial + bin);
  auto v = kl::load(values + offs, in_bounds);
  auto old = kl::atomic_cas(target + bin, kl::where(in_bounds, expected, expected + 1), v,
                            {.order = kl::MemoryOrder::release, .scope = kl::Scope::cta});
  kl::store(olds + offs, old, in_bounds);
}

// A scalar compare-and-swap loop adding 1 to *counter once per program.
template <class C>
void cas_increment(P<C> counter) {
  kl::Var current = kl::atomic_add(counter, 0);
  kl::Var seen = kl::atomic_cas(counter, current, current + 1);
  kl::while_([&] { return seen != current; },
             [&] {
               current = seen;
               seen = kl::atomic_cas(counter, current, current + 1);
             });
}

template <class C>
class AtomicCas : public ::testing::Test {};
using CasTypes =
    ::testing::Types<std::int32_t, std::uint32_t, std::int64_t, std::uint64_t, kl::half, kl::bfloat16, float, double>;
TYPED_TEST_SUITE(AtomicCas, CasTypes, kiln::test::DTypeNames);

TYPED_TEST(AtomicCas, OneWinnerPerBin) {
  using C = TypeParam;
  const int n = 230, block = 32, bins = 9;  // 8 programs, the last masked after 6
  // Values are a permutation of 1..n, initial values 231 + 2 * bin: all
  // distinct and exact in every type here (bf16 holds the integers up to 256).
  // The scratch slot's compare value, init + 1, matches no initial value.
  std::vector<int> perm(n);
  for (int i = 0; i < n; ++i) perm[i] = i + 1;
  std::mt19937 rng(31);
  std::shuffle(perm.begin(), perm.end(), rng);
  std::vector<C> values(n), init(bins + 1);
  for (int i = 0; i < n; ++i) values[i] = kiln::test::from_double<C>(perm[i]);
  for (int b = 0; b <= bins; ++b) init[b] = kiln::test::from_double<C>(231 + 2 * b);
  auto target = kl::Buffer<C>::from(init);
  auto binit = kl::Buffer<C>::from(init);
  auto bvalues = kl::Buffer<C>::from(values);
  auto olds = kl::Buffer<C>::from(random_values<C>(n, 32, 1, 100));
  kl::compile<cas_kernel<C, 32>>().launch(kl::Grid(kl::cdiv(n, block)), target, binit, bvalues, olds, n, bins);
  const auto got_final = target.to_host();
  const auto got_olds = olds.to_host();
  for (int b = 0; b < bins; ++b) {
    int winners = 0, winner = -1;
    for (int i = b; i < n; i += bins) {
      if (bits_of(got_olds[i]) == bits_of(init[b])) {
        ++winners;
        winner = i;
      }
    }
    ASSERT_EQ(winners, 1) << "bin " << b;
    EXPECT_EQ(bits_of(got_final[b]), bits_of(values[winner])) << "bin " << b;
    for (int i = b; i < n; i += bins) {
      if (i != winner) {
        EXPECT_EQ(bits_of(got_olds[i]), bits_of(values[winner])) << "bin " << b << " lane " << i;
      }
    }
  }
  EXPECT_EQ(bits_of(got_final[bins]), bits_of(init[bins])) << "the scratch slot's compare never matches";
}

TYPED_TEST(AtomicCas, CompareAndSwapLoopCountsPrograms) {
  using C = TypeParam;
  const int programs = 200;  // 41 + 200 is exact in every type here (bf16 holds the integers up to 256)
  auto counter = kl::Buffer<C>::from(std::vector<C>{kiln::test::from_double<C>(41)});
  kl::compile<cas_increment<C>>().launch(kl::Grid(programs), counter);
  EXPECT_EQ(as_double(counter.to_host()[0]), 241.0);
}

}  // namespace
