// The hooks: thread and program indices, barriers, fences, warp shuffles and
// votes, mma.sync, ldmatrix, wgmma, NVVM math, libdevice's __nv_* on host libm, vprintf,
// the fault record and trap, failed hints, inline asm's host references, shared memory,
// the global and shared access checks, cp.async (copies that land when a wait
// completes their group), and the f16/bf16 conversions and fused
// multiply-adds narrow_floats.cpp makes explicit (on 16-bit patterns in
// 32-bit integers, the interpreter's rounding rules:
// kiln/ir/numeric.hpp, kiln/ir/rounding.hpp). Each is `extern "C"` and never
// throws: a failure ends the running program through CtaScheduler::fault.
#include <atomic>
#include <bit>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <exception>
#include <mutex>
#include <numbers>
#include <optional>

#include "cta_scheduler.hpp"
#include "hooks.hpp"
#include "kiln/ir/numeric.hpp"
#include "kiln/ir/rounding.hpp"
#include "kiln/ir/special_functions.hpp"
#include "kiln/lowering/compile.hpp"
#include "kiln/lowering/fault_record.hpp"
#include "kiln/runtime/host_reference.hpp"

namespace kiln::runtime::emu {

namespace {

CtaScheduler& scheduler() { return CtaScheduler::current(); }

std::uint32_t float_bits(float value) { return std::bit_cast<std::uint32_t>(value); }
float bits_float(std::uint32_t bits) { return std::bit_cast<float>(bits); }

/// log2 `x` from exact parts: x = m 2^e with m in [sqrt(1/2), sqrt(2)), so
/// log2 x = e + log1p(m - 1) / ln 2 with m - 1 exact (a few ulp of f64).
double host_independent_log2(double x) {
  if (!(x > 0) || std::isinf(x)) return std::log2(x);  // NaN, +-0, negative, infinity: exact special values
  int exponent = 0;
  double mantissa = std::frexp(x, &exponent);
  if (mantissa < std::numbers::sqrt2 / 2) {
    mantissa *= 2;
    --exponent;
  }
  return exponent + std::log1p(mantissa - 1) / std::numbers::ln2;
}

/// atom.add on the f16 or bf16 (`Narrow`) at `address`: the sum rounded once
/// from f32, by a compare-and-swap loop (other host threads run programs
/// too); the old pattern comes back.
template <class Narrow>
std::uint32_t atomic_add(std::uint16_t* address, std::uint32_t value) {
  std::atomic_ref<std::uint16_t> word(*address);
  std::uint16_t old = word.load();
  const float addend = Narrow::from_bits(static_cast<std::uint16_t>(value));
  while (!word.compare_exchange_weak(old, Narrow(static_cast<float>(Narrow::from_bits(old)) + addend).bits)) {
  }
  return old;
}

// A hint's element as the cpu device prints it (kiln::lowering::HintValueKind).
std::string hint_value_text(std::int64_t value, std::int32_t kind) {
  if (kind == static_cast<std::int32_t>(kiln::lowering::HintValueKind::pointer)) {
    char text[24];
    std::snprintf(text, sizeof text, "0x%llx", static_cast<unsigned long long>(value));
    return text;
  }
  if (kind == static_cast<std::int32_t>(kiln::lowering::HintValueKind::unsigned_integer))
    return std::to_string(static_cast<std::uint64_t>(value));
  return std::to_string(value);
}

}  // namespace

}  // namespace kiln::runtime::emu

using kiln::lowering::kLanesPerWarp;
using kiln::runtime::emu::BarrierMode;
using kiln::runtime::emu::hint_value_text;
using kiln::runtime::emu::scheduler;
using kiln::runtime::emu::ShuffleMode;
using kiln::runtime::emu::VoteMode;

extern "C" {

// Special registers. Programs are one-dimensional blocks of num_warps * 32 threads.
std::uint32_t kiln_emu_thread_index_x() { return static_cast<std::uint32_t>(scheduler().thread_index()); }
std::uint32_t kiln_emu_thread_index_yz() { return 0; }
std::uint32_t kiln_emu_threads_x() { return static_cast<std::uint32_t>(scheduler().thread_count()); }
std::uint32_t kiln_emu_threads_yz() { return 1; }
std::uint32_t kiln_emu_program_id_x() { return static_cast<std::uint32_t>(scheduler().program()[0]); }
std::uint32_t kiln_emu_program_id_y() { return static_cast<std::uint32_t>(scheduler().program()[1]); }
std::uint32_t kiln_emu_program_id_z() { return static_cast<std::uint32_t>(scheduler().program()[2]); }
std::uint32_t kiln_emu_programs_x() { return static_cast<std::uint32_t>(scheduler().launch().grid[0]); }
std::uint32_t kiln_emu_programs_y() { return static_cast<std::uint32_t>(scheduler().launch().grid[1]); }
std::uint32_t kiln_emu_programs_z() { return static_cast<std::uint32_t>(scheduler().launch().grid[2]); }
std::uint32_t kiln_emu_lane_id() { return static_cast<std::uint32_t>(scheduler().thread_index() % kLanesPerWarp); }
std::uint32_t kiln_emu_warp_id() { return static_cast<std::uint32_t>(scheduler().thread_index() / kLanesPerWarp); }
std::uint32_t kiln_emu_warp_size() { return kLanesPerWarp; }

// Barriers: bar.sync 0 (the only barrier the code generator uses) and the
// predicate reductions of barrier0.and/or/popc, each taking last the site the
// retargeting numbered it with; bar.warp.sync waits for the warp.
void kiln_emu_barrier(std::uint32_t site) { scheduler().barrier(site); }
void kiln_emu_barrier_numbered(std::uint32_t, std::uint32_t site) { scheduler().barrier(site); }
std::uint32_t kiln_emu_barrier_all(std::uint32_t predicate, std::uint32_t site) {
  return scheduler().barrier(site, BarrierMode::all, predicate != 0);
}
std::uint32_t kiln_emu_barrier_any(std::uint32_t predicate, std::uint32_t site) {
  return scheduler().barrier(site, BarrierMode::any, predicate != 0);
}
std::uint32_t kiln_emu_barrier_count(std::uint32_t predicate, std::uint32_t site) {
  return scheduler().barrier(site, BarrierMode::count, predicate != 0);
}
void kiln_emu_warp_sync(std::uint32_t mask) { scheduler().vote(VoteMode::all, mask, true); }

// membar.{cta,gl,sys}: programs run on several host threads, so every
// scope is a real sequentially consistent fence.
void kiln_emu_memory_fence() { std::atomic_thread_fence(std::memory_order_seq_cst); }

// shfl.sync.{idx,bfly,up,down}.{i32,f32}(member mask, value, lane operand, clamp).
#define KILN_EMU_SHUFFLE(mode_name, mode)                                                                         \
  std::uint32_t kiln_emu_shfl_sync_##mode_name##_i32(std::uint32_t mask, std::uint32_t value, std::uint32_t b,    \
                                                     std::uint32_t c) {                                           \
    return scheduler().shuffle(mode, mask, value, b, c);                                                          \
  }                                                                                                               \
  float kiln_emu_shfl_sync_##mode_name##_f32(std::uint32_t mask, float value, std::uint32_t b, std::uint32_t c) { \
    return kiln::runtime::emu::bits_float(                                                                        \
        scheduler().shuffle(mode, mask, kiln::runtime::emu::float_bits(value), b, c));                            \
  }
KILN_EMU_SHUFFLE(idx, ShuffleMode::index)
KILN_EMU_SHUFFLE(bfly, ShuffleMode::butterfly)
KILN_EMU_SHUFFLE(up, ShuffleMode::up)
KILN_EMU_SHUFFLE(down, ShuffleMode::down)
#undef KILN_EMU_SHUFFLE

// vote.sync.{all,any,uni,ballot}(member mask, predicate); the retargeting
// passes i1 as i32 and reads an i1 result from the i32's bit 0.
std::uint32_t kiln_emu_vote_all(std::uint32_t mask, std::uint32_t p) {
  return scheduler().vote(VoteMode::all, mask, p & 1);
}
std::uint32_t kiln_emu_vote_any(std::uint32_t mask, std::uint32_t p) {
  return scheduler().vote(VoteMode::any, mask, p & 1);
}
std::uint32_t kiln_emu_vote_uni(std::uint32_t mask, std::uint32_t p) {
  return scheduler().vote(VoteMode::uniform, mask, p & 1);
}
std::uint32_t kiln_emu_vote_ballot(std::uint32_t mask, std::uint32_t p) {
  return scheduler().vote(VoteMode::ballot, mask, p & 1);
}

// mma.sync.aligned.m16n8k16.row.col (bf16, f16) and m16n8k8 (tf32), f32
// accumulators: A in 4 registers, B in 2, C in 4; D written through `d` (the
// retargeting passes <2 x half> registers as i32 and the returned struct
// through a pointer).
#define KILN_EMU_MMA(name, input)                                                                                    \
  void kiln_emu_mma_##name(std::uint32_t a0, std::uint32_t a1, std::uint32_t a2, std::uint32_t a3, std::uint32_t b0, \
                           std::uint32_t b1, float c0, float c1, float c2, float c3, float* d) {                     \
    const std::uint32_t a[4] = {a0, a1, a2, a3};                                                                     \
    const std::uint32_t b[2] = {b0, b1};                                                                             \
    const float c[4] = {c0, c1, c2, c3};                                                                             \
    kiln::runtime::emu::warp_matrix_multiply(input, a, b, c, d);                                                     \
  }
KILN_EMU_MMA(m16n8k16_bf16, kiln::runtime::emu::MmaInput::bf16)
KILN_EMU_MMA(m16n8k16_f16, kiln::runtime::emu::MmaInput::f16)
KILN_EMU_MMA(m16n8k8_tf32, kiln::runtime::emu::MmaInput::tf32)
#undef KILN_EMU_MMA
void kiln_emu_mma_m16n8k32_s8(std::uint32_t a0, std::uint32_t a1, std::uint32_t a2, std::uint32_t a3, std::uint32_t b0,
                              std::uint32_t b1, std::int32_t c0, std::int32_t c1, std::int32_t c2, std::int32_t c3,
                              std::int32_t* d) {
  const std::uint32_t a[4] = {a0, a1, a2, a3};
  const std::uint32_t b[2] = {b0, b1};
  const std::int32_t c[4] = {c0, c1, c2, c3};
  kiln::runtime::emu::warp_integer_matrix_multiply(a, b, c, d);
}

// ldmatrix.sync.aligned.m8n8.x1/x2/x4[.trans].b16: the row address this lane
// supplies; the x2 and x4 results come back through `results`.
#define KILN_EMU_LDMATRIX(name, matrices, transposed)                         \
  void kiln_emu_ldmatrix_##name(const void* row, std::uint32_t* results) {    \
    kiln::runtime::emu::warp_matrix_load(row, matrices, transposed, results); \
  }
KILN_EMU_LDMATRIX(x2, 2, false)
KILN_EMU_LDMATRIX(x2_trans, 2, true)
KILN_EMU_LDMATRIX(x4, 4, false)
KILN_EMU_LDMATRIX(x4_trans, 4, true)
#undef KILN_EMU_LDMATRIX
std::uint32_t kiln_emu_ldmatrix_x1(const void* row) {
  std::uint32_t result;
  kiln::runtime::emu::warp_matrix_load(row, 1, false, &result);
  return result;
}
std::uint32_t kiln_emu_ldmatrix_x1_trans(const void* row) {
  std::uint32_t result;
  kiln::runtime::emu::warp_matrix_load(row, 1, true, &result);
  return result;
}

// NVVM math: the approximations computed exactly by the host (within their
// documented error of the GPU's results). ex2 and lg2, in every softmax,
// use glibc routines that are one build on every host: glibc picks exp2f,
// log2f and log2 by the CPU (FMA or not), exp2 and log1p it does not.
float kiln_emu_ex2_f32(float x) { return static_cast<float>(std::exp2(static_cast<double>(x))); }
float kiln_emu_ex2_ftz_f32(float x) {
  const float result = kiln_emu_ex2_f32(x);
  return std::fpclassify(result) == FP_SUBNORMAL ? 0.0f : result;
}
double kiln_emu_ex2_f64(double x) { return std::exp2(x); }
float kiln_emu_lg2_f32(float x) { return static_cast<float>(kiln::runtime::emu::host_independent_log2(x)); }
double kiln_emu_lg2_f64(double x) { return kiln::runtime::emu::host_independent_log2(x); }
float kiln_emu_sin_f32(float x) { return std::sin(x); }
float kiln_emu_cos_f32(float x) { return std::cos(x); }
float kiln_emu_sqrt_f32(float x) { return std::sqrt(x); }
float kiln_emu_rsqrt_f32(float x) { return 1.0f / std::sqrt(x); }
double kiln_emu_rsqrt_f64(double x) { return 1.0 / std::sqrt(x); }
float kiln_emu_rcp_f32(float x) { return 1.0f / x; }
double kiln_emu_rcp_f64(double x) { return 1.0 / x; }
float kiln_emu_fmax_f32(float a, float b) { return std::fmax(a, b); }
float kiln_emu_fmin_f32(float a, float b) { return std::fmin(a, b); }
double kiln_emu_fmax_f64(double a, double b) { return std::fmax(a, b); }
double kiln_emu_fmin_f64(double a, double b) { return std::fmin(a, b); }
std::int32_t kiln_emu_mulhi_i32(std::int32_t a, std::int32_t b) {
  return static_cast<std::int32_t>((static_cast<std::int64_t>(a) * b) >> 32);
}
std::uint32_t kiln_emu_mulhi_u32(std::uint32_t a, std::uint32_t b) {
  return static_cast<std::uint32_t>((static_cast<std::uint64_t>(a) * b) >> 32);
}
std::int64_t kiln_emu_mulhi_i64(std::int64_t a, std::int64_t b) {
  return static_cast<std::int64_t>((static_cast<__int128>(a) * b) >> 64);
}
std::uint64_t kiln_emu_mulhi_u64(std::uint64_t a, std::uint64_t b) {
  return static_cast<std::uint64_t>((static_cast<unsigned __int128>(a) * b) >> 64);
}

// libdevice, on host libm: __nv_<f>f (f32) and __nv_<f> (f64).
#define KILN_EMU_LIBM_UNARY(name)                               \
  float kiln_emu_nv_##name##f(float x) { return std::name(x); } \
  double kiln_emu_nv_##name(double x) { return std::name(x); }
#define KILN_EMU_LIBM_BINARY(name)                                          \
  float kiln_emu_nv_##name##f(float x, float y) { return std::name(x, y); } \
  double kiln_emu_nv_##name(double x, double y) { return std::name(x, y); }
// clang-format off
#define KILN_EMU_LIBM_UNARY_LIST(X)                                                                                  \
  X(sin) X(cos) X(tan) X(asin) X(acos) X(atan) X(sinh) X(cosh) X(tanh) X(asinh) X(acosh) X(atanh) X(exp) X(exp2)   \
  X(expm1) X(log) X(log2) X(log10) X(log1p) X(sqrt) X(cbrt) X(erf) X(erfc) X(tgamma) X(floor) X(ceil)   \
  X(trunc) X(round) X(rint) X(nearbyint) X(fabs) X(logb)
#define KILN_EMU_LIBM_BINARY_LIST(X) \
  X(pow) X(atan2) X(fmod) X(remainder) X(hypot) X(copysign) X(fmin) X(fmax) X(fdim) X(nextafter)
// clang-format on
KILN_EMU_LIBM_UNARY_LIST(KILN_EMU_LIBM_UNARY)
KILN_EMU_LIBM_BINARY_LIST(KILN_EMU_LIBM_BINARY)
float kiln_emu_nv_exp10f(float x) { return std::pow(10.0f, x); }
double kiln_emu_nv_exp10(double x) { return std::pow(10.0, x); }
float kiln_emu_nv_lgammaf(float x) { return kiln::ir::log_gamma(x); }
double kiln_emu_nv_lgamma(double x) { return kiln::ir::log_gamma(x); }
float kiln_emu_nv_erfinvf(float x) { return static_cast<float>(kiln::ir::erfinv(x)); }
double kiln_emu_nv_erfinv(double x) { return kiln::ir::erfinv(x); }
float kiln_emu_nv_rsqrtf(float x) { return 1.0f / std::sqrt(x); }
double kiln_emu_nv_rsqrt(double x) { return 1.0 / std::sqrt(x); }
float kiln_emu_nv_fmaf(float x, float y, float z) { return std::fma(x, y, z); }
double kiln_emu_nv_fma(double x, double y, double z) { return std::fma(x, y, z); }
float kiln_emu_nv_powif(float x, std::int32_t n) { return std::pow(x, static_cast<float>(n)); }
double kiln_emu_nv_powi(double x, std::int32_t n) { return std::pow(x, static_cast<double>(n)); }
float kiln_emu_nv_ldexpf(float x, std::int32_t n) { return std::ldexp(x, n); }
double kiln_emu_nv_ldexp(double x, std::int32_t n) { return std::ldexp(x, n); }
std::int32_t kiln_emu_nv_isnanf(float x) { return std::isnan(x); }
std::int32_t kiln_emu_nv_isnand(double x) { return std::isnan(x); }
std::int32_t kiln_emu_nv_isinff(float x) { return std::isinf(x); }
std::int32_t kiln_emu_nv_isinfd(double x) { return std::isinf(x); }
std::int32_t kiln_emu_nv_finitef(float x) { return std::isfinite(x); }
std::int32_t kiln_emu_nv_isfinited(double x) { return std::isfinite(x); }
std::int32_t kiln_emu_nv_signbitf(float x) { return std::signbit(x); }
std::int32_t kiln_emu_nv_signbitd(double x) { return std::signbit(x); }
std::int32_t kiln_emu_nv_mulhi(std::int32_t a, std::int32_t b) { return kiln_emu_mulhi_i32(a, b); }
std::uint32_t kiln_emu_nv_umulhi(std::uint32_t a, std::uint32_t b) { return kiln_emu_mulhi_u32(a, b); }
std::int64_t kiln_emu_nv_mul64hi(std::int64_t a, std::int64_t b) { return kiln_emu_mulhi_i64(a, b); }
std::uint64_t kiln_emu_nv_umul64hi(std::uint64_t a, std::uint64_t b) { return kiln_emu_mulhi_u64(a, b); }
std::int32_t kiln_emu_nv_popc(std::uint32_t x) { return std::popcount(x); }
std::int32_t kiln_emu_nv_popcll(std::uint64_t x) { return std::popcount(x); }
std::int32_t kiln_emu_nv_clz(std::uint32_t x) { return std::countl_zero(x); }
std::int32_t kiln_emu_nv_clzll(std::uint64_t x) { return std::countl_zero(x); }
float kiln_emu_nv_saturatef(float x) { return std::isnan(x) ? 0.0f : std::fmin(std::fmax(x, 0.0f), 1.0f); }

// printf and assert, with CUDA's signatures.
std::int32_t kiln_emu_vprintf(const char* format, const std::byte* arguments) {
  static std::mutex output;
  std::string error;
  try {
    const std::string text = kiln::runtime::emu::format_device_printf(format, arguments);
    std::lock_guard lock(output);
    std::fwrite(text.data(), 1, text.size(), stdout);
    return static_cast<std::int32_t>(text.size());
  } catch (const std::exception& e) {
    error = e.what();
  }
  // Outside the handler, which a fault must not leave unfinished; the message
  // takes over error's buffer, so the abandoned frame owns no memory.
  scheduler().fault([&] { return "vprintf: " + std::move(error); });
}

// The fault record and the trap after it (kiln/lowering/fault_record.hpp).
kiln::lowering::FaultRecord* kiln_emu_fault_record() { return &scheduler().fault_record(); }
void kiln_emu_trap() {
  const kiln::lowering::FaultRecord& record = scheduler().fault_record();
  if (record.state == static_cast<std::uint32_t>(kiln::lowering::FaultRecordState::written))
    scheduler().fault([&] { return kiln::lowering::fault_message(record); });
  scheduler().fault([&] {
    return "kernel " + scheduler().launch().kernel->name + ": trap (" + scheduler().program_string() + ", thread " +
           std::to_string(scheduler().thread_index()) + ")";
  });
}

// A hint that does not hold (kiln/lowering/compile.hpp, kHintFaultFunction),
// reported with the cpu device's message.
void kiln_emu_hint_fault(const char* what, std::int32_t element, std::int64_t value, std::int32_t kind) {
  scheduler().fault([&] {
    return "kernel " + scheduler().launch().kernel->name + ": " + what + ": " +
           (element < 0 ? std::string("the value") : "element " + std::to_string(element)) + " is " +
           hint_value_text(value, kind) + " (" + scheduler().program_string() + ")";
  });
}
// A max_contiguous that does not hold (kContiguityFaultFunction), as above.
void kiln_emu_contiguity_fault(const char* what, std::int32_t element, std::int64_t value, std::int64_t previous,
                               std::int32_t kind) {
  scheduler().fault([&] {
    return "kernel " + scheduler().launch().kernel->name + ": " + what + ": element " + std::to_string(element) +
           " is " + hint_value_text(value, kind) + " but element " + std::to_string(element - 1) + " is " +
           hint_value_text(previous, kind) + " (" + scheduler().program_string() + ")";
  });
}

// An inline_asm element on the host (kiln/lowering/compile.hpp,
// kInlineAsmHostFunction): the host reference registered under `key` applied
// to the element's operand bits.
std::uint64_t kiln_emu_inline_asm_host(const char* key, const std::uint64_t* arguments) {
  const std::optional<kiln::runtime::HostReference> reference = kiln::runtime::find_host_reference(key);
  if (!reference)
    scheduler().fault([&] {
      return "kernel " + scheduler().launch().kernel->name + ": no host reference is registered for inline_asm " + key;
    });
  try {
    return (*reference)(arguments);
  } catch (const std::exception& e) {
    scheduler().fault([&] {
      return "kernel " + scheduler().launch().kernel->name + ": the host reference of inline_asm " + key +
             " threw: " + e.what();
    });
  }
}

// The hooks the retargeting inserts.
void* kiln_emu_shared_memory() { return scheduler().shared_memory(); }
void kiln_emu_check_global_access(const void* address, std::uint64_t bytes, std::uint32_t site) {
  kiln::runtime::emu::check_global_access(reinterpret_cast<std::uintptr_t>(address), bytes, site);
}
void kiln_emu_check_shared_access(const std::byte* address, std::uint64_t bytes, std::uint32_t site,
                                  const std::byte* stored) {
  kiln::runtime::emu::check_shared_access(address, bytes, site, stored);
}
void kiln_emu_cp_async(std::byte* destination, const std::byte* source, std::uint64_t copied, std::uint64_t bytes,
                       std::uint32_t site) {
  kiln::runtime::emu::check_async_copy_destination(destination, bytes, site);
  scheduler().async_copies().issue(destination, source, copied, bytes, site, scheduler().shared_shadow().epoch());
}
void kiln_emu_cp_async_commit() { scheduler().async_copies().commit(); }
void kiln_emu_cp_async_wait(std::int32_t pending_groups) {
  scheduler().async_copies().wait(pending_groups, kiln::runtime::emu::land_async_copy);
}
// wgmma's inline assembly (matrix_assembly.cpp): `flags` holds N in bits 0-15,
// the input (WgmmaInput) in bits 16-18, imm-trans-a in bit 19 and imm-trans-b
// in bit 20; A is its four fragment registers when `a_fragment` is not null;
// `site` names it in the shared-memory checks.
void kiln_emu_wgmma_mma(std::uint32_t flags, const std::uint32_t* a_fragment, std::uint64_t a_descriptor,
                        std::uint64_t b_descriptor, std::uint32_t scale_d, void* accumulator, std::uint32_t site) {
  const kiln::runtime::emu::WgmmaShape shape{static_cast<int>(flags & 0xffff),
                                             static_cast<kiln::runtime::emu::WgmmaInput>(flags >> 16 & 7),
                                             (flags >> 19 & 1) != 0, (flags >> 20 & 1) != 0};
  kiln::runtime::emu::warpgroup_matrix_multiply(shape, a_fragment, a_descriptor, b_descriptor, scale_d != 0,
                                                accumulator, site);
}
// mma.sync.aligned.m16n8k32.row.col.f32 on fp8 (matrix_assembly.cpp):
// `registers` holds A (4) and B (2), `accumulator` C, where D comes back.
void kiln_emu_mma_fp8(std::uint32_t e5m2, const std::uint32_t* registers, float* accumulator) {
  const float c[4] = {accumulator[0], accumulator[1], accumulator[2], accumulator[3]};
  kiln::runtime::emu::warp_matrix_multiply(
      e5m2 ? kiln::runtime::emu::MmaInput::e5m2 : kiln::runtime::emu::MmaInput::e4m3, registers, registers + 4, c,
      accumulator);
}
void kiln_emu_wgmma_fence() { kiln::runtime::emu::warpgroup_fence(); }
void kiln_emu_wgmma_commit() { kiln::runtime::emu::warpgroup_commit(); }
void kiln_emu_wgmma_wait(std::int32_t pending_groups) { kiln::runtime::emu::warpgroup_wait(pending_groups); }

// f16 and bf16, as 16-bit patterns: conversions and fused multiply-add.
float kiln_emu_f16_to_f32(std::uint32_t bits) { return kiln::half::from_bits(static_cast<std::uint16_t>(bits)); }
float kiln_emu_bf16_to_f32(std::uint32_t bits) { return kiln::bfloat16::from_bits(static_cast<std::uint16_t>(bits)); }
std::uint32_t kiln_emu_f32_to_f16(float x) { return kiln::half(x).bits; }
std::uint32_t kiln_emu_f32_to_bf16(float x) { return kiln::bfloat16(x).bits; }
std::uint32_t kiln_emu_f64_to_f16(double x) { return kiln::half(kiln::round_to_odd_float(x)).bits; }
std::uint32_t kiln_emu_f64_to_bf16(double x) { return kiln::bfloat16(kiln::round_to_odd_float(x)).bits; }
std::uint32_t kiln_emu_i64_to_f16(std::int64_t x) { return kiln::half(kiln::round_to_odd_float(x)).bits; }
std::uint32_t kiln_emu_i64_to_bf16(std::int64_t x) { return kiln::bfloat16(kiln::round_to_odd_float(x)).bits; }
std::uint32_t kiln_emu_u64_to_f16(std::uint64_t x) { return kiln::half(kiln::round_to_odd_float(x)).bits; }
std::uint32_t kiln_emu_u64_to_bf16(std::uint64_t x) { return kiln::bfloat16(kiln::round_to_odd_float(x)).bits; }
std::uint32_t kiln_emu_atomic_add_f16(std::uint16_t* address, std::uint32_t value) {
  return kiln::runtime::emu::atomic_add<kiln::half>(address, value);
}
std::uint32_t kiln_emu_atomic_add_bf16(std::uint16_t* address, std::uint32_t value) {
  return kiln::runtime::emu::atomic_add<kiln::bfloat16>(address, value);
}
std::uint32_t kiln_emu_fma_f16(std::uint32_t a, std::uint32_t b, std::uint32_t c) {
  return kiln::half(
             kiln::fused_multiply_add_to_odd(kiln_emu_f16_to_f32(a), kiln_emu_f16_to_f32(b), kiln_emu_f16_to_f32(c)))
      .bits;
}
std::uint32_t kiln_emu_fma_bf16(std::uint32_t a, std::uint32_t b, std::uint32_t c) {
  return kiln::bfloat16(
             kiln::fused_multiply_add_to_odd(kiln_emu_bf16_to_f32(a), kiln_emu_bf16_to_f32(b), kiln_emu_bf16_to_f32(c)))
      .bits;
}

}  // extern "C"

namespace kiln::runtime::emu {

namespace {

#define KILN_EMU_HOOK(replaces, hook) \
  Hook { replaces, #hook, reinterpret_cast<void*>(&hook) }
#define KILN_EMU_LIBM_UNARY_HOOKS(name)                    \
  KILN_EMU_HOOK("__nv_" #name "f", kiln_emu_nv_##name##f), \
      KILN_EMU_HOOK("__nv_fast_" #name "f", kiln_emu_nv_##name##f), KILN_EMU_HOOK("__nv_" #name, kiln_emu_nv_##name),
#define KILN_EMU_LIBM_BINARY_HOOKS(name)                   \
  KILN_EMU_HOOK("__nv_" #name "f", kiln_emu_nv_##name##f), \
      KILN_EMU_HOOK("__nv_fast_" #name "f", kiln_emu_nv_##name##f), KILN_EMU_HOOK("__nv_" #name, kiln_emu_nv_##name),

const Hook kHooks[] = {
    KILN_EMU_HOOK("llvm.nvvm.read.ptx.sreg.tid.x", kiln_emu_thread_index_x),
    KILN_EMU_HOOK("llvm.nvvm.read.ptx.sreg.tid.y", kiln_emu_thread_index_yz),
    KILN_EMU_HOOK("llvm.nvvm.read.ptx.sreg.tid.z", kiln_emu_thread_index_yz),
    KILN_EMU_HOOK("llvm.nvvm.read.ptx.sreg.ntid.x", kiln_emu_threads_x),
    KILN_EMU_HOOK("llvm.nvvm.read.ptx.sreg.ntid.y", kiln_emu_threads_yz),
    KILN_EMU_HOOK("llvm.nvvm.read.ptx.sreg.ntid.z", kiln_emu_threads_yz),
    KILN_EMU_HOOK("llvm.nvvm.read.ptx.sreg.ctaid.x", kiln_emu_program_id_x),
    KILN_EMU_HOOK("llvm.nvvm.read.ptx.sreg.ctaid.y", kiln_emu_program_id_y),
    KILN_EMU_HOOK("llvm.nvvm.read.ptx.sreg.ctaid.z", kiln_emu_program_id_z),
    KILN_EMU_HOOK("llvm.nvvm.read.ptx.sreg.nctaid.x", kiln_emu_programs_x),
    KILN_EMU_HOOK("llvm.nvvm.read.ptx.sreg.nctaid.y", kiln_emu_programs_y),
    KILN_EMU_HOOK("llvm.nvvm.read.ptx.sreg.nctaid.z", kiln_emu_programs_z),
    KILN_EMU_HOOK("llvm.nvvm.read.ptx.sreg.laneid", kiln_emu_lane_id),
    KILN_EMU_HOOK("llvm.nvvm.read.ptx.sreg.warpid", kiln_emu_warp_id),
    KILN_EMU_HOOK("llvm.nvvm.read.ptx.sreg.warpsize", kiln_emu_warp_size),
    KILN_EMU_HOOK("llvm.nvvm.bar.warp.sync", kiln_emu_warp_sync),
    KILN_EMU_HOOK("llvm.nvvm.membar.cta", kiln_emu_memory_fence),
    KILN_EMU_HOOK("llvm.nvvm.membar.gl", kiln_emu_memory_fence),
    KILN_EMU_HOOK("llvm.nvvm.membar.sys", kiln_emu_memory_fence),
    KILN_EMU_HOOK("llvm.nvvm.shfl.sync.idx.i32", kiln_emu_shfl_sync_idx_i32),
    KILN_EMU_HOOK("llvm.nvvm.shfl.sync.idx.f32", kiln_emu_shfl_sync_idx_f32),
    KILN_EMU_HOOK("llvm.nvvm.shfl.sync.bfly.i32", kiln_emu_shfl_sync_bfly_i32),
    KILN_EMU_HOOK("llvm.nvvm.shfl.sync.bfly.f32", kiln_emu_shfl_sync_bfly_f32),
    KILN_EMU_HOOK("llvm.nvvm.shfl.sync.up.i32", kiln_emu_shfl_sync_up_i32),
    KILN_EMU_HOOK("llvm.nvvm.shfl.sync.up.f32", kiln_emu_shfl_sync_up_f32),
    KILN_EMU_HOOK("llvm.nvvm.shfl.sync.down.i32", kiln_emu_shfl_sync_down_i32),
    KILN_EMU_HOOK("llvm.nvvm.shfl.sync.down.f32", kiln_emu_shfl_sync_down_f32),
    KILN_EMU_HOOK("llvm.nvvm.vote.all.sync", kiln_emu_vote_all),
    KILN_EMU_HOOK("llvm.nvvm.vote.any.sync", kiln_emu_vote_any),
    KILN_EMU_HOOK("llvm.nvvm.vote.uni.sync", kiln_emu_vote_uni),
    KILN_EMU_HOOK("llvm.nvvm.vote.ballot.sync", kiln_emu_vote_ballot),
    KILN_EMU_HOOK("llvm.nvvm.mma.m16n8k16.row.col.bf16", kiln_emu_mma_m16n8k16_bf16),
    KILN_EMU_HOOK("llvm.nvvm.mma.m16n8k16.row.col.f32.f32", kiln_emu_mma_m16n8k16_f16),
    KILN_EMU_HOOK("llvm.nvvm.mma.m16n8k8.row.col.tf32", kiln_emu_mma_m16n8k8_tf32),
    KILN_EMU_HOOK("llvm.nvvm.mma.m16n8k32.row.col.s8", kiln_emu_mma_m16n8k32_s8),
    KILN_EMU_HOOK("llvm.nvvm.ldmatrix.sync.aligned.m8n8.x1.b16.p3", kiln_emu_ldmatrix_x1),
    KILN_EMU_HOOK("llvm.nvvm.ldmatrix.sync.aligned.m8n8.x1.trans.b16.p3", kiln_emu_ldmatrix_x1_trans),
    KILN_EMU_HOOK("llvm.nvvm.ldmatrix.sync.aligned.m8n8.x2.b16.p3", kiln_emu_ldmatrix_x2),
    KILN_EMU_HOOK("llvm.nvvm.ldmatrix.sync.aligned.m8n8.x2.trans.b16.p3", kiln_emu_ldmatrix_x2_trans),
    KILN_EMU_HOOK("llvm.nvvm.ldmatrix.sync.aligned.m8n8.x4.b16.p3", kiln_emu_ldmatrix_x4),
    KILN_EMU_HOOK("llvm.nvvm.ldmatrix.sync.aligned.m8n8.x4.trans.b16.p3", kiln_emu_ldmatrix_x4_trans),
    KILN_EMU_HOOK("llvm.nvvm.ex2.approx.f", kiln_emu_ex2_f32),
    KILN_EMU_HOOK("llvm.nvvm.ex2.approx.ftz.f", kiln_emu_ex2_ftz_f32),
    KILN_EMU_HOOK("llvm.nvvm.ex2.approx.d", kiln_emu_ex2_f64),
    KILN_EMU_HOOK("llvm.nvvm.lg2.approx.f", kiln_emu_lg2_f32),
    KILN_EMU_HOOK("llvm.nvvm.lg2.approx.ftz.f", kiln_emu_lg2_f32),
    KILN_EMU_HOOK("llvm.nvvm.lg2.approx.d", kiln_emu_lg2_f64),
    KILN_EMU_HOOK("llvm.nvvm.sin.approx.f", kiln_emu_sin_f32),
    KILN_EMU_HOOK("llvm.nvvm.sin.approx.ftz.f", kiln_emu_sin_f32),
    KILN_EMU_HOOK("llvm.nvvm.cos.approx.f", kiln_emu_cos_f32),
    KILN_EMU_HOOK("llvm.nvvm.cos.approx.ftz.f", kiln_emu_cos_f32),
    KILN_EMU_HOOK("llvm.nvvm.sqrt.approx.f", kiln_emu_sqrt_f32),
    KILN_EMU_HOOK("llvm.nvvm.sqrt.approx.ftz.f", kiln_emu_sqrt_f32),
    KILN_EMU_HOOK("llvm.nvvm.rsqrt.approx.f", kiln_emu_rsqrt_f32),
    KILN_EMU_HOOK("llvm.nvvm.rsqrt.approx.ftz.f", kiln_emu_rsqrt_f32),
    KILN_EMU_HOOK("llvm.nvvm.rsqrt.approx.d", kiln_emu_rsqrt_f64),
    KILN_EMU_HOOK("llvm.nvvm.rcp.approx.ftz.f", kiln_emu_rcp_f32),
    KILN_EMU_HOOK("llvm.nvvm.rcp.approx.ftz.d", kiln_emu_rcp_f64),
    KILN_EMU_HOOK("llvm.nvvm.fmax.f", kiln_emu_fmax_f32),
    KILN_EMU_HOOK("llvm.nvvm.fmax.ftz.f", kiln_emu_fmax_f32),
    KILN_EMU_HOOK("llvm.nvvm.fmin.f", kiln_emu_fmin_f32),
    KILN_EMU_HOOK("llvm.nvvm.fmin.ftz.f", kiln_emu_fmin_f32),
    KILN_EMU_HOOK("llvm.nvvm.fmax.d", kiln_emu_fmax_f64),
    KILN_EMU_HOOK("llvm.nvvm.fmin.d", kiln_emu_fmin_f64),
    KILN_EMU_HOOK("llvm.nvvm.mulhi.i", kiln_emu_mulhi_i32),
    KILN_EMU_HOOK("llvm.nvvm.mulhi.ui", kiln_emu_mulhi_u32),
    KILN_EMU_HOOK("llvm.nvvm.mulhi.ll", kiln_emu_mulhi_i64),
    KILN_EMU_HOOK("llvm.nvvm.mulhi.ull", kiln_emu_mulhi_u64),
    KILN_EMU_LIBM_UNARY_LIST(KILN_EMU_LIBM_UNARY_HOOKS) KILN_EMU_LIBM_BINARY_LIST(KILN_EMU_LIBM_BINARY_HOOKS)
        KILN_EMU_HOOK("__nv_exp10f", kiln_emu_nv_exp10f),
    KILN_EMU_HOOK("__nv_fast_exp10f", kiln_emu_nv_exp10f),
    KILN_EMU_HOOK("__nv_exp10", kiln_emu_nv_exp10),
    KILN_EMU_HOOK("__nv_lgammaf", kiln_emu_nv_lgammaf),
    KILN_EMU_HOOK("__nv_lgamma", kiln_emu_nv_lgamma),
    KILN_EMU_HOOK("__nv_erfinvf", kiln_emu_nv_erfinvf),
    KILN_EMU_HOOK("__nv_erfinv", kiln_emu_nv_erfinv),
    KILN_EMU_HOOK("__nv_rsqrtf", kiln_emu_nv_rsqrtf),
    KILN_EMU_HOOK("__nv_rsqrt", kiln_emu_nv_rsqrt),
    KILN_EMU_HOOK("__nv_fmaf", kiln_emu_nv_fmaf),
    KILN_EMU_HOOK("__nv_fma", kiln_emu_nv_fma),
    KILN_EMU_HOOK("__nv_powif", kiln_emu_nv_powif),
    KILN_EMU_HOOK("__nv_powi", kiln_emu_nv_powi),
    KILN_EMU_HOOK("__nv_ldexpf", kiln_emu_nv_ldexpf),
    KILN_EMU_HOOK("__nv_ldexp", kiln_emu_nv_ldexp),
    KILN_EMU_HOOK("__nv_isnanf", kiln_emu_nv_isnanf),
    KILN_EMU_HOOK("__nv_isnand", kiln_emu_nv_isnand),
    KILN_EMU_HOOK("__nv_isinff", kiln_emu_nv_isinff),
    KILN_EMU_HOOK("__nv_isinfd", kiln_emu_nv_isinfd),
    KILN_EMU_HOOK("__nv_finitef", kiln_emu_nv_finitef),
    KILN_EMU_HOOK("__nv_isfinited", kiln_emu_nv_isfinited),
    KILN_EMU_HOOK("__nv_signbitf", kiln_emu_nv_signbitf),
    KILN_EMU_HOOK("__nv_signbitd", kiln_emu_nv_signbitd),
    KILN_EMU_HOOK("__nv_mulhi", kiln_emu_nv_mulhi),
    KILN_EMU_HOOK("__nv_umulhi", kiln_emu_nv_umulhi),
    KILN_EMU_HOOK("__nv_mul64hi", kiln_emu_nv_mul64hi),
    KILN_EMU_HOOK("__nv_umul64hi", kiln_emu_nv_umul64hi),
    KILN_EMU_HOOK("__nv_popc", kiln_emu_nv_popc),
    KILN_EMU_HOOK("__nv_popcll", kiln_emu_nv_popcll),
    KILN_EMU_HOOK("__nv_clz", kiln_emu_nv_clz),
    KILN_EMU_HOOK("__nv_clzll", kiln_emu_nv_clzll),
    KILN_EMU_HOOK("__nv_saturatef", kiln_emu_nv_saturatef),
    KILN_EMU_HOOK("vprintf", kiln_emu_vprintf),
    KILN_EMU_HOOK(kiln::lowering::kHintFaultFunction, kiln_emu_hint_fault),
    KILN_EMU_HOOK(kiln::lowering::kContiguityFaultFunction, kiln_emu_contiguity_fault),
    KILN_EMU_HOOK(kiln::lowering::kInlineAsmHostFunction, kiln_emu_inline_asm_host),
    KILN_EMU_HOOK("", kiln_emu_shared_memory),
    KILN_EMU_HOOK("", kiln_emu_fault_record),
    KILN_EMU_HOOK("", kiln_emu_trap),
    KILN_EMU_HOOK("", kiln_emu_check_global_access),
    KILN_EMU_HOOK("", kiln_emu_check_shared_access),
    KILN_EMU_HOOK("", kiln_emu_barrier),
    KILN_EMU_HOOK("", kiln_emu_barrier_numbered),
    KILN_EMU_HOOK("", kiln_emu_barrier_all),
    KILN_EMU_HOOK("", kiln_emu_barrier_any),
    KILN_EMU_HOOK("", kiln_emu_barrier_count),
    KILN_EMU_HOOK("", kiln_emu_cp_async),
    KILN_EMU_HOOK("", kiln_emu_cp_async_commit),
    KILN_EMU_HOOK("", kiln_emu_cp_async_wait),
    KILN_EMU_HOOK("", kiln_emu_mma_fp8),
    KILN_EMU_HOOK("", kiln_emu_wgmma_mma),
    KILN_EMU_HOOK("", kiln_emu_wgmma_fence),
    KILN_EMU_HOOK("", kiln_emu_wgmma_commit),
    KILN_EMU_HOOK("", kiln_emu_wgmma_wait),
    KILN_EMU_HOOK("", kiln_emu_f16_to_f32),
    KILN_EMU_HOOK("", kiln_emu_bf16_to_f32),
    KILN_EMU_HOOK("", kiln_emu_f32_to_f16),
    KILN_EMU_HOOK("", kiln_emu_f32_to_bf16),
    KILN_EMU_HOOK("", kiln_emu_f64_to_f16),
    KILN_EMU_HOOK("", kiln_emu_f64_to_bf16),
    KILN_EMU_HOOK("", kiln_emu_i64_to_f16),
    KILN_EMU_HOOK("", kiln_emu_i64_to_bf16),
    KILN_EMU_HOOK("", kiln_emu_u64_to_f16),
    KILN_EMU_HOOK("", kiln_emu_u64_to_bf16),
    KILN_EMU_HOOK("", kiln_emu_atomic_add_f16),
    KILN_EMU_HOOK("", kiln_emu_atomic_add_bf16),
    KILN_EMU_HOOK("", kiln_emu_fma_f16),
    KILN_EMU_HOOK("", kiln_emu_fma_bf16),
};

}  // namespace

std::span<const Hook> hook_table() { return kHooks; }

const Hook* find_hook(std::string_view name) {
  if (name.empty()) return nullptr;
  for (const Hook& hook : kHooks)
    if (hook.replaces == name) return &hook;
  return nullptr;
}

bool is_hook_symbol(std::string_view name) {
  for (const Hook& hook : kHooks)
    if (hook.symbol == name) return true;
  return false;
}

}  // namespace kiln::runtime::emu
