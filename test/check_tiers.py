#!/usr/bin/env python3
"""Every ctest test carries exactly one tier label (test/README.md).

usage: check_tiers.py --build DIR [--ctest CTEST]

Lists the build's tests with `ctest --show-only=json-v1` (the discovered
gtest cases included) and prints each test whose labels hold no tier or
more than one; exit 1 if any.
"""
import argparse
import json
import subprocess
import sys

TIERS = ("quick", "e2e", "emu", "gpu", "slow")


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--build", required=True)
    p.add_argument("--ctest", default="ctest")
    a = p.parse_args()
    r = subprocess.run([a.ctest, "--show-only=json-v1"], cwd=a.build,
                       stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                       text=True)
    if r.returncode:
        print(r.stdout + r.stderr)
        print("FAIL: ctest --show-only=json-v1 failed")
        return 1
    tests = json.loads(r.stdout)["tests"]
    bad = []
    counts = {t: 0 for t in TIERS}
    for t in tests:
        labels = []
        for prop in t.get("properties", []):
            if prop["name"] == "LABELS":
                labels = prop["value"]
        tiers = [l for l in labels if l in TIERS]
        if len(tiers) != 1:
            bad.append((t["name"], labels))
        else:
            counts[tiers[0]] += 1
    print(f"{len(tests)} tests: " +
          ", ".join(f"{n} {t}" for t, n in counts.items()))
    for name, labels in bad:
        print(f"FAIL: {name}: labels {labels}, expected exactly one of "
              f"{', '.join(TIERS)}")
    return 1 if bad or not tests else 0


if __name__ == "__main__":
    sys.exit(main())
