// CompileOptions::num_stages = 0 or negative is accepted silently on every device,
// while kl::range(..., {.num_stages = 0}) is rejected naming the loop. num_warps = 64
// is rejected on emu but accepted on cpu.
#include <cstdio>
#include <vector>
#include <kiln/kiln.hpp>
namespace kl = kiln;
template <int LS>
void mm(kl::Ptr<kl::f16> a, kl::Ptr<kl::f16> b, kl::Ptr<kl::f32> c, kl::i32 k) {
  auto r = kl::expand_dims<1>(kl::arange<16>());
  auto cc = kl::expand_dims<0>(kl::arange<16>());
  kl::Var acc = kl::zeros<kl::f32, 16, 16>();
  for (auto k0 : kl::range(0, k, 16, {.num_stages = LS > 0 ? std::optional<int>{} : std::optional<int>{LS}})) {
    auto ka = kl::expand_dims<0>(k0 + kl::arange<16>());
    auto kb = kl::expand_dims<1>(k0 + kl::arange<16>());
    acc = kl::dot(kl::load(a + r * k + ka), kl::load(b + kb * 16 + cc), acc);
  }
  kl::store(c + r * 16 + cc, acc);
}
template <int LS>
void go(const char* what, int stages, int warps) {
  auto a = kl::Buffer<kl::half>::from(std::vector<kl::half>(16 * 32, kl::half(1.0f)));
  auto b = kl::Buffer<kl::half>::from(std::vector<kl::half>(32 * 16, kl::half(1.0f)));
  auto c = kl::Buffer<float>::from(std::vector<float>(256, 0.f));
  kl::CompileOptions o;
  o.num_stages = stages;
  o.num_warps = warps;
  std::printf("%s %s: ", kl::Device::default_device().name().c_str(), what);
  try {
    kl::compile<mm<LS>>(o).launch({1}, a, b, c, 32);
    std::printf("accepted, c[0] = %g\n", c.to_host()[0]);
  } catch (std::exception& e) {
    std::printf("error: %s\n", e.what());
  }
}
int main() {
  go<1>("CompileOptions.num_stages = 0", 0, 4);
  go<1>("CompileOptions.num_stages = -3", -3, 4);
  go<0>("kl::range {.num_stages = 0}", 3, 4);
  go<1>("CompileOptions.num_warps = 64", 3, 64);
}
