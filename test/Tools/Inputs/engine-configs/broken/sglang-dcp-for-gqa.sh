#!/bin/sh
# A deliberately broken file: helix-validate-config.test
MODEL=${MODEL:?}
exec python -m sglang.launch_server --model-path "$MODEL" \
  --tp-size 32 \
  --dcp-size 4 \
  --kv-cache-dtype fp8_e4m3 \
  "$@"
