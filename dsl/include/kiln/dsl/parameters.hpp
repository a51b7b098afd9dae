// Kernel parameters in the user's words: names registered with
// KILN_PARAMETERS, and launch-type errors whose text names the parameter and
// both types.
//
// C++20 cannot read a function's parameter names, so a kernel template gives
// them once, next to its declaration, at global scope:
//
//   namespace app { template <int BLOCK> void scale(kl::Ptr<kl::f32> x, kl::i32 n); }
//   KILN_PARAMETERS(app::scale, "x", "n");
//
// The registration is keyed by the template's qualified name, so it covers
// every instantiation and every kl::compile of it; a kernel without one has
// its parameters called `parameter 2 (i32)` in messages.
#pragma once

#include <algorithm>
#include <cstddef>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

#include "kiln/dsl/traits.hpp"
#include "kiln/runtime/buffer.hpp"

namespace kiln {

namespace detail {

/// A string usable as a template argument; g++ prints it as text in errors.
template <std::size_t N>
struct fixed_string {
  char chars[N]{};
  constexpr fixed_string() = default;
  constexpr fixed_string(const char (&text)[N]) { std::copy_n(text, N, chars); }
  constexpr std::string_view view() const { return {chars, N - 1}; }
};

/// "app::scale<128>" for kernel function Fn, as the compiler spells it.
template <auto Fn>
constexpr std::string_view kernel_display_name() {
  std::string_view f = __PRETTY_FUNCTION__;
  auto start = f.find("Fn = ") + 5;
  auto end = f.find_first_of(";]", start);
  return f.substr(start, end - start);
}

/// "app::scale": the kernel template's qualified name, without its arguments.
template <auto Fn>
constexpr fixed_string<kernel_display_name<Fn>().substr(0, kernel_display_name<Fn>().find('<')).size() + 1>
kernel_template_name() {
  constexpr std::string_view display = kernel_display_name<Fn>();
  constexpr std::string_view name = display.substr(0, display.find('<'));
  fixed_string<name.size() + 1> out;
  std::copy_n(name.data(), name.size(), out.chars);
  return out;
}

}  // namespace detail

/// The parameter names of kernel template Kernel, as KILN_PARAMETERS gave
/// them; `named` is false for a kernel without a registration.
template <detail::fixed_string Kernel>
struct kernel_parameters {
  static constexpr bool named = false;
};

namespace detail {

template <std::size_t Names, std::size_t Parameters>
struct parameter_names_count_check {
  static_assert(Names == Parameters,
                "kiln: KILN_PARAMETERS gives the kernel a different number of names than it has parameters (see Names "
                "and Parameters above)");
  static constexpr bool value = true;
};

/// The names registered for kernel function Fn with Count parameters, or
/// none (an empty vector) where it has no registration.
template <auto Fn, std::size_t Count>
std::vector<std::string> registered_parameter_names() {
  using Registered = kernel_parameters<kernel_template_name<Fn>()>;
  if constexpr (Registered::named) {
    static_assert(parameter_names_count_check<std::size(Registered::names), Count>::value);
    return {std::begin(Registered::names), std::end(Registered::names)};
  } else {
    return {};
  }
}

/// Writes `Param`'s DSL spelling ("Ptr<f16>", "i32") through `put`.
template <class Param, class Put>
constexpr void put_parameter_type(Put& put) {
  if constexpr (Pointer<Param>) {
    put("Ptr<");
    put(dtype_name_v<storage_of<pointee_of<Param>>>);
    put(">");
  } else {
    put(dtype_name_v<storage_of<Param>>);
  }
}

template <class T>
struct is_buffer : std::false_type {};
template <class T>
struct is_buffer<Buffer<T>> : std::true_type {
  using element = T;
};

/// "double": type T as the compiler spells it.
template <class T>
constexpr std::string_view compiler_type_name() {
  std::string_view f = __PRETTY_FUNCTION__;
  auto start = f.find("T = ") + 4;
  auto end = f.find_first_of(";]", start);
  return f.substr(start, end - start);
}

/// Writes launch argument type Arg ("Buffer<bf16>", "double") through `put`.
template <class Arg, class Put>
constexpr void put_argument_type(Put& put) {
  using A = std::remove_cvref_t<Arg>;
  if constexpr (is_buffer<A>::value) {
    put("Buffer<");
    put(dtype_name_v<typename is_buffer<A>::element>);
    put(">");
  } else {
    put(compiler_type_name<A>());
  }
}

/// Writes what a parameter of type Param accepts at launch through `put`.
template <class Param, class Put>
constexpr void put_accepted_arguments(Put& put) {
  if constexpr (Pointer<Param>) {
    put("a Buffer<");
    put(dtype_name_v<storage_of<pointee_of<Param>>>);
    put(">");
  } else if constexpr (std::is_same_v<storage_of<Param>, bool>) {
    put("a bool");
  } else if constexpr (ir::is_integer(dtype_of<Param>)) {
    put("a C++ integer");
  } else {
    put("a C++ number");
  }
}

/// Renders the message `write(put)` produces into a fixed_string.
template <auto Write>
constexpr auto render_message() {
  constexpr std::size_t size = [] {
    std::size_t n = 0;
    auto put = [&](std::string_view text) { n += text.size(); };
    Write(put);
    return n;
  }();
  fixed_string<size + 1> out;
  std::size_t n = 0;
  auto put = [&](std::string_view text) {
    for (char c : text) out.chars[n++] = c;
  };
  Write(put);
  return out;
}

template <class Put>
constexpr void put_number(Put& put, std::size_t value) {
  char digits[20]{};
  std::size_t count = 0;
  do {
    digits[count++] = static_cast<char>('0' + value % 10);
    value /= 10;
  } while (value != 0);
  std::reverse(digits, digits + count);
  put(std::string_view(digits, count));
}

/// "launch argument 1 is Buffer<bf16>; parameter 1 is Ptr<f16>, which takes a
/// Buffer<f16>" (1-based, as every message counts parameters).
template <std::size_t Index, class Param, class Arg>
constexpr auto launch_mismatch_message() {
  return render_message<[](auto& put) {
    put("launch argument ");
    put_number(put, Index + 1);
    put(" is ");
    put_argument_type<Arg>(put);
    put("; parameter ");
    put_number(put, Index + 1);
    put(" is ");
    put_parameter_type<Param>(put);
    put(", which takes ");
    put_accepted_arguments<Param>(put);
  }>();
}

/// "the kernel has 4 parameters but the launch passes 3 arguments".
template <std::size_t Expected, std::size_t Given>
constexpr auto launch_count_message() {
  return render_message<[](auto& put) {
    put("the kernel has ");
    put_number(put, Expected);
    put(Expected == 1 ? " parameter" : " parameters");
    put(" but the launch passes ");
    put_number(put, Given);
    put(Given == 1 ? " argument" : " arguments");
  }>();
}

}  // namespace detail

/// Deliberately incomplete: a launch whose arguments do not fit the kernel
/// names this type, and g++ prints its argument, the message, in the error.
template <detail::fixed_string Message>
struct launch_error;

}  // namespace kiln

/// Names the parameters of kernel template `kernel` (its qualified name, from
/// the global namespace, without template arguments); write it at global
/// scope after the kernel's declaration. A name that names no declaration is
/// a compile error.
#define KILN_PARAMETERS(kernel, ...)                                    \
  template <>                                                           \
  struct kiln::kernel_parameters<kiln::detail::fixed_string(#kernel)> { \
    static_assert([] {                                                  \
      using ::kernel;                                                   \
      return true;                                                      \
    }());                                                               \
    static constexpr bool named = true;                                 \
    static constexpr std::string_view names[] = {__VA_ARGS__};          \
  }
