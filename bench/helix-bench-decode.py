#!/usr/bin/env python3
"""helix-bench-decode: a generated program's decode step measured on the GPU
against its plan's prediction (docs/gpu.md, "Measured on a GPU").

usage: helix-bench-decode --project DIR --weights CKPT --prompts FILE
                          [--steps 48] [--runs 1] [--target 1.2]
                          [--plan FILE] [--json FILE] [--check]
                          [-- program options...]

DIR is a project of `helix compile --emit project --backend cuda`, built
(DIR/build/helix-decode, or --program); plan.json beside it holds the plan
(--plan: another plan of the same program, e.g. priced for the GPU at hand
or after `helix calibrate`). The program decodes the prompts on the GPU
(mpirun -np GPUS, CUDA backend; CUDA graphs on with NCCL) for --steps
steps with --report-timing and --report-traffic:

* the step time is the program's own: rank 0's wall time per step (the
  launches, the GPU's work, the logits' download, the host's argmax and the
  broadcast of the next tokens), the median over the steps after three
  warm-up steps, then the median over --runs runs. The host's share (argmax
  and broadcast, which the plan does not price) is reported beside it.
* it is compared with plan.json's prediction for the emitted program
  (estimate.ttl_ms, else the plan's cost ttl_s): the target is measured /
  predicted within 1/--target .. --target.
* the kernels rank 0 launched in its last step (launches + cuBLAS calls as
  the CUDA backend counts them) against the kernels plan.json prices.

Without a GPU it prints one line and exits 1 (the device count is
helix-bench-kernels-gpu --devices', found next to this tool).
"""
import argparse
import json
import os
import re
import shutil
import statistics
import subprocess
import sys

CMD = "helix-bench-decode"
HERE = os.path.dirname(os.path.abspath(__file__))


def devices():
    """CUDA devices in view, from helix-bench-kernels-gpu (next to this
    tool)."""
    probe = os.path.join(HERE, "helix-bench-kernels-gpu")
    if not os.path.exists(probe):
        return 0, "no helix-bench-kernels-gpu next to " + CMD
    r = subprocess.run([probe, "--devices"], stdout=subprocess.PIPE,
                       stderr=subprocess.PIPE, text=True)
    try:
        n = int(r.stdout.strip() or "0")
    except ValueError:
        n = 0
    return n, r.stderr.strip().split(": ", 1)[-1] or "no device"


TIMING = re.compile(r"^timing: (\d+) steps after (\d+) warm-up: step ms "
                    r"median ([0-9.]+) min ([0-9.]+) max ([0-9.]+); host "
                    r"argmax and broadcast ms median ([0-9.]+); first step "
                    r"ms ([0-9.]+)", re.M)
LAUNCHES = re.compile(r"traffic rank 0 step \d+: [^\n]*launches (\d+), "
                      r"cublas (\d+)")


def planned_kernels(plan):
    """The kernels plan.json prices per step (every layer of stage 0 and the
    step's own), as codegen_e2e.py's report_launches counts them."""
    cost = plan["cost"]
    layers = [l for l in cost["layers"] if l.get("stage", 0) == 0]
    n = sum(l["attention"]["kernels"] + l["ffn"]["kernels"] for l in layers)
    if len(layers) == len(cost["layers"]):
        n += cost["step"]["kernels"]
    return n


def main():
    argv = sys.argv[1:]
    extra = []
    if "--" in argv:
        i = argv.index("--")
        argv, extra = argv[:i], argv[i + 1:]
    p = argparse.ArgumentParser(prog=CMD)
    p.add_argument("--project", required=True)
    p.add_argument("--program")
    p.add_argument("--plan")
    p.add_argument("--weights", required=True)
    p.add_argument("--prompts", required=True)
    p.add_argument("--steps", type=int, default=48)
    p.add_argument("--runs", type=int, default=1)
    p.add_argument("--target", type=float, default=1.2)
    p.add_argument("--timeout", type=float, default=600,
                   help="seconds for one run of the program")
    p.add_argument("--json")
    p.add_argument("--check", action="store_true",
                   help="exit 1 when the step misses the target")
    a = p.parse_args(argv)
    n, why = devices()
    if n == 0:
        print(f"{CMD}: no CUDA GPU ({why}); nothing measured", file=sys.stderr)
        return 1
    if a.steps < 8 or a.runs < 1:
        print(f"{CMD}: error: --steps must be at least 8 and --runs at "
              "least 1", file=sys.stderr)
        return 1
    plan_path = a.plan or os.path.join(a.project, "plan.json")
    program = a.program or os.path.join(a.project, "build", "helix-decode")
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
    cmd = mpirun + [program, "--weights", a.weights, "--prompts", a.prompts,
                    "--steps", str(a.steps), "--backend", "cuda",
                    "--report-timing", "--report-traffic"] + extra
    medians, hosts, firsts, launches = [], [], [], None
    for _ in range(a.runs):
        try:
            r = subprocess.run(cmd, stdout=subprocess.PIPE,
                               stderr=subprocess.PIPE, text=True,
                               timeout=a.timeout)
        except subprocess.TimeoutExpired:
            print(f"{CMD}: error: the program ran over {a.timeout:.0f} s:\n$ "
                  + " ".join(cmd), file=sys.stderr)
            return 1
        m = TIMING.search(r.stdout)
        if r.returncode or not m:
            print(f"{CMD}: error: the program failed (exit "
                  f"{r.returncode}):\n$ " + " ".join(cmd) + "\n" +
                  r.stdout[-4000:] + r.stderr[-4000:], file=sys.stderr)
            return 1
        medians.append(float(m[3]) * 1e-3)
        hosts.append(float(m[6]) * 1e-3)
        firsts.append(float(m[7]) * 1e-3)
        lm = LAUNCHES.search(r.stdout)
        if lm:
            launches = int(lm[1]) + int(lm[2])
    step = statistics.median(medians)
    host = statistics.median(hosts)
    ratio = step / predicted
    met = 1 / a.target <= ratio <= a.target
    planned = planned_kernels(plan)
    print(f"{CMD}: {a.project}: {gpus} GPU(s), batch {plan['batch']}, step "
          f"{step * 1e3:.3f} ms (median of {a.runs} run(s) of {a.steps} "
          f"steps; host argmax + broadcast {host * 1e3:.3f} ms of it), plan "
          f"{predicted * 1e3:.3f} ms ({plan_path}), measured / plan "
          f"{ratio:.3f}: target within {a.target}x "
          f"{'met' if met else 'missed'}")
    print(f"{CMD}: kernels per step: program "
          f"{launches if launches is not None else 'not reported'} (rank 0, "
          f"last step), plan {planned}")
    if a.json:
        with open(a.json, "w") as f:
            json.dump({"project": a.project, "plan": plan_path, "gpus": gpus,
                       "batch": plan["batch"], "steps": a.steps,
                       "step_s": step, "steps_s": medians,
                       "host_s": host, "first_step_s": firsts,
                       "predicted_s": predicted, "ratio": ratio,
                       "target": a.target, "met": met,
                       "kernels_program": launches,
                       "kernels_plan": planned,
                       "command": cmd}, f, indent=2)
    return 1 if a.check and not met else 0


if __name__ == "__main__":
    sys.exit(main())
