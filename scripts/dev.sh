#!/usr/bin/env bash
# Developer entry point: set up a Debian 12 machine, build, test, run a kernel.
set -euo pipefail

usage() {
  cat >&2 <<'EOF'
usage: scripts/dev.sh setup                     install the packages kiln needs (as root)
       scripts/dev.sh build                     setup, then configure and build build/
       scripts/dev.sh test                      build, then run every test
       scripts/dev.sh run <kernel> [flags...]   build the kiln tool, then `kiln run <kernel> [flags...]`
environment: KILN_BUILD_DIR (default build/), KILN_JOBS (default: all cores)
EOF
  exit 2
}

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
build_dir="${KILN_BUILD_DIR:-$root/build}"
jobs="${KILN_JOBS:-$(nproc)}"

packages=(
  llvm-19-dev libzstd-dev libboost1.74-dev libboost-context1.74-dev libgtest-dev libbenchmark-dev
  libcli11-dev libfmt-dev nlohmann-json3-dev ccache cmake g++ make clang-format-19 python3 python3-venv pandoc
  clang-14 libclang-rt-14-dev librsvg2-bin
)
# bench/compare's Triton, pinned to the GPU machine's version, and NumPy for
# its interpreter checks (2.4 breaks Triton 3.6's interpreter), in a virtual
# environment in the build folder (the compare and python tests run its python3).
triton_version=3.6.0
numpy_version=2.3.5

fail() {
  echo "scripts/dev.sh: $*" >&2
  exit 1
}

# Prints the packages of the list that dpkg does not report as installed.
missing_packages() {
  local installed p
  installed="$(dpkg-query -W -f='${Package} ${Status}\n' "${packages[@]}" 2>/dev/null |
    awk '$NF == "installed" { print $1 }' || true)"
  for p in "${packages[@]}"; do
    grep -qxF "$p" <<<"$installed" || echo "$p"
  done
}

# Installs the missing packages; does nothing (and never calls apt) when none is.
setup() {
  command -v dpkg-query >/dev/null ||
    fail "setup supports Debian 12 (apt) only; elsewhere install the equivalents of: ${packages[*]}"
  local missing
  mapfile -t missing < <(missing_packages)
  if ((${#missing[@]} == 0)); then
    return 0
  fi
  if ((EUID != 0)); then
    fail "missing packages: ${missing[*]}; install them as root with: apt-get update && apt-get install -y ${missing[*]}"
  fi
  echo "scripts/dev.sh: installing ${missing[*]}" >&2
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -q
  apt-get install -y -q --no-install-recommends "${missing[@]}"
}

# Configures the build folder unless it already holds a generated build.
configure() {
  if [[ -f "$build_dir/CMakeCache.txt" && (-f "$build_dir/Makefile" || -f "$build_dir/build.ninja") ]]; then
    return 0
  fi
  mkdir -p "$build_dir"
  echo "scripts/dev.sh: configuring $build_dir" >&2
  # ccache, when installed, is picked up by the top-level CMakeLists.txt.
  if ! cmake -S "$root" -B "$build_dir" -DCMAKE_BUILD_TYPE=RelWithDebInfo >"$build_dir/configure.log" 2>&1; then
    cat "$build_dir/configure.log" >&2
    fail "configuring $build_dir failed (log: $build_dir/configure.log)"
  fi
}

# Makes $build_dir/venv with the pinned triton and numpy unless it has them already.
python_env() {
  local venv="$build_dir/venv"
  local pinned="import sys, numpy, triton; sys.exit((triton.__version__, numpy.__version__) != ('$triton_version', '$numpy_version'))"
  if [[ -x "$venv/bin/python3" ]] && "$venv/bin/python3" -c "$pinned" 2>/dev/null; then
    return 0
  fi
  echo "scripts/dev.sh: installing triton==$triton_version numpy==$numpy_version into $venv" >&2
  python3 -m venv "$venv" ||
    fail "cannot make a virtual environment at $venv with python3 -m venv (on Debian: apt-get install python3-venv)"
  "$venv/bin/python3" -m pip install --quiet --disable-pip-version-check "triton==$triton_version" \
    "numpy==$numpy_version" ||
    fail "cannot install triton==$triton_version numpy==$numpy_version into $venv with pip (is PyPI reachable?); the compare tests need them"
}

# Builds everything, or the targets given as `--target <name>`.
build() {
  configure
  cmake --build "$build_dir" --parallel "$jobs" "$@"
}

(($# >= 1)) || usage
command="$1"
shift

case "$command" in
  setup)
    (($# == 0)) || usage
    setup
    ;;
  build)
    (($# == 0)) || usage
    setup
    build
    python_env
    ;;
  test)
    (($# == 0)) || usage
    setup
    build
    python_env
    ctest --test-dir "$build_dir" --output-on-failure --parallel "$jobs"
    ;;
  run)
    (($# >= 1)) || usage
    setup
    # Build output goes to stderr so that stdout is the kernel run's alone.
    build --target kiln_tool >&2
    exec "$build_dir/examples/kiln" run "$@"
    ;;
  *)
    usage
    ;;
esac
