// The fuzz launch: argument values, deterministic buffer contents, one run on
// the interpreter and the comparison of two runs' buffers.
#include "interpreted_outcome.hpp"

#include <bit>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <new>
#include <stdexcept>

#include <sys/mman.h>
#include <unistd.h>

#include "findings.hpp"
#include "kiln/ir/numeric.hpp"

namespace kiln::fuzz {

namespace {

std::uint64_t mix(std::uint64_t x) {
  x += 0x9e3779b97f4a7c15ull;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
  return x ^ (x >> 31);
}

/// The bits of `value` rounded to the float dtype `t`.
std::uint64_t float_bits(ir::DType t, double value) {
  switch (t) {
    case ir::DType::f16: return half(value).bits;
    case ir::DType::bf16: return bfloat16(value).bits;
    case ir::DType::f32: return std::bit_cast<std::uint32_t>(static_cast<float>(value));
    case ir::DType::f64: return std::bit_cast<std::uint64_t>(value);
    case ir::DType::f8e4m3: return float8_e4m3(value).bits;
    case ir::DType::f8e5m2: return float8_e5m2(value).bits;
    default: return 0;
  }
}

/// The value of the float of dtype `t` whose bits are `bits`.
double float_value(ir::DType t, std::uint64_t bits) {
  switch (t) {
    case ir::DType::f16: return static_cast<float>(half::from_bits(static_cast<std::uint16_t>(bits)));
    case ir::DType::bf16: return static_cast<float>(bfloat16::from_bits(static_cast<std::uint16_t>(bits)));
    case ir::DType::f32: return std::bit_cast<float>(static_cast<std::uint32_t>(bits));
    case ir::DType::f64: return std::bit_cast<double>(bits);
    case ir::DType::f8e4m3: return static_cast<float>(float8_e4m3::from_bits(static_cast<std::uint8_t>(bits)));
    case ir::DType::f8e5m2: return static_cast<float>(float8_e5m2::from_bits(static_cast<std::uint8_t>(bits)));
    default: return 0.0;
  }
}

/// How many floats of `bytes` bytes lie between the two with bits `a` and
/// `b` (sign and magnitude mapped onto a line where neighbours differ by 1).
std::uint64_t ulps_apart(std::uint64_t a, std::uint64_t b, std::size_t bytes) {
  const std::uint64_t sign = std::uint64_t{1} << (8 * bytes - 1);
  auto ordered = [&](std::uint64_t x) { return x & sign ? sign - (x & ~sign) : sign + x; };
  const std::uint64_t p = ordered(a);
  const std::uint64_t q = ordered(b);
  return p > q ? p - q : q - p;
}

/// Whether elements `u` and `v` of dtype `t` count as equal: the same bits,
/// both NaN, or finite floats of 16 bits or more at most `ulps` apart.
bool same_element(ir::DType t, std::uint64_t u, std::uint64_t v, std::uint64_t ulps) {
  if (u == v) return true;
  if (!ir::is_float(t)) return false;
  const double x = float_value(t, u);
  const double y = float_value(t, v);
  if (std::isnan(x) && std::isnan(y)) return true;
  const auto bytes = static_cast<std::size_t>(ir::dtype_bytes(t));
  return ulps > 0 && bytes >= 2 && std::isfinite(x) && std::isfinite(y) && ulps_apart(u, v, bytes) <= ulps;
}

/// Element `index` of the buffer of argument `argument`.
std::uint64_t initial_element(ir::DType t, std::size_t argument, std::size_t index) {
  const std::uint64_t h = mix(argument * 0x10000 + index);
  if (ir::is_float(t)) {
    if (index % 53 == 0) return float_bits(t, -0.0);
    if (index % 59 == 0) return float_bits(t, INFINITY);
    if (index % 61 == 0) return float_bits(t, -INFINITY);
    if (index % 67 == 0) return float_bits(t, NAN);
    return float_bits(t, static_cast<double>(h % 4096) / 256.0 - 8.0);
  }
  if (t == ir::DType::i1) return h & 1;
  if (ir::is_unsigned_int(t)) return h % 64;
  return static_cast<std::uint64_t>(static_cast<std::int64_t>(h % 64) - 8);
}

std::uint64_t scalar_bits(const ir::Type& type, const ir::ArgumentFacts& facts, std::size_t index) {
  if (ir::is_float(type.dtype)) return float_bits(type.dtype, 1.5 + static_cast<double>(index) / 4.0);
  if (facts.equal_to_1 || type.dtype == ir::DType::i1) return 1;
  const std::uint64_t value = 48 + 16 * (index % 3);
  const auto divisibility = static_cast<std::uint64_t>(facts.divisibility);
  return divisibility > 1 ? value - value % divisibility : value;
}

ir::ArgumentFacts facts_of(const ir::Function& fn, std::size_t index) {
  return index < fn.argument_facts.size() ? fn.argument_facts[index] : ir::ArgumentFacts{};
}

/// While it lives, what the process writes to stdout (the interpreter's
/// `print`) goes to an in-memory file instead; text() reads it back.
class StdoutCapture {
 public:
  StdoutCapture() {
    std::fflush(stdout);
    saved_ = dup(STDOUT_FILENO);
    file_ = memfd_create("kiln-fuzz-stdout", 0);
    if (saved_ < 0 || file_ < 0 || dup2(file_, STDOUT_FILENO) < 0) {
      std::perror("ir_optimize_fuzz: capturing stdout");
      std::abort();
    }
  }
  ~StdoutCapture() {
    std::fflush(stdout);
    dup2(saved_, STDOUT_FILENO);
    close(saved_);
    close(file_);
  }
  StdoutCapture(const StdoutCapture&) = delete;
  StdoutCapture& operator=(const StdoutCapture&) = delete;

  std::string text() const {
    std::fflush(stdout);
    std::string out;
    char chunk[4096];
    for (off_t at = 0;;) {
      const ssize_t n = pread(file_, chunk, sizeof chunk, at);
      if (n <= 0) break;
      out.append(chunk, static_cast<std::size_t>(n));
      at += n;
    }
    return out;
  }

 private:
  int saved_;
  int file_;
};

std::string hex(std::uint64_t bits) {
  char text[24];
  std::snprintf(text, sizeof text, "0x%llx", static_cast<unsigned long long>(bits));
  return text;
}

}  // namespace

bool launchable(const ir::Function& fn) {
  for (std::size_t i = 0; i < fn.body.arguments.size(); ++i) {
    const ir::Type& type = fn.body.arguments[i]->type;
    if (type.is_pointer && facts_of(fn, i).divisibility > kBufferAlignment) return false;
  }
  return true;
}

LaunchMemory::LaunchMemory(const ir::Function& fn) {
  for (std::size_t i = 0; i < fn.body.arguments.size(); ++i) {
    const ir::Type& type = fn.body.arguments[i]->type;
    if (!type.is_pointer) {
      arguments_.push_back({scalar_bits(type, facts_of(fn, i), i), {}});
      continue;
    }
    const std::size_t bytes = kBufferElements * static_cast<std::size_t>(ir::dtype_bytes(type.dtype));
    auto* data = static_cast<std::byte*>(::operator new(bytes, std::align_val_t{kBufferAlignment}));
    buffers_.push_back({data, bytes, type.dtype, i});
    const auto begin = reinterpret_cast<std::uintptr_t>(data);
    arguments_.push_back({begin, {begin, begin + bytes, "%" + std::to_string(fn.body.arguments[i]->id)}});
  }
}

LaunchMemory::~LaunchMemory() {
  for (const Buffer& b : buffers_) ::operator delete(b.data, std::align_val_t{kBufferAlignment});
}

void LaunchMemory::reset() {
  for (const Buffer& b : buffers_) {
    const auto width = static_cast<std::size_t>(ir::dtype_bytes(b.dtype));
    for (std::size_t e = 0; e < kBufferElements; ++e) {
      const std::uint64_t bits = initial_element(b.dtype, b.argument, e);
      std::memcpy(b.data + e * width, &bits, width);  // little-endian: the low bytes
    }
  }
}

std::vector<std::vector<std::byte>> LaunchMemory::contents() const {
  std::vector<std::vector<std::byte>> out;
  for (const Buffer& b : buffers_) out.emplace_back(b.data, b.data + b.bytes);
  return out;
}

Outcome run(const ir::Function& fn, LaunchMemory& memory) {
  memory.reset();
  Outcome out;
  const StdoutCapture capture;
  try {
    const runtime::InterpretedKernel kernel(fn);
    kernel.launch(kGrid, memory.arguments(), 1);
  } catch (const runtime::KernelError& e) {
    require_one_line("interpreter fault", e.what());
    out.error = std::string("fault: ") + e.what();
  } catch (const std::invalid_argument& e) {
    require_one_line("interpreter", e.what());
    out.error = std::string("unsupported: ") + e.what();
  }
  out.printed = capture.text();
  out.buffers = memory.contents();
  return out;
}

std::string first_difference(const ir::Function& fn, const Outcome& a, const Outcome& b, std::uint64_t ulps) {
  std::size_t buffer = 0;
  for (const ir::Value* arg : fn.body.arguments) {
    if (!arg->type.is_pointer) continue;
    const std::vector<std::byte>& x = a.buffers.at(buffer);
    const std::vector<std::byte>& y = b.buffers.at(buffer);
    ++buffer;
    const auto width = static_cast<std::size_t>(ir::dtype_bytes(arg->type.dtype));
    for (std::size_t at = 0; at + width <= x.size(); at += width) {
      std::uint64_t u = 0;
      std::uint64_t v = 0;
      std::memcpy(&u, x.data() + at, width);
      std::memcpy(&v, y.data() + at, width);
      if (same_element(arg->type.dtype, u, v, ulps)) continue;
      return "buffer %" + std::to_string(arg->id) + " element " + std::to_string(at / width) + ": " + hex(u) +
             " before, " + hex(v) + " after";
    }
  }
  return "";
}

}  // namespace kiln::fuzz
