#!/usr/bin/env bash
# The main job on its built-in default: build helix, then plan DeepSeek-R1 at
# 1M context on GB200 NVL72 (FP4, 1..64 GPUs, every strategy and batch) and
# print the summary. Extra arguments go to `helix plan` (e.g. --ttl-ms 20,
# --json plan.json, --svg plan.svg).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${HELIX_BUILD_DIR:-$root/build}
"$root/scripts/build.sh" >&2
exec "$build/bin/helix" plan --model "$root/test/Inputs/models/DeepSeek-R1.json" \
  --hardware gb200-nvl72 --context 1048576 --max-gpus 64 --dtype fp4 "$@"
