"""Compares helix-bench-fidelity --json output with its table:
check_fidelity_json.py TABLE OUTPUT."""

import json
import sys

table = json.load(open(sys.argv[1]))["rows"]
out = json.load(open(sys.argv[2]))
ids_in = [r["id"] for r in table]
ids_out = [r["id"] for r in out["rows"]]
print("rows: table %d, output %d, same ids: %s"
      % (len(ids_in), len(ids_out), "yes" if ids_in == ids_out else "no"))
print("errors: %d" % sum(r["status"] == "error" for r in out["rows"]))
scored = [r for r in out["rows"] if r["status"] == "scored"]
print("scored rows priced: %s" % ("yes" if scored and all(
    r["predicted_ms"] > 0 and r["measured_ms"] > 0 for r in scored) else "no"))
# The prediction is the decode step plus the prefill it absorbs; a batch
# of one absorbs none.
print("predicted = decode + prefill: %s" % ("yes" if all(
    abs(r["predicted_ms"] - r["decode_ms"] - r["prefill_ms"]) < 1e-9 and
    (r["batch"] > 1 or r["prefill_ms"] == 0) for r in scored) else "no"))
print("groups: " + ", ".join(g["group"] for g in out["groups"][:4]))
