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
"$scratch/consumer/capi-consumer" "$src/test/Inputs/models/tiny-deepseek.json"
# The Python package, where cmake --install put it (none in a build
# without it: -DHELIX_PYTHON=OFF, the sanitized one).
module=$(find "$scratch/prefix" -name '_helix*.so' -print -quit)
if [ -n "$module" ]; then
  site=$(dirname "$(dirname "$module")")
  (cd "$scratch" && PYTHONPATH="$site" /usr/bin/python3 -c "
import helix, sys
gains = helix.plan(helix.import_config('$src/test/Inputs/models/DeepSeek-R1.json'), hardware='gb200-nvl72')['gains']
assert helix.__file__.startswith('$scratch/prefix'), helix.__file__
assert gains['interactivity'] > 1, gains
print('installed helix package: DeepSeek-R1 gains', gains)")
fi
