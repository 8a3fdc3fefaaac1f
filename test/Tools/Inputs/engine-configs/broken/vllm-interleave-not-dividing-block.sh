#!/bin/sh
# A deliberately broken file: helix-validate-config.test
MODEL=${MODEL:?}
exec vllm serve "$MODEL" \
  --tensor-parallel-size 8 \
  --decode-context-parallel-size 8 \
  --cp-kv-cache-interleave-size 24 \
  --kv-cache-dtype fp8 \
  "$@"
