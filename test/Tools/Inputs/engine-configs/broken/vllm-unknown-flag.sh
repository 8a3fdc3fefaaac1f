#!/bin/sh
# A deliberately broken file: helix-validate-config.test
MODEL=${MODEL:?}
exec vllm serve "$MODEL" \
  --tensor-parallel 8 \
  --kv-cache-dtype fp8 \
  "$@"
