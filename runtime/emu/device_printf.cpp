// vprintf as CUDA defines it: a format string and a buffer holding the
// arguments packed at their natural alignment, floats promoted to double.
#include <cstdio>
#include <cstring>

#include "hooks.hpp"

namespace kiln::runtime::emu {

namespace {

/// Reads the next argument of `bytes` bytes from the buffer, aligned to its size.
template <class T>
T next_argument(const std::byte* arguments, std::size_t& offset) {
  offset = (offset + sizeof(T) - 1) / sizeof(T) * sizeof(T);
  T value;
  std::memcpy(&value, arguments + offset, sizeof(T));
  offset += sizeof(T);
  return value;
}

template <class... Values>
void append_formatted(std::string& out, const std::string& spec, Values... values) {
  char buffer[512];
  const int written = std::snprintf(buffer, sizeof buffer, spec.c_str(), values...);
  if (written < 0) return;
  if (static_cast<std::size_t>(written) < sizeof buffer) {
    out.append(buffer, static_cast<std::size_t>(written));
    return;
  }
  std::string large(static_cast<std::size_t>(written) + 1, '\0');
  std::snprintf(large.data(), large.size(), spec.c_str(), values...);
  out.append(large.data(), static_cast<std::size_t>(written));
}

}  // namespace

std::string format_device_printf(const char* format, const std::byte* arguments) {
  std::string out;
  std::size_t offset = 0;
  for (const char* p = format; *p;) {
    if (*p != '%') {
      out += *p++;
      continue;
    }
    if (p[1] == '%') {
      out += '%';
      p += 2;
      continue;
    }
    // %[flags][width][.precision][length]conversion; '*' widths are ints in the buffer.
    std::string spec = "%";
    ++p;
    while (*p && std::strchr("-+ #0", *p)) spec += *p++;
    auto number_or_star = [&] {
      if (*p == '*') {
        spec += std::to_string(next_argument<int>(arguments, offset));
        ++p;
      }
      while (*p >= '0' && *p <= '9') spec += *p++;
    };
    number_or_star();
    if (*p == '.') {
      spec += *p++;
      number_or_star();
    }
    bool wide = false;
    while (*p && std::strchr("hlLqjzt", *p)) wide |= std::strchr("lLqjzt", *p++) != nullptr;
    const char conversion = *p ? *p++ : '\0';
    switch (conversion) {
      case 'd':
      case 'i':
        if (wide) append_formatted(out, spec + "ll" + conversion, next_argument<long long>(arguments, offset));
        else append_formatted(out, spec + conversion, next_argument<int>(arguments, offset));
        break;
      case 'u':
      case 'o':
      case 'x':
      case 'X':
        if (wide) append_formatted(out, spec + "ll" + conversion, next_argument<unsigned long long>(arguments, offset));
        else append_formatted(out, spec + conversion, next_argument<unsigned>(arguments, offset));
        break;
      case 'c': append_formatted(out, spec + conversion, next_argument<int>(arguments, offset)); break;
      case 'f':
      case 'F':
      case 'e':
      case 'E':
      case 'g':
      case 'G':
      case 'a':
      case 'A': append_formatted(out, spec + conversion, next_argument<double>(arguments, offset)); break;
      case 's': {
        const char* text = next_argument<const char*>(arguments, offset);
        append_formatted(out, spec + conversion, text ? text : "(null)");
        break;
      }
      case 'p': append_formatted(out, spec + conversion, next_argument<void*>(arguments, offset)); break;
      default: out += spec + conversion; break;
    }
  }
  return out;
}

}  // namespace kiln::runtime::emu
