#!/usr/bin/env bash
# The main job on its built-in default: build helix, then import DeepSeek-R1
# and print a summary of its model IR. Extra arguments go to `helix`.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${HELIX_BUILD_DIR:-$root/build}
"$root/scripts/build.sh" >&2
exec "$build/bin/helix" import "$root/test/Inputs/models/DeepSeek-R1.json" --summary "$@"
