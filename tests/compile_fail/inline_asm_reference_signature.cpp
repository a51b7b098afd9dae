// expect: inline_asm_elementwise: the host reference must be a function R\(A\.\.\.\)
// A host reference of doubles for an asm of f32: the reference must take and
// give the element types the asm works on, or the cpu and emu devices would
// read its bits as the wrong type.
#include <cmath>

#include "kiln/kiln.hpp"

namespace kl = kiln;

double host_tanh(double x) { return std::tanh(x); }

void fast_tanh(kl::Ptr<kl::f32> x, kl::Ptr<kl::f32> out) {
  auto i = kl::arange<16>();
  kl::store(out + i, kl::inline_asm_elementwise<kl::f32>("tanh.approx.f32 $0, $1;", "=f,f",
                                                         kl::asm_args(kl::load(x + i)), host_tanh));
}

void launch_fast_tanh(kl::Buffer<float>& x, kl::Buffer<float>& out) { kl::compile<fast_tanh>().launch({1}, x, out); }
