// Kernels compiled ahead of time (kiln_add_kernels): what the generated code
// embeds for each kernel, and its typed launch. No LLVM and no tracing: an
// application built this way links kiln::runtime_core only.
#pragma once

#include <concepts>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <memory>
#include <mutex>
#include <span>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <vector>

#include "kiln/runtime/buffer.hpp"
#include "kiln/runtime/device.hpp"
#include "kiln/runtime/interpreter.hpp"

namespace kiln::aot {

/// The launch grid: number of programs along x, y, z (as kiln::Grid).
struct Grid {
  int x = 1, y = 1, z = 1;
  Grid(int x_, int y_ = 1, int z_ = 1) : x(x_), y(y_), z(z_) {}
};

/// A kernel parameter of the generated launchers: a pointer to elements
/// stored as T (launched with a Buffer<T>), or a scalar stored as T.
template <class T>
struct Pointer {
  using storage = T;
};
template <class T>
struct Scalar {
  using storage = T;
};

/// One guarded access of the emu code (runtime/emu/kernel_description.hpp).
struct EmuAccessSite {
  int kind;  // 0 load, 1 store, 2 atomic
  const char* op_name;
  const char* place;
  int active_lanes;
  const char* dtype;  // the element dtype messages count in ("f16"), or null
  int source;         // the pointer argument the addresses derive from, -1: mixed
};

/// One GPU image of a kernel: PTX text or a cubin for one architecture.
struct GpuImage {
  const char* arch;  // "sm_80", "sm_90a"
  bool cubin;        // false: PTX, compiled by the driver
  const unsigned char* data;
  std::size_t size;
};

/// Everything the generator embeds for one kernel.
struct EmbeddedKernel {
  const char* name = nullptr;     // as registered (kiln::aot::KernelList::add)
  const char* ir_text = nullptr;  // the specialised tile IR, for the cpu device
  int num_warps = 4;
  const char* gpu_entry = nullptr;  // the PTX entry of every GPU image
  int gpu_shared_bytes = 0;         // dynamic shared memory per block on the GPU
  std::span<const GpuImage> gpu_images = {};
  void (*emu_entry)(const std::uint64_t* arguments) = nullptr;  // the emu's code, compiled for emu_machine()
  std::span<const EmuAccessSite> emu_access_sites = {};
  std::span<const char* const> emu_barrier_places = {};
  std::size_t emu_shared_bytes = 0;
};

/// An embedded kernel ready to launch: its IR parsed on first use, its code
/// loaded once per device.
class Kernel {
 public:
  explicit Kernel(const EmbeddedKernel& embedded);
  ~Kernel();
  Kernel(const Kernel&) = delete;
  Kernel& operator=(const Kernel&) = delete;

  /// Runs the kernel over `grid` on `device`: the tile IR interpreted on
  /// `cpu`, the embedded host code on `emu`, the image for the GPU's
  /// architecture on `cuda`. Throws std::invalid_argument when an argument
  /// breaks a fact the specialisation assumes (a multiple of 16, equal to 1)
  /// or no embedded image runs on the GPU; KernelError for a kernel fault.
  runtime::LaunchStats launch(const Device& device, Grid grid, std::span<const runtime::KernelArgument> args) const;

 private:
  struct State;
  const EmbeddedKernel& embedded_;
  std::unique_ptr<State> state_;
};

namespace detail {

template <class T>
struct is_buffer : std::false_type {};
template <class T>
struct is_buffer<Buffer<T>> : std::true_type {
  using element = T;
};

/// The rule kiln::Kernel::launch applies (dsl/kernel.hpp): pointers take a
/// Buffer of the same element type, bools take bool, integers take C++
/// integers, floats take C++ numbers.
template <class Param, class Arg>
constexpr bool argument_matches() {
  using A = std::remove_cvref_t<Arg>;
  using T = typename Param::storage;
  if constexpr (std::is_same_v<Param, Pointer<T>>) {
    if constexpr (is_buffer<A>::value) return std::is_same_v<typename is_buffer<A>::element, T>;
    else return false;
  } else if constexpr (std::is_same_v<T, bool>) {
    return std::is_same_v<A, bool>;
  } else if constexpr (std::is_integral_v<T>) {
    return std::is_integral_v<A> && !std::is_same_v<A, bool>;
  } else {
    return std::is_arithmetic_v<A> && !std::is_same_v<A, bool>;
  }
}

template <std::size_t Index, class Param, class Arg>
struct launch_argument_check {
  static_assert(argument_matches<Param, Arg>(),
                "kiln: launch argument does not match the kernel parameter (see Index, Param and Arg above)");
  static constexpr bool value = true;
};

template <std::size_t Expected, std::size_t Given>
struct launch_argument_count_check {
  static_assert(Expected == Given, "kiln: wrong number of launch arguments (see Expected and Given above)");
  static constexpr bool value = true;
};

[[noreturn]] void fail_argument_range(std::string_view kernel, std::size_t index, std::string_view value);

template <class Param, class Arg>
runtime::KernelArgument to_argument(const Arg& a, std::size_t index, std::string_view kernel) {
  runtime::KernelArgument out;
  using T = typename Param::storage;
  if constexpr (std::is_same_v<Param, Pointer<T>>) {
    // Unnamed: the devices name the range after the kernel's parameter.
    out.range = a.range({});
    out.bits = out.range.begin;
  } else {
    if constexpr (std::is_integral_v<T> && !std::is_same_v<T, bool>) {
      if (!std::in_range<T>(a)) fail_argument_range(kernel, index, std::to_string(a));
    }
    const T value = static_cast<T>(a);
    std::memcpy(&out.bits, &value, sizeof(T));
  }
  return out;
}

template <class... Args>
Device device_of(const Args&... args) {
  const Device* found = nullptr;
  auto visit = [&](const auto& a) {
    if constexpr (is_buffer<std::remove_cvref_t<decltype(a)>>::value)
      if (!found) found = &a.device();
  };
  (visit(args), ...);
  return found ? *found : Device::default_device();
}

}  // namespace detail

/// The arguments of a launch of a kernel with parameters Params…, checked
/// at compile time and marshalled.
template <class... Params, class... Args>
std::vector<runtime::KernelArgument> marshal(std::string_view kernel, const Args&... args) {
  static_assert(detail::launch_argument_count_check<sizeof...(Params), sizeof...(Args)>::value);
  return [&]<std::size_t... I>(std::index_sequence<I...>) {
    static_assert((detail::launch_argument_check<I, Params, Args>::value && ...));
    return std::vector<runtime::KernelArgument>{detail::to_argument<Params>(args, I, kernel)...};
  }(std::index_sequence_for<Args...>{});
}

}  // namespace kiln::aot
