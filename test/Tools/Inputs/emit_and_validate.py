"""Writes the engine configuration of each model's helix plan for every
engine (`helix plan --emit-config ENGINE -o FILE`, the fastest Helix plan on
up to 72 GPUs of GB200 NVL72 at 1M tokens) and checks every file written,
the TensorRT-LLM deployment's context and disaggregated files too, with
`helix validate-config`. Prints "N files valid" or each problem.

usage: emit_and_validate.py HELIX MODELS_DIR OUT_DIR MODEL...
"""
import os
import subprocess
import sys

helix, models, out = sys.argv[1], sys.argv[2], sys.argv[3]
os.makedirs(out, exist_ok=True)
problems, checked = [], 0
for name in sys.argv[4:]:
    config = os.path.join(models, name + ".json")
    for engine, ext in (("trtllm", "yaml"), ("vllm", "sh"), ("sglang", "sh")):
        path = os.path.join(out, f"{name}.{engine}.{ext}")
        p = subprocess.run([helix, "plan", "--model", config, "--max-gpus",
                            "72", "--emit-config", engine, "-o", path],
                           capture_output=True, text=True)
        if p.returncode:
            problems.append(f"{name} {engine}: helix plan failed: {p.stderr}")
            continue
        files = [path]
        stem = path[: -len(ext) - 1]
        for extra in (".context.yaml", ".disagg.yaml"):
            if os.path.exists(stem + extra):
                files.append(stem + extra)
        v = subprocess.run([helix, "validate-config", "--engine", engine,
                            "--model", config] + files,
                           capture_output=True, text=True)
        checked += len(files)
        if v.returncode:
            problems.append(v.stdout + v.stderr)
for p in problems:
    print(p)
print(f"{checked} files valid" if not problems else f"{len(problems)} problems")
sys.exit(1 if problems else 0)
