"""Prints "same fronts" when two `helix plan --json` files agree on all but
the model's name and the search's wall time; else the first difference."""
import json
import sys



def strip(d):
    """Drops the wall times (search_seconds, at any depth)."""
    if isinstance(d, dict):
        return {k: strip(v) for k, v in d.items() if k != "search_seconds"}
    if isinstance(d, list):
        return [strip(v) for v in d]
    return d


a, b = (strip(json.load(open(p))) for p in sys.argv[1:3])
for d in (a, b):
    d.pop("model", None)
if a == b:
    print("same fronts")
else:
    for k in a:
        if a.get(k) != b.get(k):
            print("differ in", k)
            break
    sys.exit(1)
