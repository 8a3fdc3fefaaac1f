"""Prints "configured TTL within B ms" when the TTL helix predicts for the
configuration an --emit-config file configures is at most B ms; else the
TTL found. usage: ttl_within.py FILE BUDGET_MS"""
import re
import sys

text = open(sys.argv[1]).read()
budget = float(sys.argv[2])
# The prediction line after "Configured here" (a fallback), else the one
# after "Planned by helix and configured here".
m = re.search(r"# Configured here:.*\n#\s+helix predicts: TTL ([0-9.]+) ms",
              text) or re.search(
    r"# Planned by helix and configured here:.*\n#\s+helix predicts: TTL "
    r"([0-9.]+) ms", text)
if not m:
    print("no TTL prediction found")
    sys.exit(1)
ttl = float(m.group(1))
print(("configured TTL within %g ms" % budget) if ttl <= budget else
      ("configured TTL %g ms exceeds %g ms" % (ttl, budget)))
