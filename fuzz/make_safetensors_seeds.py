#!/usr/bin/env python3
"""Minimal safetensors files for helix-fuzz-safetensors' seed corpus.

One file per stored form the runtime reads (docs/quantization.md): float
tensors (F32, F16, BF16, F64), FP8 with 128x128 block scales, FP8 per
tensor, NVFP4 (packed U8 + F8_E4M3 per 16 + global), MXFP4 experts
(P_blocks, P_scales), plus index files naming the fixed shards of the
fuzzer's scratch directory. Usage: make_safetensors_seeds.py OUTDIR
"""
import json
import os
import struct
import sys


def write(path, tensors, metadata=None):
    header, data = {}, b""
    if metadata:
        header["__metadata__"] = metadata
    for name, dtype, shape, raw in tensors:
        header[name] = {"dtype": dtype, "shape": shape,
                        "data_offsets": [len(data), len(data) + len(raw)]}
        data += raw
    text = json.dumps(header, separators=(",", ":")).encode()
    text += b" " * ((8 - (len(text) + 8) % 8) % 8)
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(text)) + text + data)


def f32(*v):
    return struct.pack("<%df" % len(v), *v)


def main(out):
    os.makedirs(out, exist_ok=True)
    codes = bytes(range(0x30, 0x50))  # E4M3 codes (finite)
    write(os.path.join(out, "floats.safetensors"), [
        ("a", "F32", [2, 3], f32(1, 2, 3, 4, 5, 6)),
        ("b", "F16", [4], struct.pack("<4H", 0x3c00, 0xbc00, 0x0001, 0x7c00)),
        ("c", "BF16", [2, 2], struct.pack("<4H", 0x3f80, 0xc000, 0x7fc0, 0)),
        ("d", "F64", [1], struct.pack("<d", 0.25)),
        ("e", "F32", [], f32(7)),
        ("z", "F32", [0, 4], b""),
    ], {"format": "pt"})
    write(os.path.join(out, "fp8-block.safetensors"), [
        ("w.weight", "F8_E4M3", [4, 8], codes),
        ("w.weight_scale_inv", "F32", [1, 1], f32(0.5)),
    ])
    write(os.path.join(out, "fp8-tensor.safetensors"), [
        ("w.weight", "F8_E4M3", [4, 8], codes),
        ("w.weight_scale", "F32", [], f32(0.5)),
        ("w.input_scale", "F32", [], f32(1)),
    ])
    write(os.path.join(out, "nvfp4.safetensors"), [
        ("w.weight", "U8", [2, 16], bytes(range(32))),
        ("w.weight_scale", "F8_E4M3", [2, 2], bytes([0x38, 0x40, 0x30, 0x48])),
        ("w.weight_scale_2", "F32", [], f32(0.25)),
        ("w.input_scale", "F32", [1], f32(1)),
    ])
    write(os.path.join(out, "mxfp4.safetensors"), [
        ("p_blocks", "U8", [1, 2, 1, 16], bytes(range(32))),
        ("p_scales", "U8", [1, 2, 1], bytes([127, 128])),
    ])
    with open(os.path.join(out, "index.json"), "w") as f:
        json.dump({"metadata": {"total_size": 40},
                   "weight_map": {"a": "shard.safetensors",
                                  "b.weight": "other.safetensors"}}, f)


if __name__ == "__main__":
    main(sys.argv[1])
