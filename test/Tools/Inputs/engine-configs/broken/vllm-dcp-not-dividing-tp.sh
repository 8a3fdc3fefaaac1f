#!/bin/sh
# A deliberately broken file: helix-validate-config.test
MODEL=${MODEL:?}
exec vllm serve "$MODEL" \
  --tensor-parallel-size 32 \
  --decode-context-parallel-size 12 \
  --kv-cache-dtype fp8 \
  --max-model-len 1048576 \
  "$@"
