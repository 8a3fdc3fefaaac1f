"""Checks plan.json's "estimate" (helix-estimate-cost on the rank IR
`helix compile` compiled) against its "cost" (evaluate(), what `helix cost`
prints): the same token-to-token latency within 0.1%, and categories that
sum to it.

usage: check_estimate.py PLAN_JSON
"""
import json
import sys

d = json.load(open(sys.argv[1]))
e, c = d["estimate"], d["cost"]
ttl_ms = c["ttl_s"] * 1e3
ratio = e["ttl_ms"] / ttl_ms
parts = sum(e["time_ms"].values())
print("source:", e["source"])
print("estimate / cost TTL within 0.1%:", abs(ratio - 1) <= 1e-3)
print("categories sum to the TTL:", abs(parts / e["ttl_ms"] - 1) <= 1e-6)
print("bytes and flops positive:", e["bytes"] > 0 and e["flops"] > 0)
