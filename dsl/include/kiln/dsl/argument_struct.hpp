// Kernel parameters as the fields of a struct, so that a launch names each
// argument with a designated initialiser:
//
//   template <class S = kl::traced>
//   struct ScaleArgs {
//     kl::param<S, kl::Ptr<kl::f32>> x;
//     kl::param<S, kl::i32> n;
//   };
//   template <int BLOCK> void scale(ScaleArgs<> a) { … a.x … a.n … }
//
//   kl::compile<scale<128>>().launch(grid, {.x = buffer, .n = 1000});
//
// The kernel sees ScaleArgs<kl::traced>, whose fields are DSL values; the
// launch builds ScaleArgs<kl::host>, whose fields hold a Buffer or a number
// and have no default, so a forgotten field does not compile. The fields'
// names become the parameters' names in every message.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <tuple>
#include <type_traits>
#include <utility>
#include <variant>
#include <vector>

#include "kiln/dsl/kernel.hpp"
#include "kiln/dsl/parameters.hpp"
#include "kiln/dsl/traits.hpp"
#include "kiln/ir/parameter_label.hpp"
#include "kiln/runtime/buffer.hpp"

namespace kiln {

template <class T>
class host_argument;

namespace detail {
template <class S, class T>
struct param_of;
template <class T>
struct param_of<traced, T> {
  using type = T;
};
template <class T>
struct param_of<host, T> {
  using type = host_argument<T>;
};
template <class T>
inline constexpr bool always_false = false;
}  // namespace detail

/// A field of an arguments struct of kind S (kl::traced or kl::host) for a
/// kernel parameter of type T (a Ptr or a scalar).
template <class S, class T>
using param = typename detail::param_of<S, T>::type;

/// A launch argument for a pointer parameter: the Buffer it points into.
template <class E>
class host_argument<Ptr<E>> {
 public:
  template <class Element>
  host_argument(const Buffer<Element>& buffer) : buffer_(&buffer) {
    if constexpr (!std::is_same_v<Element, storage_of<E>>)
      static_assert(sizeof(launch_error<detail::render_message<[](auto& put) {
                      put("a named launch argument is Buffer<");
                      put(dtype_name_v<Element>);
                      put(">; its field is Ptr<");
                      put(dtype_name_v<storage_of<E>>);
                      put(">, which takes a Buffer<");
                      put(dtype_name_v<storage_of<E>>);
                      put(">");
                    }>()>) != 0);
  }
  host_argument() {
    static_assert(detail::always_false<E>, "kiln: a field of the launch's arguments struct is missing");
  }
  const Buffer<storage_of<E>>& value() const { return *buffer_; }

 private:
  const Buffer<storage_of<E>>* buffer_;
};

/// A launch argument for a scalar parameter: the C++ number given, kept
/// as given so that the launch checks that it fits the parameter's dtype.
template <class C>
class host_argument<Scalar<C>> {
 public:
  template <class Number>
  host_argument(Number number) {
    if constexpr (!detail::argument_matches<Scalar<C>, Number>())
      static_assert(sizeof(launch_error<detail::render_message<[](auto& put) {
                      put("a named launch argument is ");
                      detail::put_argument_type<Number>(put);
                      put("; its field is ");
                      put(dtype_name_v<C>);
                      put(", which takes ");
                      detail::put_accepted_arguments<Scalar<C>>(put);
                    }>()>) != 0);
    else if constexpr (!integer) value_ = static_cast<Held>(number);
    else if constexpr (std::is_signed_v<Number>) value_ = static_cast<std::intmax_t>(number);
    else value_ = static_cast<std::uintmax_t>(number);
  }
  host_argument() {
    static_assert(detail::always_false<C>, "kiln: a field of the launch's arguments struct is missing");
  }
  /// Calls `use` with the number as given (widened, never narrowed).
  template <class Use>
  decltype(auto) visit(Use&& use) const {
    return std::visit(use, value_);
  }

 private:
  static constexpr bool integer = ir::is_integer(dtype_v<C>) && !std::is_same_v<C, bool>;
  using Held = std::conditional_t<std::is_same_v<C, bool>, bool, double>;
  std::conditional_t<integer, std::variant<std::intmax_t, std::uintmax_t>, std::variant<Held>> value_;
};

namespace detail {

/// Converts to anything: `T{any_field{}, …}` compiles for as many fields as
/// aggregate T has.
struct any_field {
  template <class T>
  operator T() const;
};

template <class T, std::size_t... I>
constexpr bool brace_initializable(std::index_sequence<I...>) {
  return requires { T{(static_cast<void>(I), any_field{})...}; };
}

inline constexpr std::size_t max_argument_fields = 20;

/// The number of fields of aggregate T: the most initialisers it takes.
template <class T, std::size_t N = max_argument_fields + 1>
constexpr std::size_t field_count() {
  if constexpr (N == 0 || brace_initializable<T>(std::make_index_sequence<N>{})) return N;
  else return field_count<T, N - 1>();
}

/// References to the fields of aggregate `object`, in order.
template <std::size_t N, class T>
constexpr auto tie_fields(T& o) {
  static_assert(N <= max_argument_fields, "kiln: an arguments struct has at most 20 fields");
  // clang-format off
  if constexpr (N == 1) { auto& [a] = o; return std::tie(a); }
  else if constexpr (N == 2) { auto& [a, b] = o; return std::tie(a, b); }
  else if constexpr (N == 3) { auto& [a, b, c] = o; return std::tie(a, b, c); }
  else if constexpr (N == 4) { auto& [a, b, c, d] = o; return std::tie(a, b, c, d); }
  else if constexpr (N == 5) { auto& [a, b, c, d, e] = o; return std::tie(a, b, c, d, e); }
  else if constexpr (N == 6) { auto& [a, b, c, d, e, f] = o; return std::tie(a, b, c, d, e, f); }
  else if constexpr (N == 7) { auto& [a, b, c, d, e, f, g] = o; return std::tie(a, b, c, d, e, f, g); }
  else if constexpr (N == 8) { auto& [a, b, c, d, e, f, g, h] = o; return std::tie(a, b, c, d, e, f, g, h); }
  else if constexpr (N == 9) { auto& [a, b, c, d, e, f, g, h, i] = o; return std::tie(a, b, c, d, e, f, g, h, i); }
  else if constexpr (N == 10) { auto& [a, b, c, d, e, f, g, h, i, j] = o; return std::tie(a, b, c, d, e, f, g, h, i, j); }
  else if constexpr (N == 11) { auto& [a, b, c, d, e, f, g, h, i, j, k] = o; return std::tie(a, b, c, d, e, f, g, h, i, j, k); }
  else if constexpr (N == 12) { auto& [a, b, c, d, e, f, g, h, i, j, k, l] = o; return std::tie(a, b, c, d, e, f, g, h, i, j, k, l); }
  else if constexpr (N == 13) { auto& [a, b, c, d, e, f, g, h, i, j, k, l, m] = o; return std::tie(a, b, c, d, e, f, g, h, i, j, k, l, m); }
  else if constexpr (N == 14) { auto& [a, b, c, d, e, f, g, h, i, j, k, l, m, n] = o; return std::tie(a, b, c, d, e, f, g, h, i, j, k, l, m, n); }
  else if constexpr (N == 15) { auto& [a, b, c, d, e, f, g, h, i, j, k, l, m, n, p] = o; return std::tie(a, b, c, d, e, f, g, h, i, j, k, l, m, n, p); }
  else if constexpr (N == 16) { auto& [a, b, c, d, e, f, g, h, i, j, k, l, m, n, p, q] = o; return std::tie(a, b, c, d, e, f, g, h, i, j, k, l, m, n, p, q); }
  else if constexpr (N == 17) { auto& [a, b, c, d, e, f, g, h, i, j, k, l, m, n, p, q, r] = o; return std::tie(a, b, c, d, e, f, g, h, i, j, k, l, m, n, p, q, r); }
  else if constexpr (N == 18) { auto& [a, b, c, d, e, f, g, h, i, j, k, l, m, n, p, q, r, s] = o; return std::tie(a, b, c, d, e, f, g, h, i, j, k, l, m, n, p, q, r, s); }
  else if constexpr (N == 19) { auto& [a, b, c, d, e, f, g, h, i, j, k, l, m, n, p, q, r, s, t] = o; return std::tie(a, b, c, d, e, f, g, h, i, j, k, l, m, n, p, q, r, s, t); }
  else if constexpr (N == 20) { auto& [a, b, c, d, e, f, g, h, i, j, k, l, m, n, p, q, r, s, t, u] = o; return std::tie(a, b, c, d, e, f, g, h, i, j, k, l, m, n, p, q, r, s, t, u); }
  // clang-format on
}

template <class Tied>
struct without_references;
template <class... F>
struct without_references<std::tuple<F&...>> {
  using type = std::tuple<std::remove_const_t<F>...>;
};
/// The field types of arguments struct A, as a std::tuple.
template <class A>
using field_types = typename without_references<decltype(tie_fields<field_count<A>()>(std::declval<A&>()))>::type;

template <class T>
struct static_object {
  const T value;
};
/// Never defined: only the addresses of its fields are used, at compile time.
template <class T>
extern const static_object<T> static_object_of;

/// The compiler's text for template argument `Field` (an address).
template <auto Field>
constexpr std::string_view field_address_text() {
  return __PRETTY_FUNCTION__;
}

/// "n" from the compiler's "(& static_object_of<…>.….Args<kiln::traced>::n)".
constexpr std::string_view member_name(std::string_view text) {
  const std::size_t start = text.find("Field = ");
  const std::size_t end = text.find_first_of(")];", start);
  std::size_t first = end;
  while (first > start) {
    const char c = text[first - 1];
    if (!(c == '_' || (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'))) break;
    --first;
  }
  return text.substr(first, end - first);
}

/// The name of field I of arguments struct A, read from the compiler's
/// text for the field's address (only at compile time: the object is never
/// defined).
template <class A, std::size_t I>
consteval std::string_view field_name() {
  constexpr auto fields = tie_fields<field_count<A>()>(static_object_of<A>.value);
  return member_name(field_address_text<&std::get<I>(fields)>());
}

/// The field names of arguments struct A, in order. clang before 18 cannot
/// take a field's address as a template argument: there they are unnamed.
template <class A>
std::vector<std::string> field_names() {
#if defined(__clang__) && __clang_major__ < 18
  return std::vector<std::string>(field_count<A>());
#else
  return [&]<std::size_t... I>(std::index_sequence<I...>) {
    return std::vector<std::string>{std::string(field_name<A, I>())...};
  }(std::make_index_sequence<field_count<A>()>{});
#endif
}

template <class Field>
constexpr bool argument_field_is_parameter() {
  constexpr bool scalar_or_pointer = [] {
    if constexpr (Numeric<Field> || Pointer<Field>) return std::is_same_v<shape_t<Field>, shape<>>;
    else return false;
  }();
  static_assert(scalar_or_pointer,
                "kiln: every field of an arguments struct is a kl::param<S, T> with T a kl::Ptr or a scalar type");
  return scalar_or_pointer;
}

/// Traces kernel Fn, whose one parameter is arguments struct Args with
/// fields F…: the struct is built from the traced parameters, one per field,
/// named after the fields.
template <auto Fn, class Args, class... F>
struct struct_call {
  static std::string_view display_name() { return kernel_display_name<Fn>(); }
  static std::vector<std::string> names() { return field_names<Args>(); }
  static void trace(const std::vector<ir::Value*>& args) {
    [&]<std::size_t... I>(std::index_sequence<I...>) { Fn(Args{F(args[I])...}); }(std::index_sequence_for<F...>{});
  }
};

template <class Args, class Fields>
struct struct_kernel_of;
template <class Args, class... F>
struct struct_kernel_of<Args, std::tuple<F...>> {
  using type = Kernel<F...>;
};

/// The launch's arguments struct for kernels taking arguments struct Args.
template <class Args>
using host_struct = typename argument_struct<Args>::host_type;

/// References to the fields of a launch's arguments struct (it has the
/// fields of Args, a kl::param of each, so as many).
template <class Args>
auto host_fields(const host_struct<Args>& args) {
  return tie_fields<std::tuple_size_v<field_types<Args>>>(args);
}

/// The device of the first Buffer field, else the default device.
template <class Args>
Device device_of_fields(const host_struct<Args>& args) {
  const Device* found = nullptr;
  std::apply(
      [&](const auto&... field) {
        auto visit = [&]<class T>(const host_argument<T>& a) {
          if constexpr (Pointer<T>)
            if (!found) found = &a.value().device();
        };
        (visit(field), ...);
      },
      host_fields<Args>(args));
  return found ? *found : Device::default_device();
}

/// Field `a` of parameter Param as the devices take it; `label()` names it
/// where its value does not fit.
template <class Param, class Given, class Label>
runtime::KernelArgument field_argument(const Given& a, std::string_view kernel, const Label& label) {
  static_assert(std::is_same_v<Given, host_argument<Param>>,
                "kiln: a field of the kl::host arguments struct is not the kl::param of the kl::traced one");
  if constexpr (Pointer<Param>) return to_argument<Param>(a.value(), kernel, label);
  else return a.visit([&](auto number) { return to_argument<Param>(number, kernel, label); });
}

/// The launch's fields, checked and marshalled, one per parameter;
/// `label(index)` names field `index` in messages.
template <class Args, class Label>
std::vector<runtime::KernelArgument> marshal_fields(const host_struct<Args>& args, std::string_view kernel,
                                                    const Label& label) {
  using Fields = field_types<Args>;
  const auto fields = host_fields<Args>(args);
  return [&]<std::size_t... I>(std::index_sequence<I...>) {
    return std::vector<runtime::KernelArgument>{
        field_argument<std::tuple_element_t<I, Fields>>(std::get<I>(fields), kernel, [&] { return label(I); })...};
  }(std::make_index_sequence<std::tuple_size_v<Fields>>{});
}

/// The class of pointer to member M (void when M is none).
template <class M>
struct member_class {
  using type = void;
};
template <class T, class C>
struct member_class<T C::*> {
  using type = C;
};

/// The index of the field that pointer to member Member of Args designates,
/// found by comparing addresses in the never-defined static object; the
/// field count when it designates none.
template <class Args, auto Member>
consteval std::size_t field_index() {
  constexpr auto fields = tie_fields<field_count<Args>()>(static_object_of<Args>.value);
  return [&]<std::size_t... I>(std::index_sequence<I...>) {
    std::size_t index = sizeof...(I);
    ((static_cast<const void*>(&std::get<I>(fields)) ==
              static_cast<const void*>(&(static_object_of<Args>.value.*Member))
          ? (index = I, true)
          : false) ||
     ...);
    return index;
  }(std::make_index_sequence<field_count<Args>()>{});
}

}  // namespace detail

/// A compiled kernel whose parameters are the fields of arguments struct
/// Args: launched with Args<kl::host>, usually written as designated
/// initialisers, `launch(grid, {.x = buffer, .n = 1000})`.
template <class Args>
class StructKernel {
  using Host = detail::host_struct<Args>;

 public:
  using Flat = typename detail::struct_kernel_of<Args, detail::field_types<Args>>::type;
  explicit StructKernel(Flat kernel) : kernel_(std::move(kernel)) {}

  const runtime::Program& program() const { return kernel_.program(); }
  const std::shared_ptr<const runtime::Program>& program_ptr() const { return kernel_.program_ptr(); }
  const ir::Function& ir() const { return kernel_.ir(); }
  const std::string& name() const { return kernel_.name(); }

  /// Runs the kernel over `grid` on the device of its Buffer fields.
  runtime::LaunchStats launch(Grid grid, const Host& args) const {
    return launch_on(detail::device_of_fields<Args>(args), grid, args);
  }
  runtime::LaunchStats launch_on(const Device& device, Grid grid, const Host& args) const {
    return kernel_.launch_arguments(device, grid, marshal(args));
  }
  /// The program a launch with these arguments runs.
  std::shared_ptr<const runtime::Program> program_for(const Host& args) const {
    return kernel_.program_for_arguments(marshal(args));
  }

 private:
  std::vector<runtime::KernelArgument> marshal(const Host& args) const {
    return detail::marshal_fields<Args>(
        args, name(), [&](std::size_t index) { return ir::parameter_label(kernel_.program().traced(), index); });
  }

  Flat kernel_;
};

namespace detail {
template <auto Fn, class Args, class... F>
StructKernel<Args> compile_struct(std::tuple<F...>*, const CompileOptions& options) {
  static_assert((argument_field_is_parameter<F>() && ...));
  return StructKernel<Args>(compile_with<struct_call<Fn, Args, F...>, F...>(options));
}
}  // namespace detail

/// Traces kernel function Fn, whose one parameter is an arguments struct
/// (cached per option set), as the positional compile does.
template <auto Fn>
  requires detail::takes_argument_struct<Fn>
auto compile(const CompileOptions& options = {}) {
  using Args = std::tuple_element_t<0, typename detail::signature<decltype(Fn)>::params>;
  return detail::compile_struct<Fn, Args>(static_cast<detail::field_types<Args>*>(nullptr), options);
}

}  // namespace kiln
