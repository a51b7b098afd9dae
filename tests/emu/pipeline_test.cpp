// A ring slot read as the pipeliner's program reads it, through the GPU code
// generator on the emu: with its wait and barrier the copy arrives whole;
// with the wait left out both devices report the read, the check the
// pipeliner's schedule rests on. The emu's cp.async lands only at a wait, so
// the read finds the slot as no thread of the program has written it, and
// the emu names the copy still in flight.
#include <gtest/gtest.h>

#include <cstdint>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "emu_support.hpp"
#include "kiln/runtime/program.hpp"

namespace {

using kiln::Buffer;
using kiln::Device;
using kiln::emu_test::kernel_error;
using kiln::emu_test::pointer_to;

// x (64 x 32 f32) into slot 1 of a two-slot ring, then `steps`, then the slot into out.
std::string ring_kernel(const std::string& steps) {
  return R"(kernel @through_ring(%x: ptr<f32>, %out: ptr<f32>) {
  %ring = local_alloc : shared<2x64x32xf32>
  %slot = constant {value = 1} : i32
  %r = arange {start = 0} : tile<64xi32>
  %rows = expand_dims %r {axis = 1} : tile<64x1xi32>
  %c = arange {start = 0} : tile<32xi32>
  %cols = expand_dims %c {axis = 0} : tile<1x32xi32>
  %thirty_two = constant {value = 32} : tile<64x1xi32>
  %row_offsets = mul %rows, %thirty_two : tile<64x1xi32>
  %rb = broadcast %row_offsets : tile<64x32xi32>
  %cb = broadcast %cols : tile<64x32xi32>
  %offsets = add %rb, %cb : tile<64x32xi32>
  %xs = splat %x : tile<64x32xptr<f32>>
  %px = addptr %xs, %offsets : tile<64x32xptr<f32>>
  async_copy %ring, %slot, %px loc("k.cpp":7)
  async_commit
)" + steps +
         R"(
  %v = local_load %ring, %slot : tile<64x32xf32> loc("k.cpp":9)
  %os = splat %out : tile<64x32xptr<f32>>
  %po = addptr %os, %offsets : tile<64x32xptr<f32>>
  store %po, %v {cache = none, evict = none}
}
)";
}

std::shared_ptr<kiln::runtime::Program> program_of(const std::string& text) {
  kiln::runtime::ProgramOptions options;
  options.passes.reset();
  return std::make_shared<kiln::runtime::Program>(kiln::ir::parse_function(text, "test.kiln"), "through_ring", options);
}

std::vector<float> run(const kiln::runtime::Program& program, const Device& device, const std::vector<float>& x) {
  auto in = Buffer<float>::from(x, device);
  auto out = Buffer<float>::from(std::vector<float>(x.size(), 0.0f), device);
  const kiln::runtime::KernelArgument args[] = {pointer_to(in, "x"), pointer_to(out, "out")};
  program.launch(device, {1, 1, 1}, args);
  return out.to_host();
}

std::vector<float> random_tile() {
  std::mt19937 rng(5);
  std::vector<float> x(64 * 32);
  for (float& v : x) v = std::uniform_real_distribution<float>(-3.0f, 3.0f)(rng);
  return x;
}

TEST(EmuPipeline, ASlotReadAfterItsWaitAndBarrierHoldsTheCopy) {
  const auto program = program_of(ring_kernel("  async_wait {pending = 0}\n  barrier"));
  const std::vector<float> x = random_tile();
  EXPECT_EQ(run(*program, Device::emu(), x), x);
  EXPECT_EQ(run(*program, Device::cpu(), x), x);
}

TEST(EmuPipeline, ASlotReadBeforeItsWaitIsAnErrorOnCpuAndOnTheEmu) {
  const auto program = program_of(ring_kernel("  barrier"));
  const std::vector<float> x = random_tile();
  const std::string cpu = kernel_error([&] { run(*program, Device::cpu(), x); });
  EXPECT_NE(cpu.find("local_load at k.cpp:9 in program (0, 0, 0) reads slot 1 before an async_wait completed the "
                     "copy of async_copy at k.cpp:7 into it"),
            std::string::npos)
      << cpu;
  const std::string emu = kernel_error([&] { run(*program, Device::emu(), x); });
  for (const char* part : {"kernel through_ring: thread ", "'s shared load at k.cpp:9 in program (0, 0, 0) reads byte ",
                           " of shared memory before a cp.async.wait_group completed its cp.async at k.cpp:7 into it"})
    EXPECT_NE(emu.find(part), std::string::npos) << emu;
}

}  // namespace
