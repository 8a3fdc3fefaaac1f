#!/usr/bin/env python3
"""Damages a checkpoint written by helix-make-checkpoint, for bad-input tests.

usage: damage_checkpoint.py DIR OP...

OP is one of
  dtype=TENSOR:DTYPE   relabel a tensor's dtype in its header (same bytes)
  shape=TENSOR:AxBx..  give a tensor another shape (bytes cut or zero-padded)
  quant=KEY:JSON       set config.json's quantization_config[KEY]

Only single-file checkpoints (model.safetensors) are rewritten.
"""
import json
import os
import struct
import sys

SIZES = {"F32": 4, "BF16": 2, "F16": 2, "U8": 1, "F8_E4M3": 1, "I32": 4}


def read(path):
    with open(path, "rb") as f:
        n = struct.unpack("<Q", f.read(8))[0]
        header = json.loads(f.read(n))
        data = f.read()
    meta = header.pop("__metadata__", None)
    tensors = []
    for name, t in header.items():
        b, e = t["data_offsets"]
        tensors.append([name, t["dtype"], t["shape"], data[b:e]])
    tensors.sort(key=lambda t: header[t[0]]["data_offsets"][0])
    return meta, tensors


def write(path, meta, tensors):
    header, blobs, off = {}, [], 0
    if meta:
        header["__metadata__"] = meta
    for name, dtype, shape, blob in tensors:
        header[name] = {"dtype": dtype, "shape": shape,
                        "data_offsets": [off, off + len(blob)]}
        blobs.append(blob)
        off += len(blob)
    text = json.dumps(header).encode()
    text += b" " * ((8 - len(text) % 8) % 8)
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(text)) + text + b"".join(blobs))


def main():
    ckpt, ops = sys.argv[1], sys.argv[2:]
    path = os.path.join(ckpt, "model.safetensors")
    meta, tensors = read(path)
    by_name = {t[0]: t for t in tensors}
    for op in ops:
        kind, _, arg = op.partition("=")
        what, _, value = arg.partition(":")
        if kind == "quant":
            cfg_path = os.path.join(ckpt, "config.json")
            with open(cfg_path) as f:
                cfg = json.load(f)
            cfg.setdefault("quantization_config", {})[what] = json.loads(value)
            with open(cfg_path, "w") as f:
                json.dump(cfg, f, indent=2)
            continue
        t = by_name.get(what)
        if t is None:
            sys.exit(f"damage_checkpoint: no tensor {what}")
        if kind == "dtype":
            t[1] = value
        elif kind == "shape":
            t[2] = [int(d) for d in value.split("x")]
            n = SIZES[t[1]]
            for d in t[2]:
                n *= d
            t[3] = t[3][:n] + b"\0" * max(0, n - len(t[3]))
        else:
            sys.exit(f"damage_checkpoint: unknown operation {op}")
    write(path, meta, tensors)


if __name__ == "__main__":
    main()
