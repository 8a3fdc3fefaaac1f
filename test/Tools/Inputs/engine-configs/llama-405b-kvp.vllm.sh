#!/bin/sh
# vLLM configuration for Llama-3.1-405B, written by helix cost --emit-config vllm
# Llama-3.1-405B on gb200-nvl72, 1,048,576-token context, fp4 weights, fp4 KV, fp4 math, NVFP4 block scales
# Targets vLLM 0.12.0 (data/engines/vllm.json; helix validate-config checks the file)
#
# Planned by helix: kvp kvp=4,tpa=8,tpf=8,ep=1 (32 GPUs), batch 8, HOP-B off
#   helix predicts: N
# vLLM cannot run it as planned; this file configures the nearest configuration it can run:
#   - strategy kvp -> helix-no-hopb, FFN TP = 8 in each of 4 KVP groups -> TP = 32 (vLLM has no Medha-style KVP (output projection and FFN tied to the TPA group, replicated over KVP))
# Configured here: helix-no-hopb kvp=4,tpa=8,tpf=32,ep=1 (32 GPUs), batch 8, HOP-B off
#   helix predicts: N
#
# Use:
#   MODEL=<Llama-3.1-405B checkpoint> sh THIS_FILE [more vllm serve flags]
# Notes:
#   - weights: helix priced fp4 weights; vLLM takes the weight format from the checkpoint: serve an NVFP4 checkpoint of Llama-3.1-405B
#   - context: --max-model-len 1048576 configures the planned 1,048,576-token context
#   - the model's config serves at most 131,072 positions (max_position_embeddings, or YaRN's original length x factor): vLLM refuses a longer --max-model-len at start-up unless VLLM_ALLOW_LONG_MAX_MODEL_LEN=1 is set or --hf-overrides '{"rope_parameters": {"rope_type": "yarn", ...}}' lengthens the model's RoPE. helix does not extend RoPE for you: positions past 131,072 are outside what the model was trained on, so serving this context needs a checkpoint trained or RoPE-scaled for it
#   - vLLM's DCP combines partial attention outputs with all-gather + reduce-scatter by default (--dcp-comm-backend ag_rs; a2a is the all-to-all helix prices)
#   - --cp-kv-cache-interleave-size 16 deals KV to the DCP ranks in helix's blocks of 16 tokens; the KV block size must be a multiple of it (releases before the rename: --dcp-kv-cache-interleave-size)
#   - --kv-cache-dtype nvfp4 needs vLLM 0.21 or later
# Follows (docs/engine-configs.md):
#   - https://docs.vllm.ai/en/latest/serving/context_parallel_deployment.html (-dcp in [1, tp / KV heads])
#   - https://docs.vllm.ai/en/latest/serving/data_parallel_deployment.html (DP attention, MoE TP or EP)
#   - https://docs.vllm.ai/en/latest/cli/serve/ (flags, --kv-cache-dtype)

MODEL=${MODEL:?set MODEL to the Llama-3.1-405B checkpoint, a path or a Hugging Face id}
exec vllm serve "$MODEL" \
  --tensor-parallel-size 32 \
  --decode-context-parallel-size 4 \
  --cp-kv-cache-interleave-size 16 \
  --kv-cache-dtype nvfp4 \
  --max-model-len 1048576 \
  --max-num-seqs 8 \
  "$@"
