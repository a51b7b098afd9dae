#!/usr/bin/env bash
# Builds the device bundle: a folder that runs kiln's GPU checks on a machine
# with an NVIDIA GPU and its driver and nothing else installed
# (scripts/device-check.sh, which it carries, says what it runs).
#
# usage: scripts/device-bundle.sh [OUTPUT_DIR]     (default: bundle/)
# environment: KILN_BUNDLE_BUILD_DIR (default build-bundle/), KILN_JOBS (default 1)
#
# The build (its own folder, KILN_STATIC_LLVM=ON, the build type and flags of
# the development build so that ccache serves what that build compiled) makes
# two self-contained binaries: the kiln tool and kiln_gpu_tests (the `gpu`
# tests in one binary). Both link LLVM, libstdc++ and libgcc statically and
# need only libc, libm and (at run time, through dlopen) libcuda. They travel
# xz-compressed in kiln-bin.tar.xz with libdevice.10.bc and the toolkit's
# ptxas (kiln uses /usr/local/cuda/bin/ptxas where the device has one, else
# the one beside it; KILN_BUNDLE_PTXAS=0 leaves it out, and then a device
# without a toolkit gets PTX compiled by its driver).
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
build_dir="${KILN_BUNDLE_BUILD_DIR:-$root/build-bundle}"
out="${1:-$root/bundle}"
jobs="${KILN_JOBS:-1}"
libdevice=/usr/local/cuda/nvvm/libdevice/libdevice.10.bc
ptxas=/usr/local/cuda/bin/ptxas

fail() {
  echo "scripts/device-bundle.sh: $*" >&2
  exit 1
}

[[ -f "$libdevice" ]] || fail "no $libdevice (the CUDA toolkit is needed to build the bundle)"
command -v xz >/dev/null || fail "xz is needed to pack the bundle"

if [[ ! -f "$build_dir/CMakeCache.txt" ]]; then
  mkdir -p "$build_dir"
  cmake -S "$root" -B "$build_dir" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DKILN_STATIC_LLVM=ON \
    -DKILN_BUILD_BENCHMARKS=OFF >"$build_dir/configure.log" 2>&1 ||
    { cat "$build_dir/configure.log" >&2; fail "configuring $build_dir failed"; }
fi
# Other builds share the machine's cores: lowest priority, one job by default.
nice -n 19 cmake --build "$build_dir" -j "$jobs" --target kiln_tool kiln_gpu_tests

staging="$(mktemp -d)"
trap 'rm -rf "$staging"' EXIT
strip -o "$staging/kiln" "$build_dir/examples/kiln"
strip -o "$staging/kiln_gpu_tests" "$build_dir/tests/kiln_gpu_tests"
cp "$libdevice" "$staging/"
if [[ "${KILN_BUNDLE_PTXAS:-1}" == 1 ]]; then
  [[ -x "$ptxas" ]] || fail "there is no $ptxas to bundle (KILN_BUNDLE_PTXAS=0 leaves it out)"
  cp "$ptxas" "$staging/"
fi

# Each binary may depend on nothing a bare machine lacks.
for binary in "$staging/kiln" "$staging/kiln_gpu_tests"; do
  allowed='^(linux-vdso\.so\.1|/lib64/ld-linux-x86-64\.so\.2|lib(c|m|pthread|dl|rt)\.so\.[0-9]+)$'
  needed="$(ldd "$binary" | awk '{print $1}' | grep -vE "$allowed" || true)"
  [[ -z "$needed" ]] || fail "$(basename "$binary") needs libraries a bare machine lacks: $needed"
done

rm -rf "$out"
mkdir -p "$out"
tar -C "$staging" -cf - . | xz -9 -T1 >"$out/kiln-bin.tar.xz"
cp "$root/scripts/device-check.sh" "$out/"
# bench/compare: the GPU half of the comparison with Triton and torch (device-check.sh runs it first).
mkdir -p "$out/compare"
cp "$root"/bench/compare/*.py "$root/bench/compare/README.md" "$out/compare/"
{
  echo "kiln device bundle, built $(date -u +%Y-%m-%dT%H:%MZ) from $(git -C "$root" rev-parse --short HEAD 2>/dev/null || echo unknown)"
  echo "run on the GPU machine: ./device-check.sh OUTPUT_DIR"
  echo "contents of kiln-bin.tar.xz:"
  (cd "$staging" && ls -l)
  echo "dynamic dependencies:"
  for binary in kiln kiln_gpu_tests; do echo "$binary:"; ldd "$staging/$binary"; done
} >"$out/MANIFEST.txt"
du -sh "$out"
