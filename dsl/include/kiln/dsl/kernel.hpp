// Compiling and launching kernels: kl::compile<vector_add<1024>>(options)
// traces the function once per option set and returns a Kernel whose
// launch(grid, args…) checks the arguments against the kernel's parameters at
// C++ compile time.
#pragma once

#include <chrono>
#include <cstring>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <tuple>
#include <type_traits>
#include <utility>
#include <vector>

#include "kiln/dsl/launch_recorder.hpp"
#include "kiln/dsl/parameters.hpp"
#include "kiln/dsl/value.hpp"
#include "kiln/ir/parameter_label.hpp"
#include "kiln/runtime/buffer.hpp"
#include "kiln/runtime/program.hpp"

namespace kiln {

/// An arguments struct as the kernel sees it: DSL values.
struct traced {};
/// An arguments struct as a launch fills it: Buffers and numbers.
struct host {};

/// The launch grid: number of programs along x, y, z.
struct Grid {
  int x = 1, y = 1, z = 1;
  Grid(int x_, int y_ = 1, int z_ = 1) : x(x_), y(y_), z(z_) {}
};

struct CompileOptions {
  /// Warps per program on GPU backends (recorded in the kernel for them): a
  /// power of two from 1 to 32, which kl::compile checks on every device.
  int num_warps = 4;
  /// Software-pipelining depth of loops whose loads feed tensor-core dots
  /// (ir::pipeline_dot_loads): their copies are issued num_stages - 1
  /// iterations ahead into rings of num_stages shared slots; 1 turns it off
  /// (below 1 kl::compile refuses).
  /// A loop's own kl::range(..., {.num_stages = N}) overrides it for that
  /// loop. Every device runs the pipelined program.
  int num_stages = 3;
  /// Registers per thread the GPU code may use (`.maxnreg` in the PTX, as
  /// Triton's `maxnreg`), 24 to 255; 0 leaves the count to ptxas, which may
  /// squeeze a kernel below what it needs (spilling) to fit more programs
  /// on an SM. No effect on the cpu and emu devices.
  int max_registers = 0;
  /// Run the IR passes (canonicalize, CSE, LICM, DCE, unroll and pipeline).
  bool optimize = true;
  /// Compile a variant per launch-argument facts, as Triton does: integers
  /// equal to 1 become constants, integers divisible by 16 and 16-byte
  /// aligned pointers are marked so (`{divisibility = 16}` in the IR).
  bool specialize = true;
  /// Print the IR after this pass ("all" for every pass) to stderr.
  std::string dump_after{};
  /// Print each pass's time to stderr.
  bool timing = false;

  std::string key() const;
};

namespace detail {

template <class F>
struct signature;
template <class... P>
struct signature<void (*)(P...)> {
  using params = std::tuple<P...>;
};

/// A kernel parameter that is a struct A<kl::traced> (argument_struct.hpp).
template <class T>
struct argument_struct : std::false_type {};
template <template <class> class A>
struct argument_struct<A<traced>> : std::true_type {
  using host_type = A<host>;
};

/// Kernel function Fn takes one parameter, an arguments struct.
template <auto Fn, class Params = typename signature<decltype(Fn)>::params>
inline constexpr bool takes_argument_struct = false;
template <auto Fn, class P>
inline constexpr bool takes_argument_struct<Fn, std::tuple<P>> = argument_struct<P>::value;

/// Traces `body` as a kernel with parameters of the given types and verifies
/// it: the tile IR as traced, named after `display_name` without namespaces
/// and template arguments, its parameters after `parameter_names` (empty:
/// unnamed). Throws TraceError when the traced IR is invalid.
std::unique_ptr<ir::Function> trace_function(std::string_view display_name, const std::vector<ir::Type>& params,
                                             const std::function<void(const std::vector<ir::Value*>&)>& body,
                                             std::vector<std::string> parameter_names = {});

/// Traces `body` as trace_function does into a program whose IR passes run on
/// the first use of its optimized IR (at once when `options` asks to dump or
/// time them).
std::shared_ptr<const runtime::Program> build_program(std::string_view display_name,
                                                      const std::vector<ir::Type>& params,
                                                      std::vector<std::string> parameter_names,
                                                      const std::function<void(const std::vector<ir::Value*>&)>& body,
                                                      const CompileOptions& options);

template <class Param, class Arg>
constexpr bool argument_matches() {
  using A = std::remove_cvref_t<Arg>;
  if constexpr (Pointer<Param>) {
    if constexpr (is_buffer<A>::value)
      return std::is_same_v<typename is_buffer<A>::element, storage_of<pointee_of<Param>>>;
    else return false;
  } else if constexpr (std::is_same_v<storage_of<Param>, bool>) {
    return std::is_same_v<A, bool>;
  } else if constexpr (ir::is_integer(dtype_of<Param>)) {
    return std::is_integral_v<A> && !std::is_same_v<A, bool>;
  } else {
    return std::is_arithmetic_v<A> && !std::is_same_v<A, bool>;
  }
}

/// Launch argument Index must fit kernel parameter Param: pointers take a
/// Buffer of the same element type, integers take C++ integers, floats take
/// C++ numbers. A mismatch names kiln::launch_error, whose argument is the
/// message: "launch argument 1 is Buffer<bf16>; parameter 1 is Ptr<f16>, …".
template <std::size_t Index, class Param, class Arg>
constexpr bool launch_argument_fits() {
  if constexpr (argument_matches<Param, Arg>()) return true;
  else return sizeof(launch_error<launch_mismatch_message<Index, Param, Arg>()>) != 0;
}

template <std::size_t Expected, std::size_t Given>
constexpr bool launch_argument_count_fits() {
  if constexpr (Expected == Given) return true;
  else return sizeof(launch_error<launch_count_message<Expected, Given>()>) != 0;
}

[[noreturn]] void fail_argument_range(std::string_view kernel, const std::string& parameter, std::string_view dtype,
                                      std::string_view value);

/// Argument `a` of parameter Param as the devices take it; `label()` names
/// the parameter where its value does not fit.
template <class Param, class Arg, class Label>
runtime::KernelArgument to_argument(const Arg& a, std::string_view kernel, const Label& label) {
  runtime::KernelArgument out;
  if constexpr (Pointer<Param>) {
    // Unnamed: the devices name the range after the kernel's parameter.
    out.range = a.range({});
    out.bits = out.range.begin;
  } else {
    using C = storage_of<Param>;
    if constexpr (std::is_integral_v<C> && !std::is_same_v<C, bool>) {
      if (!std::in_range<C>(a)) fail_argument_range(kernel, label(), ir::dtype_name(dtype_v<C>), std::to_string(a));
    }
    C value = static_cast<C>(a);
    std::memcpy(&out.bits, &value, sizeof(C));
  }
  return out;
}

/// What argument `a` of kernel parameter Param lets a specialised kernel
/// assume: integers equal to 1 or divisible by 16, pointers aligned to 16 bytes.
template <class Param>
ir::ArgumentFacts argument_facts(const runtime::KernelArgument& a) {
  ir::ArgumentFacts facts;
  if constexpr (Pointer<Param>) {
    if (a.bits % 16 == 0) facts.divisibility = 16;
  } else if constexpr (std::is_integral_v<storage_of<Param>> && !std::is_same_v<storage_of<Param>, bool>) {
    storage_of<Param> value;
    std::memcpy(&value, &a.bits, sizeof(value));
    if (value == 1) facts.equal_to_1 = true;
    else if (value % 16 == 0) facts.divisibility = 16;
  }
  return facts;
}

inline double milliseconds_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
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

/// A compiled kernel with parameters Params….
template <class... Params>
class Kernel {
 public:
  explicit Kernel(std::shared_ptr<const runtime::Program> program) : program_(std::move(program)) {}

  const runtime::Program& program() const { return *program_; }
  const std::shared_ptr<const runtime::Program>& program_ptr() const { return program_; }
  /// The optimized IR.
  const ir::Function& ir() const { return program_->optimized(); }
  const std::string& name() const { return program_->display_name(); }

  /// Runs the kernel over `grid` on the device of its buffer arguments; while
  /// a LaunchRecorder is active on this thread, records it instead.
  template <class... Args>
  runtime::LaunchStats launch(Grid grid, const Args&... args) const {
    return launch_on(detail::device_of(args...), grid, args...);
  }

  template <class... Args>
  runtime::LaunchStats launch_on(const Device& device, Grid grid, const Args&... args) const {
    return launch_arguments(device, grid, marshal(args...));
  }

  /// Runs the kernel with arguments already checked and marshalled, one per
  /// parameter (or records the launch, as launch does).
  runtime::LaunchStats launch_arguments(const Device& device, Grid grid,
                                        const std::vector<runtime::KernelArgument>& marshalled) const {
    if (LaunchRecorder* recorder = LaunchRecorder::active()) {
      const auto start = std::chrono::steady_clock::now();
      auto program = specialized(marshalled, std::index_sequence_for<Params...>{});
      recorder->launches.push_back({std::move(program), {grid.x, grid.y, grid.z}, detail::milliseconds_since(start)});
      return {};
    }
    return specialized(marshalled, std::index_sequence_for<Params...>{})
        ->launch(device, {grid.x, grid.y, grid.z}, marshalled);
  }

  /// The program a launch with these arguments runs: the variant specialised
  /// for what their values let it assume.
  template <class... Args>
  std::shared_ptr<const runtime::Program> program_for(const Args&... args) const {
    return program_for_arguments(marshal(args...));
  }
  std::shared_ptr<const runtime::Program> program_for_arguments(
      const std::vector<runtime::KernelArgument>& marshalled) const {
    return specialized(marshalled, std::index_sequence_for<Params...>{});
  }

 private:
  template <class... Args>
  std::vector<runtime::KernelArgument> marshal(const Args&... args) const {
    static_assert(detail::launch_argument_count_fits<sizeof...(Params), sizeof...(Args)>());
    return marshal_checked(std::index_sequence_for<Args...>{}, args...);
  }

  template <std::size_t... I, class... Args>
  std::vector<runtime::KernelArgument> marshal_checked(std::index_sequence<I...>, const Args&... args) const {
    static_assert((detail::launch_argument_fits<I, Params, Args>() && ...));
    const ir::Function& traced = program_->traced();
    return {detail::to_argument<Params>(args, name(), [&] { return ir::parameter_label(traced, I); })...};
  }

  template <std::size_t... I>
  std::shared_ptr<const runtime::Program> specialized(const std::vector<runtime::KernelArgument>& marshalled,
                                                      std::index_sequence<I...>) const {
    return program_->specialized({detail::argument_facts<Params>(marshalled[I])...});
  }

  std::shared_ptr<const runtime::Program> program_;
};

namespace detail {
/// Traces kernel Fn with parameters Params…, passed one by one.
template <auto Fn, class... Params>
struct positional_call {
  static std::string_view display_name() { return kernel_display_name<Fn>(); }
  static std::vector<std::string> names() { return registered_parameter_names<Fn, sizeof...(Params)>(); }
  static void trace(const std::vector<ir::Value*>& args) {
    [&]<std::size_t... I>(std::index_sequence<I...>) { Fn(Params(args[I])...); }(std::index_sequence_for<Params...>{});
  }
};

/// The kernel Call traces, with parameters Params…, built once per option set.
template <class Call, class... Params>
Kernel<Params...> compile_with(const CompileOptions& options) {
  static std::mutex mutex;
  static std::map<std::string, std::shared_ptr<const runtime::Program>> cache;
  std::lock_guard lock(mutex);
  auto& slot = cache[options.key()];
  if (!slot) {
    const auto start = std::chrono::steady_clock::now();
    slot = build_program(Call::display_name(), {ir_type<Params>()...}, Call::names(), Call::trace, options);
    if (LaunchRecorder* recorder = LaunchRecorder::active())
      recorder->compiles.push_back({slot->display_name(), milliseconds_since(start)});
  }
  return Kernel<Params...>(slot);
}

template <auto Fn, class... Params>
Kernel<Params...> compile_positional(std::tuple<Params...>*, const CompileOptions& options) {
  return compile_with<positional_call<Fn, Params...>, Params...>(options);
}
}  // namespace detail

/// Traces kernel function Fn (cached per option set); the IR passes run when
/// a device first needs the optimized IR, which a GPU launch whose kernel the
/// compile cache holds does not. A kernel whose one parameter is an arguments
/// struct compiles through the overload in argument_struct.hpp.
template <auto Fn>
auto compile(const CompileOptions& options = {}) {
  using Params = typename detail::signature<decltype(Fn)>::params;
  return detail::compile_positional<Fn>(static_cast<Params*>(nullptr), options);
}

}  // namespace kiln
