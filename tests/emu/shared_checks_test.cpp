// The emu as a sanitizer of shared memory: an access outside the program's
// shared memory is a fault naming the source line, like a global one; a
// read of bytes no thread of the program has written is a fault naming the
// reader; two threads touching one byte between the same two barriers, at
// least one of them writing a new value, is a race naming both threads and
// both lines (plain loads and stores, cp.async from its issue to its wait,
// ldmatrix); the same kernels with the barrier in place run and give the
// right answer.
#include <cmath>
#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "emu_support.hpp"
#include "kiln/ir/numeric.hpp"
#include "kiln/ir/parser.hpp"
#include "kiln/runtime/program.hpp"

namespace {

using kiln::Buffer;
using kiln::Device;
using kiln::emu_test::compile_nvvm;
using kiln::emu_test::kernel_error;
using kiln::emu_test::pointer_to;

/// Runs `kernel` (parameters: out, then one i32 `flag`) on one program of
/// 128 threads; out holds one i32 per thread.
template <class Kernel>
std::string run_error(const Kernel& kernel, int flag, std::vector<std::int32_t>* result = nullptr) {
  Buffer<std::int32_t> out(128, Device::emu());
  const std::vector<kiln::runtime::KernelArgument> args = {pointer_to(out, "out"),
                                                           {static_cast<std::uint64_t>(flag), {}}};
  const std::string error = kernel_error([&] { kernel->launch(Device::emu(1), {1, 1, 1}, args); });
  if (result) *result = out.to_host();
  return error;
}

// Thread 0 stores 7 into the cell; every thread then reads it, behind a
// barrier when %sync is not 0.
const char* kReadAfterWrite = R"(
@cell = internal addrspace(3) global [32 x i32] undef, align 16
define ptx_kernel void @read_after_write(ptr addrspace(1) %out, i32 %sync) {
entry:
  %tid = call i32 @llvm.nvvm.read.ptx.sreg.tid.x()
  %first = icmp eq i32 %tid, 0
  br i1 %first, label %write, label %next
write:
  store i32 7, ptr addrspace(3) @cell, !kiln.place !0
  br label %next
next:
  %synced = icmp ne i32 %sync, 0
  br i1 %synced, label %wait, label %read
wait:
  call void @llvm.nvvm.barrier0(), !kiln.place !2
  br label %read
read:
  %v = load i32, ptr addrspace(3) @cell, !kiln.place !1
  %p = getelementptr i32, ptr addrspace(1) %out, i32 %tid
  store i32 %v, ptr addrspace(1) %p
  ret void
}
declare i32 @llvm.nvvm.read.ptx.sreg.tid.x()
declare void @llvm.nvvm.barrier0()
!0 = !{!"race.hpp:5"}
!1 = !{!"race.hpp:8"}
!2 = !{!"race.hpp:7"}
)";

TEST(SharedChecks, AReadOfAnotherThreadsWriteWithNoBarrierBetweenIsARace) {
  const auto kernel = compile_nvvm(kReadAfterWrite, "read_after_write", "%0: ptr<i32>, %1: i32");
  EXPECT_EQ(run_error(kernel, 0),
            "kernel read_after_write: shared-memory race in program (0, 0, 0) at byte 0: thread 1's shared load at "
            "race.hpp:8 reads what thread 0's shared store at race.hpp:5 wrote, with no barrier between");
  std::vector<std::int32_t> out;
  EXPECT_EQ(run_error(kernel, 1, &out), "");
  EXPECT_EQ(out, std::vector<std::int32_t>(128, 7));
}

// Every thread reads the second word of the cell after a barrier; thread 0
// stores 7 into the first word and, when %whole is not 0, the second too.
const char* kReadOfUnwritten = R"(
@cell = internal addrspace(3) global [2 x i32] undef, align 16
define ptx_kernel void @read_of_unwritten(ptr addrspace(1) %out, i32 %whole) {
entry:
  %tid = call i32 @llvm.nvvm.read.ptx.sreg.tid.x()
  %first = icmp eq i32 %tid, 0
  br i1 %first, label %write, label %wait
write:
  store i32 7, ptr addrspace(3) @cell
  %both = icmp ne i32 %whole, 0
  br i1 %both, label %second, label %wait
second:
  %word = getelementptr i32, ptr addrspace(3) @cell, i32 1
  store i32 7, ptr addrspace(3) %word
  br label %wait
wait:
  call void @llvm.nvvm.barrier0()
  %at = getelementptr i32, ptr addrspace(3) @cell, i32 1
  %v = load i32, ptr addrspace(3) %at, !kiln.place !0
  %p = getelementptr i32, ptr addrspace(1) %out, i32 %tid
  store i32 %v, ptr addrspace(1) %p
  ret void
}
declare i32 @llvm.nvvm.read.ptx.sreg.tid.x()
declare void @llvm.nvvm.barrier0()
!0 = !{!"unwritten.hpp:9"}
)";

TEST(SharedChecks, AReadOfBytesNoThreadWroteIsAFaultNamingTheReader) {
  // The last thread to reach the barrier runs on first and reads first.
  const auto kernel = compile_nvvm(kReadOfUnwritten, "read_of_unwritten", "%0: ptr<i32>, %1: i32");
  EXPECT_EQ(
      run_error(kernel, 0),
      "kernel read_of_unwritten: thread 127's shared load at unwritten.hpp:9 in program (0, 0, 0) reads byte 4 of "
      "shared memory, which no thread of the program had written: on a GPU it holds what an earlier program "
      "left");
  std::vector<std::int32_t> out;
  EXPECT_EQ(run_error(kernel, 1, &out), "");
  EXPECT_EQ(out, std::vector<std::int32_t>(128, 7));
}

// Thread 0 zeroes the cell (behind a barrier: no read finds it unwritten),
// then reads it into out[0]; thread %writer then stores its index + 100
// there; after a barrier every thread reads it.
const char* kWriteAfterRead = R"(
@cell = internal addrspace(3) global [32 x i32] undef, align 16
define ptx_kernel void @write_after_read(ptr addrspace(1) %out, i32 %writer) {
entry:
  %tid = call i32 @llvm.nvvm.read.ptx.sreg.tid.x()
  %first = icmp eq i32 %tid, 0
  br i1 %first, label %init, label %start
init:
  store i32 0, ptr addrspace(3) @cell
  br label %start
start:
  call void @llvm.nvvm.barrier0()
  br i1 %first, label %read, label %next
read:
  %old = load i32, ptr addrspace(3) @cell, !kiln.place !0
  store i32 %old, ptr addrspace(1) %out
  br label %next
next:
  %mine = icmp eq i32 %tid, %writer
  br i1 %mine, label %write, label %wait
write:
  %value = add i32 %tid, 100
  store i32 %value, ptr addrspace(3) @cell, !kiln.place !1
  br label %wait
wait:
  call void @llvm.nvvm.barrier0()
  %v = load i32, ptr addrspace(3) @cell
  %p = getelementptr i32, ptr addrspace(1) %out, i32 %tid
  store i32 %v, ptr addrspace(1) %p
  ret void
}
declare i32 @llvm.nvvm.read.ptx.sreg.tid.x()
declare void @llvm.nvvm.barrier0()
!0 = !{!"race.hpp:20"}
!1 = !{!"race.hpp:23"}
)";

TEST(SharedChecks, AWriteOverWhatAnotherThreadReadWithNoBarrierBetweenIsARace) {
  const auto kernel = compile_nvvm(kWriteAfterRead, "write_after_read", "%0: ptr<i32>, %1: i32");
  EXPECT_EQ(run_error(kernel, 65),
            "kernel write_after_read: shared-memory race in program (0, 0, 0) at byte 0: thread 65's shared store at "
            "race.hpp:23 writes what thread 0's shared load at race.hpp:20 read, with no barrier between");
  // The reader writing over its own read is no race.
  std::vector<std::int32_t> out;
  EXPECT_EQ(run_error(kernel, 0, &out), "");
  EXPECT_EQ(out, std::vector<std::int32_t>(128, 100));
}

// Every thread stores into the cell (7 when %distinct is 0, else its index),
// then after a barrier reads it back.
const char* kStores = R"(
@cell = internal addrspace(3) global [32 x i32] undef, align 16
define ptx_kernel void @stores(ptr addrspace(1) %out, i32 %distinct) {
entry:
  %tid = call i32 @llvm.nvvm.read.ptx.sreg.tid.x()
  %own = icmp ne i32 %distinct, 0
  %value = select i1 %own, i32 %tid, i32 7
  store i32 %value, ptr addrspace(3) @cell, !kiln.place !0
  call void @llvm.nvvm.barrier0()
  %v = load i32, ptr addrspace(3) @cell
  %p = getelementptr i32, ptr addrspace(1) %out, i32 %tid
  store i32 %v, ptr addrspace(1) %p
  ret void
}
declare i32 @llvm.nvvm.read.ptx.sreg.tid.x()
declare void @llvm.nvvm.barrier0()
!0 = !{!"race.hpp:31"}
)";

TEST(SharedChecks, ThreadsStoringOneValueAreNoRaceAndDifferentValuesAre) {
  const auto kernel = compile_nvvm(kStores, "stores", "%0: ptr<i32>, %1: i32");
  std::vector<std::int32_t> out;
  EXPECT_EQ(run_error(kernel, 0, &out), "");
  EXPECT_EQ(out, std::vector<std::int32_t>(128, 7));
  EXPECT_EQ(run_error(kernel, 1),
            "kernel stores: shared-memory race in program (0, 0, 0) at byte 0: thread 1's shared store at race.hpp:31 "
            "writes what thread 0's shared store at race.hpp:31 wrote, with no barrier between");
}

// A store %offset i32s into a 32-element array (of 128 bytes).
const char* kOutOfBounds = R"(
@cells = internal addrspace(3) global [32 x i32] undef, align 16
define ptx_kernel void @shared_bounds(ptr addrspace(1) %out, i32 %offset) {
  %p = getelementptr i32, ptr addrspace(3) @cells, i32 %offset
  store i32 1, ptr addrspace(3) %p, !kiln.place !0
  %q = getelementptr i32, ptr addrspace(3) @cells, i32 -1
  %v = load i32, ptr addrspace(3) %q, !kiln.place !1
  store i32 %v, ptr addrspace(1) %out
  ret void
}
!0 = !{!"bounds.hpp:3"}
!1 = !{!"bounds.hpp:4"}
)";

TEST(SharedChecks, AnAccessOutsideTheProgramsSharedMemoryIsAFaultNamingItsLine) {
  const auto kernel = compile_nvvm(kOutOfBounds, "shared_bounds", "%0: ptr<i32>, %1: i32");
  EXPECT_EQ(run_error(kernel, 32),
            "kernel shared_bounds: shared store out of bounds at bounds.hpp:3: offset 128 of a 4-byte access by "
            "thread 0 is past the end of the program's 128 bytes of shared memory");
  EXPECT_EQ(run_error(kernel, 31),
            "kernel shared_bounds: shared load out of bounds at bounds.hpp:4: offset -4 of a 4-byte access by thread "
            "0 is before the start of the program's 128 bytes of shared memory");
}

// Thread 0 zeroes the cell (behind a barrier: no read finds it unwritten),
// then reads it; thread 1 then copies in[0] into it with cp.async (behind a
// barrier when %sync is not 0) and waits; after a barrier every thread reads
// the cell.
const char* kCopyOverARead = R"(
@cell = internal addrspace(3) global [4 x i32] undef, align 16
define ptx_kernel void @copy_over_read(ptr addrspace(1) %out, i32 %sync, ptr addrspace(1) %in) {
entry:
  %tid = call i32 @llvm.nvvm.read.ptx.sreg.tid.x()
  %first = icmp eq i32 %tid, 0
  br i1 %first, label %init, label %start
init:
  store i32 0, ptr addrspace(3) @cell
  br label %start
start:
  call void @llvm.nvvm.barrier0()
  br i1 %first, label %read, label %next
read:
  %old = load i32, ptr addrspace(3) @cell, !kiln.place !0
  store i32 %old, ptr addrspace(1) %out
  br label %next
next:
  %synced = icmp ne i32 %sync, 0
  br i1 %synced, label %wait, label %copy
wait:
  call void @llvm.nvvm.barrier0()
  br label %copy
copy:
  %second = icmp eq i32 %tid, 1
  br i1 %second, label %issue, label %done
issue:
  call void @llvm.nvvm.cp.async.ca.shared.global.4(ptr addrspace(3) @cell, ptr addrspace(1) %in), !kiln.place !1
  call void @llvm.nvvm.cp.async.wait.all()
  br label %done
done:
  call void @llvm.nvvm.barrier0()
  %v = load i32, ptr addrspace(3) @cell
  %p = getelementptr i32, ptr addrspace(1) %out, i32 %tid
  store i32 %v, ptr addrspace(1) %p
  ret void
}
declare i32 @llvm.nvvm.read.ptx.sreg.tid.x()
declare void @llvm.nvvm.barrier0()
declare void @llvm.nvvm.cp.async.ca.shared.global.4(ptr addrspace(3), ptr addrspace(1))
declare void @llvm.nvvm.cp.async.wait.all()
!0 = !{!"copy.hpp:8"}
!1 = !{!"copy.hpp:12"}
)";

TEST(SharedChecks, ACopyLandingOnWhatAnotherThreadReadSinceItsIssueIsARace) {
  const auto kernel = compile_nvvm(kCopyOverARead, "copy_over_read", "%0: ptr<i32>, %1: i32, %2: ptr<i32>");
  const auto in = Buffer<std::int32_t>::from({41}, Device::emu());
  auto run = [&](int sync, std::vector<std::int32_t>* result) {
    Buffer<std::int32_t> out(128, Device::emu());
    const std::vector<kiln::runtime::KernelArgument> args = {
        pointer_to(out, "out"), {static_cast<std::uint64_t>(sync), {}}, pointer_to(in, "in")};
    const std::string error = kernel_error([&] { kernel->launch(Device::emu(1), {1, 1, 1}, args); });
    if (result) *result = out.to_host();
    return error;
  };
  EXPECT_EQ(run(0, nullptr),
            "kernel copy_over_read: shared-memory race in program (0, 0, 0) at byte 0: thread 1's cp.async at "
            "copy.hpp:12 (in flight from its issue to its wait) writes what thread 0's shared load at copy.hpp:8 "
            "read, with no barrier between");
  std::vector<std::int32_t> out;
  EXPECT_EQ(run(1, &out), "");
  EXPECT_EQ(out, std::vector<std::int32_t>(128, 41));
}

// A 32 x 16 and a 16 x 32 f16 tile copied into rings, waited for, then
// multiplied by a tensor-core dot that reads its fragments straight from the
// slots with ldmatrix: `steps` comes between the wait and the reads.
std::string ring_dot_kernel(const std::string& steps) {
  return R"(kernel @ring_dot(%a: ptr<f16>, %b: ptr<f16>, %out: ptr<f32>) {
  %ra = local_alloc : shared<1x32x16xf16>
  %rb = local_alloc : shared<1x16x32xf16>
  %slot = constant {value = 0} : i32
  %r32 = arange {start = 0} : tile<32xi32>
  %r16 = arange {start = 0} : tile<16xi32>
  %a_rows = expand_dims %r32 {axis = 1} : tile<32x1xi32>
  %a_cols = expand_dims %r16 {axis = 0} : tile<1x16xi32>
  %sixteen = constant {value = 16} : tile<32x1xi32>
  %a_row_offsets = mul %a_rows, %sixteen : tile<32x1xi32>
  %a_rb = broadcast %a_row_offsets : tile<32x16xi32>
  %a_cb = broadcast %a_cols : tile<32x16xi32>
  %a_offsets = add %a_rb, %a_cb : tile<32x16xi32>
  %as = splat %a : tile<32x16xptr<f16>>
  %pa = addptr %as, %a_offsets : tile<32x16xptr<f16>>
  %b_rows = expand_dims %r16 {axis = 1} : tile<16x1xi32>
  %b_cols = expand_dims %r32 {axis = 0} : tile<1x32xi32>
  %thirty_two = constant {value = 32} : tile<16x1xi32>
  %b_row_offsets = mul %b_rows, %thirty_two : tile<16x1xi32>
  %b_rb = broadcast %b_row_offsets : tile<16x32xi32>
  %b_cb = broadcast %b_cols : tile<16x32xi32>
  %b_offsets = add %b_rb, %b_cb : tile<16x32xi32>
  %bs = splat %b : tile<16x32xptr<f16>>
  %pb = addptr %bs, %b_offsets : tile<16x32xptr<f16>>
  async_copy %ra, %slot, %pa loc("dot.cpp":7)
  async_copy %rb, %slot, %pb loc("dot.cpp":8)
  async_commit
  async_wait {pending = 0}
)" + steps +
         R"(
  %va = local_load %ra, %slot : tile<32x16xf16> loc("dot.cpp":10)
  %vb = local_load %rb, %slot : tile<16x32xf16> loc("dot.cpp":11)
  %zero = constant {value = 0.0} : tile<32x32xf32>
  %d = dot %va, %vb, %zero {precision = ieee} : tile<32x32xf32> loc("dot.cpp":12)
  %o_rows = expand_dims %r32 {axis = 1} : tile<32x1xi32>
  %o_cols = expand_dims %r32 {axis = 0} : tile<1x32xi32>
  %o_stride = constant {value = 32} : tile<32x1xi32>
  %o_row_offsets = mul %o_rows, %o_stride : tile<32x1xi32>
  %o_rb = broadcast %o_row_offsets : tile<32x32xi32>
  %o_cb = broadcast %o_cols : tile<32x32xi32>
  %o_offsets = add %o_rb, %o_cb : tile<32x32xi32>
  %os = splat %out : tile<32x32xptr<f32>>
  %po = addptr %os, %o_offsets : tile<32x32xptr<f32>>
  store %po, %d {cache = none, evict = none}
}
)";
}

std::string run_ring_dot(const std::string& text, std::vector<float>* result) {
  kiln::runtime::ProgramOptions options;
  options.passes.reset();
  const kiln::runtime::Program program(kiln::ir::parse_function(text, "test.kiln"), "ring_dot", options);
  std::mt19937 rng(11);
  std::vector<kiln::half> a(32 * 16), b(16 * 32);
  for (auto& v : a) v = kiln::half(std::uniform_real_distribution<float>(-2.0f, 2.0f)(rng));
  for (auto& v : b) v = kiln::half(std::uniform_real_distribution<float>(-2.0f, 2.0f)(rng));
  const auto da = Buffer<kiln::half>::from(a, Device::emu());
  const auto db = Buffer<kiln::half>::from(b, Device::emu());
  Buffer<float> out(32 * 32, Device::emu());
  const kiln::runtime::KernelArgument args[] = {pointer_to(da, "a"), pointer_to(db, "b"), pointer_to(out, "out")};
  const std::string error = kernel_error([&] { program.launch(Device::emu(1), {1, 1, 1}, args); });
  if (result) {
    *result = out.to_host();
    for (int i = 0; i < 32; ++i)
      for (int j = 0; j < 32; ++j) {
        double sum = 0;
        for (int k = 0; k < 16; ++k)
          sum += static_cast<double>(static_cast<float>(a[static_cast<std::size_t>(i * 16 + k)])) *
                 static_cast<float>(b[static_cast<std::size_t>(k * 32 + j)]);
        // Products of f16 are exact in f32; one rounding of the sum of 16.
        (*result)[static_cast<std::size_t>(i * 32 + j)] -= static_cast<float>(sum);
      }
  }
  return error;
}

TEST(SharedChecks, ATensorCoreDotReadingARingSlotWithNoBarrierAfterTheWaitIsARace) {
  // Without facts on the pointers' alignment the copy is the synchronous
  // fallback, plain stores, which the first warp's ldmatrix overtakes.
  const std::string error = run_ring_dot(ring_dot_kernel(""), nullptr);
  for (const char* part :
       {"kernel ring_dot: shared-memory race in program (0, 0, 0) at byte ",
        "'s shared store at dot.cpp:7 writes what thread ", "'s ldmatrix at dot.cpp:12 read, with no barrier between"})
    EXPECT_NE(error.find(part), std::string::npos) << error;
  std::vector<float> difference;
  EXPECT_EQ(run_ring_dot(ring_dot_kernel("  barrier"), &difference), "");
  // |a b| sums to at most 16 * 2 * 2 = 64: the dot's one rounding of the
  // exact sum and the reference's each err by half an ulp of 64.
  for (std::size_t i = 0; i < difference.size(); ++i)
    ASSERT_LE(std::abs(difference[i]), 0x1p-23 * 64) << "element " << i;
}

}  // namespace
