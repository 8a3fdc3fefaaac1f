#!/usr/bin/env python3
"""Compiles every configuration the planner ranks.

Usage: check_frontiers.py HELIX MODEL PLAN_JSON CONTEXT

For each distinct (strategy, layout) on the Pareto fronts of a `helix plan
--json` report, runs `helix compile` to rank IR (which helix-partition
verifies) at the smallest batch the front has for it, and prints one line
per strategy and a total; failures are printed with their error.
"""

import collections
import json
import subprocess
import sys


def main(helix, model, plan, context):
    report = json.load(open(plan))
    smallest = {}
    for front in report["frontiers"].values():
        for point in front:
            layout = point["layout"]
            key = (point["strategy"], tuple(sorted(layout.items())))
            if key not in smallest or point["batch"] < smallest[key]:
                smallest[key] = point["batch"]
    compiled = collections.Counter()
    failed = 0
    for (strategy, items), batch in sorted(smallest.items()):
        layout = dict(items)
        gpus = layout["kvp"] * layout["tpa"] * layout["dp"] * layout["pp"]
        text = ",".join("%s=%d" % kv for kv in items)
        cmd = [helix, "compile", "--model", model, "--strategy", strategy,
               "--layout", text, "--gpus", str(gpus), "--batch", str(batch),
               "--context", context, "--slices", "auto", "-o", "/dev/null"]
        run = subprocess.run(cmd, capture_output=True, text=True)
        if run.returncode:
            failed += 1
            print("FAILED %s %s batch %d: %s" %
                  (strategy, text, batch, run.stderr.strip()))
        else:
            compiled[strategy] += 1
    for strategy in sorted(compiled):
        print("%s: %d layouts compiled" % (strategy, compiled[strategy]))
    print("failed: %d" % failed)


if __name__ == "__main__":
    main(*sys.argv[1:])
