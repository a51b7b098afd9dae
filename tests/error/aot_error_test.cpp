// Mistakes in naming kernels for kiln_add_kernels (kiln::aot::KernelList) and
// launches of an ahead-of-time kernel that break its specialisation's facts
// give one line naming the kernel, the parameter and the values (checked verbatim).
#include <gtest/gtest.h>

#include <stdexcept>
#include <string>
#include <vector>

#include "kiln/aot/kernel_list.hpp"
#include "kiln/ir/printer.hpp"
#include "kiln/runtime/aot_kernel.hpp"

namespace aot_errors {

namespace kl = kiln;

template <int BLOCK>
void scale(kl::Ptr<kl::f32> x, kl::Ptr<kl::f32> out, kl::f32 a, kl::i32 n) {
  auto offsets = kl::program_id(0) * BLOCK + kl::arange<BLOCK>();
  auto mask = offsets < n;
  kl::store(out + offsets, kl::load(x + offsets, mask) * a, mask);
}

std::string add_error(const std::string& name, const kiln::aot::KernelOptions& options) {
  kiln::aot::KernelList list;
  list.add<scale<64>>("scale", {});
  try {
    list.add<scale<64>>(name, options);
  } catch (const std::invalid_argument& error) {
    return error.what();
  }
  return "no error";
}

TEST(AotKernelList, NameMustBeAnIdentifier) {
  EXPECT_EQ(add_error("2x", {}),
            "kiln_aot_kernels: kernel '2x' (aot_errors::scale<64>): the name must be a C++ identifier");
}

TEST(AotKernelList, NamesAreUnique) {
  EXPECT_EQ(add_error("scale", {}),
            "kiln_aot_kernels: kernel 'scale' (aot_errors::scale<64>): the name is already used");
}

TEST(AotKernelList, OneFactPerParameter) {
  EXPECT_EQ(add_error("scale2", {.facts = {kiln::aot::aligned_16, kiln::aot::aligned_16}}),
            "kiln_aot_kernels: kernel 'scale2' (aot_errors::scale<64>): 2 argument facts for 4 parameters");
}

TEST(AotKernelList, AFloatCannotBeAMultipleOf16) {
  using kiln::aot::anything, kiln::aot::multiple_of_16;
  EXPECT_EQ(add_error("scale2", {.facts = {anything, anything, multiple_of_16, anything}}),
            "kiln_aot_kernels: kernel 'scale2' (aot_errors::scale<64>): parameter 2 is f32, which cannot assume "
            "divisibility 16 (pointers: aligned_16; integers: multiple_of_16 or equal_to_1)");
}

TEST(AotKernel, ALaunchBreakingAFactIsAnError) {
  using kiln::aot::aligned_16, kiln::aot::anything, kiln::aot::multiple_of_16;
  kiln::aot::KernelList list;
  list.add<scale<64>>("scale", {.facts = {aligned_16, aligned_16, anything, multiple_of_16}});
  const std::string ir_text = kiln::ir::print(list.kernels()[0].program->optimized());
  const kiln::aot::EmbeddedKernel embedded{.name = "scale", .ir_text = ir_text.c_str(), .num_warps = 4};
  const kiln::aot::Kernel kernel(embedded);
  kiln::Buffer<float> x(100, kiln::Device::cpu()), out(100, kiln::Device::cpu());
  std::string message = "no error";
  try {
    kernel.launch(kiln::Device::cpu(), {2},
                  kiln::aot::marshal<kiln::aot::Pointer<float>, kiln::aot::Pointer<float>, kiln::aot::Scalar<float>,
                                     kiln::aot::Scalar<std::int32_t>>("scale", x, out, 2.0f, 100));
  } catch (const std::invalid_argument& error) {
    message = error.what();
  }
  EXPECT_EQ(message,
            "kernel scale: parameter 4 (i32) is 100, not a multiple of 16 as its ahead-of-time specialisation assumes");
}

}  // namespace aot_errors
