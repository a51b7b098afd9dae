#!/usr/bin/env bash
# The test suites under sanitizers (KILN_SANITIZE): configures build-asan or
# build-tsan, builds the test binaries a pass needs, runs its tests and prints
# each group's ctest summary and sanitizer report count. Any failed test or
# report fails the run.
set -euo pipefail

usage() {
  cat >&2 <<'EOF'
usage: scripts/sanitize.sh address|address-unit|thread [extra ctest args...]
  address       ASan + UBSan (+ LeakSanitizer): labels unit, capi, correctness, error, cli, and the emu slice
                (the emu device's own tests of fibers, cp.async, mma and faults, and the dot, matmul and
                attention tests on emu, which use ldmatrix, mma and cp.async)
  address-unit  ASan + UBSan over the labels unit and capi only, less the FakeGpu tests, whose binary
                needs the kernel library (the bounded pass CI runs)
  thread        TSan: the compile cache and concurrent kl::compile tests, then correctness tests with
                parallel programs on the interpreter (KILN_DEVICE=cpu:4) and on emu (KILN_DEVICE=emu:4)
environment: KILN_JOBS (default: all cores)
EOF
  exit 2
}

(($# >= 1)) || usage
mode="$1"
shift
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
jobs="${KILN_JOBS:-$(nproc)}"

kernel_test_targets=()
for source in "$root"/tests/kernels/*_test.cpp; do
  kernel_test_targets+=("kiln_kernels_$(basename "$source" .cpp)")
done
unit_targets=(kiln_unit_tests kiln_lowering_tests kiln_capi_tests)
# The emu slice: fibers, barriers, warp collectives and faults (Fibers),
# cp.async and its bounds faults (AsyncCopy, EmuPipeline), mma.sync (Mma),
# whole kernels and an out-of-bounds store (EmuKernels), wgmma and fp8
# mma.sync (Wgmma, Wgmma8Bit, Fp8Mma), and ldmatrix, mma.sync and cp.async
# rings in the dot products, matmuls and attention of the correctness
# binaries on emu, and wgmma in them on emu-sm_90a.
emu_slice='^(Fibers|AsyncCopy|SharedChecks|EmuPipeline|Mma|EmuKernels|Wgmma|Wgmma8Bit|Fp8Mma)\.|^emu\.(Dot|TiledMatmul|PipelinedDot|Matmul|Attention)\.|^emu90\.(PipelinedDot|Matmul|Attention)\.'
# The correctness tests whose programs share memory across host threads:
# atomics and locks, reductions and dot products, loads, stores, random.
parallel_slice='^(AtomicRmw|AtomicCas|Lock|Reduce|Dot|PipelinedDot|LoadStore|Random)\.'

case "$mode" in
  address | address-unit)
    build_dir="$root/build-asan"
    sanitize=address,undefined
    targets=("${unit_targets[@]}")
    [[ "$mode" == address ]] &&
      targets+=(kiln_fake_gpu_tests kiln_correctness_tests "${kernel_test_targets[@]}" kiln_error_tests kiln_tool
        kiln_emu_tests)
    ;;
  thread)
    build_dir="$root/build-tsan"
    sanitize=thread
    targets=(kiln_unit_tests kiln_correctness_tests)
    ;;
  *) usage ;;
esac

reports="$build_dir/sanitizer-reports"
# Every report goes to a file of $reports (name.pid), so that one in a process
# whose exit status a test does not check still counts.
export ASAN_OPTIONS="log_path=$reports/asan:halt_on_error=1:detect_leaks=1:detect_stack_use_after_return=1:check_initialization_order=1:strict_init_order=1"
export UBSAN_OPTIONS="log_path=$reports/ubsan:halt_on_error=1:print_stacktrace=1"
export TSAN_OPTIONS="log_path=$reports/tsan:halt_on_error=1:second_deadlock_stack=1"

# -g1: line tables and function names, all a report's stack needs, at four
# fifths of -g's compile time.
if [[ ! -f "$build_dir/CMakeCache.txt" ]]; then
  echo "sanitize: configuring $build_dir (KILN_SANITIZE=$sanitize)" >&2
  cmake -S "$root" -B "$build_dir" -DCMAKE_BUILD_TYPE=RelWithDebInfo "-DCMAKE_CXX_FLAGS_RELWITHDEBINFO=-O1 -g1 -DNDEBUG" \
    -DKILN_SANITIZE="$sanitize" -DKILN_BUILD_BENCHMARKS=OFF >"$build_dir.configure.log" 2>&1 ||
    {
      cat "$build_dir.configure.log" >&2
      exit 1
    }
fi
cmake --build "$build_dir" --parallel "$jobs" --target "${targets[@]}"

rm -rf "$reports"
mkdir -p "$reports"
summaries=()
failed=0

# Runs one group of tests: run_group <name> [environment...] -- <ctest args...>.
run_group() {
  local name="$1" output status
  shift
  local environment=()
  while [[ "$1" != -- ]]; do
    environment+=("$1")
    shift
  done
  shift
  echo "sanitize: $name" >&2
  output="$(mktemp)"
  status=0
  env "${environment[@]}" ctest --test-dir "$build_dir" --output-on-failure --parallel "$jobs" "$@" 2>&1 |
    tee "$output" || status=$?
  local summary
  summary="$(grep -E 'tests passed|No tests were found' "$output" | tail -n 1 || true)"
  [[ -n "$summary" ]] || summary="no ctest summary (exit status $status)"
  if grep -q 'No tests were found' "$output"; then status=1; fi
  summaries+=("$name: $summary")
  ((status == 0)) || failed=1
  rm -f "$output"
}

if [[ "$mode" == thread ]]; then
  run_group "unit (compile cache, concurrent compile)" -- -L unit \
    -R '^(StableHash|CacheKeyText|CompileCacheTest|ConcurrentCompile)\.' "$@"
  run_group "correctness on cpu:4 ($parallel_slice)" KILN_DEVICE=cpu:4 -- -L correctness -R "$parallel_slice" "$@"
  run_group "correctness on emu:4 ($parallel_slice)" KILN_DEVICE=emu:4 -- -L correctness -R "$parallel_slice" "$@"
else
  run_group unit -- -L unit "$@"
  run_group capi -- -L capi "$@"
  if [[ "$mode" == address ]]; then
    run_group correctness -- -L correctness "$@"
    run_group error -- -L error "$@"
    run_group cli -- -L cli "$@"
    run_group "emu ($emu_slice)" -- -L emu -R "$emu_slice" "$@"
  fi
fi

mapfile -t report_files < <(find "$reports" -type f | sort)
echo
echo "sanitize ($mode) summary:"
for summary in "${summaries[@]}"; do echo "  $summary"; done
echo "  sanitizer reports: ${#report_files[@]}"
for file in "${report_files[@]}"; do
  echo "---- $file"
  head -n 80 "$file"
done
((${#report_files[@]} == 0 && failed == 0))
