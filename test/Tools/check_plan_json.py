"""Checks the JSON of `helix plan --json` or `helix cost --json` against the
documented keys, and that every front is Pareto-optimal.

usage: check_plan_json.py plan|cost FILE
"""
import json
import sys

kind, path = sys.argv[1], sys.argv[2]
d = json.load(open(path))
errors = []


def need(obj, keys, where):
    for k in keys:
        if k not in obj:
            errors.append(f"{where}: missing '{k}'")


if kind == "plan":
    need(d, ["model", "hardware", "context", "frontiers"], "plan")
    fronts = d.get("frontiers", {})
    for name, points in fronts.items():
        for i, p in enumerate(points):
            need(p, ["gpus", "batch", "layout", "hopb", "ttl_s",
                     "tokens_per_sec_per_user", "tokens_per_sec_per_gpu",
                     "memory_per_gpu_bytes"], f"{name}[{i}]")
            need(p.get("layout", {}), ["kvp", "tpa", "tpf", "ep", "pp"],
                 f"{name}[{i}].layout")
            if abs(p["ttl_s"] * p["tokens_per_sec_per_user"] - 1) > 1e-9:
                errors.append(f"{name}[{i}]: tokens/s/user is not 1/TTL")
            expect = p["batch"] / (p["ttl_s"] * p["gpus"])
            if abs(p["tokens_per_sec_per_gpu"] / expect - 1) > 1e-9:
                errors.append(f"{name}[{i}]: tokens/s/GPU is not batch/(TTL*GPUs)")
        # Pareto-optimal: no point dominated by another of the same front.
        for a in points:
            for b in points:
                if (b["tokens_per_sec_per_user"] >= a["tokens_per_sec_per_user"] and
                        b["tokens_per_sec_per_gpu"] >= a["tokens_per_sec_per_gpu"] and
                        b is not a and
                        (b["tokens_per_sec_per_user"] > a["tokens_per_sec_per_user"] or
                         b["tokens_per_sec_per_gpu"] > a["tokens_per_sec_per_gpu"])):
                    errors.append(f"{name}: a dominated point is listed")
    print("fronts:", ",".join(sorted(fronts)))
    print("points:", sum(len(p) for p in fronts.values()))
    per = d.get("per_layer")
    if per is not None:
        need(per, ["front", "at_helix", "compiled_layout", "configs_evaluated",
                   "search_seconds"], "per_layer")
        for i, p in enumerate(per.get("front", [])):
            need(p, ["gpus", "batch", "ttl_s", "per_layer"], f"per_layer.front[{i}]")
            layouts = p.get("per_layer", {}).get("layouts", [])
            if not layouts:
                errors.append(f"per_layer.front[{i}]: no layouts")
            for k in layouts:
                attn = k["kind"].endswith("attention")
                width = k["kvp"] * k["tpa"] if attn else k["tpf"] * k["ep"] * k["replicas"]
                if width != p["gpus"]:
                    errors.append(f"per_layer.front[{i}]: {k['kind']} spans {width} of {p['gpus']} GPUs")
        at = per.get("at_helix")
        if at:
            if at["per_layer"]["ttl_s"] > at["uniform"]["ttl_s"] * (1 + 1e-12):
                errors.append("per_layer.at_helix: slower than the uniform layout")
            print("per-layer kinds:", ",".join(k["kind"] for k in at["per_layer"]["per_layer"]["layouts"]))
        print("per-layer compiled:", per["compiled_layout"])
else:
    need(d, ["gpus", "batch", "ttl_s", "tokens_per_sec_per_user",
             "tokens_per_sec_per_gpu", "memory_per_gpu_bytes", "fits",
             "layers"], "cost")
    for i, layer in enumerate(d.get("layers", [])):
        need(layer, ["index", "attention", "ffn", "comm"], f"layers[{i}]")
        need(layer.get("attention", {}), ["kv_bytes_per_gpu", "weight_bytes_per_gpu",
                                          "flops_per_gpu", "kernels", "time_s"], f"layers[{i}].attention")
        by_op = layer.get("attention", {}).get("kernels_by_op", {})
        need(by_op, ["qkv", "core", "combine", "oproj"],
             f"layers[{i}].attention.kernels_by_op")
        if sum(by_op.get(k, 0) for k in ("qkv", "core", "combine", "oproj")) != \
                layer.get("attention", {}).get("kernels"):
            errors.append(f"layers[{i}].attention.kernels_by_op does not sum "
                          "to its kernels")
        need(layer.get("ffn", {}), ["weight_bytes_per_gpu", "flops_per_gpu", "kernels", "time_s"],
             f"layers[{i}].ffn")
        need(layer.get("comm", {}), ["time_s", "exposed_s"], f"layers[{i}].comm")
    print("layers:", len(d.get("layers", [])))
    print("fits:", d.get("fits"))
for e in errors[:20]:
    print("ERROR:", e)
sys.exit(1 if errors else 0)
