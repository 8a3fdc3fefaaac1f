#!/usr/bin/env python3
"""Size and speed of SPMD rank IR and generated code for the paper's plans.

usage: bench/bench-rank-ir.py [--bin build/bin] [--repeat 5]
                              [--prefix PREFIX [--cuda]]

For DeepSeek-R1 (Helix KVP = 64, TPF = 8 x EP = 8 on 64 GPUs) and
Llama-3.1-405B (KVP = 4 x TPA = 8, TPF = 32 on 32 GPUs), 1M context,
batch 8, HOP-B off, prints: `helix compile --emit rank-ir` time (median
of --repeat runs), rank-IR bytes and functions, `--emit project` C++ bytes
and files; with --prefix (a helix install, e.g. build/test/Codegen/prefix
after `ctest -R codegen-install`) also the time to build the generated
project on this machine (CPU backend; --cuda: also the CUDA backend with
nvcc). Then the growth of rank IR with the GPU count for the same layout
shape (R1: KVP = N, TPF = N / 8 x EP = 8 at N = 8, 64, 512).
"""
import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
MODELS = os.path.join(HERE, "..", "test", "Inputs", "models")

PLANS = [
    ("DeepSeek-R1", "DeepSeek-R1.json", 64, "kvp=64,tpa=1,tpf=8,ep=8"),
    ("Llama-3.1-405B", "Llama-3.1-405B.json", 32, "kvp=4,tpa=8,tpf=32,ep=1"),
]


def compile_cmd(helix, model, gpus, layout, emit, out, backend=None):
    cmd = [helix, "compile", "--model", os.path.join(MODELS, model),
           "--gpus", str(gpus), "--batch", "8", "--context", "1048576",
           "--layout", layout, "--hopb", "off", "--emit", emit, "-o", out]
    if backend:
        cmd += ["--backend", backend]
    return cmd


def run(cmd):
    t = time.perf_counter()
    r = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                       text=True)
    if r.returncode:
        sys.exit("failed: %s\n%s" % (" ".join(cmd), r.stderr))
    return time.perf_counter() - t


def rank_ir(helix, model, gpus, layout, work, repeat):
    out = os.path.join(work, "rank.mlir")
    times = [run(compile_cmd(helix, model, gpus, layout, "rank-ir", out))
             for _ in range(repeat)]
    text = open(out).read()
    return statistics.median(times), len(text.encode()), \
        text.count("func.func ")


def project(helix, model, gpus, layout, work, backend, prefix):
    out = os.path.join(work, "project-" + backend)
    run(compile_cmd(helix, model, gpus, layout, "project", out, backend))
    src = os.path.join(out, "src")
    files = sorted(os.listdir(src))
    size = sum(os.path.getsize(os.path.join(src, f)) for f in files)
    build = None
    if prefix:
        run(["cmake", "-S", out, "-B", os.path.join(out, "build"), "-G",
             "Ninja", "-DCMAKE_PREFIX_PATH=" + os.path.abspath(prefix)])
        build = run(["cmake", "--build", os.path.join(out, "build"),
                     "-j", str(os.cpu_count() or 1)])
    return size, len(files), build


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--bin", default=os.path.join(HERE, "..", "build", "bin"))
    p.add_argument("--repeat", type=int, default=5)
    p.add_argument("--prefix")
    p.add_argument("--cuda", action="store_true")
    a = p.parse_args()
    if a.repeat < 1:
        p.error("--repeat: expected at least 1, got %d" % a.repeat)
    helix = os.path.join(a.bin, "helix")
    print("machine: %d cores; times are wall-clock seconds" %
          (os.cpu_count() or 1))
    with tempfile.TemporaryDirectory() as work:
        for name, model, gpus, layout in PLANS:
            t, size, funcs = rank_ir(helix, model, gpus, layout, work,
                                     a.repeat)
            print("%s on %d GPUs (%s):" % (name, gpus, layout))
            print("  compile --emit rank-ir: %.3f s (median of %d)" %
                  (t, a.repeat))
            print("  rank IR: %d bytes, %d functions" % (size, funcs))
            for backend in ["cpu"] + (["cuda"] if a.cuda else []):
                csize, files, build = project(helix, model, gpus, layout,
                                              work, backend, a.prefix)
                line = "  project (%s): %d bytes of C++ in %d files" % (
                    backend, csize, files)
                if build is not None:
                    line += ", built in %.1f s" % build
                print(line)
        print("growth (DeepSeek-R1, KVP = N, TPF = N / 8 x EP = 8):")
        sizes = []
        for n in (8, 64, 512):
            t, size, funcs = rank_ir(helix, "DeepSeek-R1.json", n,
                                     "kvp=%d,tpa=1,tpf=%d,ep=8" % (n, n // 8),
                                     work, 1)
            sizes.append(size)
            print("  %4d GPUs: %d bytes, %d functions, %.3f s" %
                  (n, size, funcs, t))
        print("  largest / smallest: %.4f" % (max(sizes) / min(sizes)))


if __name__ == "__main__":
    main()
