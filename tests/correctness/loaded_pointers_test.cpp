// Pointers loaded from memory (Triton's pointer arrays: grouped GEMM, MoE
// expert dispatch): a kernel reads each group's buffer addresses from an i64
// table filled with Buffer::address() and casts them to pointers. The buffers
// are no kernel arguments; the cpu and emu bounds checks accept the accesses
// because they lie in live buffers of the device.
#include <algorithm>
#include <cstdint>
#include <vector>

#include "reference_support.hpp"

namespace {

namespace kl = kiln;
using kiln::test::expect_equal;
using kiln::test::random_values;

// Program g doubles the lengths[g] elements at inputs[g] into outputs[g],
// block by block with a masked tail.
template <class C, int BLOCK>
void scale_groups(kl::Ptr<kl::i64> inputs, kl::Ptr<kl::i64> outputs, kl::Ptr<kl::i32> lengths) {
  auto g = kl::program_id(0);
  auto x = kl::cast<kl::Ptr<kl::Scalar<C>>>(kl::load(inputs + g));
  auto out = kl::cast<kl::Ptr<kl::Scalar<C>>>(kl::load(outputs + g));
  auto n = kl::load(lengths + g);
  for (auto start : kl::range(0, n, BLOCK)) {
    auto offs = start + kl::arange<BLOCK>();
    auto mask = offs < n;
    kl::store(out + offs, kl::load(x + offs, mask) * 2, mask);
  }
}

template <class C>
class LoadedPointers : public ::testing::Test {};
using PointeeTypes = ::testing::Types<kl::half, float, std::int32_t>;
TYPED_TEST_SUITE(LoadedPointers, PointeeTypes, kiln::test::DTypeNames);

TYPED_TEST(LoadedPointers, EachGroupReadsAndWritesTheBuffersItsTableNames) {
  using C = TypeParam;
  const std::vector<int> lengths{37, 64, 130, 1, 200};
  std::vector<kl::Buffer<C>> inputs, outputs;
  std::vector<std::vector<C>> host_inputs;
  std::vector<std::int64_t> input_addresses, output_addresses;
  for (std::size_t g = 0; g < lengths.size(); ++g) {
    host_inputs.push_back(random_values<C>(static_cast<std::size_t>(lengths[g]), 300 + g, -1000, 1000));
    inputs.push_back(kl::Buffer<C>::from(host_inputs.back()));
    // One element more than the group writes: the element past its length stays 0.
    outputs.emplace_back(static_cast<std::size_t>(lengths[g]) + 1);
    input_addresses.push_back(static_cast<std::int64_t>(inputs.back().address()));
    output_addresses.push_back(static_cast<std::int64_t>(outputs.back().address()));
  }
  const auto input_table = kl::Buffer<std::int64_t>::from(input_addresses);
  const auto output_table = kl::Buffer<std::int64_t>::from(output_addresses);
  const auto length_table = kl::Buffer<std::int32_t>::from(lengths);
  kl::compile<scale_groups<C, 64>>().launch(kl::Grid(static_cast<int>(lengths.size())), input_table, output_table,
                                            length_table);
  for (std::size_t g = 0; g < lengths.size(); ++g) {
    std::vector<C> want(host_inputs[g].size() + 1, kiln::test::from_double<C>(0));
    std::transform(host_inputs[g].begin(), host_inputs[g].end(), want.begin(),
                   [](C v) { return kiln::test::from_double<C>(2 * kiln::test::as_double(v)); });
    expect_equal(outputs[g].to_host(), want, "group output");
  }
}

}  // namespace
