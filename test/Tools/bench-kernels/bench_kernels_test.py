#!/usr/bin/env python3
"""Tests of helix-bench-kernels --static (docs/gpu.md), run by ctest when the
CUDA backend is built (tools/helix-bench-kernels/CMakeLists.txt).

  bench_kernels_test.py --tool T --source CudaKernels.cu --inputs DIR
                        --work DIR [--nvcc NVCC] static|fail|formats

static   the library's kernels: the tool's --check passes (no spills in the
         hot kernels on any built architecture, 128-bit loads in the
         streaming kernels, ptxas reproduces the library's cubins, launchers
         match CudaKernels.cu), and, checked here again independently: the
         printed table parses, every built architecture has every hot kernel
         with 0 spill bytes, attention and linearResident have 128-bit
         global loads, occupancies are in [0, 1] and agree with the warps,
         the JSON says the same.
fail     the checks can fail: a ptxas report with spills (fabricated, and the
         real one edited), a table with spills, without attention's 128-bit
         loads or with an occupancy of 1.5, a
         launcher whose block size differs from the tool's table, a limits
         file with a figure without a source.
no-gpu   without a GPU (CUDA_VISIBLE_DEVICES=-1), helix-bench-kernels
         --measure and helix-bench-decode print one line ("...: no CUDA GPU
         (why); nothing measured") on stderr and exit 1.
formats  fatbinaries compressed with zstd and with LZ4 and a bare cubin give
         the same figures as an uncompressed one; a float4 kernel has
         128-bit loads and a scalar one not; an attentionKernel with scalar
         loads fails --check; an arch-specific target the library lacks
         (sm_90a, or sm_100f when the library holds sm_90a and sm_100a) is
         compiled from the library's PTX.

Exit 0: passed, 1: failed, 77: skipped (no tool or no nvcc).
"""

import argparse
import json
import os
import re
import shutil
import subprocess
import sys

HOT = ["attentionKernel", "linearResidentKernel", "dequantizeKernel",
       "kvStoreKernel", "rmsNormKernel", "addRmsNormKernel",
       "ropeKvStoreKernel", "embeddingKernel", "moeRouteKernel",
       "moeDispatchKernel", "linearGroupedKernel", "moeCombineKernel",
       "gatherRowsKernel", "lseCombineKernel", "linearPartsKernel",
       "headMatmulResidentKernel", "rmsNormPrefixKernel"]
# The table prints occupancies to 3 decimals: off by up to half a unit
# (28 warps: 0.4375 printed 0.438), plus float error.
ROUNDING = 0.0005 + 1e-9
# The KV- and weight-streaming kernels: 128-bit global loads required.
STREAMING = ["attentionKernel", "linearResidentKernel", "linearGroupedKernel",
             "linearPartsKernel"]
COLUMNS = ["kernel", "arch", "regs", "stack", "spill_st", "spill_ld",
           "smem_static", "smem_dyn", "block", "blocks_sm", "warps_sm",
           "occupancy", "limiter", "ld128", "hot"]
INT_COLUMNS = ["regs", "stack", "spill_st", "spill_ld", "smem_static",
               "smem_dyn", "block", "blocks_sm", "warps_sm"]

failures = []
passes = []


def expect(cond, what):
    (passes if cond else failures).append(what)
    if not cond:
        print("FAIL: " + what)


class TableError(Exception):
    pass


def parse_table(text):
    """The rows of the tool's table: a header line of COLUMNS, then one row
    per kernel and architecture until a blank line. '?' stays None."""
    lines = text.splitlines()
    try:
        start = next(i for i, l in enumerate(lines) if l.split()[:1] == ["kernel"])
    except StopIteration:
        raise TableError("no header line")
    if lines[start].split() != COLUMNS:
        raise TableError("header %r is not %r" % (lines[start].split(), COLUMNS))
    rows = []
    for line in lines[start + 1:]:
        if not line.strip():
            break
        fields = line.split()
        if len(fields) != len(COLUMNS):
            raise TableError("row %r has %d fields, not %d"
                             % (line, len(fields), len(COLUMNS)))
        row = dict(zip(COLUMNS, fields))
        for c in INT_COLUMNS:
            if row[c] == "?":
                row[c] = None
            elif re.fullmatch(r"-?\d+", row[c]):
                row[c] = int(row[c])
            else:
                raise TableError("%s of %r is not an integer" % (c, line))
        if row["occupancy"] == "?":
            row["occupancy"] = None
        else:
            try:
                row["occupancy"] = float(row["occupancy"])
            except ValueError:
                raise TableError("occupancy of %r is not a number" % line)
        if row["ld128"] not in ("yes", "no", "?") or row["hot"] not in ("yes", "no"):
            raise TableError("ld128/hot of %r" % line)
        rows.append(row)
    if not rows:
        raise TableError("no rows")
    return rows


def table_problems(rows):
    """What the test requires of a table, as messages."""
    problems = []
    archs = sorted({r["arch"] for r in rows})
    for kernel in HOT:
        for arch in archs:
            r = [x for x in rows if x["kernel"] == kernel and x["arch"] == arch]
            if not r:
                problems.append("%s missing on %s" % (kernel, arch))
                continue
            r = r[0]
            if r["spill_st"] != 0 or r["spill_ld"] != 0:
                problems.append("%s %s spills: %s stores, %s loads"
                                % (kernel, arch, r["spill_st"], r["spill_ld"]))
            if kernel in STREAMING and r["ld128"] != "yes":
                problems.append("%s %s: no 128-bit global loads (%s)"
                                % (kernel, arch, r["ld128"]))
    for r in rows:
        at = "%s %s" % (r["kernel"], r["arch"])
        occ = r["occupancy"]
        if occ is None:
            problems.append(at + ": occupancy unknown")
            continue
        if not 0.0 <= occ <= 1.0:
            problems.append(at + ": occupancy %s outside [0, 1]" % occ)
        warps_per_block = -(-r["block"] // 32)
        if r["warps_sm"] != r["blocks_sm"] * warps_per_block:
            problems.append(at + ": warps_sm != blocks_sm x warps per block")
        if abs(occ - r["warps_sm"] / 64.0) > ROUNDING:
            problems.append(at + ": occupancy != warps_sm / 64")
    return problems


def run(cmd, **kw):
    p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                       text=True, **kw)
    return p.returncode, p.stdout, p.stderr


def test_static(a):
    out_json = os.path.join(a.work, "static.json")
    log = os.path.join(a.work, "static.ptxas.log")
    rc, out, err = run([a.tool, "--static", "--check", "--source", a.source,
                        "--json", out_json, "--save-ptxas-log", log])
    sys.stdout.write(out)
    sys.stderr.write(err)
    expect(rc == 0, "the tool's --check passes on the library")
    expect("check passed" in out, "the tool says the check passed")
    try:
        rows = parse_table(out)
    except TableError as e:
        expect(False, "the table parses: %s" % e)
        return
    expect(True, "the table parses")
    problems = table_problems(rows)
    for p in problems:
        print("  " + p)
    expect(not problems, "hot kernels do not spill; streaming kernels have "
           "128-bit loads; occupancies in [0, 1]")
    with open(out_json) as f:
        j = json.load(f)
    lib_archs = [x["arch"] for x in j["archs"]]
    expect(sorted(lib_archs) == sorted({r["arch"] for r in rows}),
           "the table covers every architecture of the library")
    expect(all(x["ptxas_replay"] == "identical" for x in j["archs"]),
           "ptxas on the library's PTX reproduces its cubins")
    expect(j["check"]["ok"] and not j["check"]["problems"], "JSON check ok")
    by = {(k["kernel"], k["arch"]): k for k in j["kernels"]}
    same = len(by) == len(rows)
    for r in rows:
        k = by.get((r["kernel"], r["arch"]))
        if (k is None or k["registers"] != r["regs"]
                or k["spill_store_bytes"] != r["spill_st"]
                or k["spill_load_bytes"] != r["spill_ld"]
                or k["block_size"] != r["block"]
                or abs(k["occupancy"]["occupancy"] - r["occupancy"]) > ROUNDING):
            same = False
            print("  table and JSON differ for %s %s" % (r["kernel"], r["arch"]))
    expect(same, "the JSON agrees with the table")
    for k in j["kernels"]:
        if k["kernel"] in STREAMING:
            loads = k["global_loads"] or {}
            expect(loads.get("loads_128_bits_or_wider", 0) > 0
                   and loads.get("widest_bits", 0) >= 128,
                   "%s %s: 128-bit global loads in the JSON (%s)"
                   % (k["kernel"], k["arch"], loads.get("opcodes")))


def library_archs(a):
    path = os.path.join(a.work, "archs.json")
    rc, out, err = run([a.tool, "--static", "--ptxas", "none", "--json", path])
    with open(path) as f:
        return [x["arch"] for x in json.load(f)["archs"]]


def test_fail(a):
    # 1. A fabricated ptxas report in which attention spills (written for
    # sm_90; used for the library's first architecture).
    arch = library_archs(a)[0]
    with open(os.path.join(a.inputs, "attention-spills.ptxas.log")) as f:
        text = f.read().replace("'sm_90'", "'%s'" % arch)
    fabricated = os.path.join(a.work, "attention-spills.ptxas.log")
    with open(fabricated, "w") as f:
        f.write(text)
    rc, out, err = run([a.tool, "--static", "--check", "--arch", arch,
                        "--ptxas-log", fabricated])
    expect(rc == 1 and "attentionKernel %s: 64 bytes spill stores, 48 bytes "
           "spill loads" % arch in err,
           "a fabricated ptxas report with spills fails the check")

    # 2. The real report, edited so that one hot kernel spills: the check
    # fails for that reason only (the unedited report passes).
    log = os.path.join(a.work, "real.ptxas.log")
    rc, out, err = run([a.tool, "--static", "--save-ptxas-log", log])
    expect(rc == 0 and os.path.getsize(log) > 0, "the tool saves its ptxas log")
    rc, out, err = run([a.tool, "--static", "--check", "--ptxas-log", log])
    expect(rc == 0, "the saved ptxas log passes the check")
    text = open(log).read()
    m = re.search(r"Function properties for (\S*rmsNormKernel\S*)\n"
                  r"\s*(\d+) bytes stack frame, 0 bytes spill stores, 0 bytes spill loads",
                  text)
    expect(m is not None, "the saved log has rmsNormKernel's figures")
    if m:
        edited = text[:m.start()] + ("Function properties for %s\n    %s bytes "
                                     "stack frame, 16 bytes spill stores, 8 bytes "
                                     "spill loads" % (m.group(1), m.group(2))) + text[m.end():]
        path = os.path.join(a.work, "edited.ptxas.log")
        with open(path, "w") as f:
            f.write(edited)
        rc, out, err = run([a.tool, "--static", "--check", "--ptxas-log", path])
        problems = [l.strip() for l in err.splitlines() if l.startswith("  ")]
        expect(rc == 1 and len(problems) == 1 and "rmsNormKernel" in problems[0]
               and "16 bytes spill stores" in problems[0],
               "one spilling hot kernel fails the check (and nothing else): %s"
               % problems)

    # 3. The table checker: spills, an occupancy above 1, a broken row.
    # (The saved report stands for ptxas: one replay per architecture is
    # enough for this test.)
    rc, out, err = run([a.tool, "--static", "--ptxas-log", log])
    rows = parse_table(out)
    expect(not table_problems(rows), "the real table passes the table checks")
    lines = out.splitlines()
    i = next(k for k, l in enumerate(lines) if l.startswith("attentionKernel"))
    spilled = list(lines)
    f = spilled[i].split()
    f[4], f[5] = "16", "16"
    spilled[i] = " ".join(f)
    expect(any("spills" in p for p in table_problems(parse_table("\n".join(spilled)))),
           "a table with spills in a hot kernel fails")
    narrow = list(lines)
    f = narrow[i].split()
    f[13] = "no"
    narrow[i] = " ".join(f)
    expect(any("no 128-bit global loads" in p
               for p in table_problems(parse_table("\n".join(narrow)))),
           "a table whose attention has no 128-bit loads fails")
    over = list(lines)
    f = over[i].split()
    f[11] = "1.500"
    over[i] = " ".join(f)
    expect(any("outside [0, 1]" in p for p in table_problems(parse_table("\n".join(over)))),
           "a table with an occupancy of 1.5 fails")
    broken = list(lines)
    broken[i] = " ".join(broken[i].split()[:-2])
    try:
        parse_table("\n".join(broken))
        expect(False, "a row with missing columns does not parse")
    except TableError:
        expect(True, "a row with missing columns does not parse")

    # 4. A launcher that no longer matches the tool's table (attention's
    # threads = kAttentionThreads, followed to its value).
    with open(a.source) as f:
        src = f.read()
    changed = src.replace("constexpr int kAttentionThreads = 128;",
                          "constexpr int kAttentionThreads = 64;")
    expect(changed != src,
           "CudaKernels.cu has 'constexpr int kAttentionThreads = 128;'")
    path = os.path.join(a.work, "CudaKernels-changed.cu")
    with open(path, "w") as f:
        f.write(changed)
    rc, out, err = run([a.tool, "--static", "--check", "--ptxas-log", log,
                        "--source", path])
    expect(rc == 1 and "attentionKernel: the launch uses threads = 64" in err,
           "a changed launcher block size fails the check")

    # 5. Limits without a source are refused.
    limits = os.path.join(os.path.dirname(a.source), "..", "..", "..", "data",
                          "gpu", "sm-limits.json")
    with open(limits) as f:
        lj = json.load(f)
    del lj["archs"]["sm_90"]["registers_per_sm"]["source"]
    path = os.path.join(a.work, "no-source.json")
    with open(path, "w") as f:
        json.dump(lj, f)
    rc, out, err = run([a.tool, "--static", "--limits", path])
    expect(rc == 1 and "every figure needs a source" in err,
           "a limit without a source is refused")


KERNELS_CU = r"""
__global__ void vectorCopy(float4 *out, const float4 *in, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) out[i] = in[i];
}
__global__ void scalarCopy(float *out, const float *in, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) out[i] = in[i];
}
"""

# Stand-ins named like the streaming kernels: attention reading one float
# at a time (what --check must refuse), linearResident 16 bytes at a time.
STREAMING_CU = r"""
namespace {
__global__ void attentionKernel(float *out, const float *kv, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) out[i] = kv[i] * 2.0f;
}
__global__ void linearResidentKernel(uint4 *out, const uint4 *w, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) out[i] = w[i];
}
}
void launchBoth(float *o, const float *k, uint4 *o4, const uint4 *w, int n) {
  attentionKernel<<<1, 128>>>(o, k, n);
  linearResidentKernel<<<1, 128>>>(o4, w, n);
}
"""


def kernel_figures(tool, path):
    rc, out, err = run([tool, "--static", "--lib", path, "--json", path + ".json"])
    if rc != 0:
        print(out + err)
        return None
    with open(path + ".json") as f:
        j = json.load(f)
    return {(k["kernel"], k["arch"]): (k["registers"], k["stack_frame_bytes"],
                                       k["spill_store_bytes"], k["static_smem_bytes"],
                                       (k["global_loads"] or {}).get("loads_128_bits_or_wider"))
            for k in j["kernels"]}


def test_formats(a):
    if not a.nvcc or not shutil.which(a.nvcc):
        print("no nvcc: skipped")
        sys.exit(77)
    cu = os.path.join(a.work, "copy.cu")
    with open(cu, "w") as f:
        f.write(KERNELS_CU)
    figures = {}
    for mode, flags in [("none", ["--compress-mode=none"]),
                        ("zstd", ["--compress-mode=size", "-Xfatbin=-compress-all"]),
                        ("lz4", ["--compress-mode=speed", "-Xfatbin=-compress-all"])]:
        obj = os.path.join(a.work, "copy-%s.o" % mode)
        rc, out, err = run([a.nvcc, "-c", "-O3", "-arch=sm_90"] + flags + [cu, "-o", obj])
        if rc != 0 and mode != "none" and "compress" in err:
            print("nvcc has no %s fatbin compression: not tested" % mode)
            continue
        expect(rc == 0, "nvcc %s: %s" % (mode, err.strip()[:200]))
        if rc == 0:
            figures[mode] = kernel_figures(a.tool, obj)
    cubin = os.path.join(a.work, "copy.cubin")
    rc, out, err = run([a.nvcc, "-cubin", "-O3", "-arch=sm_90", cu, "-o", cubin])
    if rc == 0:
        figures["cubin"] = kernel_figures(a.tool, cubin)
    base = figures.get("none")
    expect(base is not None and ("vectorCopy", "sm_90") in base,
           "an uncompressed fatbinary is read")
    if base:
        expect(base[("vectorCopy", "sm_90")][4] > 0, "float4 copy: 128-bit loads")
        expect(base[("scalarCopy", "sm_90")][4] == 0, "float copy: no 128-bit loads")
        for mode in [m for m in ("zstd", "lz4") if m in figures]:
            expect(figures.get(mode) == base,
                   "a %s-compressed fatbinary gives the same figures" % mode)
        if "cubin" in figures:
            same = all(figures["cubin"].get(k, (None,))[:4] == v[:4] for k, v in base.items())
            expect(same, "a bare cubin gives the same figures")

    # A streaming kernel without 128-bit loads fails --check; one with them
    # does not.
    cu = os.path.join(a.work, "streaming.cu")
    with open(cu, "w") as f:
        f.write(STREAMING_CU)
    obj = os.path.join(a.work, "streaming.o")
    rc, out, err = run([a.nvcc, "-c", "-O3", "-arch=sm_90", cu, "-o", obj])
    expect(rc == 0, "nvcc streaming.cu: %s" % err.strip()[:200])
    if rc == 0:
        rc, out, err = run([a.tool, "--static", "--check", "--lib", obj])
        problems = [l.strip() for l in err.splitlines() if l.startswith("  ")]
        expect(rc == 1 and any(p.startswith("attentionKernel sm_90: no 128-bit "
                                            "global loads") for p in problems),
               "an attentionKernel with 32-bit loads fails the check: %s" % problems)
        expect(not any(p.startswith("linearResidentKernel sm_90: no 128-bit")
                       for p in problems),
               "a linearResidentKernel with 128-bit loads passes that check")

    # An architecture-specific target the library does not hold, from its
    # portable PTX: sm_90a where the library lacks it (built for 80;90;100),
    # else the family target sm_100f (the default build holds sm_90a and
    # sm_100a, each from its own compute_90a / compute_100a PTX).
    archs = library_archs(a)
    base, derived = ("sm_90", "sm_90a") if "sm_90a" not in archs else \
        ("sm_100", "sm_100f")
    if base not in archs:
        print("the library has no %s code: --arch %s not tested" % (base, derived))
        return
    rc, out, err = run([a.tool, "--static", "--check", "--arch",
                        "%s,%s" % (base, derived)])
    sys.stdout.write(out)
    sys.stderr.write(err)
    expect(rc == 0, "--arch %s,%s passes the check" % (base, derived))
    expect(re.search(r"%s: not in the library: ptxas -arch %s on its \S+ "
                     r"PTX; code identical to %s" % (derived, derived, base),
                     out) is not None,
           "%s is compiled from the library's PTX" % derived)
    rows = parse_table(out)
    rb = {r["kernel"]: r["regs"] for r in rows if r["arch"] == base}
    rd = {r["kernel"]: r["regs"] for r in rows if r["arch"] == derived}
    expect(rb and rb == rd, "%s rows have the %s registers" % (derived, base))
    if "sm_90a" in archs:
        rc, out, err = run([a.tool, "--static", "--arch", "sm_90a",
                            "--json", os.path.join(a.work, "sm90a.json")])
        with open(os.path.join(a.work, "sm90a.json")) as f:
            j = json.load(f)
        expect(j["archs"][0]["origin"] == "library"
               and j["archs"][0]["ptx_target"] == "sm_90a",
               "the library's sm_90a code comes with its own compute_90a PTX")
    rc, out, err = run([a.tool, "--static", "--arch", "sm_75"])
    expect(rc == 1 and "is not in the library" in err,
           "an architecture without code or PTX is refused")


def test_no_gpu(a):
    env = dict(os.environ, CUDA_VISIBLE_DEVICES="-1")
    # --measure runs the GPU half, helix-bench-kernels-gpu, which names
    # itself.
    gpu = os.path.join(os.path.dirname(a.tool), "helix-bench-kernels-gpu")
    for name, cmd in (
            ("helix-bench-kernels-gpu --measure", [a.tool, "--measure"]),
            ("helix-bench-kernels-gpu --measure", [gpu, "--measure"]),
            ("helix-bench-decode", [a.decode_tool, "--project", a.work,
                                    "--weights", a.work, "--prompts",
                                    a.work])):
        rc, out, err = run(cmd, env=env)
        lines = err.splitlines()
        expect(rc == 1 and not out and len(lines) == 1
               and lines[0].startswith(name + ": no CUDA GPU (")
               and lines[0].endswith("); nothing measured"),
               "%s without a GPU: one line, exit 1 (got %d, %r, %r)"
               % (name, rc, out, err))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--tool", required=True)
    ap.add_argument("--source", required=True)
    ap.add_argument("--inputs", required=True)
    ap.add_argument("--work", required=True)
    ap.add_argument("--nvcc")
    ap.add_argument("--decode-tool")
    ap.add_argument("mode", choices=["static", "fail", "formats", "no-gpu"])
    a = ap.parse_args()
    if not os.path.exists(a.tool):
        print("no %s: skipped" % a.tool)
        return 77
    a.work = os.path.join(a.work, a.mode)
    os.makedirs(a.work, exist_ok=True)
    {"static": test_static, "fail": test_fail, "formats": test_formats,
     "no-gpu": test_no_gpu}[a.mode](a)
    print("%d passed, %d failed" % (len(passes), len(failures)))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
