#!/usr/bin/env python3
"""End-to-end check of generated code against helix-reference.

usage: codegen_e2e.py --bin DIR --prefix PREFIX --config CONFIG --work DIR
                      [--prompts FILE --steps K] [--dtype bf16] [--seed 1]
                      [--rtol 1e-5] [--backend cpu|cuda] [--build-only]
                      [--gpu] -- <helix compile options: --gpus N --batch B
                      --layout ... [--strategy S] [--hopb on|off] ...>

1. helix compile --model CONFIG ... --emit project -o WORK/project
   --backend BACKEND writes the CMake project of the plan;
2. the project is configured against the helix installed in PREFIX
   (find_package(Helix)) and built;
3. (unless --build-only) helix-make-checkpoint writes random weights,
   helix-reference decodes the prompts unsharded, and
   mpirun -np N WORK/project/build/helix-decode decodes them sharded;
4. tokens must be identical, logits within rtol * max|logit| of each row.

With --gpu the run uses the CUDA backend (MPI collectives: the ranks share
the device) and the test is skipped (exit 77) without a CUDA device.
"""
import argparse
import os
import re
import shutil
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
COMPARE = os.path.join(HERE, "..", "Runtime", "compare_logits.py")


def run(cmd, **kw):
    return subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                          text=True, **kw)


def step(name, cmd, **kw):
    t = time.time()
    r = run(cmd, **kw)
    print(f"$ {' '.join(cmd)}  [{time.time() - t:.1f} s]")
    if r.returncode:
        print(r.stdout + r.stderr)
        print(f"FAIL: {name}: exit status {r.returncode}")
        sys.exit(1)
    return r


def option(args, flag):
    return args[args.index(flag) + 1] if flag in args else None


def main():
    argv = sys.argv[1:]
    compile_args = []
    if "--" in argv:
        i = argv.index("--")
        argv, compile_args = argv[:i], argv[i + 1:]
    p = argparse.ArgumentParser()
    p.add_argument("--bin", required=True)
    p.add_argument("--prefix", required=True)
    p.add_argument("--config", required=True)
    p.add_argument("--work", required=True)
    p.add_argument("--prompts")
    p.add_argument("--steps", type=int, default=16)
    p.add_argument("--dtype", default="bf16")
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--rtol", type=float, default=1e-5)
    p.add_argument("--backend", default="cpu")
    p.add_argument("--build-only", action="store_true")
    p.add_argument("--gpu", action="store_true")
    p.add_argument("--generator", default="Ninja")
    a = p.parse_args(argv)
    if a.gpu:
        probe = shutil.which("nvidia-smi")
        if not (probe and run([probe, "-L"]).stdout.strip()):
            print("SKIPPED: no CUDA device (nvidia-smi -L lists none)")
            return 77
    if a.backend == "cuda" and not os.path.exists(
            os.path.join(a.prefix, "lib", "libHelixRuntimeCUDA.a")):
        print("SKIPPED: the installed helix has no CUDA backend (no nvcc "
              "when it was built)")
        return 77
    tool = lambda name: os.path.join(a.bin, name)
    shutil.rmtree(a.work, ignore_errors=True)
    os.makedirs(a.work)
    project = os.path.join(a.work, "project")
    build = os.path.join(project, "build")

    step("compile", [tool("helix"), "compile", "--model", a.config] +
         compile_args + ["--emit", "project", "-o", project, "--backend",
                         a.backend])
    for f in ("CMakeLists.txt", "README.md", "plan.json", "src/main.cpp"):
        if not os.path.isfile(os.path.join(project, f)):
            print(f"FAIL: the project has no {f}")
            return 1
    # Unoptimised host code builds fastest; the runtime does the work.
    step("configure", ["cmake", "-S", project, "-B", build, "-G",
                       a.generator, "-DCMAKE_PREFIX_PATH=" + a.prefix,
                       "-DCMAKE_BUILD_TYPE=None"])
    step("build", ["cmake", "--build", build, "-j", "2"])
    program = os.path.join(build, "helix-decode")
    if a.build_only:
        print(f"ok: built {program}")
        return 0

    ckpt = os.path.join(a.work, "ckpt")
    print(step("checkpoint", [tool("helix-make-checkpoint"), "--config",
                              a.config, "-o", ckpt, "--seed", str(a.seed),
                              "--dtype", a.dtype]).stdout.strip())
    common = ["--weights", ckpt, "--prompts", a.prompts, "--steps",
              str(a.steps)]
    out = lambda n: os.path.join(a.work, n)
    step("reference", [tool("helix-reference"), "--config", a.config] +
         common + ["--dump-logits", out("reference.bin"), "--dump-tokens",
                   out("reference.tokens")])
    np = option(compile_args, "--gpus")
    mpirun = ["mpirun", "-np", np, "--oversubscribe"]
    if os.geteuid() == 0:
        mpirun.append("--allow-run-as-root")
    extra = ["--backend", "cuda", "--collectives", "mpi"] if a.gpu else []
    env = dict(os.environ, OMPI_MCA_btl_vader_single_copy_mechanism="none")
    r = step("generated program", mpirun + [program] + common +
             ["--dump-logits", out("generated.bin"), "--dump-tokens",
              out("generated.tokens")] + extra, env=env)
    print(r.stdout.strip())
    vocab = int(re.search(r"logits: \[\d+, \d+, (\d+)\]", r.stdout).group(1))
    with open(out("reference.tokens")) as f:
        want = f.read()
    with open(out("generated.tokens")) as f:
        got = f.read()
    if want != got:
        print("FAIL: tokens differ\nreference:\n" + want + "generated:\n" +
              got)
        return 1
    print("tokens identical")
    r = run([sys.executable, COMPARE, out("generated.bin"),
             out("reference.bin"), "--vocab", str(vocab), "--rtol",
             str(a.rtol)])
    print(r.stdout + r.stderr)
    return r.returncode


if __name__ == "__main__":
    sys.exit(main())
