// One program semantics on every device, checked on the kernels the tests
// hold as IR text: scripts/fuzz_seeds.py gathers them at build time (the
// fuzz targets' seeds), and each one that verifies and whose work the fuzz
// bound admits runs with the fuzz launch (fuzz/interpreted_outcome.hpp: a
// 2x2 grid, buffers of random values with -0, ±inf and NaN among them) on
// `cpu` and on `emu`, and on `emu-sm_90a` too when it has a dot. The runs
// agree when
//  - both end cleanly and leave the same buffers: every element's bits
//    equal (NaN matching NaN), except floats of a kernel whose float results
//    the IR leaves to the device (transcendental ops, float reductions,
//    scans, dots and atomic adds: OPS.md), which may differ by a few ulps;
//  - or both end in an error;
//  - or only the cpu run ends in an error that only the cpu device checks
//    (an in-place hazard, a ring slot read before its async_wait);
//  - or only the GPU code generator rejects the kernel, in one line naming
//    what it does not support yet.
#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "../../fuzz/interpreted_outcome.hpp"
#include "../../fuzz/work_bound.hpp"
#include "kiln/ir/parser.hpp"
#include "kiln/ir/verifier.hpp"
#include "kiln/kiln.hpp"

namespace kiln::emu_test {
namespace {

/// How far apart two floats of a kernel whose float results the IR leaves
/// to the device may be: the GPU's exp, log and their kin are within 2 ulp,
/// and a reduction's grouping moves the last bits of a short sum.
constexpr std::uint64_t kDeviceUlps = 4;

fuzz::Outcome run_on(const runtime::Program& program, const Device& device, fuzz::LaunchMemory& memory) {
  memory.reset();
  fuzz::Outcome run;
  try {
    program.launch(device, fuzz::kGrid, memory.arguments());
  } catch (const std::exception& e) {
    run.error = e.what();
  }
  run.buffers = memory.contents();
  return run;
}

bool any_op(const ir::Function& fn, auto predicate) {
  bool found = false;
  ir::walk(fn.body, [&](ir::Operation& op) { found |= predicate(op); });
  return found;
}

/// Whether the IR leaves the bits of `fn`'s float results to the device.
bool device_rounded(const ir::Function& fn) {
  using enum ir::OpCode;
  static constexpr std::array kApproximate = {
      exp,  exp2, log,    log2,   log1p, expm1, rsqrt, sin,   cos,        tan,      asin,
      acos, atan, sinh,   cosh,   tanh,  erf,   asinh, acosh, atanh,      log10,    exp10,
      cbrt, erfc, erfinv, lgamma, pow,   atan2, hypot, dot,   atomic_rmw, fast_exp, fast_exp2};
  return any_op(fn, [](const ir::Operation& op) {
    if (op.code == reduce || op.code == scan)
      return std::ranges::any_of(op.results, [](const ir::Value* v) { return ir::is_float(v->type.dtype); });
    return std::ranges::find(kApproximate, op.code) != kApproximate.end();
  });
}

bool only_cpu_checks(const std::string& error) {
  return error.find("in-place hazard") != std::string::npos ||
         error.find("before an async_wait completed") != std::string::npos;
}

bool not_supported_yet(const std::string& error) {
  return error.find("the GPU code generator does not support") != std::string::npos &&
         error.find('\n') == std::string::npos;
}

/// Where the runs of `program` on cpu and on `device` disagree; "" when they agree.
std::string disagreement(const runtime::Program& program, const Device& device) {
  fuzz::LaunchMemory memory(program.optimized());
  const fuzz::Outcome cpu = run_on(program, Device::cpu(1), memory);
  const fuzz::Outcome gpu = run_on(program, device, memory);
  if (!gpu.error.empty() && cpu.error.empty())
    return not_supported_yet(gpu.error) ? "" : "only " + device.name() + " fails: " + gpu.error;
  if (!cpu.error.empty() && gpu.error.empty()) return only_cpu_checks(cpu.error) ? "" : "only cpu fails: " + cpu.error;
  if (!cpu.error.empty()) return "";
  const ir::Function& fn = program.optimized();
  const std::string difference = fuzz::first_difference(fn, cpu, gpu, device_rounded(fn) ? kDeviceUlps : 0);
  return difference.empty()
             ? ""
             : device.name() + " leaves other buffers (before: cpu, after: " + device.name() + "): " + difference;
}

TEST(SeedKernels, RunAlikeOnCpuAndEmu) {
  const std::filesystem::path folder = KILN_SEED_KERNELS_DIR;
  ASSERT_TRUE(std::filesystem::is_directory(folder)) << folder << " is missing (scripts/fuzz_seeds.py writes it)";
  std::vector<std::filesystem::path> files;
  for (const auto& entry : std::filesystem::directory_iterator(folder)) files.push_back(entry.path());
  std::ranges::sort(files);
  int compared = 0;
  for (const std::filesystem::path& file : files) {
    std::ifstream in(file);
    std::stringstream text;
    text << in.rdbuf();
    std::shared_ptr<runtime::Program> program;
    try {
      std::unique_ptr<ir::Function> fn = ir::parse_function(text.str(), file.filename().string());
      ir::verify(*fn);
      runtime::ProgramOptions options;
      options.specialize = false;
      program = std::make_shared<runtime::Program>(std::move(fn), "seed", options);
    } catch (const std::exception&) {
      continue;  // a kernel the tests hold to see it rejected, or one with tile parameters
    }
    if (!fuzz::launchable(program->optimized())) continue;
    {
      const fuzz::LaunchMemory memory(program->optimized());
      if (!fuzz::interpretation_work(program->optimized(), fuzz::kGrid, memory.arguments())) continue;
    }
    ++compared;
    std::vector<Device> devices = {Device::emu(1)};
    if (any_op(program->optimized(), [](const ir::Operation& op) { return op.code == ir::OpCode::dot; }))
      devices.push_back(Device::emu_sm90a(1));
    for (const Device& device : devices)
      EXPECT_EQ(disagreement(*program, device), "") << "seed " << file << ":\n" << text.str();
  }
  // The tests hold about 250 kernels, of which about 140 run under the bound.
  EXPECT_GE(compared, 100) << "kernels run in " << folder;
}

}  // namespace
}  // namespace kiln::emu_test
