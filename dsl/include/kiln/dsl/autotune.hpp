// kl::autotune, Triton's @triton.autotune: one kernel template compiled for a
// list of configurations (template arguments plus num_warps and num_stages),
// each on its own thread, and per shape key the configuration that launches:
// the fastest by measured GPU time on `cuda` (kept on disk), the first that
// compiles on `cpu` and `emu`.
//
//   struct Blocks { int m, n; };
//   const auto tuned = kl::autotune(kl::config<matmul<64, 64>>({.num_warps = 4}, Blocks{64, 64}),
//                                   kl::config<matmul<128, 64>>({.num_warps = 8}, Blocks{128, 64}))
//                          .key<3, 4, 5>();
//   tuned.launch([&](const Blocks& b) { return kl::Grid(kl::cdiv(m, b.m), kl::cdiv(n, b.n)); }, a, b, c, m, n, k);
//
// A configuration names its kernel as an instantiated template, which the C++
// compiler checks (a wrong template argument is a compile error, not a failed
// configuration at run time), and every configuration's kernel must have the
// same parameters. C++ cannot read the template arguments back from the
// instantiated function, so the values the launch grid depends on (Triton's
// META) are stated once more as the configuration's `meta`, a value of the
// user's type that every configuration shares. A kernel whose one parameter
// is an arguments struct (argument_struct.hpp) is tuned the same way and
// launched with designated initialisers; its key and reset_to_zero name
// fields, `.key<&Args<>::n>()`.
#pragma once

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstring>
#include <functional>
#include <future>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <tuple>
#include <type_traits>
#include <utility>
#include <vector>

#include "kiln/dsl/argument_struct.hpp"
#include "kiln/dsl/arith.hpp"
#include "kiln/dsl/creation.hpp"
#include "kiln/dsl/kernel.hpp"
#include "kiln/dsl/memory.hpp"
#include "kiln/runtime/compile_cache.hpp"
#include "kiln/runtime/tuning.hpp"

namespace kiln {

/// The meta of configurations whose launch grid depends on nothing.
struct NoMeta {};

/// One configuration of an autotuned kernel: kernel Fn (a kernel template
/// instantiated with this configuration's template arguments) compiled with
/// `options`; `meta` holds the values its launch grid depends on (any
/// copyable, default-constructible type, the same for every configuration).
template <auto Fn, class Meta = NoMeta>
struct Config {
  CompileOptions options;
  Meta meta;
};

/// kl::config<matmul<64, 64, 32>>({.num_warps = 4, .num_stages = 3}, Blocks{64, 64, 32}).
template <auto Fn, class Meta = NoMeta>
Config<Fn, Meta> config(CompileOptions options = {}, Meta meta = {}) {
  return {std::move(options), std::move(meta)};
}

/// The values of the integer arguments that choose a configuration (Triton's
/// `key=`), after the key function when there is one.
using TuneKey = std::vector<std::int64_t>;

namespace detail {

/// How kernel Fn is traced: positional_call, or struct_call for a kernel
/// taking an arguments struct; `params` are the parameters either way (an
/// arguments struct's fields), `arguments` the struct or void.
template <auto Fn, bool = takes_argument_struct<Fn>>
struct kernel_call_of {
  using params = typename signature<decltype(Fn)>::params;
  using arguments = void;
  template <class... P>
  using call = positional_call<Fn, P...>;
};
template <auto Fn>
struct kernel_call_of<Fn, true> {
  using arguments = std::tuple_element_t<0, typename signature<decltype(Fn)>::params>;
  using params = field_types<arguments>;
  template <class... P>
  using call = struct_call<Fn, arguments, P...>;
};

template <class C>
struct config_traits {
  static constexpr bool is_config = false;
};
template <auto Fn, class Meta>
struct config_traits<Config<Fn, Meta>> {
  static constexpr bool is_config = true;
  using params = typename kernel_call_of<Fn>::params;
  using arguments = typename kernel_call_of<Fn>::arguments;
  using meta = Meta;
};

template <class C>
struct autotune_config_check {
  static_assert(config_traits<C>::is_config,
                "kiln: kl::autotune takes kl::config<kernel<...>>(options, meta) entries (see C above)");
  static constexpr bool value = true;
};

/// Configuration Index's kernel must have configuration 0's parameters.
template <std::size_t Index, class Expected, class Given>
struct autotune_parameters_check {
  static_assert(std::is_same_v<Expected, Given>,
                "kiln: autotune configuration Index has other kernel parameters than configuration 0 (see Index, "
                "Expected and Given above); every configuration launches with the same arguments");
  static constexpr bool value = true;
};

/// Configuration Index's meta must have configuration 0's type.
template <std::size_t Index, class Expected, class Given>
struct autotune_meta_check {
  static_assert(std::is_same_v<Expected, Given>,
                "kiln: autotune configuration Index has another meta type than configuration 0 (see Index, Expected "
                "and Given above); the launch grid reads one type");
  static constexpr bool value = true;
};

template <std::size_t I, class Tuple>
using parameter_or_void = typename std::conditional_t<(I < std::tuple_size_v<Tuple>), std::tuple_element<I, Tuple>,
                                                      std::type_identity<void>>::type;

// Parameter kinds for the checks below; void (an index past the last
// parameter, reported by its own assert) passes.
template <class Param>
constexpr bool is_integer_parameter() {
  if constexpr (std::is_void_v<Param>) return true;
  else if constexpr (Pointer<Param>) return false;
  else return ir::is_integer(dtype_of<Param>);
}
template <class Param>
constexpr bool is_pointer_parameter() {
  if constexpr (std::is_void_v<Param>) return true;
  else return Pointer<Param>;
}

/// Key argument Index must be an integer parameter of the kernel.
template <std::size_t Index, std::size_t Count, class Param>
struct autotune_key_check {
  static_assert(Index < Count, "kiln: autotune key names argument Index, but the kernel has Count parameters");
  static_assert(is_integer_parameter<Param>(),
                "kiln: autotune key argument Index is not an integer kernel parameter (see Param above)");
  static constexpr bool value = true;
};

/// reset_to_zero argument Index must be a pointer parameter of the kernel.
template <std::size_t Index, std::size_t Count, class Param>
struct autotune_reset_check {
  static_assert(Index < Count,
                "kiln: autotune reset_to_zero names argument Index, but the kernel has Count parameters");
  static_assert(is_pointer_parameter<Param>(),
                "kiln: autotune reset_to_zero argument Index is not a pointer kernel parameter (see Param above)");
  static constexpr bool value = true;
};

/// Configuration Index's kernel must take configuration 0's arguments struct
/// (or, as it does, none).
template <std::size_t Index, class Expected, class Given>
struct autotune_arguments_check {
  static_assert(std::is_same_v<Expected, Given>,
                "kiln: autotune configuration Index takes another arguments struct than configuration 0 (see Index, "
                "Expected and Given above; void: positional parameters)");
  static constexpr bool value = true;
};

/// An autotuned launch's grid is a kl::Grid or a callable taking the meta.
template <class Meta, class GridSpec>
struct autotune_grid_check {
  static_assert(std::is_convertible_v<GridSpec, Grid> || std::is_invocable_r_v<Grid, const GridSpec&, const Meta&>,
                "kiln: an autotuned launch's grid is a kl::Grid or a callable taking the configuration's meta (const "
                "Meta&) and returning a kl::Grid (see Meta and GridSpec above)");
  static constexpr bool value = true;
};

/// "matmul<64, 64>" from "kernels::matmul<64, 64>".
inline std::string without_namespace(std::string_view display) {
  const std::size_t colon = display.substr(0, display.find('<')).rfind("::");
  return std::string(colon == std::string_view::npos ? display : display.substr(colon + 2));
}

/// "matmul" from configuration kernel "kernels::matmul<64, 64>".
template <auto Fn, class Meta>
std::string kernel_base_name(const Config<Fn, Meta>&) {
  const std::string display = without_namespace(kernel_display_name<Fn>());
  return display.substr(0, display.find('<'));
}

/// Zeroes the elements of one reset_to_zero buffer on its device.
template <class T>
void autotune_zero_fill(Ptr<Scalar<T>> data, i32 n) {
  auto offsets = program_id(0) * 1024 + arange<1024>();
  store(data + offsets, zeros<Scalar<T>, 1024>(), offsets < n);
}

template <class T>
void zero_buffer(const Device& device, const Buffer<T>& buffer) {
  if (buffer.size() == 0) return;
  compile<autotune_zero_fill<T>>().launch_on(device, Grid(static_cast<int>((buffer.size() + 1023) / 1024)), buffer,
                                             buffer.size());
}

}  // namespace detail

/// A kernel compiled for several configurations; launch() launches the one
/// chosen for the arguments' shape key. Copies share the compiled
/// configurations and the choices made; key(), prune(), reset_to_zero() and
/// measure_with() return a copy with their setting and no choices yet.
template <class Meta, class... Params>
class Autotuned {
 public:
  /// One configuration as compiled (in parallel, on the first launch).
  struct Compiled {
    /// "matmul<64, 64> num_warps=4 num_stages=3".
    std::string description;
    CompileOptions options;
    Meta meta;
    /// None when it did not compile; `error` then says why.
    std::optional<Kernel<Params...>> kernel;
    std::string error;
    /// The thread that traced it, and how long that took.
    std::thread::id thread;
    double milliseconds = 0;
  };
  /// How a configuration is built: its description, options, meta and the
  /// tracing (autotune() makes these).
  struct Entry {
    std::string description;
    CompileOptions options;
    Meta meta;
    std::function<std::shared_ptr<const runtime::Program>()> build;
  };
  /// Maps the key arguments' values to the key (e.g. rounds them up to
  /// powers of two, so that nearby shapes share one choice).
  using KeyFunction = std::function<TuneKey(TuneKey)>;
  /// True drops the configuration for the key before any is measured
  /// (Triton's prune_configs_by).
  using PruneFunction = std::function<bool(const Meta&, const CompileOptions&, const TuneKey&)>;

  /// `parameter_names`: the kernel's registered names (empty: unnamed).
  Autotuned(std::string name, std::vector<std::string> parameter_names, std::vector<Entry> entries)
      : name_(std::move(name)),
        parameter_names_(std::move(parameter_names)),
        compilation_(std::make_shared<Compilation>()),
        choices_(std::make_shared<Choices>()) {
    compilation_->entries = std::move(entries);
  }

  /// The kernel's name without template arguments ("matmul").
  const std::string& name() const { return name_; }

  /// Chooses per the values of integer arguments I… (0-based), mapped by
  /// `function` when given. Without a key every launch shares one choice.
  template <std::size_t... I>
  Autotuned key(KeyFunction function = {}) const {
    using Tuple = std::tuple<Params...>;
    static_assert(
        (detail::autotune_key_check<I, sizeof...(Params), detail::parameter_or_void<I, Tuple>>::value && ...));
    Autotuned tuned = fresh();
    tuned.key_ = [function](const std::vector<runtime::KernelArgument>& arguments) {
      TuneKey key{integer_value<std::tuple_element_t<I, Tuple>>(arguments[I])...};
      return function ? function(std::move(key)) : key;
    };
    return tuned;
  }

  /// Drops, per key, the configurations `drop` returns true for.
  Autotuned prune(PruneFunction drop) const {
    Autotuned tuned = fresh();
    tuned.prune_ = std::move(drop);
    return tuned;
  }

  /// Zeroes the buffers of pointer arguments I… (0-based) before each timed
  /// launch, and once more after measuring, before the launch that follows:
  /// a kernel that accumulates into them (atomics) then sees zeros every
  /// time, as it would without tuning.
  template <std::size_t... I>
  Autotuned reset_to_zero() const {
    using Tuple = std::tuple<Params...>;
    static_assert(
        (detail::autotune_reset_check<I, sizeof...(Params), detail::parameter_or_void<I, Tuple>>::value && ...));
    Autotuned tuned = fresh();
    tuned.reset_ = {I...};
    return tuned;
  }

  /// Chooses by `measurement` on every device instead of the default
  /// (median GPU time on `cuda`, the first usable configuration elsewhere):
  /// a cost model, or a stand-in timer in tests.
  Autotuned measure_with(runtime::Measurement measurement) const {
    Autotuned tuned = fresh();
    tuned.measurement_ = std::move(measurement);
    return tuned;
  }

  /// Every configuration, compiled: the first call traces them all, each on
  /// its own thread, and waits for them.
  const std::vector<Compiled>& compiled() const {
    Compilation& c = *compilation_;
    std::call_once(c.once, [&c] {
      c.results.resize(c.entries.size());
      std::vector<std::future<void>> pending;
      for (std::size_t i = 0; i < c.entries.size(); ++i)
        pending.push_back(std::async(std::launch::async, [&c, i] { compile_one(c.entries[i], c.results[i]); }));
      for (std::future<void>& f : pending) f.get();
    });
    return c.results;
  }

  /// The choice made for `key` so far, if any.
  std::optional<runtime::TuningChoice> choice(const TuneKey& key) const {
    std::lock_guard lock(choices_->mutex);
    const auto found = choices_->by_key.find(key);
    if (found == choices_->by_key.end()) return std::nullopt;
    return found->second;
  }

  /// Launches the configuration chosen for the arguments' key (choosing it
  /// first when the key is new) over `grid`: a kl::Grid, or a callable that
  /// takes the configuration's meta and returns one. The arguments are
  /// checked against the kernel's parameters as Kernel::launch checks them.
  template <class GridSpec, class... Args>
  runtime::LaunchStats launch(const GridSpec& grid, const Args&... args) const {
    return launch_on(detail::device_of(args...), grid, args...);
  }

  template <class GridSpec, class... Args>
  runtime::LaunchStats launch_on(const Device& device, const GridSpec& grid, const Args&... args) const {
    static_assert(detail::autotune_grid_check<Meta, GridSpec>::value);
    static_assert(detail::launch_argument_count_fits<sizeof...(Params), sizeof...(Args)>());
    return launch_marshalled(device, grid, marshal(std::index_sequence_for<Args...>{}, args...),
                             [&] { zero_reset_buffers(device, args...); });
  }

  /// Launches with arguments already checked and marshalled, one per
  /// parameter; `zero` zeroes the reset_to_zero buffers among them.
  template <class GridSpec>
  runtime::LaunchStats launch_marshalled(const Device& device, const GridSpec& grid,
                                         const std::vector<runtime::KernelArgument>& marshalled,
                                         const std::function<void()>& zero) const {
    static_assert(detail::autotune_grid_check<Meta, GridSpec>::value);
    const Compiled& chosen = compiled()[choose(device, grid, marshalled, zero)];
    return chosen.kernel->launch_arguments(device, grid_of(grid, chosen.meta), marshalled);
  }

  /// Parameter `index` in messages: its name, or `parameter N (type)`.
  std::string parameter_label(std::size_t index) const {
    const std::vector<ir::Type> types{ir_type<Params>()...};
    return ir::parameter_label(parameter_names_[index], index, types[index]);
  }

  /// The 0-based indices of the reset_to_zero arguments.
  const std::vector<std::size_t>& reset_arguments() const { return reset_; }

 private:
  struct Compilation {
    std::vector<Entry> entries;
    std::once_flag once;
    std::vector<Compiled> results;
  };
  struct Choices {
    std::mutex mutex;
    std::map<TuneKey, runtime::TuningChoice> by_key;
    std::unique_ptr<runtime::CompileCache> cache;  // made on the first measured choice
  };

  Autotuned fresh() const {
    Autotuned copy = *this;
    copy.choices_ = std::make_shared<Choices>();
    return copy;
  }

  static void compile_one(const Entry& entry, Compiled& result) {
    const auto start = std::chrono::steady_clock::now();
    result.description = entry.description;
    result.options = entry.options;
    result.meta = entry.meta;
    result.thread = std::this_thread::get_id();
    try {
      result.kernel.emplace(entry.build());
    } catch (const std::exception& e) {
      result.error = e.what();
    }
    result.milliseconds = detail::milliseconds_since(start);
  }

  template <class Param>
  static std::int64_t integer_value(const runtime::KernelArgument& argument) {
    storage_of<Param> value;
    std::memcpy(&value, &argument.bits, sizeof value);
    return static_cast<std::int64_t>(value);
  }

  static std::string key_text(const TuneKey& key) {
    std::string text = "(";
    for (std::size_t i = 0; i < key.size(); ++i) text += (i ? ", " : "") + std::to_string(key[i]);
    return text + ")";
  }

  template <class GridSpec>
  static Grid grid_of(const GridSpec& grid, const Meta& meta) {
    if constexpr (std::is_invocable_v<const GridSpec&, const Meta&>) return grid(meta);
    else return Grid(grid);
  }

  template <std::size_t... I, class... Args>
  std::vector<runtime::KernelArgument> marshal(std::index_sequence<I...>, const Args&... args) const {
    static_assert((detail::launch_argument_fits<I, Params, Args>() && ...));
    return {detail::to_argument<Params>(args, name_, [&] { return parameter_label(I); })...};
  }

  template <class... Args>
  void zero_reset_buffers(const Device& device, const Args&... args) const {
    std::size_t index = 0;
    auto visit = [&](const auto& argument) {
      if constexpr (detail::is_buffer<std::remove_cvref_t<decltype(argument)>>::value)
        if (std::find(reset_.begin(), reset_.end(), index) != reset_.end()) detail::zero_buffer(device, argument);
      ++index;
    };
    (visit(args), ...);
  }

  template <class GridSpec>
  std::size_t choose(const Device& device, const GridSpec& grid, const std::vector<runtime::KernelArgument>& marshalled,
                     const std::function<void()>& zero) const {
    const TuneKey key = key_ ? key_(marshalled) : TuneKey{};
    const std::vector<Compiled>& configurations = compiled();
    std::lock_guard lock(choices_->mutex);
    if (const auto found = choices_->by_key.find(key); found != choices_->by_key.end()) return found->second.index;
    // Launches that only record (kiln dump) are not timed.
    std::optional<runtime::Measurement> measurement =
        measurement_ ? measurement_ : runtime::default_measurement(device);
    if (LaunchRecorder::active()) measurement.reset();
    if (measurement && !choices_->cache)
      choices_->cache = std::make_unique<runtime::CompileCache>(runtime::tuning_cache_directory());
    runtime::TuningRequest request;
    request.kernel = name_;
    request.key = key_text(key);
    request.device = runtime::device_description(device);
    request.measurement = measurement;
    request.cache = measurement ? choices_->cache.get() : nullptr;
    bool launched = false;
    for (const Compiled& c : configurations) {
      std::string unusable = !c.kernel                                  ? "does not compile: " + c.error
                             : prune_ && prune_(c.meta, c.options, key) ? "pruned for this key"
                                                                        : "";
      request.candidates.push_back({c.description, std::move(unusable),
                                    [&] { c.kernel->program_for_arguments(marshalled)->compile_for(device); }, zero,
                                    [&] {
                                      launched = true;
                                      c.kernel->launch_arguments(device, grid_of(grid, c.meta), marshalled);
                                    }});
    }
    runtime::TuningChoice choice = runtime::choose_configuration(request);
    if (launched) zero();
    return choices_->by_key.emplace(key, std::move(choice)).first->second.index;
  }

  std::string name_;
  std::vector<std::string> parameter_names_;
  std::shared_ptr<Compilation> compilation_;
  std::shared_ptr<Choices> choices_;
  std::function<TuneKey(const std::vector<runtime::KernelArgument>&)> key_;
  PruneFunction prune_;
  std::vector<std::size_t> reset_;
  std::optional<runtime::Measurement> measurement_;
};

namespace detail {

template <class Meta, class Params>
struct autotuned_type;
template <class Meta, class... P>
struct autotuned_type<Meta, std::tuple<P...>> {
  using type = Autotuned<Meta, P...>;
};

/// Member designates a field of arguments struct Args.
template <class Args, class Member>
inline constexpr bool is_field_of =
    std::is_member_object_pointer_v<Member> && std::is_same_v<typename member_class<Member>::type, Args>;

/// A key or reset_to_zero member must be a field of the kernel's arguments struct.
template <class Args, class Member>
struct autotune_field_check {
  static_assert(is_field_of<Args, Member>,
                "kiln: autotune names a member that is not a field of the kernel's arguments struct (see Args and "
                "Member above); write &Args<>::field");
  static constexpr bool value = true;
};

}  // namespace detail

/// kl::autotune of a kernel whose one parameter is arguments struct Args:
/// launched as StructKernel is, with designated initialisers; key() and
/// reset_to_zero() name fields (`.key<&Args<>::n>()`), the rest is
/// Autotuned's.
template <class Args, class Meta>
class StructAutotuned {
  using Host = detail::host_struct<Args>;
  using Fields = detail::field_types<Args>;
  using Flat = typename detail::autotuned_type<Meta, Fields>::type;

 public:
  using Compiled = typename Flat::Compiled;
  using KeyFunction = typename Flat::KeyFunction;
  using PruneFunction = typename Flat::PruneFunction;

  explicit StructAutotuned(Flat flat) : flat_(std::move(flat)) {}

  const std::string& name() const { return flat_.name(); }

  /// Chooses per the values of integer fields Field…, mapped by `function`
  /// when given.
  template <auto... Field>
  StructAutotuned key(KeyFunction function = {}) const {
    static_assert((detail::autotune_field_check<Args, decltype(Field)>::value && ...));
    // Past a failed check, nothing more: the assert is the one error.
    if constexpr ((detail::is_field_of<Args, decltype(Field)> && ...))
      return StructAutotuned(flat_.template key<detail::field_index<Args, Field>()...>(std::move(function)));
    else return *this;
  }
  /// Zeroes the buffers of pointer fields Field… before each timed launch
  /// and after measuring (Autotuned::reset_to_zero).
  template <auto... Field>
  StructAutotuned reset_to_zero() const {
    static_assert((detail::autotune_field_check<Args, decltype(Field)>::value && ...));
    if constexpr ((detail::is_field_of<Args, decltype(Field)> && ...))
      return StructAutotuned(flat_.template reset_to_zero<detail::field_index<Args, Field>()...>());
    else return *this;
  }
  StructAutotuned prune(PruneFunction drop) const { return StructAutotuned(flat_.prune(std::move(drop))); }
  StructAutotuned measure_with(runtime::Measurement measurement) const {
    return StructAutotuned(flat_.measure_with(std::move(measurement)));
  }

  const std::vector<Compiled>& compiled() const { return flat_.compiled(); }
  std::optional<runtime::TuningChoice> choice(const TuneKey& key) const { return flat_.choice(key); }

  /// Launches the configuration chosen for the arguments' key over `grid`
  /// (a kl::Grid or a callable taking the meta) on the device of the Buffer
  /// fields.
  template <class GridSpec>
  runtime::LaunchStats launch(const GridSpec& grid, const Host& args) const {
    return launch_on(detail::device_of_fields<Args>(args), grid, args);
  }
  template <class GridSpec>
  runtime::LaunchStats launch_on(const Device& device, const GridSpec& grid, const Host& args) const {
    const std::vector<runtime::KernelArgument> marshalled =
        detail::marshal_fields<Args>(args, name(), [&](std::size_t index) { return flat_.parameter_label(index); });
    return flat_.launch_marshalled(device, grid, marshalled, [&] { zero_reset_fields(device, args); });
  }

 private:
  void zero_reset_fields(const Device& device, const Host& args) const {
    const auto fields = detail::host_fields<Args>(args);
    const std::vector<std::size_t>& reset = flat_.reset_arguments();
    [&]<std::size_t... I>(std::index_sequence<I...>) {
      auto visit = [&]<std::size_t Index>(std::integral_constant<std::size_t, Index>) {
        if constexpr (Pointer<std::tuple_element_t<Index, Fields>>)
          if (std::find(reset.begin(), reset.end(), Index) != reset.end())
            detail::zero_buffer(device, std::get<Index>(fields).value());
      };
      (visit(std::integral_constant<std::size_t, I>{}), ...);
    }(std::make_index_sequence<std::tuple_size_v<Fields>>{});
  }

  Flat flat_;
};

namespace detail {

template <auto Fn, class Meta, class... P>
typename Autotuned<Meta, P...>::Entry autotune_entry(const Config<Fn, Meta>& c, std::tuple<P...>*) {
  using Call = typename kernel_call_of<Fn>::template call<P...>;
  return {without_namespace(kernel_display_name<Fn>()) + " num_warps=" + std::to_string(c.options.num_warps) +
              " num_stages=" + std::to_string(c.options.num_stages) +
              (c.options.max_registers > 0 ? " max_registers=" + std::to_string(c.options.max_registers) : ""),
          c.options, c.meta, [options = c.options] {
            return build_program(Call::display_name(), {ir_type<P>()...}, Call::names(), Call::trace, options);
          }};
}

/// The parameter names of configuration `c`'s kernel template: registered
/// names, or an arguments struct's field names.
template <auto Fn, class Meta, class... P>
std::vector<std::string> config_parameter_names(const Config<Fn, Meta>&, std::tuple<P...>*) {
  return kernel_call_of<Fn>::template call<P...>::names();
}

template <class First, class... Configs, std::size_t... I>
auto autotune_from(std::index_sequence<I...>, const First& first, const Configs&... rest) {
  using Params = typename config_traits<First>::params;
  using Meta = typename config_traits<First>::meta;
  static_assert((autotune_parameters_check<I + 1, Params, typename config_traits<Configs>::params>::value && ...));
  static_assert((autotune_meta_check<I + 1, Meta, typename config_traits<Configs>::meta>::value && ...));
  using Arguments = typename config_traits<First>::arguments;
  static_assert((autotune_arguments_check<I + 1, Arguments, typename config_traits<Configs>::arguments>::value && ...));
  using Tuned = typename autotuned_type<Meta, Params>::type;
  // Past a failed check, build nothing: the assert is the one error.
  if constexpr ((std::is_same_v<Params, typename config_traits<Configs>::params> && ...) &&
                (std::is_same_v<Meta, typename config_traits<Configs>::meta> && ...) &&
                (std::is_same_v<Arguments, typename config_traits<Configs>::arguments> && ...)) {
    Tuned tuned(
        kernel_base_name(first), config_parameter_names(first, static_cast<Params*>(nullptr)),
        {autotune_entry(first, static_cast<Params*>(nullptr)), autotune_entry(rest, static_cast<Params*>(nullptr))...});
    if constexpr (std::is_void_v<Arguments>) return tuned;
    else return StructAutotuned<Arguments, Meta>(std::move(tuned));
  }
}

}  // namespace detail

/// The kernel compiled for each configuration (kl::config entries, in order
/// of preference: on `cpu` and `emu` the first that compiles and is not
/// pruned launches).
template <class... Configs>
auto autotune(const Configs&... configs) {
  static_assert(sizeof...(Configs) > 0, "kiln: kl::autotune needs at least one kl::config");
  static_assert((detail::autotune_config_check<Configs>::value && ...));
  if constexpr (sizeof...(Configs) > 0)
    return detail::autotune_from(std::make_index_sequence<sizeof...(Configs) - 1>{}, configs...);
}

}  // namespace kiln
