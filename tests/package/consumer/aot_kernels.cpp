// The kernels consumer_aot compiles ahead of time: its own saxpy and the
// installed library's vector_add (kiln::kernels), both for f32.
// [book:aot_kernels]
#include <kiln/aot/kernel_list.hpp>
#include <kiln/kernels/vector_add.hpp>

namespace kl = kiln;

template <int BLOCK>
void saxpy(kl::f32 a, kl::Ptr<kl::f32> x, kl::Ptr<kl::f32> y, kl::Ptr<kl::f32> out, kl::i32 n) {
  auto offsets = kl::program_id(0) * BLOCK + kl::arange<BLOCK>();
  auto mask = offsets < n;
  kl::store(out + offsets, a * kl::load(x + offsets, mask) + kl::load(y + offsets, mask), mask);
}

void kiln_aot_kernels(kiln::aot::KernelList& kernels) {
  kernels.add<saxpy<256>>("saxpy");
  // A library kernel, specialised for 16-byte aligned buffers and n a multiple of 16.
  using kiln::aot::aligned_16, kiln::aot::multiple_of_16;
  kernels.add<kl::kernels::vector_add<kl::f32, 256>>("vector_add",
                                                     {.facts = {aligned_16, aligned_16, aligned_16, multiple_of_16}});
}
// [/book:aot_kernels]
