#!/usr/bin/env bash
# Fails when a C++ file of the repository differs from what clang-format makes
# of it with the project's .clang-format; lists each such file and how to fix
# it. Usage: scripts/check_format.sh [clang-format executable]
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
clang_format="${1:-clang-format-19}"
command -v "$clang_format" >/dev/null ||
  { echo "check_format: $clang_format not found (scripts/dev.sh setup installs clang-format-19)" >&2; exit 1; }

cd "$root"
if git rev-parse --is-inside-work-tree >/dev/null 2>&1; then
  mapfile -t files < <(git ls-files -- '*.cpp' '*.hpp' '*.h')
else
  mapfile -t files < <(find . -path ./build -prune -o \( -name '*.cpp' -o -name '*.hpp' -o -name '*.h' \) -print)
fi
unformatted=()
for file in "${files[@]}"; do
  "$clang_format" --style=file --dry-run --Werror "$file" >/dev/null 2>&1 || unformatted+=("$file")
done
if ((${#unformatted[@]} > 0)); then
  echo "check_format: ${#unformatted[@]} of ${#files[@]} files are not formatted:" >&2
  printf '  %s\n' "${unformatted[@]}" >&2
  echo "check_format: run $clang_format -i on them (the style is .clang-format)" >&2
  exit 1
fi
echo "check_format: all ${#files[@]} C++ files are formatted"
