#!/usr/bin/env bash
# Builds helix with AddressSanitizer and UndefinedBehaviorSanitizer in
# ${HELIX_SANITIZE_BUILD_DIR:-build-sanitize} (no CUDA backend) and runs the
# test suite under them: lit, unit tests and the CPU end-to-end runs under
# mpirun, generated projects linked with the sanitizer runtime. The first
# report fails its test. The fuzz targets are built as replayers
# (HELIX_FUZZ_REPLAY) and replay their committed corpora and regression
# inputs under the same sanitizers (ctest -L fuzz). Extra arguments go to
# ctest (e.g. -L e2e, -R Cost).
#
# The Debian LLVM/MLIR libraries are not instrumented: ASan's container
# poisoning would report MLIRContext's arena as use-after-poison, hence
# allow_user_poisoning=0; leak checking is off (MPI keeps its buffers).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${HELIX_SANITIZE_BUILD_DIR:-$root/build-sanitize}
"$root/scripts/setup.sh"
# -O1 -g1: line tables for the reports' stacks; about half the compile time
# of -O2 -g (HelixOps.cpp: 60 s against 110 s), which keeps CI in budget.
cmake -S "$root" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="-O1 -g1 -DNDEBUG" \
  -DCMAKE_C_FLAGS_RELWITHDEBINFO="-O1 -g1 -DNDEBUG" \
  -DHELIX_SANITIZE="address;undefined" -DHELIX_FUZZ_REPLAY=ON > "$build.configure.log" 2>&1 ||
  { cat "$build.configure.log"; exit 1; }
cmake --build "$build" -j "$(nproc)"
# malloc_context_size=8: allocation stacks of 8 frames (30 by default) make
# the MLIR-heavy tests about 18% faster; reports keep their full stacks.
export ASAN_OPTIONS=allow_user_poisoning=0:detect_leaks=0:abort_on_error=1:malloc_context_size=8
export UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
cd "$build"
ctest --output-on-failure -j "$(nproc)" "$@"
