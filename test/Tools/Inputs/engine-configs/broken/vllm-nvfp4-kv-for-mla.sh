#!/bin/sh
# A deliberately broken file: helix-validate-config.test
MODEL=${MODEL:?}
exec vllm serve "$MODEL" \
  --tensor-parallel-size 8 \
  --kv-cache-dtype nvfp4 \
  "$@"
