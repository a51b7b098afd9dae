// Chapter 18, "Tensor cores and pipelining": which dots kiln's GPU code
// generator runs on tensor cores and how their operands get there. It prints
// the mma.sync layouts of one warp, compiles one matmul kernel for f16, i8
// (i32 accumulator) and f32 at tf32 and ieee precision for sm_80 as the
// variants a launch runs (pipelined, with the default 3 stages) and reports
// the instructions of their PTX, counts the bank conflicts of copying the
// operand tiles into their shared rings row-major and in the swizzled
// layouts the code generator chooses, counts the instructions of the K loop
// of a matmul written as Triton's tutorial writes it (pointers carried
// through the loop), and runs the i8 and tf32 matmuls on the chosen device,
// checked against plain C++.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <limits>
#include <optional>
#include <random>
#include <set>
#include <string>
#include <vector>

#include "kiln/kiln.hpp"
#include "kiln/lowering/assign_layouts.hpp"
#include "kiln/lowering/compile.hpp"
#include "kiln/lowering/dot_layout.hpp"
#include "kiln/lowering/shared_access.hpp"

namespace kl = kiln;
namespace lw = kiln::lowering;

// [book:kernel]
template <class In, class Acc, int BLOCK_M, int BLOCK_N, int BLOCK_K, kl::Precision P = kl::Precision::ieee>
void matmul(kl::Ptr<In> a, kl::Ptr<In> b, kl::Ptr<Acc> c, kl::i32 m, kl::i32 n, kl::i32 k) {
  auto rows = kl::expand_dims<1>(kl::program_id(0) * BLOCK_M + kl::arange<BLOCK_M>());
  auto cols = kl::expand_dims<0>(kl::program_id(1) * BLOCK_N + kl::arange<BLOCK_N>());
  kl::Var acc = kl::zeros<Acc, BLOCK_M, BLOCK_N>();  // f32, or i32 for i8 inputs
  for (auto k0 : kl::range(0, k, BLOCK_K)) {
    auto k_across = kl::expand_dims<0>(k0 + kl::arange<BLOCK_K>());
    auto k_down = kl::expand_dims<1>(k0 + kl::arange<BLOCK_K>());
    auto a_tile = kl::load(a + rows * k + k_across, (rows < m) & (k_across < k));
    auto b_tile = kl::load(b + k_down * n + cols, (k_down < k) & (cols < n));
    acc = kl::dot(a_tile, b_tile, acc, {.precision = P});
  }
  kl::store(c + rows * n + cols, acc, (rows < m) & (cols < n));
}
// [/book:kernel]

// [book:carried]
template <class In, int BLOCK_M, int BLOCK_N, int BLOCK_K>
void tutorial_matmul(kl::Ptr<In> a, kl::Ptr<In> b, kl::Ptr<kl::f32> c, kl::i32 m, kl::i32 n, kl::i32 k) {
  auto offs_am = (kl::program_id(0) * BLOCK_M + kl::arange<BLOCK_M>()) % m;
  auto offs_bn = (kl::program_id(1) * BLOCK_N + kl::arange<BLOCK_N>()) % n;
  auto offs_k = kl::arange<BLOCK_K>();
  kl::Var a_ptrs = a + (kl::expand_dims<1>(offs_am) * k + kl::expand_dims<0>(offs_k));
  kl::Var b_ptrs = b + (kl::expand_dims<1>(offs_k) * n + kl::expand_dims<0>(offs_bn));
  kl::Var acc = kl::zeros<kl::f32, BLOCK_M, BLOCK_N>();
  for (auto kk : kl::range(0, kl::cdiv(k, BLOCK_K))) {
    auto a_tile = kl::load(a_ptrs, kl::expand_dims<0>(offs_k) < k - kk * BLOCK_K, {.other = 0.0});
    auto b_tile = kl::load(b_ptrs, kl::expand_dims<1>(offs_k) < k - kk * BLOCK_K, {.other = 0.0});
    acc = kl::dot(a_tile, b_tile, acc);
    a_ptrs = a_ptrs + BLOCK_K;      // the pointers move along K
    b_ptrs = b_ptrs + BLOCK_K * n;  // carried from one iteration to the next
  }
  auto rows = kl::expand_dims<1>(kl::program_id(0) * BLOCK_M + kl::arange<BLOCK_M>());
  auto cols = kl::expand_dims<0>(kl::program_id(1) * BLOCK_N + kl::arange<BLOCK_N>());
  kl::store(c + (rows * n + cols), acc, (rows < m) & (cols < n));
}
// [/book:carried]

constexpr int kBlockM = 64, kBlockN = 64, kBlockK = 32;
constexpr int kM = 128, kN = 128, kK = 256;  // multiples of 16: the loads are 16 bytes wide

/// Which lane of one warp holds each element of a rows x columns tile in
/// `layout` (register, lane, warp -> dim0, dim1), and in which of its
/// registers: "lane.register".
void print_fragment(const char* title, const lw::LinearLayout& layout) {
  const int rows = layout.out_dim_size("dim0"), columns = layout.out_dim_size("dim1");
  std::vector<std::string> cell(rows * columns);
  for (int lane = 0; lane < 32; ++lane)
    for (int reg = 0; reg < layout.in_dim_size("register"); ++reg) {
      const auto at = layout.apply({{"register", reg}, {"lane", lane}, {"warp", 0}});
      cell[at[0].second * columns + at[1].second] = std::to_string(lane) + "." + std::to_string(reg);
    }
  std::printf("%s\n", title);
  for (int r = 0; r < rows; ++r) {
    for (int c = 0; c < columns; ++c) std::printf("%5s", cell[r * columns + c].c_str());
    std::printf("\n");
  }
}

void show_layouts() {
  // [book:layouts]
  const lw::MmaWarps one_warp{1, 1};
  print_fragment("accumulator of mma.sync.m16n8k16, 16 x 8 (lane.register of each element):",
                 lw::mma_accumulator_layout(16, 8, one_warp, 1));
  print_fragment("operand a of mma.sync.m16n8k16, 16 x 16:",
                 lw::mma_operand_layout(lw::DotOperand::a, 16, 16, one_warp, 1));
  print_fragment("operand b of mma.sync.m16n8k16, 16 x 8:",
                 lw::mma_operand_layout(lw::DotOperand::b, 16, 8, one_warp, 1));
  // [/book:layouts]
  std::printf("the accumulator of one 16 x 8 tile as a linear layout:\n%s\n",
              lw::to_string(lw::mma_accumulator_layout(16, 8, one_warp, 1)).c_str());
  std::printf("the accumulator of a 64 x 64 block with 4 warps:\n%s\n",
              lw::to_string(lw::mma_accumulator_layout(64, 64, lw::mma_warps(64, 64, 4), 4)).c_str());
}

/// The variant a launch on kM x kN x kK runs, its one dot and the
/// async_copy ops that fill the shared rings its operands are read from.
struct Variant {
  std::shared_ptr<const kl::runtime::Program> program;
  const kiln::ir::Operation* dot = nullptr;
  std::vector<const kiln::ir::Operation*> copies;
};

template <class Kernel, class... Args>
Variant variant_of(const Kernel& kernel, const Args&... args) {
  Variant v{kernel.program_for(args...), nullptr, {}};
  kiln::ir::walk(v.program->optimized().body, [&](kiln::ir::Operation& op) {
    if (op.code == kiln::ir::OpCode::dot) v.dot = &op;
    if (op.code == kiln::ir::OpCode::async_copy) v.copies.push_back(&op);
  });
  return v;
}

/// The tile of pointers the shared ring of the dot's operand `index` is
/// filled from: the operand is a local_load of a ring slot, and an
/// async_copy copies into that ring through these pointers (its operand 2);
/// null when the operand is not read from a ring.
const kiln::ir::Value* copied_pointers(const Variant& v, int index) {
  const kiln::ir::Operation* local_load = v.dot->operands[index]->def;
  if (!local_load || local_load->code != kiln::ir::OpCode::local_load) return nullptr;
  for (const kiln::ir::Operation* copy : v.copies)
    if (copy->operands[0] == local_load->operands[0]) return copy->operands[2];
  return nullptr;
}

/// The distinct instructions of `ptx` that begin with `prefix`, or "none".
std::string instructions(const std::string& ptx, const std::string& prefix) {
  std::set<std::string> found;
  for (std::size_t at = ptx.find(prefix); at != std::string::npos; at = ptx.find(prefix, at + 1))
    found.insert(ptx.substr(at, ptx.find_first_of(" \t\n;", at) - at));
  std::string out;
  for (const std::string& name : found) out += (out.empty() ? "" : ", ") + name;
  return out.empty() ? "none" : out;
}

/// The wavefronts of every warp copying a tile from `writer` into `shared`
/// (each thread writing its elements, as its cp.async does) and reading it
/// back as the fragment `reader`.
void print_cost(const char* name, const lw::LinearLayout& writer, const lw::LinearLayout& reader,
                const lw::LinearLayout& shared, int element_bytes) {
  const lw::SharedAccessCost store = lw::tile_access_cost(writer, shared, element_bytes);
  const lw::SharedAccessCost read = lw::fragment_read_cost(reader, shared, element_bytes);
  std::printf("    %-9s copy %3d wavefronts (ideal %3d), fragment read %4d wavefronts (ideal %3d)\n", name,
              store.wavefronts, store.ideal, read.wavefronts, read.ideal);
}

/// How a tensor-core dot gets operand `index` (0: a, 1: b) from its shared
/// ring: prints the tile, the instruction that reads its fragment and the
/// bank conflicts of cp.async writing it and of the fragment reads, in a
/// row-major and in the chosen shared layout; returns that instruction (""
/// for element reads).
std::string show_operand(const lw::LayoutMap& layouts, const Variant& v, int index, const lw::GpuTarget& target) {
  const kiln::ir::Operation& dot = *v.dot;
  const kiln::ir::Value& tile = *dot.operands[index];
  const int bytes = static_cast<int>(kiln::ir::dtype_bytes(tile.type.dtype));
  // [book:shared]
  const lw::LinearLayout& writer = layouts.at(*copied_pointers(v, index));  // each thread's part of the copy
  const lw::LinearLayout reader =
      lw::dot_fragment_layout(dot, index == 0 ? lw::DotOperand::a : lw::DotOperand::b, target);
  const int along = lw::contiguous_dim_of(writer);
  const lw::LinearLayout chosen = lw::choose_shared_layout(writer, reader, bytes);
  const std::optional<lw::LdmatrixPlan> plan = lw::plan_ldmatrix(reader, chosen, bytes);
  // [/book:shared]
  const std::string ldmatrix = plan ? "ldmatrix.sync.aligned.m8n8.x" + std::to_string(plan->matrices) +
                                          (plan->transposed ? ".trans" : "") + ".shared.b16"
                                    : "";
  std::printf("  %s: %lld x %lld %s, stored along dim%d, read %s\n", index == 0 ? "a" : "b",
              static_cast<long long>(tile.type.shape[0]), static_cast<long long>(tile.type.shape[1]),
              std::string(kiln::ir::dtype_name(tile.type.dtype)).c_str(), along,
              plan ? ("with ldmatrix.x" + std::to_string(plan->matrices) + (plan->transposed ? ".trans" : "")).c_str()
                   : "element by element");
  print_cost("row-major", writer, reader,
             lw::swizzled_shared_layout(tile.type.shape[0], tile.type.shape[1], along, bytes, {}), bytes);
  print_cost("chosen", writer, reader, chosen, bytes);
  return ldmatrix;
}

int failures = 0;

/// Compiles the variant `kernel` runs for these arguments for sm_80 and
/// prints how its dot runs and how its operands are copied; counts a failure
/// unless a tensor-core dot's PTX has exactly the ldmatrix forms the layouts
/// predict, and cp.async but no wgmma, and unless a dot on the FMA units
/// keeps its loads (it is not pipelined).
template <class Kernel, class... Args>
void show_dot(const char* name, const Kernel& kernel, const Args&... args) {
  const Variant v = variant_of(kernel, args...);
  // [book:compile]
  const lw::GpuTarget target{.arch = "sm_80", .num_warps = v.program->options().num_warps};
  const lw::GpuKernel gpu = lw::compile_for_gpu(v.program->optimized(), target);
  const lw::LayoutMap layouts =
      lw::assign_layouts(v.program->optimized(), lw::analyze_axes(v.program->optimized()), target);
  // [/book:compile]
  const bool tensor_cores = lw::dot_uses_tensor_cores(*v.dot, target);
  std::printf("%s: %s\n", name, tensor_cores ? instructions(gpu.ptx, "mma.sync").c_str() : "FMA units");
  if (!tensor_cores) {
    const bool copied = copied_pointers(v, 0) || copied_pointers(v, 1);
    std::printf("  not pipelined: %s\n",
                copied ? "its operands are copied into rings, where chapter 18 says it keeps its loads"
                       : "the loop keeps its loads");
    failures += copied;
    return;
  }
  if (!copied_pointers(v, 0) || !copied_pointers(v, 1)) {
    std::printf("  the dot's operands are not copied into shared rings, where chapter 18 says the loop is pipelined\n");
    ++failures;
    return;
  }
  std::set<std::string> predicted;
  for (int index : {0, 1})
    if (std::string ldmatrix = show_operand(layouts, v, index, target); !ldmatrix.empty()) predicted.insert(ldmatrix);
  std::string want;
  for (const std::string& form : predicted) want += (want.empty() ? "" : ", ") + form;
  if (instructions(gpu.ptx, "ldmatrix") != (want.empty() ? "none" : want)) {
    std::printf("  the PTX has %s, the layouts predict %s\n", instructions(gpu.ptx, "ldmatrix").c_str(), want.c_str());
    ++failures;
  }
  std::vector<const kiln::ir::Value*> rings;
  for (const kiln::ir::Operation* copy : v.copies)
    if (std::find(rings.begin(), rings.end(), copy->operands[0]) == rings.end()) rings.push_back(copy->operands[0]);
  const long long slots = rings.empty() ? 0 : rings[0]->type.shape[0];
  std::printf("  %zu rings of %lld slots, %s\n", rings.size(), slots, instructions(gpu.ptx, "cp.async").c_str());
  if (rings.size() != 2 || slots != v.program->options().num_stages || instructions(gpu.ptx, "cp.async") == "none" ||
      instructions(gpu.ptx, "wgmma") != "none") {
    ++failures;
    std::printf(
        "  wgmma: %s, where chapter 18 says both operands are copied with cp.async into rings of %d slots and "
        "there is no wgmma\n",
        instructions(gpu.ptx, "wgmma").c_str(), v.program->options().num_stages);
  }
}

void show_every_dtype() {
  kl::Buffer<kl::half> a16(kM * kK), b16(kK * kN);
  kl::Buffer<std::int8_t> a8(kM * kK), b8(kK * kN);
  kl::Buffer<float> a32(kM * kK), b32(kK * kN), c32(kM * kN);
  kl::Buffer<std::int32_t> c_i32(kM * kN);
  // [book:dtypes]
  show_dot("f16 x f16 + f32", kl::compile<matmul<kl::f16, kl::f32, 64, 64, 32>>(), a16, b16, c32, kM, kN, kK);
  show_dot("i8 x i8 + i32", kl::compile<matmul<kl::i8, kl::i32, 64, 64, 32>>(), a8, b8, c_i32, kM, kN, kK);
  show_dot("f32 x f32 + f32, tf32", kl::compile<matmul<kl::f32, kl::f32, 64, 64, 32, kl::Precision::tf32>>(), a32, b32,
           c32, kM, kN, kK);
  show_dot("f32 x f32 + f32, ieee", kl::compile<matmul<kl::f32, kl::f32, 64, 64, 32>>(), a32, b32, c32, kM, kN, kK);
  // [/book:dtypes]
}

/// The body of the innermost loop of `ptx` holding `needle`: from a block
/// label to the last branch back to it; empty when no loop holds it.
std::string innermost_loop_holding(const std::string& ptx, const std::string& needle) {
  std::string best;
  for (std::size_t at = ptx.find("$L__BB"); at != std::string::npos; at = ptx.find("$L__BB", at + 1)) {
    const std::size_t colon = ptx.find_first_of(":;", at);
    if (colon == std::string::npos || ptx[colon] != ':') continue;
    const std::size_t back_edge = ptx.rfind(ptx.substr(at, colon - at) + ";");
    if (back_edge == std::string::npos || back_edge < colon) continue;
    const std::string body = ptx.substr(colon + 1, back_edge - colon - 1);
    if (body.find(needle) != std::string::npos && (best.empty() || body.size() < best.size())) best = body;
  }
  return best;
}

/// How many times `needle` occurs in `text`.
int occurrences(const std::string& text, const std::string& needle) {
  int n = 0;
  for (std::size_t at = text.find(needle); at != std::string::npos; at = text.find(needle, at + 1)) ++n;
  return n;
}

/// The K loop of the tutorial-style matmul, whose pointers the loop carries:
/// its instructions per iteration for sm_80. Counts as a failure unless the
/// operands arrive by cp.async with one barrier and no loads of their own.
void show_carried_pointers() {
  kl::Buffer<kl::half> a(kM * kK), b(kK * kN);
  kl::Buffer<float> c(kM * kN);
  const auto program =
      kl::compile<tutorial_matmul<kl::f16, kBlockM, kBlockN, kBlockK>>().program_for(a, b, c, kM, kN, kK);
  const lw::GpuKernel gpu = lw::compile_for_gpu(program->optimized(), {.arch = "sm_80", .num_warps = 4});
  const std::string loop = innermost_loop_holding(gpu.ptx, "mma.sync");
  const int copies = occurrences(loop, "cp.async.cg.shared.global"), barriers = occurrences(loop, "bar.sync");
  const int loads = occurrences(loop, "ld.global."), stores = occurrences(loop, "st.shared.");
  std::printf(
      "carried pointers, f16: each iteration of the K loop has %d cp.async, %d commit_group, %d wait_group, "
      "%d bar.sync, %d ld.global, %d st.shared; %d bytes of shared memory\n",
      copies, occurrences(loop, "cp.async.commit_group"), occurrences(loop, "cp.async.wait_group"), barriers, loads,
      stores, gpu.shared_bytes);
  if (copies == 0 || barriers != 1 || loads != 0 || stores != 0) {
    std::printf("  where chapter 18 says the carried pointers' loads are pipelined\n");
    ++failures;
  }
}

std::mt19937 random_engine(2024);

/// The i8 matmul, exact in i32: every element must equal the reference.
bool check_i8() {
  std::uniform_int_distribution<int> uniform(-128, 127);
  std::vector<std::int8_t> a(kM * kK), b(kK * kN);
  for (auto& e : a) e = static_cast<std::int8_t>(uniform(random_engine));
  for (auto& e : b) e = static_cast<std::int8_t>(uniform(random_engine));
  auto a_buffer = kl::Buffer<std::int8_t>::from(a);
  auto b_buffer = kl::Buffer<std::int8_t>::from(b);
  kl::Buffer<std::int32_t> c_buffer(kM * kN);
  kl::compile<matmul<kl::i8, kl::i32, kBlockM, kBlockN, kBlockK>>().launch(kl::Grid(kM / kBlockM, kN / kBlockN),
                                                                           a_buffer, b_buffer, c_buffer, kM, kN, kK);
  const std::vector<std::int32_t> c = c_buffer.to_host();
  int wrong = 0;
  for (int i = 0; i < kM; ++i)
    for (int j = 0; j < kN; ++j) {
      std::int32_t want = 0;
      for (int t = 0; t < kK; ++t) want += std::int32_t{a[i * kK + t]} * std::int32_t{b[t * kN + j]};
      wrong += c[i * kN + j] != want;
    }
  std::printf("i8: %d of %d elements differ from the exact i32 result\n", wrong, kM * kN);
  return wrong == 0;
}

/// The tf32 matmul, within the bound of inputs rounded to tf32 and K additions.
bool check_tf32() {
  std::uniform_real_distribution<float> uniform(-1.0f, 1.0f);
  std::vector<float> a(kM * kK), b(kK * kN);
  for (auto& e : a) e = uniform(random_engine);
  for (auto& e : b) e = uniform(random_engine);
  auto a_buffer = kl::Buffer<float>::from(a);
  auto b_buffer = kl::Buffer<float>::from(b);
  kl::Buffer<float> c_buffer(kM * kN);
  kl::compile<matmul<kl::f32, kl::f32, kBlockM, kBlockN, kBlockK, kl::Precision::tf32>>().launch(
      kl::Grid(kM / kBlockM, kN / kBlockN), a_buffer, b_buffer, c_buffer, kM, kN, kK);
  const std::vector<float> c = c_buffer.to_host();
  // [book:tf32_bound]
  const double u = std::numeric_limits<float>::epsilon() / 2, u_tf32 = 0x1p-11;  // tf32 keeps 10 fraction bits
  const double gamma = kK * 2 * u / (1 - kK * 2 * u);   // K additions, 2u each for tensor cores that truncate
  const double product = 2 * u_tf32 + u_tf32 * u_tf32;  // both inputs rounded to tf32
  const double bound = product * (1 + gamma) + gamma;   // times sum |a b| of each element
  // [/book:tf32_bound]
  int outside = 0;
  for (int i = 0; i < kM; ++i)
    for (int j = 0; j < kN; ++j) {
      double want = 0, magnitude = 0;
      for (int t = 0; t < kK; ++t) {
        const double term = double{a[i * kK + t]} * double{b[t * kN + j]};
        want += term;
        magnitude += std::abs(term);
      }
      if (!(std::abs(c[i * kN + j] - want) <= bound * magnitude)) ++outside;  // false for NaN too
    }
  std::printf("tf32: %d of %d elements outside %.2e * sum |a b|\n", outside, kM * kN, bound);
  return outside == 0;
}

int main() {
  show_layouts();
  show_every_dtype();
  show_carried_pointers();
  const bool ok = check_i8() & check_tf32() && failures == 0;
  std::printf("%s\n", ok ? "ok" : "FAILED");
  return ok ? 0 : 1;
}
