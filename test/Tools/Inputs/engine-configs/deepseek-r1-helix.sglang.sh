#!/bin/sh
# SGLang configuration for DeepSeek-R1, written by helix cost --emit-config sglang
# DeepSeek-R1 on gb200-nvl72, 1,048,576-token context, fp4 weights, fp4 KV, fp4 math, NVFP4 block scales
# Targets SGLang 2026-07 (data/engines/sglang.json; helix validate-config checks the file)
#
# Planned by helix: helix kvp=32,tpa=1,tpf=16,ep=2 (32 GPUs), batch 16, HOP-B off
#   helix predicts: N
# SGLang cannot run it as planned; this file configures the nearest configuration it can run:
#   - KV cache fp4 -> fp8 (SGLang's nvfp4 KV cache serves MHA / GQA attention (TRT-LLM GenMHA), not MLA)
# Configured here: helix kvp=32,tpa=1,tpf=16,ep=2 (32 GPUs), batch 16, HOP-B off
#   helix predicts: N
#
# Use:
#   MODEL=<DeepSeek-R1 checkpoint> sh THIS_FILE [more sglang.launch_server flags]
# Notes:
#   - weights: helix priced fp4 weights; SGLang takes the weight format from the checkpoint: serve an NVFP4 checkpoint of DeepSeek-R1
#   - context: --context-length 1048576 configures the planned 1,048,576-token context
#   - the model's config serves at most 163,840 positions (max_position_embeddings, or YaRN's original length x factor): SGLang refuses a longer --context-length at start-up unless SGLANG_ALLOW_OVERWRITE_LONGER_CONTEXT_LEN=1 is set or --json-model-override-args '{"rope_scaling": {"rope_type": "yarn", ...}}' lengthens the model's RoPE. helix does not extend RoPE for you: positions past 163,840 are outside what the model was trained on, so serving this context needs a checkpoint trained or RoPE-scaled for it
#   - SGLang stripes the KV cache over the DCP ranks token by token (position mod 32); helix prices blocks of 16 tokens per rank
#   - SGLang runs EP < TP (TPF x EP = 16 x 2) only with --moe-a2a-backend none (the default)
#   - --dcp-size needs a recent SGLang (decode context parallelism for MLA: PRs 14194 and 33926, 2026); older releases reject the flag
# Follows (docs/engine-configs.md):
#   - https://docs.sglang.io/docs/advanced_features/dcp.md (--dcp-size, MLA only)
#   - https://docs.sglang.io/advanced_features/server_arguments.html (--tp-size, --dp-size, --enable-dp-attention, --ep-size, --kv-cache-dtype, --max-running-requests)
#   - https://docs.sglang.io/advanced_features/expert_parallelism.html (EP < TP)

MODEL=${MODEL:?set MODEL to the DeepSeek-R1 checkpoint, a path or a Hugging Face id}
exec python -m sglang.launch_server --model-path "$MODEL" \
  --tp-size 32 \
  --dcp-size 32 \
  --ep-size 2 \
  --kv-cache-dtype fp8_e4m3 \
  --context-length 1048576 \
  --max-running-requests 16 \
  "$@"
