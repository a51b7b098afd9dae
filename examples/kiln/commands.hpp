// The kiln tool's subcommands.
#pragma once

#include <cstdint>
#include <map>
#include <string>

namespace kiln::tool {

struct RunArgs {
  std::string kernel;
  std::map<std::string, std::string> flags;  // the kernel's dims and choices
  std::string dtype;
  std::string device;
  std::uint64_t seed = 0;
  bool check = false;
  bool bench = false;
  bool stats = false;
  bool json = false;
};

struct BenchArgs {
  std::string suite = "fusion";
  std::string device;
  std::string dtype;
  bool json = false;
};

struct DumpArgs {
  std::string kernel;
  std::map<std::string, std::string> flags;
  std::string dtype;
  std::string stage = "opt";
  std::string arch = "sm_90a";
  bool locations = false;
  /// Print one JSON object (the ptx stage with compile times) instead of text.
  bool json = false;
  /// SMs of the GPU whose launches to show: plans sized by the device's
  /// parallelism are made for this many (132: an H200).
  int sms = 132;
};

/// Each returns the process exit code; errors are thrown as std::exception
/// and printed by main as one line.
int list_kernels();
int run_kernel(const RunArgs& args);
int dump_kernel(const DumpArgs& args);
int bench_suite(const BenchArgs& args);
int show_info();

}  // namespace kiln::tool
