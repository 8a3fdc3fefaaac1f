"""Copies a helix-bench-fidelity baseline, moving the named groups' MAPE by a
number of points: usage: shift_fidelity_baseline.py IN OUT POINTS GROUP..."""
import json
import sys

src, dst, points, groups = sys.argv[1], sys.argv[2], float(sys.argv[3]), sys.argv[4:]
base = json.load(open(src))
for g in groups:
    if g not in base["groups"]:
        sys.exit("shift_fidelity_baseline.py: no group %r in %s" % (g, src))
    base["groups"][g]["mape_pct"] = round(base["groups"][g]["mape_pct"] + points, 2)
json.dump(base, open(dst, "w"), indent=2)
