#!/bin/sh
# A deliberately broken file: helix-validate-config.test
MODEL=${MODEL:?}
exec python -m sglang.launch_server --model-path "$MODEL" \
  --tp-size 8 \
  --kv-cache-dtype fp8 \
  "$@"
