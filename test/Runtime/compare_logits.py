#!/usr/bin/env python3
"""Compares two [steps, batch, vocab] float32 logits dumps.

usage: compare_logits.py A B [--atol X] [--rtol Y]

Passes when every |a - b| <= atol + rtol * max|a| of that row (the row's
logit scale), and prints the worst absolute and scaled differences.
"""
import array
import sys


def load(path):
    a = array.array("f")
    with open(path, "rb") as f:
        a.frombytes(f.read())
    if sys.byteorder != "little":
        a.byteswap()
    return a


def main(argv):
    args, atol, rtol = [], 0.0, 0.0
    i = 1
    while i < len(argv):
        if argv[i] == "--atol":
            atol = float(argv[i + 1]); i += 2
        elif argv[i] == "--rtol":
            rtol = float(argv[i + 1]); i += 2
        elif argv[i] == "--vocab":
            vocab = int(argv[i + 1]); i += 2
        else:
            args.append(argv[i]); i += 1
    a, b = load(args[0]), load(args[1])
    if len(a) != len(b) or not a:
        print(f"FAIL: sizes differ ({len(a)} vs {len(b)} floats)")
        return 1
    n = len(a)
    v = vocab
    worst_abs, worst_scaled, bad = 0.0, 0.0, 0
    for r in range(0, n, v):
        scale = max(abs(x) for x in a[r:r + v])
        for x, y in zip(a[r:r + v], b[r:r + v]):
            d = abs(x - y)
            worst_abs = max(worst_abs, d)
            worst_scaled = max(worst_scaled, d / max(scale, 1e-30))
            if d > atol + rtol * scale:
                bad += 1
    print(f"{n // v} rows x {v}: max |diff| {worst_abs:.3g}, "
          f"max |diff| / row max|logit| {worst_scaled:.3g} "
          f"(tolerance {atol:g} + {rtol:g} * row max|logit|)")
    if bad:
        print(f"FAIL: {bad} logits outside the tolerance")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
