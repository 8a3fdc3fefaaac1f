#!/usr/bin/env python3
"""helix-bench-decode: a generated program's decode step measured on the GPU
against its plan's prediction (docs/gpu.md, "Measured on a GPU").

usage: helix-bench-decode --project DIR --weights CKPT --prompts FILE
                          [--short 8] [--long 40] [--runs 3] [--target 1.2]
                          [--json FILE] [--check] [-- program options...]

DIR is a project of `helix compile --emit project --backend cuda`, built
(DIR/build/helix-decode) against a helix with the CUDA backend; plan.json
beside it holds the plan. The program decodes the prompts on the GPU
(mpirun -np GPUS, CUDA backend; CUDA graphs on with NCCL) for --short and
--long generated tokens; the step time is the difference of the two runs'
wall times over the difference of their steps (loading, start-up and the
first step's capture cancel out), the median over --runs pairs. It is
compared with plan.json's prediction for the emitted program
(estimate.ttl_ms, else the plan's cost ttl_s): the target is measured /
predicted within 1/--target .. --target. Without a GPU it prints one line
and exits 1 (the device count is helix-bench-kernels --devices').
"""
import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import time

CMD = "helix-bench-decode"
HERE = os.path.dirname(os.path.abspath(__file__))


def devices():
    """CUDA devices in view, from helix-bench-kernels (next to this tool)."""
    probe = os.path.join(HERE, "helix-bench-kernels")
    if not os.path.exists(probe):
        return 0, "no helix-bench-kernels next to " + CMD
    r = subprocess.run([probe, "--devices"], stdout=subprocess.PIPE,
                       stderr=subprocess.PIPE, text=True)
    try:
        n = int(r.stdout.strip() or "0")
    except ValueError:
        n = 0
    return n, r.stderr.strip().split(": ", 1)[-1] or "no device"


def timed(cmd):
    t = time.monotonic()
    r = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                       text=True)
    return time.monotonic() - t, r


def main():
    p = argparse.ArgumentParser(prog=CMD)
    p.add_argument("--project", required=True)
    p.add_argument("--weights", required=True)
    p.add_argument("--prompts", required=True)
    p.add_argument("--short", type=int, default=8)
    p.add_argument("--long", type=int, default=40)
    p.add_argument("--runs", type=int, default=3)
    p.add_argument("--target", type=float, default=1.2)
    p.add_argument("--json")
    p.add_argument("--check", action="store_true",
                   help="exit 1 when the step misses the target")
    p.add_argument("program_options", nargs="*",
                   help="after --: options for the program")
    a = p.parse_args()
    extra = a.program_options
    n, why = devices()
    if n == 0:
        print(f"{CMD}: no CUDA GPU ({why}); nothing measured", file=sys.stderr)
        return 1
    if not 0 < a.short < a.long:
        print(f"{CMD}: error: --short must be below --long", file=sys.stderr)
        return 1
    plan_path = os.path.join(a.project, "plan.json")
    program = os.path.join(a.project, "build", "helix-decode")
    for path in (plan_path, program, a.weights, a.prompts):
        if not os.path.exists(path):
            print(f"{CMD}: error: {path}: not found", file=sys.stderr)
            return 1
    with open(plan_path) as f:
        plan = json.load(f)
    est = plan.get("estimate") or {}
    predicted = est.get("ttl_ms", plan["cost"]["ttl_s"] * 1e3) * 1e-3
    gpus = int(plan["gpus"])
    mpirun = [shutil.which("mpirun") or "mpirun", "-np", str(gpus)]
    if os.geteuid() == 0:
        mpirun.append("--allow-run-as-root")

    def run(steps):
        cmd = mpirun + [program, "--weights", a.weights, "--prompts",
                        a.prompts, "--steps", str(steps), "--backend",
                        "cuda"] + extra
        secs, r = timed(cmd)
        if r.returncode:
            raise RuntimeError("$ " + " ".join(cmd) + "\n" + r.stdout +
                               r.stderr)
        return secs

    try:
        steps = []
        for _ in range(a.runs):
            short, long_ = run(a.short), run(a.long)
            steps.append((long_ - short) / (a.long - a.short))
    except RuntimeError as e:
        print(f"{CMD}: error: the program failed:\n{e}", file=sys.stderr)
        return 1
    step = statistics.median(steps)
    ratio = step / predicted
    met = 1 / a.target <= ratio <= a.target
    print(f"{CMD}: {a.project}: {gpus} GPU(s), step {step * 1e3:.3f} ms "
          f"(median of {a.runs}; {', '.join(f'{s * 1e3:.3f}' for s in steps)}"
          f" ms), plan {predicted * 1e3:.3f} ms, measured / plan "
          f"{ratio:.3f}: target within {a.target}x {'met' if met else 'missed'}")
    if a.json:
        with open(a.json, "w") as f:
            json.dump({"project": a.project, "gpus": gpus,
                       "step_s": step, "steps_s": steps,
                       "predicted_s": predicted, "ratio": ratio,
                       "target": a.target, "met": met}, f, indent=2)
    return 1 if a.check and not met else 0


if __name__ == "__main__":
    sys.exit(main())
