#!/bin/sh
# vLLM configuration for DeepSeek-R1, written by helix cost --emit-config vllm
# DeepSeek-R1 on gb200-nvl72, 131,072-token context, fp4 weights, fp4 KV, fp4 math, NVFP4 block scales
# Targets vLLM 0.12.0 (data/engines/vllm.json; helix validate-config checks the file)
#
# Planned by helix: ep kvp=1,tpa=1,tpf=1,ep=8,dp=8 (8 GPUs), batch 64, HOP-B off
#   helix predicts: N
# vLLM cannot run it as planned; this file configures the nearest configuration it can run:
#   - KV cache fp4 -> fp8 (no vLLM MLA attention backend stores an nvfp4 KV cache (FLASHINFER_MLA and the other dense MLA backends take auto, bf16 or fp8))
# Configured here: ep kvp=1,tpa=1,tpf=1,ep=8,dp=8 (8 GPUs), batch 64, HOP-B off
#   helix predicts: N
#
# Use:
#   MODEL=<DeepSeek-R1 checkpoint> sh THIS_FILE [more vllm serve flags]
# Notes:
#   - weights: helix priced fp4 weights; vLLM takes the weight format from the checkpoint: serve an NVFP4 checkpoint of DeepSeek-R1
#   - context: --max-model-len 131072 configures the planned 131,072-token context
#   - --max-num-seqs is per data-parallel engine: 64 requests over 8 engines
#   - vLLM runs the 3 dense FFN layers TP = 1 inside each data-parallel replica; helix prices them TP = 8
# Follows (docs/engine-configs.md):
#   - https://docs.vllm.ai/en/latest/serving/context_parallel_deployment.html (-dcp in [1, tp / KV heads])
#   - https://docs.vllm.ai/en/latest/serving/data_parallel_deployment.html (DP attention, MoE TP or EP)
#   - https://docs.vllm.ai/en/latest/cli/serve/ (flags, --kv-cache-dtype)

MODEL=${MODEL:?set MODEL to the DeepSeek-R1 checkpoint, a path or a Hugging Face id}
exec vllm serve "$MODEL" \
  --tensor-parallel-size 1 \
  --data-parallel-size 8 \
  --enable-expert-parallel \
  --kv-cache-dtype fp8 \
  --max-model-len 131072 \
  --max-num-seqs 8 \
  "$@"
