#!/usr/bin/env bash
# Installs what is needed, builds everything and runs the tests through
# ctest, by tier (test/README.md):
#
#   scripts/test.sh            every tier but slow and gpu (what CI runs)
#   scripts/test.sh --quick    the quick tier: lit and unit tests
#   scripts/test.sh --all      every tier (gpu skips itself without a GPU)
#   scripts/test.sh --tier e2e,emu [ctest args...]
#
# Further arguments go to ctest (e.g. -R Cost, --rerun-failed).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${HELIX_BUILD_DIR:-$root/build}
select=(-LE '^(slow|gpu)$')
case "${1:-}" in
--quick) select=(-L '^quick$'); shift ;;
--all) select=(); shift ;;
--tier)
  [ $# -ge 2 ] || { echo "test.sh: --tier needs quick, e2e, emu, gpu or slow (comma-separated)" >&2; exit 1; }
  for t in ${2//,/ }; do
    case $t in quick | e2e | emu | gpu | slow) ;; *)
      echo "test.sh: --tier: '$t' is not a tier (quick, e2e, emu, gpu, slow)" >&2; exit 1 ;;
    esac
  done
  select=(-L "^(${2//,/|})\$"); shift 2 ;;
esac
"$root/scripts/build.sh"
cd "$build"
ctest --output-on-failure -j "$(nproc)" "${select[@]}" "$@"
