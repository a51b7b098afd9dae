// Chapter 6, "What kl::compile does": a kernel traced once and launched many
// times, C++ loops unrolled while tracing against kiln's runtime loop, the
// variants a launch specialises for, and the options that change a compile.
#include <cstdio>
#include <random>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "kiln/kiln.hpp"

namespace kl = kiln;

// [book:counted]
int traces = 0;  // plain C++: counts how often the kernel's body runs

template <int BLOCK>
void scale(kl::Ptr<kl::f32> x, kl::Ptr<kl::f32> out, kl::i32 n, kl::i32 stride) {
  ++traces;  // runs while tracing, never while the kernel runs
  auto i = kl::program_id(0) * BLOCK + kl::arange<BLOCK>();
  auto mask = i < n;
  kl::store(out + i, 2.0f * kl::load(x + i * stride, mask), mask);  // out[i] = 2 x[i * stride]
}
// [/book:counted]

// [book:loops]
template <int BLOCK>
void unrolled(kl::Ptr<kl::f32> x, kl::Ptr<kl::f32> out) {
  auto i = kl::arange<BLOCK>();
  auto sum = kl::zeros<kl::f32, BLOCK>();
  for (int k = 0; k < 4; ++k) sum = sum + kl::load(x + k * BLOCK + i);  // C++ loop: four loads in the IR
  kl::store(out + i, sum);
}

template <int BLOCK>
void looped(kl::Ptr<kl::f32> x, kl::Ptr<kl::f32> out) {
  auto i = kl::arange<BLOCK>();
  kl::Var sum = kl::zeros<kl::f32, BLOCK>();
  for (auto k : kl::range(0, 4)) sum = sum + kl::load(x + k * BLOCK + i);  // one `for` op, one load
  kl::store(out + i, sum);
}
// [/book:loops]

// [book:count]
int count_ops(const kl::ir::Function& fn, std::string_view name) {
  int count = 0;
  kl::ir::walk(fn.body, [&](kl::ir::Operation& op) { count += op.name() == name; });
  return count;
}

std::string facts(const kl::ir::Function& fn) {  // what a variant assumes of x, out, n and stride
  const char* names[] = {"x", "out", "n", "stride"};
  std::string text;
  for (std::size_t a = 0; a < fn.argument_facts.size(); ++a) {
    const kl::ir::ArgumentFacts& f = fn.argument_facts[a];
    text += std::string(" ") + names[a];
    if (f.equal_to_1) text += "=1";
    else if (f.divisibility > 1) text += "%" + std::to_string(f.divisibility);
  }
  return text.empty() ? " nothing" : text;
}
// [/book:count]

int main() {
  std::mt19937 random(2024);
  std::uniform_real_distribution<float> uniform(-1.0f, 1.0f);
  std::vector<float> x(4096);
  for (auto& v : x) v = uniform(random);
  auto x_buffer = kl::Buffer<float>::from(x);
  kl::Buffer<float> out(4096);
  int wrong = 0;
  auto check = [&](int n, int stride) {
    const std::vector<float> result = out.to_host();
    for (int i = 0; i < n; ++i) wrong += result[i] != 2.0f * x[i * stride];
  };

  // [book:trace_once]
  auto kernel = kl::compile<scale<256>>();
  std::printf("after compile: traced %d time(s)\n", traces);
  for (int n : {100, 200, 300, 500, 700}) {
    kernel.launch(kl::Grid((n + 255) / 256), x_buffer, out, n, 3);
    check(n, 3);
  }
  std::printf("after 5 launches: traced %d time(s)\n", traces);
  auto again = kl::compile<scale<256>>();
  std::printf("compile again: same program %s, traced %d time(s)\n",
              &again.program() == &kernel.program() ? "yes" : "no", traces);
  kl::CompileOptions options;
  options.num_warps = 8;
  auto eight_warps = kl::compile<scale<256>>(options);
  std::printf("num_warps = 8: same program %s, traced %d time(s)\n",
              &eight_warps.program() == &kernel.program() ? "yes" : "no", traces);
  // [/book:trace_once]

  // [book:variants]
  const std::pair<int, int> launches[] = {{1000, 3}, {1024, 3}, {1024, 1}, {2048, 1}};
  for (auto [n, stride] : launches) {
    kernel.launch(kl::Grid((n + 255) / 256), x_buffer, out, n, stride);
    check(n, stride);
    auto variant = kernel.program_for(x_buffer, out, n, stride);
    std::printf("n = %4d, stride = %d: assumes%s; %d mul; %zu variant(s) so far\n", n, stride,
                facts(variant->optimized()).c_str(), count_ops(variant->optimized(), "mul"),
                kernel.program().specialization_count());
  }
  std::printf("unspecialised: assumes%s; %d mul\n", facts(kernel.ir()).c_str(), count_ops(kernel.ir(), "mul"));
  kl::CompileOptions fixed;
  fixed.specialize = false;
  auto plain = kl::compile<scale<256>>(fixed);
  std::printf("specialize = false: traced %d time(s); launches run the unspecialised program %s\n", traces,
              plain.program_for(x_buffer, out, 1024, 1) == plain.program_ptr() ? "yes" : "no");
  // [/book:variants]

  // [book:loops_ir]
  auto unrolled_kernel = kl::compile<unrolled<64>>();
  auto looped_kernel = kl::compile<looped<64>>();
  for (const auto* k : {&unrolled_kernel.ir(), &looped_kernel.ir()})
    std::printf("%s: %d load, %d for\n", k->name.c_str(), count_ops(*k, "load"), count_ops(*k, "for"));
  // [/book:loops_ir]
  kl::Buffer<float> sums(64);
  unrolled_kernel.launch(kl::Grid(1), x_buffer, sums);
  const std::vector<float> first = sums.to_host();
  looped_kernel.launch(kl::Grid(1), x_buffer, sums);
  const std::vector<float> second = sums.to_host();
  for (int i = 0; i < 64; ++i) {
    const float expected = ((x[i] + x[64 + i]) + x[128 + i]) + x[192 + i];
    wrong += (first[i] != expected) + (second[i] != expected);
  }
  std::printf("%s: %d results differ from C++\n", wrong == 0 ? "ok" : "FAILED", wrong);
  return wrong == 0 ? 0 : 1;
}
