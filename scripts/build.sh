#!/usr/bin/env bash
# Configures and builds helix in ${HELIX_BUILD_DIR:-build} (Release, Ninja).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${HELIX_BUILD_DIR:-$root/build}
"$root/scripts/setup.sh"
cmake -S "$root" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release > "$build.configure.log" 2>&1 ||
  { cat "$build.configure.log"; exit 1; }
cmake --build "$build" -j "$(nproc)"
