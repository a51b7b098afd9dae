#!/usr/bin/env bash
# Fuzzing: configure and build the libFuzzer targets of fuzz/ in their own
# build folder (clang, -fsanitize=fuzzer,address,undefined, no LLVM), collect
# seeds (kernels from the tests for the IR targets, kiln command lines from the
# cli tests and the book for cli_args_fuzz), then run each target for SECONDS
# (default 60), as many side by side as KILN_JOBS.
# Prints each target's executions, coverage (cov: edges, ft: features) and
# findings; exits 1 when a target found something (the input is printed, in
# base64, and kept in <build>/findings/), 0 otherwise.
set -euo pipefail

usage() {
  cat >&2 <<'USAGE'
usage: scripts/fuzz.sh [SECONDS] [TARGET...]   (targets: ir_parser_fuzz ir_optimize_fuzz cli_args_fuzz; default all)
environment: KILN_FUZZ_BUILD_DIR (default build-fuzz/), KILN_FUZZ_CXX (default clang++-14),
             KILN_JOBS (build jobs, and fuzzers run side by side; default: all cores)
USAGE
  exit 2
}

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
build="${KILN_FUZZ_BUILD_DIR:-$root/build-fuzz}"
cxx="${KILN_FUZZ_CXX:-clang++-14}"
jobs="${KILN_JOBS:-$(nproc)}"
seconds=60
if (($# > 0)); then
  [[ "$1" =~ ^[0-9]+$ ]] || usage
  seconds="$1"
  shift
fi
targets=("$@")
((${#targets[@]} > 0)) || targets=(ir_parser_fuzz ir_optimize_fuzz cli_args_fuzz)

command -v "$cxx" >/dev/null || {
  echo "scripts/fuzz.sh: $cxx not found (Debian 12: apt-get install clang-14 libclang-rt-14-dev)" >&2
  exit 1
}
cmake -S "$root" -B "$build" -DKILN_FUZZ=ON -DCMAKE_CXX_COMPILER="$cxx" -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
cmake --build "$build" --target "${targets[@]}" -j "$jobs"
python3 "$root/scripts/fuzz_seeds.py" "$build"

findings="$build/findings"

# Fuzzes one target for SECONDS; its exit status goes to <build>/<target>.status.
run_target() {
  local target="$1" inputs=ir status=0 # ir: the seeds and dictionary of scripts/fuzz_seeds.py
  local corpus="$build/corpus/$target"
  rm -f "$build/$target.status" # an earlier run's, which must not stand in for this one's
  mkdir -p "$corpus" "$findings"
  rm -f "$findings/$target"-* # a finding of an earlier run is in that run's log
  if [[ "$target" == cli_* ]]; then inputs=cli; fi
  # -timeout: one input running over 10 s is a hang, a finding like a crash.
  "$build/fuzz/$target" -max_total_time="$seconds" -timeout=10 -rss_limit_mb=4096 -print_final_stats=1 \
    -dict="$build/$inputs.dict" -artifact_prefix="$findings/$target-" \
    "$corpus" "$root/fuzz/corpus/$target" "$build/seeds/$inputs" >"$build/$target.log" 2>&1 || status=$?
  echo "$status" >"$build/$target.status"
}

# Each fuzzer runs on one core: as many targets run side by side as there are jobs.
running=0
for target in "${targets[@]}"; do
  echo "== $target: ${seconds} s, corpus $build/corpus/$target"
  run_target "$target" &
  running=$((running + 1))
  if ((running >= jobs)); then
    wait -n
    running=$((running - 1))
  fi
done
wait

found=0
for target in "${targets[@]}"; do
  log="$build/$target.log"
  status="$(cat "$build/$target.status")"
  last="$(grep -E '^#[0-9]+' "$log" | tail -n 1 || true)"
  runs="$(sed -n 's/^stat::number_of_executed_units: *//p' "$log")"
  echo "$target: ${runs:-?} executions; last status: ${last:-none}"
  grep "^$target: " "$log" || true  # the target's own tally, if it keeps one
  if ((status != 0)); then
    found=1
    echo "$target: FINDING (exit $status), log $log:" >&2
    grep -E '^(finding:|==[0-9]+==ERROR|SUMMARY|.*runtime error|terminate called|Test unit written|artifact_prefix)' "$log" >&2 || tail -n 30 "$log" >&2
    # The input itself, so that a finding on another machine can be replayed
    # here: the kernels a differential finding printed, and the input's bytes.
    sed -n '/^---- first/,/^==[0-9]*== ERROR/p' "$log" | head -n 200 >&2
    for input in "$findings/$target"-*; do
      [[ -f "$input" ]] || continue
      echo "input $input, base64:" >&2
      base64 -w 0 "$input" >&2
      echo >&2
    done
  fi
done
exit "$found"
