#!/usr/bin/env python3
"""End-to-end check of generated code against helix-reference.

usage: codegen_e2e.py --bin DIR --prefix PREFIX --config CONFIG --work DIR
                      [--prompts FILE --steps K] [--dtype bf16] [--seed 1]
                      [--format bf16|fp8-block|fp8-tensor|nvfp4|mxfp4]
                      [--rtol 1e-5] [--backend cpu|cuda]
                      [--build-only | --run-only]
                      [--report-memory] [--memory-only] [--gpu]
                      [--drop TENSOR]... [--damage OP]... [--expect-error RE]
                      -- <helix compile options: --gpus N --batch B
                      --layout ... [--strategy S] [--hopb on|off]
                      [--weights-dtype D --kv-dtype D] ...>

1. helix-make-checkpoint writes random weights in --format (and the
   config.json of that checkpoint, with its quantization_config);
2. helix compile --model WORK/ckpt/config.json ... --emit project -o
   WORK/project --backend BACKEND writes the CMake project of the plan
   (weights and KV cache in the plan's formats; without a --dtype,
   --weights-dtype or --kv-dtype option the test plans bf16 weights and
   KV, the checkpoint's own format);
3. the project is configured against the helix installed in PREFIX
   (find_package(Helix)) and built;
4. (unless --build-only) helix-reference decodes the prompts unsharded,
   its KV cache rounded to the plan's KV format (--kv-dtype), and
   mpirun -np N WORK/project/build/helix-decode decodes them sharded;
5. tokens must be identical, logits within rtol * max|logit| of each row.
   With --report-memory the program's bytes by kind (--report-memory) must
   match plan.json's memory figures within 5%; --memory-only checks only
   that (for plans that convert the checkpoint at load, which the
   reference does not).
   With --expect-error the checkpoint (made with --drop, then damaged by
   damage_checkpoint.py --damage OPs) must make every rank of the program
   exit non-zero with RE in its error line, and helix-reference fail too.
6. A plan compiled with --mtp K decodes speculatively: besides the tokens
   and logits per position, its MTP layer's logits per position must match
   the reference's (--dump-draft-logits), its accepted drafts per verify
   step the greedy chain rule's (with K = 1; speculative_check.py), and a
   second run with a draft oracle (the greedy tokens, every
   --oracle-every-th generated one wrong) must give the same tokens and
   accept exactly the drafts the rule accepts.

--build-only stops after step 3; --run-only starts at step 1 with a WORK
whose project an earlier --build-only (of the same options) built, skips
steps 2 and 3, and runs the rest: the device bundle (scripts/gpu-bundle.sh)
builds here and runs on a GPU machine without helix's compiler.

With --gpu the run uses the CUDA backend (MPI collectives: the ranks share
the device) and the test is skipped (exit 77) without a CUDA device.
"""
import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import speculative_check  # noqa: E402
COMPARE = os.path.join(HERE, "..", "Runtime", "compare_logits.py")
DAMAGE = os.path.join(HERE, "damage_checkpoint.py")


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


# Logit tolerance (x the row's max |logit|) by the KV format, when a test
# gives none. The program and the reference round K and V to the same
# format by the same rule, but compute them in different summation orders
# (sharded GEMMs, all-reduces): a value within float rounding of a
# midpoint between two codes rounds to neighbouring codes in the two, a
# relative step of 2^-8 (BF16), 2^-4 (E4M3) or up to 1/2 within an NVFP4
# block (E2M1). Such isolated flips move a logit by a fraction of a step;
# half the format's step bounds them. Without one the logits
# agree to about 1e-6 (f32 accumulation).
KV_RTOL = {"bf16": 2.0 ** -8 / 2, "fp8": 2.0 ** -4 / 2, "fp4": 0.5 / 2}


def expect_error(a, program, common, compile_args, config, tool):
    """The damaged checkpoint: every rank of the program must exit non-zero
    with REGEX in its error line, and helix-reference must refuse it too."""
    np = int(option(compile_args, "--gpus"))
    mpirun = ["mpirun", "-np", str(np), "--oversubscribe"]
    if os.geteuid() == 0:
        mpirun.append("--allow-run-as-root")
    env = dict(os.environ, OMPI_MCA_btl_vader_single_copy_mechanism="none")
    r = run(mpirun + [program] + common, env=env, timeout=120)
    print(r.stdout + r.stderr)
    if r.returncode == 0:
        print("FAIL: the program accepted the damaged checkpoint")
        return 1
    ranks = {m.group(1) for l in r.stderr.splitlines()
             for m in [re.search(r"\[rank (\d+)/\d+\]: error", l)]
             if m and re.search(a.expect_error, l)}
    if len(ranks) != np:
        print(f"FAIL: expected /{a.expect_error}/ in the error of all {np} "
              f"ranks, found it on {sorted(ranks)}")
        return 1
    ref = run([tool("helix-reference"), "--config", config] + common)
    print(ref.stdout + ref.stderr)
    if ref.returncode == 0:
        print("FAIL: helix-reference accepted the damaged checkpoint")
        return 1
    print(f"ok: every rank reported /{a.expect_error}/, exit {r.returncode}; "
          f"helix-reference refused it too")
    return 0


def check_memory(plan, stdout):
    """Weights (+ scales) and KV cache of the fullest rank against the
    plan's memory figures; 1 when one is off by more than 5%."""
    ranks = re.findall(r"memory rank (\d+): weights (\d+) B, scales (\d+) B, "
                       r"kv cache (\d+) B", stdout)
    if not ranks:
        print("FAIL: the program printed no memory report")
        return 1
    weights = max(int(w) + int(s) for _, w, s, _ in ranks)
    kv = max(int(k) for _, _, _, k in ranks)
    want = plan["cost"]["memory"]
    bad = 0
    for what, got, planned in (("weights", weights, want["weights_bytes"]),
                               ("kv cache", kv, want["kv_cache_bytes"])):
        ratio = got / planned if planned else float("inf")
        print(f"memory: {what}: program {got} B, plan {planned:.0f} B, "
              f"ratio {ratio:.4f}")
        if abs(ratio - 1) > 0.05:
            print(f"FAIL: {what} differ from the plan by more than 5%")
            bad = 1
    return bad


def busiest_tokens(n, block, kvp):
    """Tokens of the fullest KVP rank when n tokens are dealt round-robin in
    blocks of `block` (helix-kv-placement), counted in whole blocks."""
    blocks = -(-n // block)
    return -(-blocks // kvp) * block


def check_traffic(plan, stdout, steps):
    """The last step's bytes as the CUDA backend's ops count them
    (--report-traffic) against the cost model's figures in plan.json, for
    rank 0 (1 when one is off by more than 5%):

    - weights: what its GEMMs, embedding and weight decodes read (as
      stored, with scales) and the routed experts it read, against the
      layers' weight_bytes_per_gpu plus the step's (embedding rows, LM
      head). MoE layers: the plan prices the distinct experts it expects a
      step to touch (ffn.active_experts, the busiest EP rank), the program
      reads the ones its routing touched; the program's figure is taken at
      the plan's expert count (its bytes per routed expert times the
      plan's experts), and both counts are printed;
    - the KV cache of the fullest rank against the layers' kv_bytes_per_gpu
      at the step's length, dealt in KV blocks."""
    ranks = re.findall(r"traffic rank (\d+) step (\d+): weights ([\d.]+) B, "
                       r"kv ([\d.]+) B", stdout)
    ops = {m[0]: (float(m[1]), float(m[2]), int(m[3] or 0)) for m in re.findall(
        r"traffic rank 0 op ([^:]+): calls \d+, weights ([\d.]+) B, "
        r"kv ([\d.]+) B[^\n]*?(?:, experts (\d+))?\n", stdout)}
    if not ranks or not ops:
        print("FAIL: the program printed no traffic report")
        return 1
    cost = plan["cost"]
    layers = cost["layers"]
    plan_w = sum(l["attention"]["weight_bytes_per_gpu"] +
                 l["ffn"]["weight_bytes_per_gpu"] for l in layers) + \
        cost["step"]["weight_bytes_per_gpu"]
    got_w = sum(w for name, (w, _, _) in ops.items()
                if name.startswith("gemm") or name in ("embedding",
                                                      "dequantize"))
    routed = ops.get("moe experts (weights as stored)")
    plan_experts = sum(l["ffn"].get("active_experts", 0) for l in layers)
    if routed:
        bytes_read, _, touched = routed
        per_expert = bytes_read / touched if touched else 0.0
        print(f"traffic: routed experts: the program read {touched} "
              f"({bytes_read:.0f} B, {per_expert:.0f} B each), the plan "
              f"expects {plan_experts:.2f}")
        got_w += per_expert * plan_experts
    elif plan_experts:
        print("FAIL: the plan has routed experts, the program counted none")
        return 1
    length = int(ranks[0][1]) + 1  # tokens in the cache at the last step
    block, kvp = plan["kv_block"], cost["layout"]["kvp"]
    scale = busiest_tokens(length, block, kvp) / busiest_tokens(
        plan["context"], block, kvp)
    plan_kv = scale * sum(l["attention"]["kv_bytes_per_gpu"] for l in layers)
    got_kv = max(float(kv) for _, _, _, kv in ranks)
    bad = 0
    for what, got, planned in (("weights read (rank 0)", got_w, plan_w),
                               (f"kv cache read and appended at {length} "
                                "tokens (fullest rank)", got_kv, plan_kv)):
        ratio = got / planned if planned else float("inf")
        print(f"traffic: {what}: program {got:.0f} B, plan {planned:.0f} B, "
              f"ratio {ratio:.4f}")
        if abs(ratio - 1) > 0.05:
            print(f"FAIL: {what} differ from the plan by more than 5%")
            bad = 1
    return report_launches(plan, stdout) or bad


# Kinds of kernel helix's program launches otherwise than the table prices
# (the table counts what a fused, engine-grade program launches), where,
# and why: docs/cost-model.md, "Kernels per op". Every other kind must match
# plan.json's kernels_by_kind exactly. Where: "all", "mla" (the program
# runs per-head GEMMs) or "moe" (the plan prices routed experts).
KNOWN_GAPS = {
    "layout": ("all", "activations moved between layouts: the plan prices "
               "none"),
    "convert": ("all", "weights dequantized at a step: the plan prices "
                "none"),
    "sampling": ("all", "the program picks the next token on the host, "
                 "after downloading the logits"),
    "sum": ("all", "residual and expert sums the program adds apart, not "
            "fused into the next norm"),
    "norm": ("mla", "the program launches MLA's two latent norms apart; "
             "the table: one launch"),
    "rope": ("mla", "the program launches MLA's RoPE apart; the table: "
             "fused with the W_UK BMM"),
    "experts": ("moe", "the program's routed-expert block is several "
                "launches; the table: one grouped-GEMM unit"),
    "recurrent": ("all", "the program fuses a Gated DeltaNet layer's "
                  "convolution, state update and gated norm into one "
                  "launch; the table: three, as FLA-based engines launch "
                  "them"),
}


def kinds_of(entries):
    """Kernels by kind summed over plan.json entries' kernels_by_kind."""
    total = {}
    for e in entries:
        for kind, n in e.get("kernels_by_kind", {}).items():
            total[kind] = total.get(kind, 0) + n
    return total


def report_launches(plan, stdout):
    """Rank 0's kernels in the last step by kind, as the CUDA backend tags
    its launches (helix/Common/KernelTable.h; launches + cuBLAS calls),
    against the kernels plan.json's layers and step count by kind from the
    same table (1 on a mismatch that is checked, else 0).

    Checked: every kind of kernel the table prices, except those the
    program is known to launch differently (KNOWN_GAPS: docs/cost-model.md,
    "Kernels per op"). Printed: every kind, with the difference."""
    m = re.search(r"traffic rank 0 step \d+: [^\n]*launches (\d+), "
                  r"cublas (\d+)", stdout)
    if not m:
        return 0
    program = dict((k, int(n)) for k, n in re.findall(
        r"traffic rank 0 kind ([a-z_]+): launches (\d+)", stdout))
    cost = plan["cost"]
    layers = [l for l in cost["layers"] if l.get("stage", 0) == 0]
    entries = [l["attention"] for l in layers] + [l["ffn"] for l in layers]
    if len(layers) == len(cost["layers"]):
        entries.append(cost["step"])
    planned = kinds_of(entries)
    total_program = int(m[1]) + int(m[2])
    total_plan = sum(planned.values())
    print(f"launches: program {total_program} kernels (rank 0, last step), "
          f"plan {total_plan}, ratio {total_program / total_plan:.2f}")
    mla = re.search(r"traffic rank 0 op (gemm \(per head|headMatmul)",
                    stdout) is not None
    where = {"all": True, "mla": mla, "moe": planned.get("experts", 0) > 0}
    bad = 0
    for kind in sorted(set(program) | set(planned)):
        have, want = program.get(kind, 0), planned.get(kind, 0)
        scope, reason = KNOWN_GAPS.get(kind, ("", ""))
        gap = reason if where.get(scope) else ""
        note = "" if have == want else f" ({gap})" if gap else " FAIL"
        print(f"launches: {kind}: program {have}, plan {want}{note}")
        if have != want and not gap:
            bad = 1
    if bad:
        print("FAIL: the program launches other kernels than the plan counts "
              "(helix/Common/KernelTable.h)")
    return bad


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
    p.add_argument("--rtol", type=float, default=None)
    p.add_argument("--format", default="bf16")
    p.add_argument("--report-memory", action="store_true")
    p.add_argument("--memory-only", action="store_true")
    p.add_argument("--drop", action="append", default=[])
    p.add_argument("--damage", action="append", default=[])
    p.add_argument("--expect-error")
    p.add_argument("--backend", default="cpu")
    p.add_argument("--build-only", action="store_true")
    p.add_argument("--run-only", action="store_true",
                   help="use WORK/project as an earlier --build-only built "
                        "it: no compile, configure or build")
    p.add_argument("--gpu", action="store_true")
    p.add_argument("--check-traffic", action="store_true",
                   help="--report-traffic on the generated run; its last "
                        "step's weight and KV bytes against plan.json")
    p.add_argument("--cuda-emulation", action="store_true",
                   help="with --backend cuda: build the project with "
                        "-DHELIX_CUDA_EMULATION=ON and run it on the CPU")
    p.add_argument("--generator", default="Ninja")
    p.add_argument("--oracle-every", type=int, default=3,
                   help="--mtp plans: the draft oracle's every n-th "
                        "generated token is wrong")
    a = p.parse_args(argv)
    if a.gpu:
        probe = shutil.which("nvidia-smi")
        if not (probe and run([probe, "-L"]).stdout.strip()):
            print("SKIPPED: no CUDA device (nvidia-smi -L lists none)")
            return 77
    if a.backend == "cuda" and not a.cuda_emulation and not a.run_only and \
            not os.path.exists(
            os.path.join(a.prefix, "lib", "libHelixRuntimeCUDA.a")):
        print("SKIPPED: the installed helix has no CUDA backend (no nvcc "
              "when it was built)")
        return 77
    if a.build_only and a.run_only:
        print("FAIL: --build-only and --run-only exclude each other")
        return 1
    tool = lambda name: os.path.join(a.bin, name)
    project = os.path.join(a.work, "project")
    build = os.path.join(project, "build")
    if a.run_only:
        # Keep the built project; everything else is made again.
        if not os.path.isfile(os.path.join(build, "helix-decode")):
            print(f"FAIL: --run-only: {build}/helix-decode is not built")
            return 1
        for name in os.listdir(a.work):
            if name != "project":
                path = os.path.join(a.work, name)
                if os.path.isdir(path):
                    shutil.rmtree(path)
                else:
                    os.remove(path)
    else:
        shutil.rmtree(a.work, ignore_errors=True)
        os.makedirs(a.work)

    ckpt = os.path.join(a.work, "ckpt")
    print(step("checkpoint", [tool("helix-make-checkpoint"), "--config",
                              a.config, "-o", ckpt, "--seed", str(a.seed),
                              "--dtype", a.dtype, "--format", a.format] +
               [x for d in a.drop for x in ("--drop", d)]).stdout.strip())
    if a.damage:
        step("damage", [sys.executable, DAMAGE, ckpt] + a.damage)
    config = os.path.join(ckpt, "config.json")
    if not any(f in compile_args
               for f in ("--dtype", "--weights-dtype", "--kv-dtype")):
        compile_args = compile_args + ["--dtype", "bf16"]
    if not a.run_only:
        rc = compile_and_build(a, tool, config, compile_args, project, build)
        if rc:
            return rc
    program = os.path.join(build, "helix-decode")
    if a.build_only:
        print(f"ok: built {program}")
        return 0
    return run_and_compare(a, tool, config, compile_args, project, program)


def compile_and_build(a, tool, config, compile_args, project, build):
    """Steps 2 and 3: the project of the plan, configured and built."""
    step("compile", [tool("helix"), "compile", "--model", config] +
         compile_args + ["--emit", "project", "-o", project, "--backend",
                         a.backend])
    for f in ("CMakeLists.txt", "README.md", "plan.json", "src/main.cpp"):
        if not os.path.isfile(os.path.join(project, f)):
            print(f"FAIL: the project has no {f}")
            return 1
    # Unoptimised host code builds fastest; the runtime does the work.
    step("configure", ["cmake", "-S", project, "-B", build, "-G",
                       a.generator, "-DCMAKE_PREFIX_PATH=" + a.prefix,
                       "-DCMAKE_BUILD_TYPE=None"] +
         (["-DHELIX_CUDA_EMULATION=ON"] if a.cuda_emulation else []))
    step("build", ["cmake", "--build", build, "-j", "2"])
    return 0


def run_and_compare(a, tool, config, compile_args, project, program):
    """Steps 4 to 6."""
    ckpt = os.path.join(a.work, "ckpt")
    with open(os.path.join(project, "plan.json")) as f:
        plan = json.load(f)
    # "fp8 weights, fp8 KV, bf16 math": the KV format the reference rounds
    # its cache to.
    kv = plan["precision"].split(", ")[1].split(" ")[0]
    if a.rtol is None:
        a.rtol = KV_RTOL[kv]
    common = ["--weights", ckpt, "--prompts", a.prompts, "--steps",
              str(a.steps)]
    out = lambda n: os.path.join(a.work, n)
    if a.expect_error:
        return expect_error(a, program, common, compile_args, config, tool)
    if a.memory_only:
        # A conversion at load (e.g. a bf16 checkpoint planned as fp4): no
        # reference runs these formats; check what the program allocates.
        np = option(compile_args, "--gpus")
        mpirun = ["mpirun", "-np", np, "--oversubscribe"]
        if os.geteuid() == 0:
            mpirun.append("--allow-run-as-root")
        env = dict(os.environ, OMPI_MCA_btl_vader_single_copy_mechanism="none")
        r = step("generated program", mpirun + [program] + common +
                 ["--report-memory"], env=env)
        print(r.stdout.strip())
        print(r.stderr.strip())
        return check_memory(plan, r.stdout)
    drafts = int(option(compile_args, "--mtp") or 0)
    step("reference", [tool("helix-reference"), "--config", config,
                       "--kv-dtype", kv] +
         common + ["--dump-logits", out("reference.bin"), "--dump-tokens",
                   out("reference.tokens")] +
         (["--dump-draft-logits", out("reference-draft.bin")] if drafts
          else []))
    np = option(compile_args, "--gpus")
    mpirun = ["mpirun", "-np", np, "--oversubscribe"]
    if os.geteuid() == 0:
        mpirun.append("--allow-run-as-root")
    extra = ["--backend", "cuda", "--collectives", "mpi"] if a.gpu else []
    env = dict(os.environ, OMPI_MCA_btl_vader_single_copy_mechanism="none")
    r = step("generated program", mpirun + [program] + common +
             ["--dump-logits", out("generated.bin"), "--dump-tokens",
              out("generated.tokens")] + extra +
             (["--report-memory"] if a.report_memory else []) +
             (["--report-traffic"] if a.check_traffic else []) +
             (["--dump-draft-logits", out("generated-draft.bin"),
               "--dump-acceptance", out("generated.acceptance")] if drafts
              else []), env=env)
    print(r.stdout.strip())
    print(r.stderr.strip())
    generated = r.stdout
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
    if a.check_traffic and check_traffic(plan, generated, a.steps):
        return 1
    if a.report_memory and check_memory(plan, generated):
        return 1
    if drafts and r.returncode == 0:
        return check_speculative(a, drafts, vocab, mpirun + [program] + common,
                                 env, out)
    return r.returncode


def check_speculative(a, k, vocab, command, env, out):
    """Step 6 of the module doc: the MTP layer's logits, the acceptance of
    its drafts (K = 1) and of a draft oracle's (any K)."""
    sc = speculative_check
    r = run([sys.executable, COMPARE, out("generated-draft.bin"),
             out("reference-draft.bin"), "--vocab", str(vocab), "--rtol",
             str(a.rtol)])
    print("MTP layer's logits per position: " + r.stdout + r.stderr)
    if r.returncode:
        return 1
    prompts = sc.read_prompts(a.prompts)
    T = max(len(p) for p in prompts) + a.steps - 1
    B = len(prompts)
    best = sc.argmaxes(sc.load(out("reference.bin")), T, B, vocab)
    truth = sc.greedy_tokens(prompts, best, T)
    if k == 1:
        draft = sc.argmaxes(sc.load(out("reference-draft.bin")), T, B, vocab)
        want = sc.simulate(prompts, truth, T, 1,
                           lambda r, pos, p: None if p == 0
                           else draft[p - 1][r])
        if sc.check_acceptance(out("generated.acceptance"), want,
                               "the MTP layer's drafts"):
            return 1
    oracle = sc.write_oracle(out("oracle.txt"), truth, prompts,
                             a.oracle_every, vocab)
    r = step("generated program, draft oracle",
             command + ["--draft-oracle", out("oracle.txt"), "--dump-tokens",
                        out("oracle.tokens"), "--dump-acceptance",
                        out("oracle.acceptance")], env=env)
    print(r.stdout.strip())
    with open(out("reference.tokens")) as f, open(out("oracle.tokens")) as g:
        if f.read() != g.read():
            print("FAIL: tokens with the draft oracle differ from the "
                  "reference's")
            return 1
    want = sc.simulate(prompts, truth, T, k,
                       lambda r, pos, p: oracle[r][pos])
    return sc.check_acceptance(out("oracle.acceptance"), want,
                               f"a draft oracle wrong every {a.oracle_every} "
                               "tokens")


if __name__ == "__main__":
    sys.exit(main())
