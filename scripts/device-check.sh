#!/usr/bin/env bash
# Runs kiln's GPU checks from a device bundle (scripts/device-bundle.sh) on a
# machine with an NVIDIA GPU and its driver and nothing else installed, and
# writes a Markdown results table and the raw outputs to OUTPUT_DIR.
#
# usage: ./device-check.sh OUTPUT_DIR      (run from anywhere; the bundle is this script's folder)
#
# Steps, each under a time limit and all within KILN_CHECK_BUDGET seconds
# (default 540), each one's exit status recorded: first the comparison with
# Triton and torch (compare/compare.py gpu: kiln, Triton and torch timed on
# the same shapes, starting no case after KILN_COMPARE_BUDGET seconds, default
# 180; needs the machine's python3 with torch and triton); `kiln info`; the `gpu` tests
# (kiln_gpu_tests with KILN_DEVICE=cuda: every correctness and sample-kernel
# test on the GPU, plus the CUDA driver and device tests), one process per
# test suite so that a kernel that faults (and so spoils its CUDA context)
# fails only its own suite; `kiln run <kernel> --device cuda --check` for
# every kernel `kiln list` names, with --bench; `kiln bench --suite fusion --device cuda
# --json`. OUTPUT_DIR receives eight files: results.md, compare.txt,
# compare.json, info.txt, gpu_tests.txt, runs.txt, bench_fusion.jsonl,
# bench_fusion.txt. Without a
# usable GPU every step fails or skips with the driver's one-line reason; the
# script itself exits 0 when every step passed, else 1.
set -uo pipefail

bundle="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
out="${1:?usage: device-check.sh OUTPUT_DIR}"
mkdir -p "$out"
out="$(cd "$out" && pwd)"
work="$(mktemp -d "${TMPDIR:-/tmp}/kiln-device-check-XXXXXX")"
trap 'rm -rf "$work"' EXIT

# Unpacks the binaries: with xz when present, else with Python's lzma.
if command -v xz >/dev/null; then
  xz -dc "$bundle/kiln-bin.tar.xz" | tar -C "$work" -xf -
else
  python3 -c 'import sys, tarfile; tarfile.open(sys.argv[1], "r:xz").extractall(sys.argv[2])' \
    "$bundle/kiln-bin.tar.xz" "$work"
fi || { echo "device-check.sh: cannot unpack $bundle/kiln-bin.tar.xz" >&2; exit 1; }
kiln="$work/kiln"
# A fresh compile cache, so that every kernel is compiled here; ptxas from the
# bundle when it has one (kiln looks beside itself), else the toolkit's.
export KILN_CACHE_DIR="$work/cache"

results="$out/results.md"
all_passed=1
deadline=$(($(date +%s) + ${KILN_CHECK_BUDGET:-540}))

# The smaller of LIMIT and the seconds left before the deadline (at least 1).
limit_within_budget() {
  local left=$((deadline - $(date +%s)))
  ((left < $1)) && echo $((left > 1 ? left : 1)) || echo "$1"
}
{
  echo "# kiln device check"
  echo
  echo "$(date -u +%Y-%m-%dT%H:%M:%SZ) on $(hostname); $(cat "$bundle/MANIFEST.txt" 2>/dev/null | head -1)"
  echo
  echo "| step | status | exit | seconds | summary |"
  echo "| --- | --- | --- | --- | --- |"
} >"$results"

# step NAME LIMIT_SECONDS OUTPUT_FILE SUMMARY_COMMAND -- COMMAND...: runs
# COMMAND with its output appended to OUTPUT_FILE and adds a table row whose
# summary is SUMMARY_COMMAND's output on OUTPUT_FILE's new part.
step() {
  local name="$1" limit="$2" log="$3" summarize="$4"
  shift 5
  local part="$work/part.txt" start end code status
  limit=$(limit_within_budget "$limit")
  start=$(date +%s.%N)
  timeout --kill-after=10 "$limit" "$@" >"$part" 2>&1
  code=$?
  end=$(date +%s.%N)
  {
    echo "===== $name: $* (exit $code)"
    cat "$part"
  } >>"$log"
  if ((code == 0)); then status=pass; elif ((code == 124 || code == 137)); then status="timeout (${limit}s)"; else status=FAIL; fi
  ((code == 0)) || all_passed=0
  local summary
  summary="$($summarize "$part" | tr '\n|' ' /' | cut -c1-300)"
  printf '| %s | %s | %s | %s | %s |\n' "$name" "$status" "$code" \
    "$(awk -v start="$start" -v end="$end" 'BEGIN { printf "%.1f", end - start }')" "$summary" >>"$results"
}

last_lines() { grep -v '^\s*$' "$1" | tail -3; }
check_line() { grep -E 'check:|bench:|^kiln:' "$1" | head -3; }
suites_summary() { cat "$1"; }

# The gpu tests, one process per test suite, with their output appended to
# gpu_tests.txt; prints the totals and the suites that failed or crashed.
gpu_tests() {
  local tests="$work/kiln_gpu_tests" log="$out/gpu_tests.txt" passed=0 failed=0 skipped=0 bad="" suite part code
  part="$work/suite.txt"
  # A suite's name before any "/" (typed and parameterised suites share it).
  for suite in $(KILN_DEVICE=cuda "$tests" --gtest_list_tests |
    awk '/^[^ ]/ && $1 ~ /\.$/ { name = $1; sub(/[\/.].*/, "", name); if (!seen[name]++) print name }'); do
    timeout --kill-after=10 "$(limit_within_budget 120)" env KILN_DEVICE=cuda "$tests" \
      --gtest_filter="${suite}.*:${suite}/*" >"$part" 2>&1
    code=$?
    { echo "===== $suite (exit $code)"; cat "$part"; } >>"$log"
    passed=$((passed + $(sed -n 's/^\[  PASSED  \] \([0-9]*\) tests\{0,1\}\.$/\1/p' "$part" | head -1 | grep . || echo 0)))
    failed=$((failed + $(sed -n 's/^\[  FAILED  \] \([0-9]*\) tests\{0,1\}, listed below:$/\1/p' "$part" | head -1 | grep . || echo 0)))
    skipped=$((skipped + $(sed -n 's/^\[  SKIPPED \] \([0-9]*\) tests\{0,1\}, listed below:$/\1/p' "$part" | head -1 | grep . || echo 0)))
    ((code == 0)) || bad="$bad $suite(exit $code)"
  done
  echo "passed $passed, failed $failed, skipped $skipped; suites failing:${bad:- none}"
  grep -m1 'no GPU is usable here' "$log"
  [[ -z "$bad" ]] && ((passed > 0))
}
bench_summary() { grep -c '"kernel"' "$1" | sed 's/$/ fused kernels timed/'; }

compare_summary() { grep -E '^(not run|compare.py gpu:)|MISMATCH|kiln: ' "$1" | head -3; grep -cE '^[a-z0-9_]+\.[^ ]+ +[0-9.-]+ ' "$1" | sed 's/$/ cases timed/'; }
step "compare gpu" 240 "$out/compare.txt" compare_summary -- python3 "$bundle/compare/compare.py" --kiln "$kiln" \
  gpu --json "$out/compare.json" --budget-s "${KILN_COMPARE_BUDGET:-180}"
step "kiln info" 60 "$out/info.txt" last_lines -- "$kiln" info
export -f gpu_tests limit_within_budget
export out work deadline
step "gpu tests" 420 "$work/gpu_tests_summary.txt" suites_summary -- bash -c gpu_tests
for kernel in $("$kiln" list | awk '/^[a-z0-9_]+ / {print $1}'); do
  step "run $kernel" 120 "$out/runs.txt" check_line -- "$kiln" run "$kernel" --device cuda --check --bench
done
step "bench fusion" 300 "$out/bench_fusion.txt" bench_summary -- "$kiln" bench --suite fusion --device cuda --json
grep '^{' "$out/bench_fusion.txt" >"$out/bench_fusion.jsonl"

echo >>"$results"
echo "raw outputs: compare.txt, compare.json, info.txt, gpu_tests.txt, runs.txt, bench_fusion.jsonl, bench_fusion.txt" >>"$results"
cat "$results"
((all_passed)) && exit 0 || exit 1
