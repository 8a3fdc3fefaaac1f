#!/usr/bin/env bash
# Installs what is needed, builds everything and runs every test: the lit
# suite, the unit tests and the install test, through ctest.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${HELIX_BUILD_DIR:-$root/build}
"$root/scripts/build.sh"
cd "$build"
ctest --output-on-failure -j "$(nproc)"
