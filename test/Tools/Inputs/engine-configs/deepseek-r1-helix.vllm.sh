#!/bin/sh
# vLLM configuration for DeepSeek-R1, written by helix cost --emit-config vllm
# DeepSeek-R1 on gb200-nvl72, 1,048,576-token context, fp4 weights, fp4 KV, fp4 math, NVFP4 block scales
# Targets vLLM 0.12.0 (data/engines/vllm.json; helix validate-config checks the file)
#
# Planned by helix: helix kvp=32,tpa=1,tpf=16,ep=2 (32 GPUs), batch 16, HOP-B off
#   helix predicts: N
# vLLM cannot run it as planned; this file configures the nearest configuration it can run:
#   - KV cache fp4 -> fp8 (no vLLM MLA attention backend stores an nvfp4 KV cache (FLASHINFER_MLA and the other dense MLA backends take auto, bf16 or fp8))
#   - FFN TPF x EP = 16 x 2 -> TP = 32 (vLLM runs MoE layers with TP or EP (--enable-expert-parallel) over all 32 GPUs, not a TPF x EP = 16 x 2 grid)
# Configured here: helix-no-hopb kvp=32,tpa=1,tpf=32,ep=1 (32 GPUs), batch 16, HOP-B off
#   helix predicts: N
#
# Use:
#   MODEL=<DeepSeek-R1 checkpoint> sh THIS_FILE [more vllm serve flags]
# Notes:
#   - weights: helix priced fp4 weights; vLLM takes the weight format from the checkpoint: serve an NVFP4 checkpoint of DeepSeek-R1
#   - context: --max-model-len 1048576 configures the planned 1,048,576-token context
#   - the model's config serves at most 163,840 positions (max_position_embeddings, or YaRN's original length x factor): vLLM refuses a longer --max-model-len at start-up unless VLLM_ALLOW_LONG_MAX_MODEL_LEN=1 is set or --hf-overrides '{"rope_parameters": {"rope_type": "yarn", ...}}' lengthens the model's RoPE. helix does not extend RoPE for you: positions past 163,840 are outside what the model was trained on, so serving this context needs a checkpoint trained or RoPE-scaled for it
#   - vLLM's DCP combines partial attention outputs with all-gather + reduce-scatter by default (--dcp-comm-backend ag_rs; a2a is the all-to-all helix prices)
#   - --cp-kv-cache-interleave-size 16 deals KV to the DCP ranks in helix's blocks of 16 tokens; the KV block size must be a multiple of it (releases before the rename: --dcp-kv-cache-interleave-size)
# Follows (docs/engine-configs.md):
#   - https://docs.vllm.ai/en/latest/serving/context_parallel_deployment.html (-dcp in [1, tp / KV heads])
#   - https://docs.vllm.ai/en/latest/serving/data_parallel_deployment.html (DP attention, MoE TP or EP)
#   - https://docs.vllm.ai/en/latest/cli/serve/ (flags, --kv-cache-dtype)

MODEL=${MODEL:?set MODEL to the DeepSeek-R1 checkpoint, a path or a Hugging Face id}
exec vllm serve "$MODEL" \
  --tensor-parallel-size 32 \
  --decode-context-parallel-size 32 \
  --cp-kv-cache-interleave-size 16 \
  --kv-cache-dtype fp8 \
  --max-model-len 1048576 \
  --max-num-seqs 16 \
  "$@"
