#!/usr/bin/env bash
# Builds chapter 22's library (examples/book/library) as a project of its
# own, the way a user's project would build it: kiln installed into a fresh
# prefix, then find_package(kiln) against that prefix. Exits non-zero, with
# the failing step's output, when a step fails.
#
# Usage: book_library.sh BUILD_DIR WORK_DIR CMAKE CXX_COMPILER [COMPILER_LAUNCHER]
set -euo pipefail
build_dir=$1 work=$2 cmake=$3 cxx=$4 launcher=${5:-}
source_dir=$(cd "$(dirname "$0")/../examples/book/library" && pwd)
rm -rf "$work"
mkdir -p "$work"

step() {
  local what=$1
  shift
  if ! "$@" > "$work/step.log" 2>&1; then
    echo "book_library: $what failed:" >&2
    cat "$work/step.log" >&2
    exit 1
  fi
}

step "installing kiln" "$cmake" --install "$build_dir" --prefix "$work/prefix"
step "configuring rownorm" "$cmake" -S "$source_dir" -B "$work/build" -DCMAKE_PREFIX_PATH="$work/prefix" \
  -DCMAKE_FIND_PACKAGE_NO_PACKAGE_REGISTRY=ON -DCMAKE_CXX_COMPILER="$cxx" \
  ${launcher:+-DCMAKE_CXX_COMPILER_LAUNCHER="$launcher"} -DCMAKE_BUILD_TYPE=RelWithDebInfo
kiln_dir=$(sed -n 's/^kiln_DIR:[A-Z]*=//p' "$work/build/CMakeCache.txt")
case "$kiln_dir" in
  "$work/prefix"/*) ;;
  *) echo "book_library: rownorm found kiln at $kiln_dir, not under $work/prefix" >&2; exit 1 ;;
esac
step "building rownorm" "$cmake" --build "$work/build"
echo "book_library: rownorm built against the kiln installed in $work/prefix"
