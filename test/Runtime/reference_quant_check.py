#!/usr/bin/env python3
"""Checks helix-reference's loading of quantized checkpoints against an
independent Python dequantization (written from docs/quantization.md).

usage: reference_quant_check.py --bin DIR --config CONFIG --work DIR
           --format fp8-block|fp8-tensor|nvfp4|mxfp4
           [--prompts FILE] [--steps K] [--block N K] [--kv-dtype D]

1. helix-make-checkpoint writes random F32 weights for CONFIG;
2. this script quantizes the decoder layers' linear weights (mxfp4: the
   gpt-oss experts) into WORK/quant (config.json gets the format's
   quantization_config) and writes its own dequantization of them as F32
   into WORK/deq (no quantization_config);
3. helix-reference decodes the prompts with both checkpoints: the logits
   must be bit-identical and the tokens equal (the reference decodes the
   formats with its own code; both sides compute each value with one f32
   rounding), and differ from the unquantized checkpoint's.
Only the standard library is used (no numpy / torch).
"""
import argparse, bisect, json, math, os, re, shutil, struct, subprocess, sys


def read_st(path):
    with open(path, "rb") as f:
        n = struct.unpack("<Q", f.read(8))[0]
        hdr = json.loads(f.read(n))
        data = f.read()
    out = {}
    for k, v in hdr.items():
        if k == "__metadata__":
            continue
        b, e = v["data_offsets"]
        out[k] = (v["dtype"], v["shape"], data[b:e])
    return out


def write_st(path, tensors):
    hdr, off, blobs = {}, 0, []
    for name, (dt, shape, raw) in tensors.items():
        hdr[name] = {"dtype": dt, "shape": shape, "data_offsets": [off, off + len(raw)]}
        off += len(raw)
        blobs.append(raw)
    text = json.dumps(hdr)
    while (len(text) + 8) % 8:
        text += " "
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(text)))
        f.write(text.encode())
        for b in blobs:
            f.write(b)


def f32s(raw):
    return list(struct.unpack("<%df" % (len(raw) // 4), raw))


def pack_f32(vals):
    return struct.pack("<%df" % len(vals), *vals)


def to_f32(x):
    return struct.unpack("<f", struct.pack("<f", x))[0]


# --- E4M3 (fn), from the definition ---
def e4m3_dec(c):
    s = -1.0 if c & 0x80 else 1.0
    e, m = (c >> 3) & 15, c & 7
    if e == 15 and m == 7:
        return float("nan")
    return s * (m / 8 * 2.0 ** -6 if e == 0 else (1 + m / 8) * 2.0 ** (e - 7))


E4M3_POS = [(e4m3_dec(c), c) for c in range(0x7F)]  # 0..0x7E, increasing
E4M3_VALS = [v for v, _ in E4M3_POS]


def nearest(vals, codes, a):
    """Nearest grid value to a >= 0, ties to the even code; saturating."""
    if a >= vals[-1]:
        return codes[-1]
    i = bisect.bisect_right(vals, a) - 1
    lo, hi = vals[i], vals[i + 1]
    if a - lo < hi - a:
        return codes[i]
    if a - lo > hi - a:
        return codes[i + 1]
    return codes[i] if codes[i] % 2 == 0 else codes[i + 1]


def e4m3_enc(x):
    c = nearest(E4M3_VALS, [c for _, c in E4M3_POS], abs(x))
    return c | (0x80 if math.copysign(1, x) < 0 else 0)


E2M1 = [0, 0.5, 1, 1.5, 2, 3, 4, 6]


def e2m1_dec(c):
    return (-1 if c & 8 else 1) * E2M1[c & 7]


def e2m1_enc(x):
    return nearest(E2M1, list(range(8)), abs(x)) | (8 if math.copysign(1, x) < 0 else 0)


LINEAR = re.compile(
    r"model\.layers\.\d+\.(self_attn\.(q_proj|k_proj|v_proj|o_proj|q_a_proj|"
    r"q_b_proj|kv_a_proj_with_mqa|kv_b_proj)|mlp\.(gate_proj|up_proj|down_proj)|"
    r"mlp\.shared_experts\.(gate|up|down)_proj|mlp\.experts\.\d+\.(gate|up|down)_proj|"
    r"block_sparse_moe\.experts\.\d+\.w[123])\.weight$")
MXFP4 = re.compile(r"model\.layers\.\d+\.mlp\.experts\.(gate_up_proj|down_proj)$")




def quantize(cfg, src, fmt, block):
    q, d = {}, {}
    nq = 0
    for name, (dt, shape, raw) in src.items():
        assert dt == "F32", (name, dt)
        w = f32s(raw)
        if fmt != "mxfp4" and LINEAR.match(name):
            nq += 1
            N, K = shape
            if fmt == "fp8-block":
                bn, bk = block
                SN, SK = -(-N // bn), -(-K // bk)
                sc = [0.0] * (SN * SK)
                for i in range(SN):
                    for j in range(SK):
                        amax = max(abs(w[r * K + c]) for r in range(i * bn, min(N, (i + 1) * bn))
                                   for c in range(j * bk, min(K, (j + 1) * bk)))
                        sc[i * SK + j] = to_f32(amax / 448 if amax else 1.0)
                codes = bytes(e4m3_enc(w[r * K + c] / sc[(r // bn) * SK + c // bk])
                              for r in range(N) for c in range(K))
                deq = [to_f32(e4m3_dec(codes[r * K + c]) * sc[(r // bn) * SK + c // bk])
                       for r in range(N) for c in range(K)]
                q[name] = ("F8_E4M3", shape, codes)
                q[name + "_scale_inv"] = ("F32", [SN, SK], pack_f32(sc))
            elif fmt == "fp8-tensor":
                amax = max(abs(x) for x in w)
                s = to_f32(amax / 448)
                codes = bytes(e4m3_enc(x / s) for x in w)
                deq = [to_f32(e4m3_dec(c) * s) for c in codes]
                q[name] = ("F8_E4M3", shape, codes)
                q[name + "_scale"] = ("F32", [], pack_f32([s]))
                q[name.replace(".weight", ".input_scale")] = ("F32", [], pack_f32([1.0]))
            elif fmt == "nvfp4":
                amax = max(abs(x) for x in w)
                s2 = to_f32(amax / (6 * 448))
                scodes, nib, deq = [], [], []
                for r in range(N):
                    for b in range(K // 16):
                        blk = w[r * K + b * 16: r * K + b * 16 + 16]
                        sc = e4m3_enc(max(abs(x) for x in blk) / (6 * s2))
                        scodes.append(sc)
                        sd = e4m3_dec(sc) * s2
                        for x in blk:
                            c = e2m1_enc(x / sd) if sd else 0
                            nib.append(c)
                            deq.append(to_f32(e2m1_dec(c) * e4m3_dec(sc) * s2))
                packed = bytes(nib[i] | (nib[i + 1] << 4) for i in range(0, len(nib), 2))
                q[name] = ("U8", [N, K // 2], packed)
                q[name + "_scale"] = ("F8_E4M3", [N, K // 16], bytes(scodes))
                q[name + "_scale_2"] = ("F32", [], pack_f32([s2]))
                q[name.replace(".weight", ".input_scale")] = ("F32", [], pack_f32([1.0]))
            d[name] = ("F32", shape, pack_f32(deq))
        elif fmt == "mxfp4" and MXFP4.match(name):
            nq += 1
            E, IN, OUT = shape  # bf16 layout [E, in, out]
            N, K = OUT, IN
            nib, scales = [], []
            deq = [0.0] * (E * IN * OUT)
            for e in range(E):
                for r in range(N):
                    for b in range(K // 32):
                        vals = [w[e * IN * OUT + c * OUT + r] for c in range(b * 32, b * 32 + 32)]
                        amax = max(abs(x) for x in vals)
                        ex = (math.floor(math.log2(amax)) - 2) if amax else -127
                        ex = max(-127, min(127, ex))
                        scales.append(ex + 127)
                        for k, x in enumerate(vals):
                            c = e2m1_enc(x / 2.0 ** ex)
                            nib.append(c)
                            deq[e * IN * OUT + (b * 32 + k) * OUT + r] = to_f32(e2m1_dec(c) * 2.0 ** ex)
            packed = bytes(nib[i] | (nib[i + 1] << 4) for i in range(0, len(nib), 2))
            q[name + "_blocks"] = ("U8", [E, N, K // 32, 16], packed)
            q[name + "_scales"] = ("U8", [E, N, K // 32], bytes(scales))
            d[name] = ("F32", shape, pack_f32(deq))
        else:
            q[name] = (dt, shape, raw)
            d[name] = (dt, shape, raw)
    qc = {"fp8-block": {"quant_method": "fp8", "fmt": "e4m3", "activation_scheme": "dynamic",
                        "weight_block_size": block},
          "fp8-tensor": {"quant_method": "modelopt", "quant_algo": "FP8"},
          "nvfp4": {"quant_method": "modelopt", "quant_algo": "NVFP4", "group_size": 16},
          "mxfp4": {"quant_method": "mxfp4", "modules_to_not_convert": [
              "model.layers.*.self_attn", "model.layers.*.mlp.router",
              "model.embed_tokens", "lm_head"]}}[fmt]
    return q, d, qc, nq


def run(cmd):
    r = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                       text=True)
    print("$ " + " ".join(cmd))
    print((r.stdout + r.stderr).strip())
    if r.returncode:
        raise SystemExit("FAIL: exit status %d" % r.returncode)


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    p = argparse.ArgumentParser()
    p.add_argument("--bin", required=True)
    p.add_argument("--config", required=True)
    p.add_argument("--work", required=True)
    p.add_argument("--format", required=True,
                   choices=["fp8-block", "fp8-tensor", "nvfp4", "mxfp4"])
    p.add_argument("--prompts", default=os.path.join(here, "Inputs", "ragged.txt"))
    p.add_argument("--steps", type=int, default=8)
    p.add_argument("--block", type=int, nargs=2, default=[128, 128])
    p.add_argument("--kv-dtype", default="f32")
    p.add_argument("--seed", type=int, default=1)
    a = p.parse_args()
    shutil.rmtree(a.work, ignore_errors=True)
    os.makedirs(a.work)
    tool = lambda n: os.path.join(a.bin, n)
    f32 = os.path.join(a.work, "f32")
    run([tool("helix-make-checkpoint"), "--config", a.config, "-o", f32,
         "--seed", str(a.seed), "--dtype", "fp32"])
    cfg = json.load(open(a.config))
    src = read_st(os.path.join(f32, "model.safetensors"))
    q, d, qc, nq = quantize(cfg, src, a.format, a.block)
    if nq == 0:
        raise SystemExit("FAIL: no tensor of %s is quantized by %s" %
                         (a.config, a.format))
    print("%s: %d tensors quantized" % (a.format, nq))
    logits = {}
    for sub, tensors, c in (("quant", q, dict(cfg, quantization_config=qc)),
                            ("deq", d, cfg), ("f32", None, cfg)):
        ck = os.path.join(a.work, sub)
        if tensors is not None:
            os.makedirs(ck, exist_ok=True)
            write_st(os.path.join(ck, "model.safetensors"), tensors)
        json.dump(c, open(os.path.join(ck, "config.json"), "w"), indent=1)
        run([tool("helix-reference"), "--config", os.path.join(ck, "config.json"),
             "--weights", ck, "--prompts", a.prompts, "--steps", str(a.steps),
             "--kv-dtype", a.kv_dtype,
             "--dump-logits", os.path.join(a.work, sub + ".bin"),
             "--dump-tokens", os.path.join(a.work, sub + ".tokens")])
        logits[sub] = (open(os.path.join(a.work, sub + ".bin"), "rb").read(),
                       open(os.path.join(a.work, sub + ".tokens")).read())
    if logits["quant"] != logits["deq"]:
        raise SystemExit("FAIL: helix-reference on the %s checkpoint differs "
                         "from the Python dequantization" % a.format)
    if logits["quant"][0] == logits["f32"][0]:
        raise SystemExit("FAIL: quantizing changed no logit")
    print("ok: %s checkpoint == Python dequantization (bit-identical logits, "
          "same tokens)" % a.format)
    return 0


if __name__ == "__main__":
    sys.exit(main())
