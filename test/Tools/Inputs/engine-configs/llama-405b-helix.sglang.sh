#!/bin/sh
# SGLang configuration for Llama-3.1-405B, written by helix cost --emit-config sglang
# Llama-3.1-405B on gb200-nvl72, 1,048,576-token context, fp4 weights, fp4 KV, fp4 math, NVFP4 block scales
# Targets SGLang 2026-07 (data/engines/sglang.json; helix validate-config checks the file)
#
# Planned by helix: helix kvp=4,tpa=8,tpf=32,ep=1 (32 GPUs), batch 8, HOP-B off
#   helix predicts: N
# SGLang cannot run it as planned; this file configures the nearest configuration it can run:
#   - strategy helix -> tp, attention KVP x TPA = 4 x 8 -> TP = 32 (SGLang's decode context parallelism (--dcp-size) is for MLA models only; Llama-3.1-405B does not use MLA)
# Configured here: tp kvp=1,tpa=32,tpf=32,ep=1 (32 GPUs), batch 8, HOP-B off
#   helix predicts: N
#
# Use:
#   MODEL=<Llama-3.1-405B checkpoint> sh THIS_FILE [more sglang.launch_server flags]
# Notes:
#   - weights: helix priced fp4 weights; SGLang takes the weight format from the checkpoint: serve an NVFP4 checkpoint of Llama-3.1-405B
#   - context: --context-length 1048576 configures the planned 1,048,576-token context
#   - the model's config serves at most 131,072 positions (max_position_embeddings, or YaRN's original length x factor): SGLang refuses a longer --context-length at start-up unless SGLANG_ALLOW_OVERWRITE_LONGER_CONTEXT_LEN=1 is set or --json-model-override-args '{"rope_scaling": {"rope_type": "yarn", ...}}' lengthens the model's RoPE. helix does not extend RoPE for you: positions past 131,072 are outside what the model was trained on, so serving this context needs a checkpoint trained or RoPE-scaled for it
#   - --kv-cache-dtype nvfp4 (E4M3 scale per 16 values, what helix prices) needs a recent SGLang (SM100: PR 36340); fp4_e2m1 is the older MXFP4 cache, which current releases reject
# Follows (docs/engine-configs.md):
#   - https://docs.sglang.io/docs/advanced_features/dcp.md (--dcp-size, MLA only)
#   - https://docs.sglang.io/advanced_features/server_arguments.html (--tp-size, --dp-size, --enable-dp-attention, --ep-size, --kv-cache-dtype, --max-running-requests)
#   - https://docs.sglang.io/advanced_features/expert_parallelism.html (EP < TP)

MODEL=${MODEL:?set MODEL to the Llama-3.1-405B checkpoint, a path or a Hugging Face id}
exec python -m sglang.launch_server --model-path "$MODEL" \
  --tp-size 32 \
  --kv-cache-dtype nvfp4 \
  --context-length 1048576 \
  --max-running-requests 8 \
  "$@"
