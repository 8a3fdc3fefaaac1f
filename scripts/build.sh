#!/usr/bin/env bash
# Configures and builds helix in ${HELIX_BUILD_DIR:-build} (Release, Ninja).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${HELIX_BUILD_DIR:-$root/build}
"$root/scripts/setup.sh"
# HELIX_WERROR=ON (CI): warnings in helix's own code are errors.
# HELIX_CUDA_ARCHITECTURES (CI: 90a;100a) replaces the default list of
# CUDA architectures (runtime/CMakeLists.txt).
cmake -S "$root" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release \
  -DHELIX_WERROR="${HELIX_WERROR:-OFF}" \
  ${HELIX_CUDA_ARCHITECTURES:+-DCMAKE_CUDA_ARCHITECTURES="$HELIX_CUDA_ARCHITECTURES"} > "$build.configure.log" 2>&1 ||
  { cat "$build.configure.log"; exit 1; }
cmake --build "$build" -j "$(nproc)"
