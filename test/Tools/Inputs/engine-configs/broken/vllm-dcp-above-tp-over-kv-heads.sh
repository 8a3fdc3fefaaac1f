#!/bin/sh
# A deliberately broken file: helix-validate-config.test
MODEL=${MODEL:?}
exec vllm serve "$MODEL" \
  --tensor-parallel-size 16 \
  --decode-context-parallel-size 4 \
  --kv-cache-dtype fp8 \
  "$@"
