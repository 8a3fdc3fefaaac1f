"""Reads a TensorRT-LLM options file written by `helix ... --emit-config
trtllm` as YAML and prints its settings, one `key=value` per line (nested
keys joined with '.'), sorted, then whether the Helix block sizes agree.
Uses PyYAML when it is installed, else a reader for the block-mapping
subset helix writes (so the test runs without PyYAML).

usage: check_engine_yaml.py FILE
"""
import sys


def read_subset(text):
    root, stack = {}, [(-1, None)]
    for raw in text.splitlines():
        line = raw.split("#", 1)[0].rstrip()
        if not line:
            continue
        indent = len(line) - len(line.lstrip())
        key, _, value = line.strip().partition(":")
        while stack[-1][0] >= indent:
            stack.pop()
        parent = stack[-1][1] if stack[-1][1] is not None else root
        value = value.strip()
        if value == "":
            parent[key] = {}
            stack.append((indent, parent[key]))
        elif value in ("true", "false"):
            parent[key] = value == "true"
        else:
            try:
                parent[key] = int(value)
            except ValueError:
                parent[key] = value
    return root


text = open(sys.argv[1]).read()
try:
    import yaml

    doc = yaml.safe_load(text)
except ImportError:
    doc = read_subset(text)


def flatten(d, prefix=""):
    for k, v in d.items():
        if isinstance(v, dict):
            yield from flatten(v, prefix + k + ".")
        else:
            yield prefix + k, v


for k, v in sorted(flatten(doc)):
    print(f"{k}={str(v).lower() if isinstance(v, bool) else v}")
if "cp_config" in doc:
    same = doc["cp_config"]["tokens_per_block"] == \
        doc["kv_cache_config"]["tokens_per_block"]
    print(f"tokens_per_block agree: {same}")
