#!/bin/sh
# SGLang configuration for DeepSeek-R1, written by helix cost --emit-config sglang
# DeepSeek-R1 on gb200-nvl72, 131,072-token context, fp4 weights, fp4 KV, fp4 math, NVFP4 block scales
# Targets SGLang 2026-07 (data/engines/sglang.json; helix validate-config checks the file)
#
# Planned by helix: ep kvp=1,tpa=1,tpf=1,ep=8,dp=8 (8 GPUs), batch 64, HOP-B off
#   helix predicts: N
# SGLang cannot run it as planned; this file configures the nearest configuration it can run:
#   - KV cache fp4 -> fp8 (SGLang's nvfp4 KV cache serves MHA / GQA attention (TRT-LLM GenMHA), not MLA)
# Configured here: ep kvp=1,tpa=1,tpf=1,ep=8,dp=8 (8 GPUs), batch 64, HOP-B off
#   helix predicts: N
#
# Use:
#   MODEL=<DeepSeek-R1 checkpoint> sh THIS_FILE [more sglang.launch_server flags]
# Notes:
#   - weights: helix priced fp4 weights; SGLang takes the weight format from the checkpoint: serve an NVFP4 checkpoint of DeepSeek-R1
#   - context: --context-length 131072 configures the planned 131,072-token context
#   - --max-running-requests is the total over the 8 DP ranks (a multiple of 8)
# Follows (docs/engine-configs.md):
#   - https://docs.sglang.io/docs/advanced_features/dcp.md (--dcp-size, MLA only)
#   - https://docs.sglang.io/advanced_features/server_arguments.html (--tp-size, --dp-size, --enable-dp-attention, --ep-size, --kv-cache-dtype, --max-running-requests)
#   - https://docs.sglang.io/advanced_features/expert_parallelism.html (EP < TP)

MODEL=${MODEL:?set MODEL to the DeepSeek-R1 checkpoint, a path or a Hugging Face id}
exec python -m sglang.launch_server --model-path "$MODEL" \
  --tp-size 8 \
  --dp-size 8 \
  --enable-dp-attention \
  --ep-size 8 \
  --kv-cache-dtype fp8_e4m3 \
  --context-length 131072 \
  --max-running-requests 64 \
  "$@"
