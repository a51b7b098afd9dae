// In-place hazards on the cpu device (OPS.md, "Memory order inside a
// program"): a program whose elements read what other elements of it wrote,
// or write what others read, with no kl::debug_barrier() between, is an
// error naming both ops' lines; the same updates element by element, or with
// the barrier, run. The barrier versions' results are checked on every device
// in tests/correctness/program_order_test.cpp.
#include <gtest/gtest.h>

#include <random>
#include <string>
#include <vector>

#include "error/kernel_error.hpp"
#include "kiln/kiln.hpp"

namespace hazard_kernels {

namespace kl = kiln;

// The lines of the two accesses each kernel pairs, recorded while it is
// traced; each access stays on the line that records it:
// clang-format off
int load_line = 0, store_line = 0;

// Reverses a tile of 1024 in place: element i stores what element 1023 - i loaded.
void reverse_in_place(kl::Ptr<kl::f32> x) {
  auto o = kl::arange<1024>();
  load_line = __LINE__; auto v = kl::load(x + 1023 - o);
  store_line = __LINE__; kl::store(x + o, v);
}

// RoPE's rotate-half written in place over rows of 128: element d reads
// x[d] and x[(d + 64) % 128], then stores x[d].
void rotate_half_in_place(kl::Ptr<kl::f32> rows, kl::Ptr<kl::f32> cos, kl::Ptr<kl::f32> sin) {
  auto d = kl::arange<128>();
  auto row = rows + kl::program_id(0) * 128;
  auto x = kl::load(row + d);
  load_line = __LINE__; auto partner = kl::load(row + (d + 64) % 128);
  auto rotated = kl::where(d < 64, -partner, partner);
  store_line = __LINE__; kl::store(row + d, x * kl::load(cos + d) + rotated * kl::load(sin + d));
}

// Stores a tile, then reads it back reversed: element i reads what element
// 1023 - i wrote.
void read_back_reversed(kl::Ptr<kl::f32> x, kl::Ptr<kl::f32> out) {
  auto o = kl::arange<1024>();
  store_line = __LINE__; kl::store(x + o, kl::cast<kl::f32>(o));
  load_line = __LINE__; kl::store(out + o, kl::load(x + 1023 - o));
}

// clang-format on

// Doubles x in place, each element its own: no hazard.
void double_in_place(kl::Ptr<kl::f32> x, kl::i32 n) {
  auto o = kl::program_id(0) * 256 + kl::arange<256>();
  kl::store(x + o, kl::load(x + o, o < n) * 2.0f, o < n);
}

}  // namespace hazard_kernels

namespace {

namespace kl = kiln;
using hazard_kernels::load_line;
using hazard_kernels::store_line;
using kiln::test::kernel_error;

std::string at(int line) { return "hazard_error_test.cpp:" + std::to_string(line); }

std::vector<float> random_floats(std::size_t n, unsigned seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> dist(-2.0f, 2.0f);
  std::vector<float> out(n);
  for (float& v : out) v = dist(rng);
  return out;
}

const std::string kNoBarrier =
    ", with no kl::debug_barrier() between them; the elements of a program run on different GPU threads in no "
    "fixed order";

TEST(HazardError, ReverseInPlaceNamesTheStoreAndTheLoad) {
  const auto kernel = kl::compile<hazard_kernels::reverse_in_place>();
  auto x = kl::Buffer<float>::from(random_floats(1024, 1), kl::Device::cpu());
  EXPECT_EQ(kernel_error([&] { kernel.launch(kl::Grid(1), x); }),
            "kernel reverse_in_place: in-place hazard in program (0, 0, 0): the store at " + at(store_line) +
                " (tile element 0) writes element 0 of parameter 1 (Ptr<f32>), which the load at " + at(load_line) +
                " read as tile element 1023" + kNoBarrier);
}

TEST(HazardError, RotateHalfInPlaceNamesTheOtherElementsLoad) {
  const auto kernel = kl::compile<hazard_kernels::rotate_half_in_place>();
  const auto cpu = kl::Device::cpu();
  auto rows = kl::Buffer<float>::from(random_floats(4 * 128, 2), cpu);
  auto cos = kl::Buffer<float>::from(random_floats(128, 3), cpu);
  auto sin = kl::Buffer<float>::from(random_floats(128, 4), cpu);
  // Element 0 of the store writes x[0], which element 0 of the first load
  // (the same element: allowed) and element 64 of the partner load read.
  // One host thread runs the programs in order, so program 0 faults first.
  EXPECT_EQ(kernel_error([&] { kernel.launch_on(kl::Device::cpu(1), kl::Grid(4), rows, cos, sin); }),
            "kernel rotate_half_in_place: in-place hazard in program (0, 0, 0): the store at " + at(store_line) +
                " (tile element 0) writes element 0 of parameter 1 (Ptr<f32>), which the load at " + at(load_line) +
                " read as tile element 64" + kNoBarrier);
}

TEST(HazardError, ReadingWhatAnotherElementStored) {
  const auto kernel = kl::compile<hazard_kernels::read_back_reversed>();
  kl::Buffer<float> x(1024, kl::Device::cpu()), out(1024, kl::Device::cpu());
  EXPECT_EQ(kernel_error([&] { kernel.launch(kl::Grid(1), x, out); }),
            "kernel read_back_reversed: in-place hazard in program (0, 0, 0): the load at " + at(load_line) +
                " (tile element 0) reads element 1023 of parameter 1 (Ptr<f32>), which the store at " + at(store_line) +
                " wrote as tile element 1023" + kNoBarrier);
}

TEST(HazardError, ElementwiseInPlaceUpdateIsNoHazard) {
  const auto kernel = kl::compile<hazard_kernels::double_in_place>();
  const std::vector<float> host = random_floats(1000, 5);
  auto x = kl::Buffer<float>::from(host, kl::Device::cpu());
  kernel.launch(kl::Grid(4), x, 1000);
  const std::vector<float> got = x.to_host();
  for (std::size_t i = 0; i < host.size(); ++i) ASSERT_EQ(got[i], host[i] * 2.0f) << "element " << i;
}

}  // namespace
