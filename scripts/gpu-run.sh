#!/usr/bin/env bash
# One command for a device run (docs/gpu.md, "Measured on a GPU"): on a
# machine with an NVIDIA GPU, builds helix with the CUDA backend and writes
# into OUT (default: $OUT, else ./gpu-run):
#
#   gpu.txt             nvidia-smi, the driver, nvcc
#   ctest-gpu.txt       the native gpu suite (ctest -L gpu)
#   static.txt/.json    helix-bench-kernels --static --check (the table)
#   measure.txt/.json   helix-bench-kernels --measure: achieved bandwidth per
#                       kernel against a device-to-device copy; decode
#                       attention at 128K-1M tokens per shard against 0.85
#   decode.txt/.json    helix-bench-decode: a generated Llama-3.1-8B program
#                       (random weights, 1 GPU, batch 8) against plan.json
#
# Every step runs even when one before it failed; the exit status is the
# number of failed steps. Variables: HELIX_GPU_BUILD_DIR (build-gpu),
# HELIX_GPU_MODEL (test/Inputs/models/Llama-3.1-8B.json), HELIX_GPU_BATCH (8).
set -uo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
out=$(mkdir -p "${1:-${OUT:-gpu-run}}" && cd "${1:-${OUT:-gpu-run}}" && pwd)
build=${HELIX_GPU_BUILD_DIR:-$root/build-gpu}
model=${HELIX_GPU_MODEL:-$root/test/Inputs/models/Llama-3.1-8B.json}
batch=${HELIX_GPU_BATCH:-8}
jobs=$(nproc)
failed=0
step() { # step NAME LOG COMMAND...: runs it, its output in LOG and on stdout
  local name=$1 log=$2
  shift 2
  echo "== $name"
  if "$@" 2>&1 | tee "$log"; then
    echo "== $name: ok"
  else
    echo "== $name: FAILED (see $log)"
    failed=$((failed + 1))
  fi
}

{
  nvidia-smi || true
  nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv || true
  nvcc --version || true
} > "$out/gpu.txt" 2>&1
cat "$out/gpu.txt"

step build "$out/build.txt" bash -c "cmake -S '$root' -B '$build' -G Ninja \
  -DCMAKE_BUILD_TYPE=Release -DHELIX_ENABLE_CUDA=ON && \
  cmake --build '$build' -j $jobs && \
  cmake --install '$build' --prefix '$build/install'"
step gpu-suite "$out/ctest-gpu.txt" \
  ctest --test-dir "$build" -L gpu --output-on-failure -j 1
step kernels-static "$out/static.txt" "$build/bin/helix-bench-kernels" \
  --static --check --json "$out/static.json" --markdown "$out/static.md"
step kernels-measure "$out/measure.txt" "$build/bin/helix-bench-kernels" \
  --measure --json "$out/measure.json"

# A generated program: random weights for the model, one GPU.
work=$build/gpu-run
rm -rf "$work" && mkdir -p "$work"
seq 1 "$batch" | awk '{print 1000 + $1 ", 17, 42, 7"}' > "$work/prompts.txt"
step decode "$out/decode.txt" bash -c "
  '$build/bin/helix-make-checkpoint' --config '$model' -o '$work/ckpt' \
    --dtype bf16 &&
  '$build/bin/helix' compile --model '$work/ckpt/config.json' --gpus 1 \
    --batch $batch --context 4096 --emit project -o '$work/project' \
    --backend cuda &&
  cmake -S '$work/project' -B '$work/project/build' -G Ninja \
    -DCMAKE_BUILD_TYPE=Release -DCMAKE_PREFIX_PATH='$build/install' &&
  cmake --build '$work/project/build' -j $jobs &&
  '$build/bin/helix-bench-decode' --project '$work/project' \
    --weights '$work/ckpt' --prompts '$work/prompts.txt' \
    --json '$out/decode.json'"

echo "== $failed step(s) failed; results in $out"
exit "$failed"
