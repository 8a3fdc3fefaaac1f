"""Runs a helix tool on every file of the bad-input corpus and checks that
each one is refused cleanly: a non-zero exit (not a crash or a signal), one
line on stderr naming the file, nothing on stdout, and no hang.

usage: check_bad_inputs.py CORPUS_DIR TOOL [ARGS...]   (the file is appended)
"""
import os
import subprocess
import sys

corpus, tool = sys.argv[1], sys.argv[2:]
failures = []
names = sorted(n for n in os.listdir(corpus) if n.endswith(".json"))
if len(names) < 20:
    failures.append(f"expected at least 20 bad inputs, found {len(names)}")
for name in names:
    path = os.path.join(corpus, name)
    try:
        p = subprocess.run(tool + [path], capture_output=True, text=True,
                           errors="replace", timeout=60)
    except subprocess.TimeoutExpired:
        failures.append(f"{name}: timed out")
        continue
    lines = [l for l in p.stderr.splitlines() if l.strip()]
    if p.returncode <= 0:
        failures.append(f"{name}: exit code {p.returncode}, expected a clean failure (> 0)")
    if len(lines) != 1:
        failures.append(f"{name}: expected one line on stderr, got {len(lines)}: {p.stderr!r}")
    elif name not in lines[0]:
        failures.append(f"{name}: the error does not name the file: {lines[0]!r}")
    if p.stdout.strip():
        failures.append(f"{name}: printed to stdout: {p.stdout[:200]!r}")
    for bad in ("Assertion", "Stack dump", "terminate called", "PLEASE submit"):
        if bad in p.stderr:
            failures.append(f"{name}: crashed: {p.stderr[:300]!r}")
for f in failures:
    print("FAIL:", f)
print(f"checked {len(names)} bad inputs, {len(failures)} problems")
sys.exit(1 if failures else 0)
