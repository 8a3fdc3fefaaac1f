#!/bin/sh
# A deliberately broken file: helix-validate-config.test
MODEL=${MODEL:?}
exec python -m sglang.serve --model-path "$MODEL" \
  --tp-size 8 \
  "$@"
