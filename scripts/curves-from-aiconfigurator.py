#!/usr/bin/env python3
"""Fit helix efficiency curves to NVIDIA aiconfigurator's measured kernel tables.

Reads aiconfigurator's published measurement tables (parquet) at run time from
either a checked-out tree (--aic-tree DIR) or a git directory plus commit
(--git-dir DIR --commit REV), and writes one JSON file per helix preset:

    <out>/<preset>.json = {"kernels": {...}, "collectives": {...}}

Nothing of aiconfigurator's data or code is embedded here: only the table and
column names needed to read its files.

Fits (all latencies in microseconds; HBM peak and dense FLOP/s peaks are read
from helix's data/hardware/<preset>.json, --hardware-dir):
  * GEMM, per token count m: latency = a + bytes / (HBM * e) over the measured
    (n, k) with 2^20 <= n*k <= 2^28 and min(n, k) >= 256;
    bytes = n*k*w + m*(n+k)*2, w = 2 (bf16), 1 (fp8), 0.5625 (nvfp4).
  * decode attention (GQA, head_dim 128, q/kv group 8, no sliding window),
    per rows = batch*kv_heads: latency = a + kv_bytes/(HBM*e) over KV lengths
    256..131072, kv_bytes = batch*kv_heads*kv_len*128*2*b (b = 2 bf16, 1 fp8).
  * MLA decode, per rows = batch, fixed num_heads: kv_bytes = batch*kv_len*576*b.
  * one exchange round across 8-GPU nodes (h100, h200: the only systems
    with multi-node rows): the smallest DeepEP low-latency dispatch time on
    2, 4 and 8 nodes, as interconnect.scale_out_latency_us (internode()).
  * MoE grouped GEMM (hidden 7168, inter 2048, 256 experts, top-8, moe_tp 1),
    per num_tokens T, fit over the measured EP sizes:
    bytes = E_local*(1-(1-k/E)^T) * 3*hidden*inter*w. MXFP4 ("mxfp4",
    w = 0.53125: E2M1 plus one E8M0 scale per 32 values) at gpt-oss-120b's
    shape (hidden 2880, inter 2880, 128 experts, top-4), the only MXFP4 MoE
    measured: W4A8 (MXFP4 x MXFP8) where the table has it (Blackwell), else
    W4A16 (Hopper).
  The fit is a least-squares fit of relative residuals ((pred - y)/y, i.e.
  weights 1/y^2), so short and long kernels count alike. If it gives a < 0 or
  e > 1 the point is refitted with the bound active (a = 0 or e = 1) and the
  source string says so.

Parquet is read with pyarrow when importable, otherwise with node + the npm
package hyparquet (and hyparquet-compressors) from --hyparquet-dir.

Usage:
  scripts/curves-from-aiconfigurator.py --git-dir /path/aiconfigurator/.git \
      --commit HEAD --out /tmp/curves [--hyparquet-dir /tmp/pq]
  scripts/curves-from-aiconfigurator.py --aic-tree /path/aiconfigurator --out /tmp/curves
"""

import argparse
import json
import math
import os
import re
import statistics
import subprocess
import sys
import tempfile

PRESETS = {  # helix preset -> aiconfigurator system directory
    "h100": "h100_sxm",
    "h200": "h200_sxm",
    "b200": "b200_sxm",
    "gb200-nvl72": "gb200",
    "gb300-nvl72": "gb300",
}
GEMM_M = [1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1024]
MATH_M = [1024, 2048, 4096, 8192]
WBYTES = {"bf16": 2.0, "fp8": 1.0, "fp8_tensor": 1.0, "fp4": 0.5625, "mxfp4": 0.53125}
# helix dtype -> aiconfigurator gemm_dtype / moe_dtype
GEMM_DT = {"bf16": "bfloat16", "fp8": "fp8_block", "fp8_tensor": "fp8", "fp4": "nvfp4"}
ROWS = [1, 2, 4, 8, 16, 32, 64, 128, 256]
KV_MIN, KV_MAX = 256, 131072
COLL_BYTES = [1024 * 4 ** i for i in range(10)]  # 1 KiB .. 256 MiB
DS = dict(hidden=7168, inter=2048, experts=256, topk=8)
GPTOSS = dict(hidden=2880, inter=2880, experts=128, topk=4)


def sig3(x):
    if x is None or x == 0 or not math.isfinite(x):
        return x
    return float(f"{x:.3g}")


def vkey(v):
    """Sort key for version strings such as 1.3.0rc20, 2.29.2, 0.5.6.post2."""
    return [int(p) if p.isdigit() else p for p in re.findall(r"\d+|[a-z]+", v)]


class Tree:
    """File access to an aiconfigurator checkout or git dir + commit."""

    def __init__(self, tree=None, git_dir=None, commit="HEAD", hyparquet_dir=None):
        self.tree, self.git_dir, self.hyparquet_dir = tree, git_dir, hyparquet_dir
        if git_dir:
            self.commit = subprocess.run(["git", "--git-dir", git_dir, "rev-parse", commit],
                                         check=True, capture_output=True, text=True).stdout.strip()
            names = subprocess.run(["git", "--git-dir", git_dir, "ls-tree", "-r", "--name-only", self.commit],
                                   check=True, capture_output=True, text=True).stdout.split("\n")
        else:
            self.commit = None
            try:
                self.commit = subprocess.run(["git", "-C", tree, "rev-parse", "HEAD"], check=True,
                                             capture_output=True, text=True).stdout.strip()
            except Exception:
                pass
            names = []
            for root, _, files in os.walk(tree):
                for f in files:
                    names.append(os.path.relpath(os.path.join(root, f), tree))
        self.names = [n for n in names if "/systems/data/" in n]
        self.tmp = tempfile.mkdtemp(prefix="aic-curves-")
        self.cache = {}
        try:
            import pyarrow.parquet  # noqa: F401
            self.pyarrow = True
        except ImportError:
            self.pyarrow = False

    def versions(self, system, backend, table):
        """{version: path} of the parquet files named <table>.parquet.

        Handles both layouts: data/<sys>/<backend>/<ver>/<table> (<= v0.11) and
        data/<sys>/<op>/<backend>/<ver>/<table> (later)."""
        out = {}
        for n in self.names:
            parts = n.split("/")
            i = parts.index("data")
            rest = parts[i + 1:]
            if not rest or rest[0] != system or rest[-1] != table + ".parquet":
                continue
            if len(rest) >= 4 and rest[-3] == backend:
                out[rest[-2]] = n
        return out

    def read(self, path):
        if path in self.cache:
            return self.cache[path]
        if self.git_dir:
            data = subprocess.run(["git", "--git-dir", self.git_dir, "show", f"{self.commit}:{path}"],
                                  check=True, capture_output=True).stdout
            local = os.path.join(self.tmp, path.replace("/", "_"))
            with open(local, "wb") as f:
                f.write(data)
        else:
            local = os.path.join(self.tree, path)
        with open(local, "rb") as f:
            head = f.read(64)
        if head.startswith(b"version https://git-lfs"):
            raise RuntimeError(f"{path} is a Git LFS pointer, not data")
        if self.pyarrow:
            import pyarrow.parquet as pq
            rows = pq.read_table(local).to_pylist()
        else:
            rows = self._read_node(local)
        self.cache[path] = rows
        return rows

    def _read_node(self, local):
        if not self.hyparquet_dir:
            raise RuntimeError("pyarrow not importable: pass --hyparquet-dir (npm install hyparquet hyparquet-compressors)")
        js = os.path.join(self.hyparquet_dir, "_aic_pq2json.mjs")
        if not os.path.exists(js):
            with open(js, "w") as f:
                f.write(
                    "import { parquetReadObjects } from 'hyparquet'\n"
                    "import { compressors } from 'hyparquet-compressors'\n"
                    "import fs from 'fs'\n"
                    "const b = fs.readFileSync(process.argv[2])\n"
                    "const ab = b.buffer.slice(b.byteOffset, b.byteOffset + b.byteLength)\n"
                    "const rows = await parquetReadObjects({ file: ab, compressors })\n"
                    "process.stdout.write(JSON.stringify(rows, (k, v) => typeof v === 'bigint' ? Number(v) : v))\n")
        out = subprocess.run(["node", js, local], check=True, capture_output=True,
                             cwd=self.hyparquet_dir).stdout
        return json.loads(out)

    def src(self, path, extra=""):
        c = self.commit[:12] if self.commit else "working tree"
        p = path.split("/systems/data/")[-1]
        return f"ai-dynamo/aiconfigurator@{c} systems/data/{p}" + (f"; {extra}" if extra else "")


def fit(xs, ys, hbm_bytes_per_us):
    """Relative least squares of y = a + x/(hbm*e). Returns dict or None."""
    n = len(xs)
    if n < 2:
        return None
    w = [1.0 / (y * y) for y in ys]
    sw = sum(w)
    swx = sum(wi * x for wi, x in zip(w, xs))
    swy = sum(wi * y for wi, y in zip(w, ys))
    swxx = sum(wi * x * x for wi, x in zip(w, xs))
    swxy = sum(wi * x * y for wi, x, y in zip(w, xs, ys))
    det = sw * swxx - swx * swx
    note = []
    if det <= 0:
        return None
    b = (sw * swxy - swx * swy) / det
    a = (swy - b * swx) / sw
    raw = (a, 1.0 / (hbm_bytes_per_us * b) if b > 0 else float("inf"))
    bmin = 1.0 / hbm_bytes_per_us  # e <= 1
    if b < bmin:
        note.append(f"unconstrained e={sig3(raw[1]) if b > 0 else 'inf'}, a={sig3(raw[0])}; refit with e=1")
        b = bmin
        a = (swy - b * swx) / sw
    if a < 0:
        note.append(f"unconstrained a={sig3(raw[0])}, e={sig3(raw[1])}; refit with a=0")
        a = 0.0
        b = max(swxy / swxx, bmin)
    e = 1.0 / (hbm_bytes_per_us * b)
    rel = [abs(a + b * x - y) / y for x, y in zip(xs, ys)]
    return {"a": a, "e": e, "maxrel": max(rel), "medrel": statistics.median(rel), "n": n,
            "note": "; ".join(note)}


def fit_src(tree, path, f, what):
    s = (f"fit of {f['n']} {what}; relative least squares; max rel err {f['maxrel'] * 100:.0f}%, "
         f"median {f['medrel'] * 100:.0f}%")
    if f["note"]:
        s += "; " + f["note"]
    return tree.src(path, s)


def newest(tree, system, backend, table, exclude=()):
    vs = tree.versions(system, backend, table)
    for v in sorted(vs, key=vkey, reverse=True):
        if v not in exclude:
            return v, vs[v]
    return None, None


# ---------------------------------------------------------------- GEMM
def gemm(tree, system, hbm, peaks, report, backend="trtllm"):
    out = {}
    v, path = newest(tree, system, backend, "gemm_perf")
    if not path:
        report.append(f"{system}: no {backend} gemm_perf table")
        return out
    rows = tree.read(path)
    dtypes = sorted({r["gemm_dtype"] for r in rows})
    report.append(f"{system}: gemm {v} dtypes {dtypes}")
    for hd, ad in GEMM_DT.items():
        sel = [r for r in rows if r["gemm_dtype"] == ad]
        if not sel:
            continue
        wb = WBYTES[hd]
        pts = []
        for m in GEMM_M:
            xs, ys = [], []
            for r in sel:
                if r["m"] != m:
                    continue
                n, k = r["n"], r["k"]
                if not (2 ** 20 <= n * k <= 2 ** 28 and min(n, k) >= 256):
                    continue
                xs.append(n * k * wb + m * (n + k) * 2)
                ys.append(r["latency"] * 1000.0)
            f = fit(xs, ys, hbm)
            if not f:
                continue
            nk = f"n*k in [2^20, 2^28], min(n,k) >= 256"
            pts.append({"m": m, "fixed_us": sig3(f["a"]), "bandwidth_efficiency": sig3(f["e"]),
                        "max_rel_error": sig3(f["maxrel"]),
                        "source": fit_src(tree, path, f, f"shapes at gemm_dtype={ad}, m={m}, {nk}")})
        # compute-bound end
        peak = peaks.get("fp8" if hd.startswith("fp8") else hd)
        mpts = []
        if peak:
            for m in MATH_M:
                big = [r for r in sel if r["m"] == m and r["n"] >= 4096 and r["k"] >= 4096]
                if not big:
                    continue
                effs = [2.0 * m * r["n"] * r["k"] / (r["latency"] * 1e-3) / (peak * 1e15) for r in big]
                med = statistics.median(effs)
                mpts.append({"m": m, "math_efficiency": sig3(med),
                             "source": tree.src(path, f"median over {len(effs)} shapes gemm_dtype={ad}, m={m}, "
                                                f"n,k >= 4096 (min {min(effs):.2f}, max {max(effs):.2f}) of "
                                                f"{peak} PFLOP/s dense")})
        if pts:
            out[hd] = pts
        if mpts:
            out[hd + "_math"] = mpts
    return out


# ---------------------------------------------------------------- attention
def attn_fit(tree, path, rows_, kvdt, hbm):
    b = 2.0 if kvdt == "bfloat16" else 1.0
    sel = [r for r in rows_ if r["kv_cache_dtype"] == kvdt and r.get("window_size", 0) == 0
           and r["head_dim"] == 128 and r.get("beam_width", 1) == 1
           and r["num_heads"] == 8 * r["num_key_value_heads"]]
    pts = []
    for R in ROWS:
        xs, ys, combos = [], [], set()
        for r in sel:
            bs, kv = r["batch_size"], r["num_key_value_heads"]
            if bs * kv != R:
                continue
            L = r["isl"] + r["step"]
            if not (KV_MIN <= L <= KV_MAX):
                continue
            xs.append(bs * kv * L * 128 * 2 * b)
            ys.append(r["latency"] * 1000.0)
            combos.add((bs, kv))
        f = fit(xs, ys, hbm)
        if not f:
            continue
        cs = ",".join(f"b{x}xkv{y}" for x, y in sorted(combos))
        pts.append({"rows": R, "fixed_us": sig3(f["a"]), "bandwidth_efficiency": sig3(f["e"]),
                    "max_rel_error": sig3(f["maxrel"]),
                    "source": fit_src(tree, path, f, f"points, kv_cache_dtype={kvdt}, head_dim 128, q/kv heads 8, "
                                      f"window 0, kv_len in [{KV_MIN},{KV_MAX}], (batch x kv_heads) {cs}")})
    return pts


def attention(tree, system, hbm, report, sanity=0.5, backend="trtllm"):
    """Newest trtllm table whose rows>=8 median efficiency >= sanity; else
    older trtllm tables, then vllm, then sglang. For another backend (an
    engine profile), that backend's tables only."""
    out = {}
    cands = []
    for be in (("trtllm", "vllm", "sglang") if backend == "trtllm" else (backend,)):
        vs = tree.versions(system, be, "generation_attention_perf")
        cands += [(be, v, vs[v]) for v in sorted(vs, key=vkey, reverse=True)]
    for kvdt, key in (("bfloat16", "gqa"), ("fp8", "gqa_fp8")):
        chosen, rejected = None, []
        for be, v, path in cands:
            try:
                pts = attn_fit(tree, path, tree.read(path), kvdt, hbm)
            except RuntimeError as ex:
                rejected.append(f"{be} {v}: {ex}")
                continue
            big = [p["bandwidth_efficiency"] for p in pts if p["rows"] >= 8]
            if not big:
                continue
            med = statistics.median(big)
            if med >= sanity:
                chosen = (be, v, pts)
                break
            rejected.append(f"{be} {v} (median e at rows>=8 = {med:.2f})")
        if chosen:
            be, v, pts = chosen
            if rejected:
                for p in pts:
                    p["source"] += "; newer/other tables rejected as implausible: " + "; ".join(rejected)
            out[key] = pts
            report.append(f"{system}: attention {key} from {be} {v}" +
                          (f" (rejected: {'; '.join(rejected)})" if rejected else ""))
        else:
            report.append(f"{system}: attention {key}: no plausible table ({'; '.join(rejected)})")
    return out


def mla(tree, system, hbm, report, sanity=0.3, backend="trtllm"):
    out = {}
    cands = []
    for be in (backend,):
        vs = tree.versions(system, be, "generation_mla_perf")
        cands += [(be, v, vs[v]) for v in sorted(vs, key=vkey, reverse=True)]
    for kvdt, key in (("bfloat16", "mla"), ("fp8", "mla_fp8")):
        for heads, suffix in ((128, ""), (16, "_h16")):
            b = 2.0 if kvdt == "bfloat16" else 1.0
            chosen, rejected = None, []
            for be, v, path in cands:
                rows_ = [r for r in tree.read(path) if r["kv_cache_dtype"] == kvdt and r["num_heads"] == heads]
                tps = sorted({r.get("tp_size") for r in rows_})
                pts = []
                for B in ROWS:
                    xs, ys = [], []
                    for r in rows_:
                        if r["batch_size"] != B:
                            continue
                        L = r["isl"] + r["step"]
                        if not (KV_MIN <= L <= KV_MAX):
                            continue
                        xs.append(B * L * 576 * b)
                        ys.append(r["latency"] * 1000.0)
                    f = fit(xs, ys, hbm)
                    if f:
                        pts.append({"rows": B, "fixed_us": sig3(f["a"]), "bandwidth_efficiency": sig3(f["e"]),
                                    "max_rel_error": sig3(f["maxrel"]),
                                    "source": fit_src(tree, path, f, f"points, mla kv_cache_dtype={kvdt}, "
                                                      f"num_heads={heads} (tp_size {tps}), batch={B}, kv_len in "
                                                      f"[{KV_MIN},{KV_MAX}], kv bytes/token = 576*{b:g}")})
                big = [p["bandwidth_efficiency"] for p in pts if p["rows"] >= 8]
                if not big:
                    continue
                med = statistics.median(big)
                if med >= sanity:
                    chosen = (v, pts)
                    break
                rejected.append(f"{v} (median e at rows>=8 = {med:.2f})")
            if chosen:
                out[key + suffix] = chosen[1]
                report.append(f"{system}: {key + suffix} from {backend} {chosen[0]}" +
                              (f" (rejected {rejected})" if rejected else ""))
            else:
                report.append(f"{system}: {key + suffix}: none plausible {rejected}")
    return out


# ---------------------------------------------------------------- MoE
def moe_points(tree, path, rows_, shape, ad, wb, dist, hbm, one_kernel=False,
               kernel_source=None):
    """Per num_tokens fits of one MoE table's rows at `shape`, moe_tp 1, over
    the measured EP sizes (bytes = E_local*(1-(1-k/E)^T)*3*h*i*wb).
    With `one_kernel` (engine profiles: vLLM and SGLang tables measure
    several MoE backends), only the kernel_source measured at the most
    points, the one the table measures across EP sizes."""
    H, I, E, K = shape["hidden"], shape["inter"], shape["experts"], shape["topk"]
    sel = [r for r in rows_ if r["moe_dtype"] == ad and r["hidden_size"] == H
           and r["inter_size"] == I and r["num_experts"] == E and r["topk"] == K
           and r["moe_tp_size"] == 1 and r["distribution"] == dist
           # aiconfigurator keeps the TRT-LLM min-latency MoE rows in a
           # separate low-latency grid; the default grid excludes them
           and (r.get("kernel_source") == kernel_source if kernel_source
                else r.get("kernel_source") != "moe_torch_flow_min_latency")]
    if one_kernel and sel:
        counts = {}
        for r in sel:
            counts[r.get("kernel_source")] = counts.get(r.get("kernel_source"), 0) + 1
        top = max(sorted(counts, key=str), key=lambda k: counts[k])
        sel = [r for r in sel if r.get("kernel_source") == top]
    pts = []
    for T in sorted({r["num_tokens"] for r in sel}):
        if T > 1024:
            continue
        xs, ys, eps = [], [], []
        for r in sel:
            if r["num_tokens"] != T:
                continue
            el = E // r["moe_ep_size"]
            d = el * (1 - (1 - K / E) ** T)
            xs.append(d * 3 * H * I * wb)
            ys.append(r["latency"] * 1000.0)
            eps.append(r["moe_ep_size"])
        f = fit(xs, ys, hbm)
        if not f:
            continue
        pts.append({"m": T, "fixed_us": sig3(f["a"]), "bandwidth_efficiency": sig3(f["e"]),
                    "max_rel_error": sig3(f["maxrel"]),
                    "source": fit_src(tree, path, f, f"EP sizes {sorted(eps)}, moe_dtype={ad}, " +
                                      (f"kernel_source {kernel_source} (TRTLLMGenFusedMoE), "
                                       if kernel_source else "") +
                                      f"{dist}, hidden {H}, inter {I}, {E} experts top-{K}, moe_tp 1, "
                                      f"num_tokens={T}; bytes = E_local*(1-(1-k/E)^T)*3*h*i*{wb:g}")})
    return pts, sel


def moe(tree, system, hbm, report, backend="trtllm"):
    out = {}
    vs = tree.versions(system, backend, "moe_perf")
    order = sorted(vs, key=vkey, reverse=True)
    # DeepSeek-V3/R1's shape for the formats helix programs quantize to, and
    # gpt-oss-120b's for MXFP4 (the only MXFP4 MoE checkpoints measured).
    # MXFP4 runs W4A8 (MXFP4 weights x MXFP8 activations, TRT-LLM's default
    # gpt-oss MoE on Blackwell) where measured, else W4A16 (Hopper: the
    # weights are dequantized to BF16 inside the kernel).
    cases = [("bf16", ("bfloat16",), DS), ("fp8", ("fp8_block",), DS),
             ("fp8_tensor", ("fp8",), DS), ("fp4", ("nvfp4",), DS),
             ("mxfp4", ("w4a8_mxfp4_mxfp8", "w4a16_mxfp4"), GPTOSS)]
    for hd, ads, shape in cases:
        wb = WBYTES[hd]
        for dist, suffix in (("balanced", ""), ("power_law_1.01", "_power_law_1.01")):
            done = False
            for ad in ads:
                for v in order:
                    path = vs[v]
                    pts, sel = moe_points(tree, path, tree.read(path), shape, ad, wb, dist, hbm,
                                          one_kernel=backend != "trtllm")
                    if not sel:
                        continue
                    if pts:
                        out[hd + suffix] = pts
                        report.append(f"{system}: moe {hd}{suffix} from {backend} {v} {ad} "
                                      f"({len(sel)} rows, kernel_source {sorted({r['kernel_source'] for r in sel})})")
                    done = True
                    break
                if done:
                    break
    if backend == "trtllm":
        # TensorRT-LLM's other NVFP4 MoE kernel: TRTLLMGenFusedMoE (moe
        # backend "TRTLLM"), which aiconfigurator measures as the
        # min-latency grid (its collector sets moe_backend = "trtllm" for
        # min_latency_mode). Kept beside the CUTLASS curve as
        # grouped_gemm.fp4_trtllm_gen.
        for v in order:
            path = vs[v]
            pts, sel = moe_points(tree, path, tree.read(path), DS, "nvfp4",
                                  WBYTES["fp4"], "balanced", hbm,
                                  kernel_source="moe_torch_flow_min_latency")
            if pts:
                out["fp4_trtllm_gen"] = pts
                report.append(f"{system}: moe fp4_trtllm_gen from trtllm {v} "
                              f"nvfp4 ({len(sel)} rows, kernel_source "
                              f"moe_torch_flow_min_latency)")
                break
    return out


# ---------------------------------------------------------------- collectives
ALLREDUCE = {  # what each backend's custom_allreduce_perf table measures
    "trtllm": "TRT-LLM AllReduce strategy AUTO (autotune off)",
    "vllm": "vLLM's custom all-reduce",
    "sglang": "SGLang's custom all-reduce",
}


def pick_size(rows_, bytes_per_elem):
    by = {}
    for r in rows_:
        by.setdefault(r["num_gpus"], {})[r["message_size"] * bytes_per_elem] = r["latency"] * 1000.0
    return by


def collectives(tree, system, report, backend="trtllm"):
    out = {}
    v, path = newest(tree, system, backend, "custom_allreduce_perf")
    if path:
        rows_ = [r for r in tree.read(path) if r.get("allreduce_dtype", "bfloat16") in ("bfloat16", "float16")]
        by = pick_size(rows_, 2)  # message_size is in elements (bf16)
        pts = []
        for n in sorted(by):
            for s in COLL_BYTES:
                if s in by[n]:
                    pts.append({"gpus": n, "bytes": s, "value": sig3(by[n][s]),
                                "source": tree.src(path, ALLREDUCE[backend] + f", bf16, "
                                                   f"message_size {s // 2} elements")})
        out["all_reduce"] = {"latency_us": pts}
        report.append(f"{system}: custom all-reduce {backend} {v}, gpus {sorted(by)}")
    if backend != "trtllm":
        return out  # engine profiles: NCCL's own collectives are the presets'
    v, path = newest(tree, system, "nccl", "nccl_perf")
    if path:
        rows_ = [r for r in tree.read(path) if r["nccl_dtype"] == "half"]
        names = {"all_reduce": "all_reduce_nccl", "all_gather": "all_gather",
                 "reduce_scatter": "reduce_scatter", "alltoall": "all_to_all"}
        for op, key in names.items():
            by = pick_size([r for r in rows_ if r["op_name"] == op], 2)
            pts = []
            for n in sorted(by):
                for s in COLL_BYTES:
                    if s in by[n]:
                        pts.append({"gpus": n, "bytes": s, "value": sig3(by[n][s]),
                                    "source": tree.src(path, f"nccl-tests {op}_perf out-of-place time, NCCL {v}, "
                                                       f"half, size {s} B")})
            if pts:
                out[key] = {"latency_us": pts}
        report.append(f"{system}: nccl {v}, ops {sorted({r['op_name'] for r in rows_})}, "
                      f"gpus {sorted({r['num_gpus'] for r in rows_})}")
    return out


def internode(tree, system, report):
    """The latency of one exchange round across NVLink domains (8-GPU HGX
    nodes): the smallest DeepEP low-latency dispatch time of aiconfigurator's
    legacy SGLang table over 2, 4 and 8 nodes (EP 16, 32, 64; DeepSeek-V3's
    shape, 256 experts, FP8), as interconnect.scale_out_latency_us
    {domains: nodes, value}. Its curves by size are not kept: DeepEP's RDMA
    all-to-all is faster than NCCL's inside one node at decode sizes, and
    helix's programs run NCCL. Systems without node_num > 1 rows get none."""
    vers = tree.versions(system, "sglang", "wideep_deepep_ll_perf")
    for v in sorted(vers, key=vkey, reverse=True):
        path = vers[v]
        rows_ = [r for r in tree.read(path)
                 if r.get("node_num", 1) > 1 and r["num_experts"] == DS["experts"]
                 and r["hidden_size"] == DS["hidden"] and r["num_topk"] == DS["topk"]]
        if not rows_:
            continue
        rounds = []
        for nodes in sorted({r["node_num"] for r in rows_}):
            best = min((r for r in rows_ if r["node_num"] == nodes), key=lambda r: r["dispatch_avg_t_us"])
            rounds.append({"domains": nodes, "value": sig3(best["dispatch_avg_t_us"]),
                           "source": tree.src(path, f"the smallest DeepEP low-latency dispatch time over "
                                                    f"{nodes} x 8-GPU nodes (EP {8 * nodes}, hidden {DS['hidden']}, "
                                                    f"top-{DS['topk']}, {DS['experts']} experts, FP8; "
                                                    f"{best['num_token']} tokens per rank): one all-to-all round "
                                                    f"across the nodes, kernel included")})
        report.append(f"{system}: DeepEP low-latency across nodes, sglang table {v}, "
                      f"nodes {sorted({r['node_num'] for r in rows_})}")
        return rounds
    return []


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--aic-tree")
    ap.add_argument("--git-dir")
    ap.add_argument("--commit", default="HEAD")
    ap.add_argument("--hardware-dir", default=os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                                           "..", "data", "hardware"))
    ap.add_argument("--hyparquet-dir", default=os.environ.get("HYPARQUET_DIR"))
    ap.add_argument("--out", default="/tmp/curves")
    ap.add_argument("--presets", default=",".join(PRESETS))
    ap.add_argument("--backend", default="trtllm", choices=["trtllm", "vllm", "sglang"],
                    help="whose kernel tables to fit: trtllm (the presets' curves) or an "
                         "engine profile's (vllm, sglang; scripts/apply-curves.py --profile)")
    args = ap.parse_args()
    if not (args.aic_tree or args.git_dir):
        ap.error("give --aic-tree or --git-dir")
    tree = Tree(args.aic_tree, args.git_dir, args.commit, args.hyparquet_dir)
    os.makedirs(args.out, exist_ok=True)
    report = [f"aiconfigurator commit {tree.commit}"]
    for preset in args.presets.split(","):
        system = PRESETS[preset]
        with open(os.path.join(args.hardware_dir, preset + ".json")) as f:
            hw = json.load(f)
        hbm = hw["memory"]["hbm_bandwidth_tb_per_s"]["value"] * 1e6  # bytes per us
        peaks = {k: v["value"] for k, v in hw["compute"]["peak_dense_pflops"].items() if v.get("value")}
        be = args.backend
        g = gemm(tree, system, hbm, peaks, report, backend=be)
        kernels = {"gemm": {k: v for k, v in g.items() if not k.endswith("_math")},
                   "gemm_math": {k[:-5]: v for k, v in g.items() if k.endswith("_math")},
                   "attention": {**attention(tree, system, hbm, report, backend=be),
                                 **mla(tree, system, hbm, report, backend=be)},
                   "grouped_gemm": moe(tree, system, hbm, report, backend=be)}
        # compute-bound points {"m", "math_efficiency", "source"} live in
        # kernels.gemm_math.<dtype>, beside the bandwidth points of kernels.gemm.
        res = {"kernels": kernels, "collectives": collectives(tree, system, report, backend=be)}
        if be == "trtllm":
            rounds = internode(tree, system, report)
            if rounds:
                res["interconnect"] = {"scale_out_latency_us": rounds}
        with open(os.path.join(args.out, preset + ".json"), "w") as f:
            json.dump(res, f, indent=1)
        print(f"wrote {os.path.join(args.out, preset + '.json')}", file=sys.stderr)
    print("\n".join(report), file=sys.stderr)


if __name__ == "__main__":
    main()
