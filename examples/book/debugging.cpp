// Chapter 21, "The cpu and emu devices, and debugging a kernel with them":
// kl::device_print on both devices, a bounds error from a mask that is one
// element off and its fix, a read that strays into another buffer, buffers
// reached through a table of their addresses, a failed
// kl::device_assert, an in-place reversal that needs kl::debug_barrier(), and
// an output poisoned with NaN to find the elements no program wrote.
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <limits>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "kiln/kiln.hpp"

namespace kl = kiln;

// [book:show]
template <int BLOCK>
void show(kl::Ptr<kl::f32> x, kl::i32 n) {
  auto start = kl::program_id(0) * BLOCK;
  auto offsets = start + kl::arange<BLOCK>();
  auto tile = kl::load(x + offsets, offsets < n);
  kl::if_(kl::program_id(0) == 1, [&] {  // one program's tile is enough to look at
    kl::device_print("start", start);
    kl::device_print("x", tile);
  });
}
// [/book:show]

// [book:differences_wrong]
// out[i] = x[i + 1] - x[i] for i < n - 1: one difference fewer than elements.
template <int BLOCK>
void differences_wrong(kl::Ptr<kl::f32> x, kl::Ptr<kl::f32> out, kl::i32 n) {
  auto offsets = kl::program_id(0) * BLOCK + kl::arange<BLOCK>();
  auto mask = offsets < n;  // wrong: x[i + 1] exists only for i < n - 1
  auto next = kl::load(x + offsets + 1, mask);
  auto here = kl::load(x + offsets, mask);
  kl::store(out + offsets, next - here, mask);
}
KILN_PARAMETERS(differences_wrong, "x", "out", "n");  // the names messages use
// [/book:differences_wrong]

// [book:differences]
template <int BLOCK>
void differences(kl::Ptr<kl::f32> x, kl::Ptr<kl::f32> out, kl::i32 n) {
  auto offsets = kl::program_id(0) * BLOCK + kl::arange<BLOCK>();
  auto mask = offsets < n - 1;
  auto next = kl::load(x + offsets + 1, mask);
  auto here = kl::load(x + offsets, mask);
  kl::store(out + offsets, next - here, mask);
}
// [/book:differences]

// [book:stray]
// Reads through a pointer made from x that lands inside y, which is an
// argument only so that its buffer is one of the launch's.
template <int BLOCK>
void stray(kl::Ptr<kl::f32> x, [[maybe_unused]] kl::Ptr<kl::f32> y, kl::Ptr<kl::f32> out, kl::i64 distance) {
  auto offsets = kl::arange<BLOCK>();
  kl::store(out + offsets, kl::load(x + distance + offsets));
}
KILN_PARAMETERS(stray, "x", "y", "out", "distance");
// [/book:stray]

// [book:table]
// Program g doubles the first n elements of the buffer whose address is
// table[g]: the buffers are no arguments of the kernel.
template <int BLOCK>
void double_through_table(kl::Ptr<kl::i64> table, kl::i32 n) {
  auto data = kl::cast<kl::Ptr<kl::f32>>(kl::load(table + kl::program_id(0)));
  auto offsets = kl::arange<BLOCK>();
  auto mask = offsets < n;
  kl::store(data + offsets, kl::load(data + offsets, mask) * 2, mask);
}
// [/book:table]

// [book:square_roots]
template <int BLOCK>
void square_roots(kl::Ptr<kl::f32> x, kl::Ptr<kl::f32> out, kl::i32 n) {
  auto offsets = kl::program_id(0) * BLOCK + kl::arange<BLOCK>();
  auto mask = offsets < n;
  auto tile = kl::load(x + offsets, mask);
  kl::device_assert(tile >= 0.0f, "x must not be negative");
  kl::store(out + offsets, kl::sqrt(tile), mask);
}
// [/book:square_roots]

// [book:reverse]
template <int BLOCK>
void reverse_in_place(kl::Ptr<kl::f32> x) {
  auto offsets = kl::arange<BLOCK>();
  auto tile = kl::load(x + offsets);
  kl::store(x + (BLOCK - 1) - offsets, tile);  // element i goes where element BLOCK - 1 - i was
}

template <int BLOCK>
void reverse_in_place_fixed(kl::Ptr<kl::f32> x) {
  auto offsets = kl::arange<BLOCK>();
  auto tile = kl::load(x + offsets);
  kl::debug_barrier();  // every element is loaded before any is overwritten
  kl::store(x + (BLOCK - 1) - offsets, tile);
}
// [/book:reverse]

// [book:error_of]
// The message of the KernelError that `launch` throws, or "" when it throws none.
template <class Launch>
std::string error_of(Launch launch) {
  try {
    launch();
  } catch (const kl::runtime::KernelError& error) {
    return error.what();
  }
  return "";
}
// [/book:error_of]

/// `message` without the directory of this source file, which the emu's
/// assert messages name and which differs from one checkout to another.
std::string without_directory(std::string message) {
  const std::string file = __FILE__;
  const std::string directory = file.substr(0, file.rfind('/') + 1);
  if (directory.empty()) return message;
  for (auto at = message.find(directory); at != std::string::npos; at = message.find(directory))
    message.erase(at, directory.size());
  return message;
}

/// `message` with the element offset `distance`, which differs from run to
/// run (it is how far apart two buffers happen to lie), shown as D.
std::string without_distance(std::string message, std::int64_t distance) {
  const std::string number = " " + std::to_string(distance) + " ";
  if (const auto at = message.find(number); at != std::string::npos) message.replace(at, number.size(), " D ");
  return message;
}

/// `message` with the hexadecimal address `address`, which differs from run
/// to run, shown as A.
std::string without_address(std::string message, std::uint64_t address) {
  char hex[32];
  std::snprintf(hex, sizeof hex, "0x%llx", static_cast<unsigned long long>(address));
  if (const auto at = message.find(hex); at != std::string::npos) message.replace(at, std::string(hex).size(), "A");
  return message;
}

int main() {
  std::mt19937 random(2024);
  std::uniform_real_distribution<float> uniform(-1.0f, 1.0f);
  int failures = 0;

  // [book:devices]
  const kl::Device cpu = kl::Device::cpu();
  const kl::Device emu = kl::Device::emu();
  const kl::Device chosen = kl::Device::default_device();  // $KILN_DEVICE, else cuda on a GPU, else cpu
  // [/book:devices]

  // [book:show_launch]
  const std::vector<float> values = {0.5f, -1.0f, 0.1f, 2.0f, 0.25f, 3.0f, -0.75f, 1.5f, 0.2f, 4.0f, -2.5f, 0.3f};
  for (const kl::Device& device : {cpu, emu}) {
    std::printf("show on %s:\n", device.name().c_str());
    auto x = kl::Buffer<float>::from(values, device);  // the launch runs where its buffers are
    kl::compile<show<8>>().launch(kl::Grid(2), x, static_cast<int>(values.size()));
  }
  // [/book:show_launch]

  // [book:bounds]
  const int n = 1000;
  std::vector<float> samples(n);
  for (auto& v : samples) v = uniform(random);
  for (const kl::Device& device : {cpu, emu}) {
    auto x = kl::Buffer<float>::from(samples, device);
    kl::Buffer<float> out(n - 1, device);
    const std::string error = error_of([&] { kl::compile<differences_wrong<256>>().launch(kl::Grid(4), x, out, n); });
    std::printf("%s: %s\n", device.name().c_str(), error.c_str());
    failures += error.empty();  // both devices must stop it
  }
  // [/book:bounds]

  // [book:fixed]
  auto x = kl::Buffer<float>::from(samples, chosen);
  kl::Buffer<float> out(n - 1, chosen);
  kl::compile<differences<256>>().launch(kl::Grid(4), x, out, n);
  const std::vector<float> result = out.to_host();
  int wrong = 0;
  for (int i = 0; i + 1 < n; ++i) wrong += result[i] != samples[i + 1] - samples[i];
  std::printf("differences: %d of %d wrong\n", wrong, n - 1);
  failures += wrong;
  // [/book:fixed]

  // [book:stray_launch]
  for (const kl::Device& device : {cpu, emu}) {
    const auto address = [](const kl::Buffer<float>& b) { return static_cast<std::int64_t>(b.address()); };
    kl::Buffer<float> x(64, device), y(64, device), out(64, device);
    if (address(y) < address(x)) std::swap(x, y);  // x lies below y
    x.copy_from(std::vector<float>(64, 1.0f));
    y.copy_from(std::vector<float>(64, 2.0f));
    const std::int64_t distance = (address(y) - address(x)) / std::int64_t{sizeof(float)};  // x + distance is y[0]
    const std::string error = error_of([&] { kl::compile<stray<64>>().launch(kl::Grid(1), x, y, out, distance); });
    std::string shown = without_distance(error, distance);
    if (error.empty()) shown = out.to_host() == std::vector<float>(64, 2.0f) ? "no error, out holds y" : "no error";
    std::printf("stray read on %s: %s\n", device.name().c_str(), shown.c_str());
    failures += error.empty();  // both devices must stop it
  }
  // [/book:stray_launch]

  // [book:table_launch]
  for (const kl::Device& device : {cpu, emu}) {
    std::vector<kl::Buffer<float>> buffers;
    std::vector<std::int64_t> addresses;
    for (int g = 0; g < 3; ++g) {
      buffers.push_back(kl::Buffer<float>::from(std::vector<float>(40, g + 1.0f), device));
      addresses.push_back(static_cast<std::int64_t>(buffers.back().address()));
    }
    const auto table = kl::Buffer<std::int64_t>::from(addresses, device);
    kl::compile<double_through_table<64>>().launch(kl::Grid(3), table, 40);
    const bool doubled = buffers[2].to_host() == std::vector<float>(40, 6.0f);
    std::printf("through the table on %s: %s\n", device.name().c_str(), doubled ? "doubled" : "not doubled");
    const std::string error = error_of([&] { kl::compile<double_through_table<64>>().launch(kl::Grid(1), table, 48); });
    std::printf("48 of 40 on %s: %s\n", device.name().c_str(), without_address(error, buffers[0].address()).c_str());
    failures += !doubled + error.empty();
  }
  // [/book:table_launch]

  // [book:assert_launch]
  std::vector<float> squares(40, 4.0f);
  squares[37] = -4.0f;  // program 4, element 5
  for (const kl::Device& device : {cpu, emu}) {
    auto x = kl::Buffer<float>::from(squares, device);
    kl::Buffer<float> out(squares.size(), device);
    const std::string error = error_of([&] { kl::compile<square_roots<8>>().launch(kl::Grid(5), x, out, 40); });
    std::printf("%s: %s\n", device.name().c_str(), without_directory(error).c_str());
    failures += error.empty();
  }
  // [/book:assert_launch]

  // [book:reverse_launch]
  std::vector<float> ramp(256), reversed(256);
  for (int i = 0; i < 256; ++i) {
    ramp[i] = i;
    reversed[i] = 255 - i;
  }
  for (const kl::Device& device : {cpu, emu}) {
    auto x = kl::Buffer<float>::from(ramp, device);
    std::string error = error_of([&] { kl::compile<reverse_in_place<256>>().launch(kl::Grid(1), x); });
    if (error.empty()) error = x.to_host() == reversed ? "no error, reversed" : "no error, and not reversed";
    std::printf("%s: %s\n", device.name().c_str(), error.c_str());
    auto y = kl::Buffer<float>::from(ramp, device);
    kl::compile<reverse_in_place_fixed<256>>().launch(kl::Grid(1), y);
    const bool right = y.to_host() == reversed;
    std::printf("%s with kl::debug_barrier(): %s\n", device.name().c_str(), right ? "reversed" : "not reversed");
    failures += !right;
  }
  // [/book:reverse_launch]

  // [book:poison]
  const float nan = std::numeric_limits<float>::quiet_NaN();
  auto poisoned = kl::Buffer<float>::from(std::vector<float>(n - 1, nan), chosen);
  kl::compile<differences<256>>().launch(kl::Grid(n / 256), x, poisoned, n);  // wrong: n / 256 rounds down
  int unwritten = 0;
  for (float v : poisoned.to_host()) unwritten += std::isnan(v);
  std::printf("grid of %d: %d of %d differences never written\n", n / 256, unwritten, n - 1);
  // [/book:poison]
  failures += unwritten != n - 1 - 3 * 256;

  std::printf("%s\n", failures == 0 ? "ok" : "FAILED");
  return failures == 0 ? 0 : 1;
}
