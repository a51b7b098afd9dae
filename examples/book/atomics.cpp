// Chapter 13, "Atomics": many programs updating the same memory. A histogram
// with a masked atomic_add (exact), per-row sums and maxima accumulated across
// programs with atomic_add and atomic_max (the sum checked against a tolerance,
// because float addition depends on the order), and what atomic_cas and
// atomic_xchg return, each checked against plain C++.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>
#include <numeric>
#include <random>
#include <vector>

#include "kiln/kiln.hpp"

namespace kl = kiln;

// [book:histogram]
template <int BLOCK>
void histogram(kl::Ptr<kl::i32> keys, kl::Ptr<kl::i32> counts, kl::Ptr<kl::i32> ranks, kl::i32 n, kl::i32 bins) {
  auto offsets = kl::program_id(0) * BLOCK + kl::arange<BLOCK>();
  auto in_range = offsets < n;
  auto key = kl::load(keys + offsets, in_range, {.other = -1});  // -1: no key
  auto counted = in_range & (key >= 0) & (key < bins);
  // One atomic per element: two elements with the same key both count, whichever program they are in.
  auto rank = kl::atomic_add(counts + key, 1, counted, {.order = kl::MemoryOrder::relaxed});
  kl::store(ranks + offsets, rank, in_range);  // the count before this element's 1 was added
}
// [/book:histogram]

// [book:racy]
// Wrong: the load and the store are two steps, and other elements come between them.
template <int BLOCK>
void racy_histogram(kl::Ptr<kl::i32> keys, kl::Ptr<kl::i32> counts, kl::i32 n, kl::i32 bins) {
  auto offsets = kl::program_id(0) * BLOCK + kl::arange<BLOCK>();
  auto in_range = offsets < n;
  auto key = kl::load(keys + offsets, in_range, {.other = -1});
  auto counted = in_range & (key >= 0) & (key < bins);
  kl::store(counts + key, kl::load(counts + key, counted) + 1, counted);
}
// [/book:racy]

// [book:row_sums]
template <int BLOCK>
void row_sums(kl::Ptr<kl::f32> x, kl::Ptr<kl::f32> sums, kl::Ptr<kl::f32> maxima, kl::i32 n_cols) {
  auto row = kl::program_id(0);
  auto cols = kl::program_id(1) * BLOCK + kl::arange<BLOCK>();  // this program's slice of the row
  auto mask = cols < n_cols;
  auto v = kl::load(x + row * n_cols + cols, mask);
  kl::atomic_add(sums + row, kl::sum(v, kl::axis<0>));  // one scalar atomic per program
  kl::atomic_max(maxima + row, kl::max(kl::where(mask, v, -INFINITY), kl::axis<0>));
}
// [/book:row_sums]

// [book:claim]
template <int BLOCK>
void group_by_key(kl::Ptr<kl::i32> keys, kl::Ptr<kl::i32> first, kl::Ptr<kl::i32> seen, kl::Ptr<kl::i32> head,
                  kl::Ptr<kl::i32> next, kl::i32 n, kl::i32 bins) {
  auto index = kl::program_id(0) * BLOCK + kl::arange<BLOCK>();
  auto in_range = index < n;
  auto key = kl::load(keys + index, in_range, {.other = -1});
  auto valid = in_range & (key >= 0) & (key < bins);
  // atomic_cas takes no mask: elements without a key work on a spare slot, first[bins].
  auto slot = kl::where(valid, key, bins);
  kl::store(seen + index, kl::atomic_cas(first + slot, -1, index), in_range);  // -1 back: this element came first
  // Push the element onto its key's list: the old head becomes its successor.
  kl::store(next + index, kl::atomic_xchg(head + key, index, valid), valid);
}
// [/book:claim]

int main() {
  bool ok = true;
  // [book:keys]
  constexpr int kN = 10000, kBins = 64, kBlock = 1024;
  std::mt19937 random(2024);
  std::binomial_distribution<int> skewed(kBins - 1, 0.3);  // most keys near 19: many collisions
  std::uniform_int_distribution<int> one_in_16(0, 15);
  std::vector<int> keys(kN);
  for (int& k : keys) k = one_in_16(random) == 0 ? -1 : skewed(random);
  // [/book:keys]

  {
    // [book:histogram_launch]
    auto keys_buffer = kl::Buffer<int>::from(keys);
    kl::Buffer<int> counts(kBins), ranks(kN);  // a new Buffer is zero-filled: every count starts at 0
    const int programs = (kN + kBlock - 1) / kBlock;
    kl::compile<histogram<kBlock>>().launch(kl::Grid(programs), keys_buffer, counts, ranks, kN, kBins);
    // [/book:histogram_launch]
    // [book:histogram_check]
    const auto got = counts.to_host(), rank = ranks.to_host();
    std::vector<int> want(kBins, 0);
    std::vector<std::vector<int>> ranks_of(kBins);
    for (int i = 0; i < kN; ++i)
      if (keys[i] >= 0) {
        ++want[keys[i]];
        ranks_of[keys[i]].push_back(rank[i]);
      }
    int wrong_counts = 0, bad_ranks = 0;
    for (int b = 0; b < kBins; ++b) {
      if (got[b] != want[b]) ++wrong_counts;
      std::sort(ranks_of[b].begin(), ranks_of[b].end());
      for (int r = 0; r < static_cast<int>(ranks_of[b].size()); ++r)
        if (ranks_of[b][r] != r) ++bad_ranks;  // each bin's ranks must be 0, 1, ..., count - 1
    }
    const int busiest = static_cast<int>(std::max_element(want.begin(), want.end()) - want.begin());
    std::printf("histogram: %d keys (%d of them -1) in %d programs, %d bins\n", kN,
                static_cast<int>(std::count(keys.begin(), keys.end(), -1)), programs, kBins);
    std::printf("histogram: the busiest bin, %d, holds %d keys\n", busiest, got[busiest]);
    std::printf("histogram: bin counts differing from C++: %d of %d\n", wrong_counts, kBins);
    std::printf("histogram: ranks that are not 0..count-1 within their bin: %d\n", bad_ranks);
    // [/book:histogram_check]
    ok = ok && wrong_counts == 0 && bad_ranks == 0;
    kl::compile<racy_histogram<kBlock>>();  // traced and compiled, never launched: chapter 13 says why
  }

  {
    // [book:rows]
    constexpr int kRows = 64, kCols = 5000, kSliceBlock = 512;
    constexpr int kSlices = (kCols + kSliceBlock - 1) / kSliceBlock;  // 10 programs per row
    std::uniform_real_distribution<float> uniform(-1.0f, 1.0f);
    std::vector<float> x(kRows * kCols);
    for (float& e : x) e = uniform(random);
    // [/book:rows]
    // [book:rows_launch]
    auto x_buffer = kl::Buffer<float>::from(x);
    kl::Buffer<float> sums(kRows);                                                // zero-filled: 0 is the identity of +
    auto maxima = kl::Buffer<float>::from(std::vector<float>(kRows, -INFINITY));  // the identity of max
    kl::compile<row_sums<kSliceBlock>>().launch(kl::Grid(kRows, kSlices), x_buffer, sums, maxima, kCols);
    // [/book:rows_launch]
    // [book:tolerance]
    const double u = std::numeric_limits<float>::epsilon() / 2;  // 2^-24
    const int roundings = (kSliceBlock - 1) + (kSlices - 1);     // in the program's sum, then among the atomics
    const double gamma = roundings * u / (1 - roundings * u);
    // [/book:tolerance]
    // [book:rows_check]
    const auto got_sums = sums.to_host(), got_max = maxima.to_host();
    int wrong_sums = 0, wrong_max = 0;
    for (int r = 0; r < kRows; ++r) {
      const float* row = &x[r * kCols];
      double exact = 0, magnitude = 0;
      for (int c = 0; c < kCols; ++c) {
        exact += row[c];
        magnitude += std::abs(row[c]);
      }
      if (!(std::abs(got_sums[r] - exact) <= gamma * magnitude)) ++wrong_sums;
      if (got_max[r] != *std::max_element(row, row + kCols)) ++wrong_max;
    }
    std::printf("rows: %d rows of %d, %d programs per row of %d columns each\n", kRows, kCols, kSlices, kSliceBlock);
    std::printf("rows: tolerance %d u = %.2e times the sum of |x|\n", roundings, gamma);
    std::printf("rows: sums outside the tolerance: %d of %d\n", wrong_sums, kRows);
    std::printf("rows: maxima differing from C++: %d of %d\n", wrong_max, kRows);
    // [/book:rows_check]
    ok = ok && wrong_sums == 0 && wrong_max == 0;

    // [book:orders]
    // Row 0's ten partial sums, each added up in C++, then added in all 10! orders.
    std::vector<float> partial(kSlices, 0.0f);
    for (int c = 0; c < kCols; ++c) partial[c / kSliceBlock] += x[c];
    std::vector<int> order(kSlices);
    std::iota(order.begin(), order.end(), 0);
    std::vector<float> results;
    do {
      float total = 0;
      for (int s : order) total += partial[s];
      results.push_back(total);
    } while (std::next_permutation(order.begin(), order.end()));
    std::sort(results.begin(), results.end());
    const auto distinct = std::unique(results.begin(), results.end()) - results.begin();
    std::printf("rows: row 0's %d partial sums, added in all %zu orders, give %td floats from %.9g to %.9g\n", kSlices,
                results.size(), distinct, results.front(), results[distinct - 1]);
    // [/book:orders]
  }

  {
    // [book:claim_launch]
    auto keys_buffer = kl::Buffer<int>::from(keys);
    auto first = kl::Buffer<int>::from(std::vector<int>(kBins + 1, -1));  // -1: unclaimed; [kBins] is the spare
    auto head = kl::Buffer<int>::from(std::vector<int>(kBins, -1));       // -1: the empty list
    kl::Buffer<int> seen(kN), next(kN);
    kl::compile<group_by_key<kBlock>>().launch(kl::Grid((kN + kBlock - 1) / kBlock), keys_buffer, first, seen, head,
                                               next, kN, kBins);
    // [/book:claim_launch]
    // [book:claim_check]
    const auto owner = first.to_host(), saw = seen.to_host(), heads = head.to_host(), successor = next.to_host();
    int winners = 0, told_the_winner = 0, with_key = 0, wrong_lists = 0;
    for (int i = 0; i < kN; ++i) {
      if (keys[i] < 0) continue;
      ++with_key;
      if (saw[i] == -1) ++winners;
      if (saw[i] == (owner[keys[i]] == i ? -1 : owner[keys[i]])) ++told_the_winner;
    }
    for (int b = 0; b < kBins; ++b) {
      std::vector<int> members, want;
      for (int i = heads[b]; i != -1 && static_cast<int>(members.size()) <= kN; i = successor[i]) members.push_back(i);
      for (int i = 0; i < kN; ++i)
        if (keys[i] == b) want.push_back(i);
      std::sort(members.begin(), members.end());
      if (members != want) ++wrong_lists;
    }
    int used = 0;
    for (int b = 0; b < kBins; ++b) used += owner[b] != -1 ? 1 : 0;
    std::printf("atomic_cas: %d bins claimed; elements that got -1 back: %d\n", used, winners);
    std::printf("atomic_cas: elements that got -1 or their bin's owner back: %d of %d\n", told_the_winner, with_key);
    std::printf("atomic_xchg: lists not holding exactly their bin's elements: %d of %d\n", wrong_lists, kBins);
    // [/book:claim_check]
    ok = ok && winners == used && told_the_winner == with_key && wrong_lists == 0;
  }
  return ok ? 0 : 1;
}
