#!/usr/bin/env python3
"""Prints the size (bytes) and function count of each rank-IR file and
whether the largest is within 5% of the smallest."""
import sys

sizes, funcs = [], []
for path in sys.argv[1:]:
    text = open(path).read()
    sizes.append(len(text.encode()))
    funcs.append(text.count("func.func "))
print("functions: %s" % " ".join(str(f) for f in funcs))
print("largest / smallest: %.3f" % (max(sizes) / min(sizes)))
print("within 5%%: %s" % ("yes" if max(sizes) <= 1.05 * min(sizes) else "no"))
