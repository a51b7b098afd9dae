// The emu's CTA scheduler on hand-written nvptx64 kernels: barriers through
// shared memory, every shfl.sync mode with clamps and segments, votes,
// barrier reductions, deadlock detection, vprintf, trap and the fault record,
// and faults that leak nothing.
#include <malloc.h>

#include <bit>
#include <cstdint>
#include <string>
#include <vector>

#include "emu_support.hpp"

namespace {

using kiln::Buffer;
using kiln::Device;
using kiln::emu_test::compile_nvvm;
using kiln::emu_test::kernel_error;
using kiln::emu_test::pointer_to;
using kiln::runtime::Grid;
using kiln::runtime::KernelArgument;

constexpr int kThreads = 128;

// Each thread writes 7 * tid + program to shared memory, meets the others at
// a barrier and reads its neighbour's slot, twice (the second round reuses
// the buffer after a second barrier); then barrier0.popc counts lanes < 10.
const char* kBarrierKernel = R"(
@buffer = internal addrspace(3) global [128 x i32] undef, align 16

define ptx_kernel void @neighbours(ptr addrspace(1) %out) {
entry:
  %tid = call i32 @llvm.nvvm.read.ptx.sreg.tid.x()
  %pid = call i32 @llvm.nvvm.read.ptx.sreg.ctaid.x()
  %next = add i32 %tid, 1
  %wrapped = and i32 %next, 127
  %mine = getelementptr [128 x i32], ptr addrspace(3) @buffer, i32 0, i32 %tid
  %theirs = getelementptr [128 x i32], ptr addrspace(3) @buffer, i32 0, i32 %wrapped
  %seven = mul i32 %tid, 7
  %value = add i32 %seven, %pid
  store i32 %value, ptr addrspace(3) %mine
  call void @llvm.nvvm.barrier0()
  %first = load i32, ptr addrspace(3) %theirs
  call void @llvm.nvvm.barrier0()
  %doubled = mul i32 %value, 2
  store i32 %doubled, ptr addrspace(3) %mine
  call void @llvm.nvvm.barrier0()
  %second = load i32, ptr addrspace(3) %theirs
  %lane = and i32 %tid, 31
  %low = icmp ult i32 %lane, 10
  %low32 = zext i1 %low to i32
  %count = call i32 @llvm.nvvm.barrier0.popc(i32 %low32)
  %base = mul i32 %pid, 384
  %slot = mul i32 %tid, 3
  %index0 = add i32 %base, %slot
  %index1 = add i32 %index0, 1
  %index2 = add i32 %index0, 2
  %p0 = getelementptr i32, ptr addrspace(1) %out, i32 %index0
  %p1 = getelementptr i32, ptr addrspace(1) %out, i32 %index1
  %p2 = getelementptr i32, ptr addrspace(1) %out, i32 %index2
  store i32 %first, ptr addrspace(1) %p0
  store i32 %second, ptr addrspace(1) %p1
  store i32 %count, ptr addrspace(1) %p2
  ret void
}

declare i32 @llvm.nvvm.read.ptx.sreg.tid.x()
declare i32 @llvm.nvvm.read.ptx.sreg.ctaid.x()
declare void @llvm.nvvm.barrier0()
declare i32 @llvm.nvvm.barrier0.popc(i32)
)";

TEST(Fibers, BarrierOrdersSharedMemoryAcrossPrograms) {
  const auto kernel = compile_nvvm(kBarrierKernel, "neighbours", "%0: ptr<i32>");
  const int programs = 5;
  Buffer<std::int32_t> out(programs * kThreads * 3, Device::emu());
  const std::vector<KernelArgument> args = {pointer_to(out, "out")};
  const auto stats = kernel->launch(Device::emu(2), Grid{programs, 1, 1}, args);
  const std::vector<std::int32_t> got = out.to_host();
  int bad = 0;
  for (int p = 0; p < programs; ++p)
    for (int t = 0; t < kThreads; ++t) {
      const int neighbour = (t + 1) % kThreads;
      const std::size_t at = static_cast<std::size_t>((p * kThreads + t) * 3);
      bad += got[at] != 7 * neighbour + p;
      bad += got[at + 1] != 2 * (7 * neighbour + p);
      bad += got[at + 2] != 40;
    }
  EXPECT_EQ(bad, 0);
  EXPECT_EQ(stats.bytes_written, out.bytes());
  EXPECT_EQ(stats.bytes_read, 0u);
}

// Nine results per thread: idx from lane 5; bfly 3; up 2 (lanes 0 and 1 keep
// their own); down 4 (lanes 28..31 keep theirs); f32 bfly 16; idx 1 within
// segments of 8 lanes; ballot of odd lanes; all(lane < 32); uni(lane < 16).
const char* kShuffleKernel = R"(
define ptx_kernel void @shuffles(ptr addrspace(1) %out) {
entry:
  %tid = call i32 @llvm.nvvm.read.ptx.sreg.tid.x()
  %lane = and i32 %tid, 31
  %v = mul i32 %tid, 3
  %r0 = call i32 @llvm.nvvm.shfl.sync.idx.i32(i32 -1, i32 %v, i32 5, i32 31)
  %r1 = call i32 @llvm.nvvm.shfl.sync.bfly.i32(i32 -1, i32 %v, i32 3, i32 31)
  %r2 = call i32 @llvm.nvvm.shfl.sync.up.i32(i32 -1, i32 %v, i32 2, i32 0)
  %r3 = call i32 @llvm.nvvm.shfl.sync.down.i32(i32 -1, i32 %v, i32 4, i32 31)
  %f = sitofp i32 %v to float
  %g = call float @llvm.nvvm.shfl.sync.bfly.f32(i32 -1, float %f, i32 16, i32 31)
  %r4 = fptosi float %g to i32
  %r5 = call i32 @llvm.nvvm.shfl.sync.idx.i32(i32 -1, i32 %v, i32 1, i32 6175)
  %odd = trunc i32 %lane to i1
  %r6 = call i32 @llvm.nvvm.vote.ballot.sync(i32 -1, i1 %odd)
  %in_warp = icmp ult i32 %lane, 32
  %all = call i1 @llvm.nvvm.vote.all.sync(i32 -1, i1 %in_warp)
  %r7 = zext i1 %all to i32
  %low = icmp ult i32 %lane, 16
  %uni = call i1 @llvm.nvvm.vote.uni.sync(i32 -1, i1 %low)
  %r8 = zext i1 %uni to i32
  %base = mul i32 %tid, 9
  call void @put(ptr addrspace(1) %out, i32 %base, i32 0, i32 %r0)
  call void @put(ptr addrspace(1) %out, i32 %base, i32 1, i32 %r1)
  call void @put(ptr addrspace(1) %out, i32 %base, i32 2, i32 %r2)
  call void @put(ptr addrspace(1) %out, i32 %base, i32 3, i32 %r3)
  call void @put(ptr addrspace(1) %out, i32 %base, i32 4, i32 %r4)
  call void @put(ptr addrspace(1) %out, i32 %base, i32 5, i32 %r5)
  call void @put(ptr addrspace(1) %out, i32 %base, i32 6, i32 %r6)
  call void @put(ptr addrspace(1) %out, i32 %base, i32 7, i32 %r7)
  call void @put(ptr addrspace(1) %out, i32 %base, i32 8, i32 %r8)
  ret void
}

define internal void @put(ptr addrspace(1) %out, i32 %base, i32 %k, i32 %value) {
  %index = add i32 %base, %k
  %p = getelementptr i32, ptr addrspace(1) %out, i32 %index
  store i32 %value, ptr addrspace(1) %p
  ret void
}

declare i32 @llvm.nvvm.read.ptx.sreg.tid.x()
declare i32 @llvm.nvvm.shfl.sync.idx.i32(i32, i32, i32, i32)
declare i32 @llvm.nvvm.shfl.sync.bfly.i32(i32, i32, i32, i32)
declare i32 @llvm.nvvm.shfl.sync.up.i32(i32, i32, i32, i32)
declare i32 @llvm.nvvm.shfl.sync.down.i32(i32, i32, i32, i32)
declare float @llvm.nvvm.shfl.sync.bfly.f32(i32, float, i32, i32)
declare i32 @llvm.nvvm.vote.ballot.sync(i32, i1)
declare i1 @llvm.nvvm.vote.all.sync(i32, i1)
declare i1 @llvm.nvvm.vote.uni.sync(i32, i1)
)";

TEST(Fibers, ShufflesAndVotesFollowThePtxRules) {
  const auto kernel = compile_nvvm(kShuffleKernel, "shuffles", "%0: ptr<i32>");
  Buffer<std::int32_t> out(kThreads * 9, Device::emu());
  const std::vector<KernelArgument> args = {pointer_to(out, "out")};
  kernel->launch(Device::emu(1), Grid{1, 1, 1}, args);
  const std::vector<std::int32_t> got = out.to_host();
  for (int t = 0; t < kThreads; ++t) {
    const int lane = t % 32, warp = t - lane;
    auto v = [&](int l) { return 3 * (warp + l); };
    const std::vector<std::int32_t> want = {v(5),
                                            v(lane ^ 3),
                                            lane >= 2 ? v(lane - 2) : v(lane),
                                            lane + 4 <= 31 ? v(lane + 4) : v(lane),
                                            v(lane ^ 16),
                                            v((lane & 24) | 1),
                                            static_cast<std::int32_t>(0xaaaaaaaau),
                                            1,
                                            0};
    for (int k = 0; k < 9; ++k)
      ASSERT_EQ(got[static_cast<std::size_t>(t * 9 + k)], want[static_cast<std::size_t>(k)])
          << "thread " << t << ", result " << k;
  }
}

// Thread 0 returns early; the others wait at a barrier it never reaches.
const char* kDeadlockKernel = R"(
define ptx_kernel void @early_exit(ptr addrspace(1) %out) {
entry:
  %tid = call i32 @llvm.nvvm.read.ptx.sreg.tid.x()
  %first = icmp eq i32 %tid, 0
  br i1 %first, label %done, label %wait
wait:
  call void @llvm.nvvm.barrier0(), !kiln.place !0
  br label %done
done:
  ret void
}

declare i32 @llvm.nvvm.read.ptx.sreg.tid.x()
declare void @llvm.nvvm.barrier0()
!0 = !{!"early.hpp:9"}
)";

TEST(Fibers, ABarrierAnExitedThreadNeverReachesIsADeadlock) {
  const auto kernel = compile_nvvm(kDeadlockKernel, "early_exit", "%0: ptr<i32>");
  Buffer<std::int32_t> out(1, Device::emu());
  const std::vector<KernelArgument> args = {pointer_to(out, "out")};
  EXPECT_EQ(kernel_error([&] { kernel->launch(Device::emu(1), Grid{3, 1, 1}, args); }),
            "kernel early_exit: deadlock in program (0, 0, 0): of 128 threads 1 finished and 127 wait at barrier 0 "
            "(early.hpp:9) that the others never reach");
}

// Threads below 64 wait at one barrier, the others at another (a barrier
// reduction, so that no pass merges the two).
const char* kSplitBarrierKernel = R"(
define ptx_kernel void @split_barriers(ptr addrspace(1) %out) {
entry:
  %tid = call i32 @llvm.nvvm.read.ptx.sreg.tid.x()
  %low = icmp ult i32 %tid, 64
  br i1 %low, label %first, label %second
first:
  call void @llvm.nvvm.barrier0()
  br label %done
second:
  %count = call i32 @llvm.nvvm.barrier0.popc(i32 1)
  br label %done
done:
  ret void
}

declare i32 @llvm.nvvm.read.ptx.sreg.tid.x()
declare void @llvm.nvvm.barrier0()
declare i32 @llvm.nvvm.barrier0.popc(i32)
)";

TEST(Fibers, ThreadsAtDifferentBarriersAreAFault) {
  const auto kernel = compile_nvvm(kSplitBarrierKernel, "split_barriers", "%0: ptr<i32>");
  Buffer<std::int32_t> out(1, Device::emu());
  const std::vector<KernelArgument> args = {pointer_to(out, "out")};
  EXPECT_EQ(kernel_error([&] { kernel->launch(Device::emu(1), Grid{2, 1, 1}, args); }),
            "kernel split_barriers: threads of program (0, 0, 0) reach different barriers: thread 64 arrives at "
            "barrier 1, the 64 waiting with thread 0 at barrier 0; a branch or loop that the program's threads take "
            "differently must not hold a barrier");
}

// Lane 3 of each warp prints its thread index and a float through vprintf's
// packed argument buffer: i32 at 0, f64 at 8, a string pointer at 16, i64 at 24.
const char* kPrintKernel = R"(
@format = private unnamed_addr constant [23 x i8] c"t=%d x=%.2f %s n=%lld\0A\00"
@word = private unnamed_addr constant [4 x i8] c"emu\00"

define ptx_kernel void @printing(ptr addrspace(1) %out) {
entry:
  %buffer = alloca { i32, double, ptr, i64 }, align 8
  %tid = call i32 @llvm.nvvm.read.ptx.sreg.tid.x()
  %lane = and i32 %tid, 31
  %chosen = icmp eq i32 %lane, 3
  br i1 %chosen, label %print, label %done
print:
  store i32 %tid, ptr %buffer
  %x = getelementptr { i32, double, ptr, i64 }, ptr %buffer, i32 0, i32 1
  %tf = sitofp i32 %tid to double
  %half = fmul double %tf, 5.000000e-01
  store double %half, ptr %x
  %s = getelementptr { i32, double, ptr, i64 }, ptr %buffer, i32 0, i32 2
  store ptr @word, ptr %s
  %n = getelementptr { i32, double, ptr, i64 }, ptr %buffer, i32 0, i32 3
  store i64 -5000000000, ptr %n
  %written = call i32 @vprintf(ptr @format, ptr %buffer)
  br label %done
done:
  ret void
}

declare i32 @llvm.nvvm.read.ptx.sreg.tid.x()
declare i32 @vprintf(ptr, ptr)
)";

TEST(Fibers, VprintfReadsTheCudaArgumentBuffer) {
  const auto kernel = compile_nvvm(kPrintKernel, "printing", "%0: ptr<i32>", 2);
  Buffer<std::int32_t> out(1, Device::emu());
  const std::vector<KernelArgument> args = {pointer_to(out, "out")};
  ::testing::internal::CaptureStdout();
  kernel->launch(Device::emu(1), Grid{1, 1, 1}, args);
  EXPECT_EQ(::testing::internal::GetCapturedStdout(), "t=3 x=1.50 emu n=-5000000000\nt=35 x=17.50 emu n=-5000000000\n");
}

// Thread 5 of program 1 traps without a fault record.
const char* kTrapKernel = R"(
define ptx_kernel void @trapping(ptr addrspace(1) %out) {
entry:
  %tid = call i32 @llvm.nvvm.read.ptx.sreg.tid.x()
  %pid = call i32 @llvm.nvvm.read.ptx.sreg.ctaid.x()
  %t5 = icmp eq i32 %tid, 5
  %p1 = icmp eq i32 %pid, 1
  %both = and i1 %t5, %p1
  br i1 %both, label %fail, label %done
fail:
  call void asm sideeffect "trap;", ""()
  unreachable
done:
  ret void
}

declare i32 @llvm.nvvm.read.ptx.sreg.tid.x()
declare i32 @llvm.nvvm.read.ptx.sreg.ctaid.x()
)";

TEST(Fibers, TrapEndsTheLaunchWithAKernelError) {
  const auto kernel = compile_nvvm(kTrapKernel, "trapping", "%0: ptr<i32>");
  Buffer<std::int32_t> out(1, Device::emu());
  const std::vector<KernelArgument> args = {pointer_to(out, "out")};
  EXPECT_EQ(kernel_error([&] { kernel->launch(Device::emu(1), Grid{3, 1, 1}, args); }),
            "kernel trapping: trap (program (1, 0, 0), thread 5)");
}

// The odd threads claim the fault record (kiln/lowering/fault_record.hpp),
// write their index and the format "t=%d 100%% x" as words, and trap.
const char* kFaultRecordKernel = R"(
@kiln_fault_record = addrspace(1) externally_initialized global ptr addrspace(1) null, align 8

define ptx_kernel void @recording(ptr addrspace(1) %out) {
entry:
  %tid = call i32 @llvm.nvvm.read.ptx.sreg.tid.x()
  %odd = and i32 %tid, 1
  %fails = icmp eq i32 %odd, 1
  br i1 %fails, label %fail, label %done
fail:
  %record = load ptr addrspace(1), ptr addrspace(1) @kiln_fault_record
  %claim = cmpxchg ptr addrspace(1) %record, i32 0, i32 1 monotonic monotonic
  %won = extractvalue { i32, i1 } %claim, 1
  br i1 %won, label %fill, label %stop
fill:
  %value = getelementptr i8, ptr addrspace(1) %record, i64 8
  %wide = zext i32 %tid to i64
  store i64 %wide, ptr addrspace(1) %value
  %w0 = getelementptr i8, ptr addrspace(1) %record, i64 56
  store i32 1680162164, ptr addrspace(1) %w0
  %w1 = getelementptr i8, ptr addrspace(1) %record, i64 60
  store i32 808464672, ptr addrspace(1) %w1
  %w2 = getelementptr i8, ptr addrspace(1) %record, i64 64
  store i32 2015372581, ptr addrspace(1) %w2
  %w3 = getelementptr i8, ptr addrspace(1) %record, i64 68
  store i32 0, ptr addrspace(1) %w3
  call void @llvm.nvvm.membar.sys()
  store volatile i32 2, ptr addrspace(1) %record
  br label %stop
stop:
  call void asm sideeffect "trap;", ""()
  unreachable
done:
  store i32 1, ptr addrspace(1) %out
  ret void
}

declare i32 @llvm.nvvm.read.ptx.sreg.tid.x()
declare void @llvm.nvvm.membar.sys()
)";

TEST(Fibers, TheFaultRecordsMessageEndsTheLaunch) {
  const auto kernel = compile_nvvm(kFaultRecordKernel, "recording", "%0: ptr<i32>");
  Buffer<std::int32_t> out(1, Device::emu());
  const std::vector<KernelArgument> args = {pointer_to(out, "out")};
  // Thread 1 runs first of the odd threads; each program starts with an empty record.
  for (int launch = 0; launch < 2; ++launch)
    EXPECT_EQ(kernel_error([&] { kernel->launch(Device::emu(1), Grid{2, 1, 1}, args); }), "t=1 100% x");
}

// A faulted thread's frames are abandoned, never unwound, so the fault's
// message is made and freed before the jump away: faults leak nothing. Twenty
// faulting launches (a trap, threads at different barriers), each of whose
// messages is over 40 characters, may add less than 32 bytes a launch to
// what glibc's malloc counts in use (room for unrelated one-off allocations).
TEST(Fibers, FaultsLeakNoMemory) {
  const auto trapping = compile_nvvm(kTrapKernel, "trapping", "%0: ptr<i32>");
  const auto split = compile_nvvm(kSplitBarrierKernel, "split_barriers", "%0: ptr<i32>");
  Buffer<std::int32_t> out(1, Device::emu());
  const std::vector<KernelArgument> args = {pointer_to(out, "out")};
  const auto faulting_launches = [&] {
    EXPECT_GT(kernel_error([&] { trapping->launch(Device::emu(1), Grid{3, 1, 1}, args); }).size(), 40u);
    EXPECT_GT(kernel_error([&] { split->launch(Device::emu(1), Grid{1, 1, 1}, args); }).size(), 40u);
  };
  faulting_launches();  // whatever a first launch sets up once
  const auto in_use = static_cast<std::int64_t>(mallinfo2().uordblks);
  constexpr int kRounds = 10;
  for (int round = 0; round < kRounds; ++round) faulting_launches();
  EXPECT_LT(static_cast<std::int64_t>(mallinfo2().uordblks) - in_use, 2 * kRounds * 32);
}

}  // namespace
