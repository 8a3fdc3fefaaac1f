#!/usr/bin/env bash
# Checks that helix's C, C++ and CUDA files are formatted as .clang-format
# says (clang-format --dry-run --Werror): one line per file that is not,
# and exit 1. Without BASE every tracked and new file (what CI runs: about
# 10 s); with BASE the files changed since that commit. --fix formats them
# in place instead.
#
# usage: scripts/check-format.sh [--fix] [BASE]
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
fix=0
[ "${1:-}" = --fix ] && { fix=1; shift; }
base=${1:-}
if ! command -v clang-format > /dev/null; then
  "$root/scripts/setup.sh" > /dev/null
fi
if [ -n "$base" ]; then
  git rev-parse --verify -q "$base" > /dev/null ||
    { echo "check-format: error: $base is not a commit" >&2; exit 1; }
  changed=$(git diff --name-only --diff-filter=ACMR "$base" --)
else
  changed=$(git ls-files)
fi
mapfile -t files < <({ echo "$changed"; git ls-files --others --exclude-standard; } |
  sort -u | grep -E '\.(c|cc|cpp|cu|h|hpp|cuh)$' | grep -v '^fuzz/corpus' || true)
bad=0
for f in "${files[@]}"; do
  [ -f "$f" ] || continue
  if [ $fix = 1 ]; then
    clang-format -i "$f"
  elif ! clang-format --dry-run --Werror "$f" > /dev/null 2>&1; then
    echo "check-format: $f is not formatted (scripts/check-format.sh --fix)"
    bad=1
  fi
done
[ $fix = 1 ] || echo "check-format: ${#files[@]} file(s) checked${base:+ (changed since $base)}"
exit $bad
