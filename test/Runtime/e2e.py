#!/usr/bin/env python3
"""End-to-end check of a Helix-sharded decode run against helix-reference.

usage: e2e.py --bin DIR --config CONFIG --np N --prompts FILE --steps K
              --work DIR [--dtype bf16] [--shards 1] [--seed 1]
              [--rtol 1e-5] [--atol 0] [--expect-error REGEX]
              [--weights-config CONFIG] [--mpirun-args ...]
              -- <helix-handwritten-decode layout options>

1. helix-make-checkpoint writes random weights for CONFIG (or for
   --weights-config, to build a mismatched checkpoint on purpose);
2. helix-reference decodes the prompts unsharded;
3. mpirun -np N helix-handwritten-decode decodes them sharded (CPU backend);
4. tokens must be identical, logits within atol + rtol * max|logit| of each
   row;
5. optionally (CUDA emulation): the stream trace's HOP-B overlap
   (--expect-overlap), the step run as one CUDA graph captured once
   (--expect-graphs), the same run without CUDA graphs (--graphs-off-too).

With --expect-error, step 3 must fail with a non-zero exit, and REGEX must
appear in the error printed by every one of the N ranks (no hang: ctest's
timeout catches one).
"""
import argparse
import os
import re
import shutil
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))


def run(cmd, **kw):
    return subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                          text=True, **kw)


def main():
    argv = sys.argv[1:]
    extra = []
    if "--" in argv:
        i = argv.index("--")
        argv, extra = argv[:i], argv[i + 1:]
    p = argparse.ArgumentParser()
    p.add_argument("--bin", required=True)
    p.add_argument("--config", required=True)
    p.add_argument("--weights-config")
    p.add_argument("--np", type=int, required=True)
    p.add_argument("--prompts", required=True)
    p.add_argument("--steps", type=int, required=True)
    p.add_argument("--work", required=True)
    p.add_argument("--dtype", default="bf16")
    p.add_argument("--shards", type=int, default=1)
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--rtol", type=float, default=1e-5)
    p.add_argument("--atol", type=float, default=0.0)
    p.add_argument("--expect-error")
    p.add_argument("--drop", action="append", default=[])
    p.add_argument("--program", default="helix-handwritten-decode")
    p.add_argument("--expect-overlap", type=float,
                   help="CUDA emulation: trace the streams of every rank and "
                        "expect this fraction of the all-to-alls overlapped "
                        "by attention (stream_trace.py)")
    p.add_argument("--expect-graphs", action="store_true",
                   help="CUDA emulation: every rank's trace shows the step "
                        "captured once as a CUDA graph and launched every "
                        "step (stream_trace.py)")
    p.add_argument("--check-launches", action="store_true",
                   help="with --expect-graphs and --report-traffic among the "
                        "program's options: rank 0's counted kernel "
                        "launches, cuBLAS calls and collectives of the last "
                        "step equal what its captured step issues in the "
                        "trace")
    p.add_argument("--graphs-off-too", action="store_true",
                   help="also run with --cuda-graphs off: the same tokens, "
                        "logits within --rtol of the graph run")
    p.add_argument("--gpu", action="store_true",
                   help="needs a CUDA device: exit 77 (skipped) without one")
    a = p.parse_args(argv)
    if a.gpu:
        probe = shutil.which("nvidia-smi")
        listed = probe and run([probe, "-L"]).stdout.strip()
        if not listed:
            print("SKIPPED: no CUDA device (nvidia-smi -L lists none)")
            return 77

    shutil.rmtree(a.work, ignore_errors=True)
    os.makedirs(a.work)
    ckpt = os.path.join(a.work, "ckpt")
    tool = lambda name: os.path.join(a.bin, name)
    r = run([tool("helix-make-checkpoint"), "--config",
             a.weights_config or a.config, "-o", ckpt, "--seed", str(a.seed),
             "--shards", str(a.shards), "--dtype", a.dtype] +
            [x for d in a.drop for x in ("--drop", d)])
    if r.returncode:
        print(r.stdout + r.stderr)
        return 1
    print(r.stdout.strip())

    mpirun = ["mpirun", "-np", str(a.np), "--oversubscribe"]
    if os.geteuid() == 0:
        mpirun.append("--allow-run-as-root")
    sharded = mpirun + [tool(a.program), "--config", a.config,
                        "--weights", ckpt, "--prompts", a.prompts,
                        "--steps", str(a.steps),
                        "--dump-logits", os.path.join(a.work, "sharded.bin"),
                        "--dump-tokens",
                        os.path.join(a.work, "sharded.tokens")] + extra
    env = dict(os.environ, OMPI_MCA_btl_vader_single_copy_mechanism="none")
    trace = os.path.join(a.work, "trace")
    if a.expect_overlap is not None or a.expect_graphs:
        env["HELIX_CUDA_EMU_TRACE"] = trace
    if a.expect_error:
        r = run(sharded, env=env)
        print("$ " + " ".join(sharded))
        print(r.stdout + r.stderr)
        if r.returncode == 0:
            print("FAIL: the sharded run succeeded, expected an error")
            return 1
        lines = [l for l in r.stderr.splitlines()
                 if re.search(r"\[rank \d+/\d+\]: error", l)]
        ranks = {re.search(r"\[rank (\d+)/", l).group(1) for l in lines
                 if re.search(a.expect_error, l)}
        if len(ranks) != a.np:
            print(f"FAIL: expected /{a.expect_error}/ in the error of all "
                  f"{a.np} ranks, found it on {sorted(ranks)}")
            return 1
        print(f"ok: every rank reported /{a.expect_error}/, exit "
              f"{r.returncode}")
        return 0

    ref = [tool("helix-reference"), "--config", a.config, "--weights", ckpt,
           "--prompts", a.prompts, "--steps", str(a.steps),
           "--dump-logits", os.path.join(a.work, "reference.bin"),
           "--dump-tokens", os.path.join(a.work, "reference.tokens")]
    for cmd, e in ((ref, None), (sharded, env)):
        r = run(cmd, env=e)
        print("$ " + " ".join(cmd))
        print(r.stdout + r.stderr)
        if r.returncode:
            print("FAIL: exit status %d" % r.returncode)
            return 1
    out = r.stdout
    shape = re.search(r"logits: \[(\d+), (\d+), (\d+)\]", r.stdout)
    vocab = int(shape.group(3))
    with open(os.path.join(a.work, "reference.tokens")) as f:
        want = f.read()
    with open(os.path.join(a.work, "sharded.tokens")) as f:
        got = f.read()
    if want != got:
        print("FAIL: tokens differ\nreference:\n" + want + "sharded:\n" + got)
        return 1
    print("tokens identical")

    def compare(got_bin, want_bin):
        r = run([sys.executable, os.path.join(HERE, "compare_logits.py"),
                 os.path.join(a.work, got_bin), os.path.join(a.work, want_bin),
                 "--vocab", str(vocab), "--rtol", str(a.rtol),
                 "--atol", str(a.atol)])
        print(r.stdout + r.stderr)
        return r.returncode

    if compare("sharded.bin", "reference.bin"):
        return 1
    if a.graphs_off_too:
        plain = [x.replace("sharded.", "sharded-nographs.") for x in sharded]
        plain += ["--cuda-graphs", "off"]
        r = run(plain, env=dict(os.environ,
                                OMPI_MCA_btl_vader_single_copy_mechanism="none"))
        print("$ " + " ".join(plain))
        print(r.stdout + r.stderr)
        if r.returncode:
            print("FAIL: exit status %d without CUDA graphs" % r.returncode)
            return 1
        with open(os.path.join(a.work, "sharded-nographs.tokens")) as f:
            if f.read() != got:
                print("FAIL: tokens differ with and without CUDA graphs")
                return 1
        print("tokens identical with and without CUDA graphs")
        if compare("sharded-nographs.bin", "sharded.bin"):
            print("FAIL: logits without CUDA graphs differ from the graph run")
            return 1
    if a.expect_overlap is None and not a.expect_graphs:
        return 0
    sys.path.insert(0, HERE)
    import stream_trace
    steps = int(shape.group(1))
    for rank in range(a.np):
        args = [f"{trace}.{rank}"]
        if a.expect_overlap is not None:
            args += ["--expect-overlap", str(a.expect_overlap)]
        if a.expect_graphs:
            args += ["--expect-graph-steps", str(steps)]
        if stream_trace.main(args):
            return 1
    if a.check_launches:
        m = re.search(r"traffic rank 0 step \d+: .*launches (\d+), cublas "
                      r"(\d+), collectives (\d+)", out)
        if not m:
            print("FAIL: no traffic report with launches (--report-traffic)")
            return 1
        counted = dict(zip(("launches", "cublas", "collectives"),
                           map(int, m.groups())))
        issued = stream_trace.captured_work(f"{trace}.0")
        print(f"rank 0, last step: counted {counted}, the captured step "
              f"issues {issued}")
        if counted != issued:
            print("FAIL: the counts differ from what the step issues")
            return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
