// Helpers of the codegen tests: compiling IR text for a GPU target, searching
// PTX text, and running ptxas on it when the CUDA toolkit is installed.
#pragma once

#include <gtest/gtest.h>

#include <cctype>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include <unistd.h>

#include "kiln/ir/parser.hpp"
#include "kiln/lowering/compile.hpp"

namespace kiln::codegen_test {

inline constexpr const char* kPtxas = "/usr/local/cuda/bin/ptxas";

/// Parses `text` and compiles it for `arch` with `num_warps` warps.
inline lowering::GpuKernel compile_text(const std::string& text, const std::string& arch = "sm_90a",
                                        int num_warps = 4) {
  std::unique_ptr<ir::Function> fn = ir::parse_function(text);
  return lowering::compile_for_gpu(*fn, lowering::GpuTarget{.arch = arch, .num_warps = num_warps});
}

/// Non-overlapping occurrences of `needle` in `text`.
inline int count(std::string_view text, std::string_view needle) {
  int n = 0;
  for (std::size_t at = text.find(needle); at != std::string_view::npos; at = text.find(needle, at + needle.size()))
    ++n;
  return n;
}

/// What a launch on contiguous, 16-byte aligned buffers with sizes divisible
/// by 16 lets the runtime assume: `facts` lists one entry per argument ('a':
/// divisible by 16, '1': equal to 1, '-': nothing).
inline std::vector<ir::ArgumentFacts> launch_facts(const std::string& facts) {
  std::vector<ir::ArgumentFacts> result;
  for (char c : facts) {
    if (c == 'a') result.push_back({.divisibility = 16});
    if (c == '1') result.push_back({.equal_to_1 = true});
    if (c == '-') result.push_back({});
  }
  return result;
}

/// The body of the innermost loop of `ptx` that holds `needle`: the text from
/// a block label (`$L__BB0_3:`) to the last branch back to it. Empty when no
/// loop holds it.
inline std::string_view innermost_loop_holding(std::string_view ptx, std::string_view needle) {
  std::string_view best;
  for (std::size_t at = ptx.find("$L__BB"); at != std::string_view::npos; at = ptx.find("$L__BB", at + 1)) {
    const std::size_t colon = ptx.find_first_of(":;", at);
    if (colon == std::string_view::npos || ptx[colon] != ':') continue;
    const std::string branch_target = std::string(ptx.substr(at, colon - at)) + ";";
    const std::size_t back_edge = ptx.rfind(branch_target);
    if (back_edge == std::string_view::npos || back_edge < colon) continue;
    const std::string_view body = ptx.substr(colon + 1, back_edge - colon - 1);
    if (body.find(needle) != std::string_view::npos && (best.empty() || body.size() < best.size())) best = body;
  }
  return best;
}

/// A FileCheck-like assertion: `text` contains `needle`, else the failure shows the text.
inline ::testing::AssertionResult contains(std::string_view text, std::string_view needle) {
  if (text.find(needle) != std::string_view::npos) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure() << "expected `" << needle << "` in:\n" << text;
}

/// The fault path of fault_record.hpp in `ptx`: the record's address from
/// the module global, a claim by compare-and-swap, a system fence, the state
/// stored last and a trap, and no function call.
inline void expect_fault_record_and_trap(std::string_view ptx) {
  EXPECT_TRUE(contains(ptx, ".visible .global .align 8 .u64 kiln_fault_record"));
  EXPECT_TRUE(contains(ptx, "atom.global.cas.b32"));
  EXPECT_TRUE(contains(ptx, "membar.sys;"));
  EXPECT_TRUE(contains(ptx, "st.volatile.global.u32"));
  EXPECT_TRUE(contains(ptx, "trap;"));
  EXPECT_EQ(count(ptx, "call.uni"), 0) << ptx;
}

/// What ptxas said about a PTX module.
struct PtxasResult {
  int exit_code = 0;
  std::string output;  // stdout and stderr, with -v statistics
};

/// Runs `ptxas -arch=<arch> -v -o /dev/null` on `ptx` (the caller checks
/// that ptxas exists).
inline PtxasResult run_ptxas(const std::string& ptx, const std::string& arch, const std::string& stem) {
  // The process id keeps two test processes compiling the same kernel apart.
  const std::filesystem::path file =
      std::filesystem::temp_directory_path() / (stem + "_" + arch + "_" + std::to_string(getpid()) + ".ptx");
  std::ofstream(file) << ptx;
  const std::string command = std::string(kPtxas) + " -arch=" + arch + " -v -o /dev/null " + file.string() + " 2>&1";
  PtxasResult result;
  FILE* pipe = popen(command.c_str(), "r");
  if (!pipe) return {-1, "cannot run " + command};
  char buffer[4096];
  while (std::size_t n = std::fread(buffer, 1, sizeof buffer, pipe)) result.output.append(buffer, n);
  result.exit_code = pclose(pipe);
  std::filesystem::remove(file);
  return result;
}

/// The sum of the "N bytes spill stores" and "N bytes spill loads" ptxas -v
/// reports.
inline int spill_bytes(const std::string& ptxas_output) {
  int total = 0;
  for (const char* what : {" bytes spill stores", " bytes spill loads"}) {
    for (std::size_t at = ptxas_output.find(what); at != std::string::npos; at = ptxas_output.find(what, at + 1)) {
      std::size_t start = at;
      while (start > 0 && std::isdigit(static_cast<unsigned char>(ptxas_output[start - 1]))) --start;
      total += std::stoi(ptxas_output.substr(start, at - start));
    }
  }
  return total;
}

/// ptxas's "Used N registers…" line, or "" when it printed none.
inline std::string register_usage(const std::string& ptxas_output) {
  const std::size_t at = ptxas_output.find("Used");
  if (at == std::string::npos) return "";
  const std::size_t end = ptxas_output.find('\n', at);
  return ptxas_output.substr(at, end == std::string::npos ? std::string::npos : end - at);
}

/// N of ptxas's "Used N registers", or -1 when it printed none.
inline int registers_used(const std::string& ptxas_output) {
  const std::string usage = register_usage(ptxas_output);
  return usage.empty() ? -1 : std::stoi(usage.substr(std::string("Used ").size()));
}

/// Checks that ptxas accepts `kernel`'s PTX for `arch` without spills and
/// prints its register usage with the kernel's dynamic shared memory (ptxas
/// counts only static shared memory, which the code generator declares
/// none of); a visible skip where ptxas is absent.
#define KILN_EXPECT_PTXAS_ACCEPTS(kernel, arch, stem)                                                                 \
  do {                                                                                                                \
    if (!std::filesystem::exists(::kiln::codegen_test::kPtxas))                                                       \
      GTEST_SKIP() << ::kiln::codegen_test::kPtxas << " not found: install the CUDA toolkit to check the PTX";        \
    const ::kiln::codegen_test::PtxasResult ptxas_result = ::kiln::codegen_test::run_ptxas((kernel).ptx, arch, stem); \
    EXPECT_EQ(ptxas_result.exit_code, 0) << stem << ": ptxas rejected the PTX:\n"                                     \
                                         << ptxas_result.output << "\n"                                               \
                                         << (kernel).ptx;                                                             \
    EXPECT_EQ(::kiln::codegen_test::spill_bytes(ptxas_result.output), 0) << stem << ": " << ptxas_result.output;      \
    const std::string usage = ::kiln::codegen_test::register_usage(ptxas_result.output);                              \
    EXPECT_FALSE(usage.empty()) << ptxas_result.output;                                                               \
    std::printf("ptxas -arch=%s %s: %s, %d bytes dynamic smem\n", std::string(arch).c_str(),                          \
                std::string(stem).c_str(), usage.c_str(), (kernel).shared_bytes);                                     \
  } while (false)

}  // namespace kiln::codegen_test
