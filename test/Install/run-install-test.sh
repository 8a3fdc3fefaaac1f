#!/usr/bin/env bash
# Installs the built helix into a scratch prefix, then configures, builds and
# runs an out-of-tree program that does find_package(Helix).
# usage: run-install-test.sh BUILD_DIR SOURCE_DIR SCRATCH_DIR
set -euo pipefail
build=$1 src=$2 scratch=$3
rm -rf "$scratch"
cmake --install "$build" --prefix "$scratch/prefix" > "$scratch.install.log" 2>&1 ||
  { cat "$scratch.install.log"; exit 1; }
cmake -S "$src/test/Install" -B "$scratch/consumer" -G Ninja \
  -DCMAKE_PREFIX_PATH="$scratch/prefix" -DCMAKE_BUILD_TYPE=Release
cmake --build "$scratch/consumer"
"$scratch/consumer/consumer"
