#!/usr/bin/env python3
"""Writes fitted kernel and collective curves into helix's hardware presets.

Takes the files scripts/curves-from-aiconfigurator.py writes (one per preset:
{"kernels": {...}, "collectives": {...}}) and sets, in data/hardware/<preset>.json,
the sections the cost model reads (docs/cost-model.md, "Kernel curves"):

  kernels.gemm.<fmt>, kernels.gemm_math.<fmt>, kernels.grouped_gemm.<fmt>
      fmt = bf16, fp8 (block-scaled, what helix programs run), fp4 (NVFP4);
      grouped_gemm also mxfp4 (MXFP4 checkpoints' experts, gpt-oss) and
      fp4_trtllm_gen (TensorRT-LLM's trtllm-gen NVFP4 MoE kernel)
  kernels.attention.{gqa,mla,mla_few_heads}.<kv fmt>
      from gqa / gqa_fp8, mla / mla_fp8 (128 heads), mla_h16 / mla_fp8_h16
  collectives.<op>.latency_us
      all_reduce (TRT-LLM's custom all-reduce), all_gather, reduce_scatter,
      all_to_all (NCCL)
  interconnect.scale_out_latency_us
      one exchange round across nodes, where measured (h100, h200)

Curves the cost model does not read (per-tensor FP8, power-law MoE tables,
NCCL all-reduce) are left out. Existing curve sections are replaced; every
other field is kept.

With --profile ENGINE, writes the curves as an engine profile instead,
data/engines/profiles/<ENGINE>-<preset>.json (helix/Cost/EngineProfile.h):
the same sections, read over the preset by `--engine ENGINE`; only the
all-reduce among the collectives (the engines' own custom all-reduce; NCCL's
collectives are the presets').

Usage: scripts/apply-curves.py CURVES_DIR [--hardware-dir data/hardware]
       scripts/apply-curves.py CURVES_DIR --profile vllm [--profile-dir DIR]
"""

import argparse
import json
import os
import sys

FORMATS = ["bf16", "fp8", "fp4"]
ATTENTION = {  # helix key -> (fitted key for bf16 KV, fitted key for fp8 KV)
    "gqa": ("gqa", "gqa_fp8"),
    "mla": ("mla", "mla_fp8"),
    "mla_few_heads": ("mla_h16", "mla_fp8_h16"),
}
COLLECTIVES = ["all_reduce", "all_gather", "reduce_scatter", "all_to_all"]
POINT_KEYS = ["gpus", "domains", "bytes", "m", "rows", "fixed_us", "bandwidth_efficiency",
              "math_efficiency", "value", "source"]


def points(pts):
    """Keeps the fields the parser reads, in a fixed order."""
    return [{k: p[k] for k in POINT_KEYS if k in p} for p in pts]


def dump(value, indent=0):
    """JSON with every object of scalars on one line."""
    pad = "  " * indent
    if isinstance(value, dict):
        if all(not isinstance(v, (dict, list)) for v in value.values()):
            return json.dumps(value, ensure_ascii=False)
        items = [f'{pad}  {json.dumps(k)}: {dump(v, indent + 1)}'
                 for k, v in value.items()]
        return "{\n" + ",\n".join(items) + "\n" + pad + "}"
    if isinstance(value, list):
        items = [pad + "  " + dump(v, indent + 1) for v in value]
        return "[\n" + ",\n".join(items) + "\n" + pad + "]"
    return json.dumps(value, ensure_ascii=False)


def apply(fitted, hw):
    fk, fc = fitted.get("kernels", {}), fitted.get("collectives", {})
    kernels = {}
    for section in ["gemm", "gemm_math", "grouped_gemm"]:
        formats = FORMATS + (["mxfp4", "fp4_trtllm_gen"]
                             if section == "grouped_gemm" else [])
        got = {f: points(fk[section][f]) for f in formats
               if f in fk.get(section, {})}
        if got:
            kernels[section] = got
    attention = {}
    for key, (bf16, fp8) in ATTENTION.items():
        got = {}
        if bf16 in fk.get("attention", {}):
            got["bf16"] = points(fk["attention"][bf16])
        if fp8 in fk.get("attention", {}):
            got["fp8"] = points(fk["attention"][fp8])
        if got:
            attention[key] = got
    if attention:
        kernels["attention"] = attention
    if "elementwise_us" in hw.get("kernels", {}):
        kernels["elementwise_us"] = hw["kernels"]["elementwise_us"]
    hw["kernels"] = kernels
    for op in COLLECTIVES:
        if op in fc and op in hw.get("collectives", {}):
            hw["collectives"][op]["latency_us"] = points(fc[op]["latency_us"])
    rounds = fitted.get("interconnect", {}).get("scale_out_latency_us")
    if rounds and "interconnect" in hw:
        hw["interconnect"]["scale_out_latency_us"] = points(rounds)


ENGINE_NAMES = {"vllm": "vLLM", "sglang": "SGLang", "trtllm": "TensorRT-LLM"}


def write_profile(engine, preset, fitted, out_dir):
    hw = {"collectives": {"all_reduce": {}}, "kernels": {}}
    apply(fitted, hw)
    prof = {"engine": engine, "preset": preset,
            "description": f"{ENGINE_NAMES[engine]}'s own kernels on {preset}: curves fitted by "
                           f"scripts/curves-from-aiconfigurator.py --backend {engine} to "
                           f"aiconfigurator's {engine} kernel tables; read over the preset by "
                           f"--engine {engine} (helix/Cost/EngineProfile.h)",
            "kernels": hw["kernels"]}
    if hw["collectives"]["all_reduce"].get("latency_us"):
        prof["collectives"] = {"all_reduce": hw["collectives"]["all_reduce"]}
    target = os.path.join(out_dir, f"{engine}-{preset}.json")
    with open(target, "w") as f:
        f.write(dump(prof) + "\n")
    print(f"apply-curves: {target}")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("curves_dir")
    ap.add_argument("--hardware-dir", default=os.path.join(
        os.path.dirname(os.path.abspath(__file__)), "..", "data", "hardware"))
    ap.add_argument("--profile", choices=["vllm", "sglang"])
    ap.add_argument("--profile-dir", default=os.path.join(
        os.path.dirname(os.path.abspath(__file__)), "..", "data", "engines", "profiles"))
    args = ap.parse_args()
    if args.profile:
        os.makedirs(args.profile_dir, exist_ok=True)
        for name in sorted(os.listdir(args.curves_dir)):
            if name.endswith(".json"):
                with open(os.path.join(args.curves_dir, name)) as f:
                    write_profile(args.profile, name[:-5], json.load(f), args.profile_dir)
        return
    for name in sorted(os.listdir(args.curves_dir)):
        if not name.endswith(".json"):
            continue
        target = os.path.join(args.hardware_dir, name)
        if not os.path.exists(target):
            sys.exit(f"apply-curves: no preset {target} for {name}")
        with open(os.path.join(args.curves_dir, name)) as f:
            fitted = json.load(f)
        with open(target) as f:
            hw = json.load(f)
        apply(fitted, hw)
        with open(target, "w") as f:
            f.write(dump(hw) + "\n")
        print(f"apply-curves: {target}")


if __name__ == "__main__":
    main()
