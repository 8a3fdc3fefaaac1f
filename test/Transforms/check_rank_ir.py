#!/usr/bin/env python3
"""Summarises rank IR for structural lit tests.

Reads SPMD rank IR (the output of helix-partition: one program per pipeline
stage, run by every rank of the stage, calling its layer functions once per
layer) and prints, for the whole module,
facts that must hold on every rank: the number of ranks (the grids') and of
programs, the collectives each rank issues per kind and group (its stage
program's), the attention layers and their all-to-alls, and the KV shards'
token slots against context / KVP.
"""

import collections
import re
import sys

FUNC = re.compile(r"^\s*func\.func @decode_step_stage(\d+)\(")
LAYER_FUNC = re.compile(r"^\s*func\.func private @(decode_step_stage\d+_layer_kind\d+)\(")
CALL = re.compile(r"\bcall @(decode_step_stage\d+_layer_kind\d+)\(")
GRID = re.compile(r"shard\.grid @\w+\(shape = ([0-9x]+)\)")
COLL = re.compile(r"shard\.(all_to_all|all_reduce|all_gather|reduce_scatter|all_slice|send|recv)\s+\S+ on @(\w+) grid_axes = \[([0-9, ]*)\]")
ATTN = re.compile(r"helix\.attention_partial .*layer = (\d+) : i64")
SHARD = re.compile(r"!helix\.kv_shard<rows = (\d+), tokens = (\d+),[^>]*?(window = \d+)?>")
PLAN = re.compile(r"helix\.plan = #helix\.plan<[^>]*context_length = (\d+)")
PLACEMENT = re.compile(r"#helix\.kv_placement<block = (\d+), kvp = (\d+)")


def main(path):
    ranks = collections.OrderedDict()
    layer_funcs = {}
    rank = None
    context = None
    block = kvp = None
    in_async = False
    shape = None
    for line in open(path):
        m = GRID.search(line)
        if m and shape is None:
            shape = [int(x) for x in m.group(1).split("x")]
        m = PLAN.search(line)
        if m and context is None:
            context = int(m.group(1))
        m = LAYER_FUNC.match(line)
        if m:
            rank = m.group(1)
            layer_funcs[rank] = {"coll": collections.Counter(),
                                 "layers": set(), "async_a2a": 0}
            continue
        m = FUNC.match(line)
        if m:
            rank = int(m.group(1))
            ranks[rank] = {"coll": collections.Counter(), "layers": 0,
                           "inline_layers": set(), "async_a2a": 0,
                           "shards": set()}
            for s in SHARD.finditer(line):
                ranks[rank]["shards"].add((int(s.group(2)), s.group(3) is not None))
            continue
        if rank is None:
            continue
        r = layer_funcs[rank] if isinstance(rank, str) else ranks[rank]
        m = CALL.search(line)
        if m and not isinstance(rank, str):
            # A call of a layer function: its collectives and attention
            # layer, once more.
            f = layer_funcs[m.group(1)]
            r["coll"].update(f["coll"])
            r["async_a2a"] += f["async_a2a"]
            r["layers"] += len(f["layers"])
            continue
        if "helix.async_start" in line:
            in_async = True
        m = COLL.search(line)
        if m:
            key = "%s @%s [%s]" % (m.group(1), m.group(2), m.group(3))
            r["coll"][key] += 1
            if m.group(1) == "all_to_all" and in_async:
                r["async_a2a"] += 1
        if "helix.async_yield" in line:
            in_async = False
        m = ATTN.search(line)
        if m:
            r["layers" if isinstance(rank, str) else "inline_layers"].add(
                int(m.group(1)))
        m = PLACEMENT.search(line)
        if m:
            block, kvp = int(m.group(1)), int(m.group(2))

    world = 1
    for d in shape:
        world *= d
    stages = shape[0]
    print("ranks: %d" % world)
    print("programs: %d" % len(ranks))
    # Every rank of a stage runs its stage's program: print the distinct
    # profiles with the ranks that have them.
    profiles = collections.OrderedDict()
    for n, r in ranks.items():
        key = tuple(sorted(r["coll"].items()))
        per = world // stages
        profiles.setdefault(key, []).extend(range(n * per, (n + 1) * per))
    for key, members in profiles.items():
        print("profile of %d ranks (first %d):" % (len(members), members[0]))
        for name, count in key:
            print("  %s x %d" % (name, count))
    for n, r in ranks.items():
        r["layers"] += len(r["inline_layers"])
        layers = r["layers"]
        a2a = sum(c for k, c in r["coll"].items() if k.startswith("all_to_all"))
        r["a2a_per_layer"] = a2a / layers if layers else 0
    per_layer = sorted({r["a2a_per_layer"] for r in ranks.values()})
    print("attention layers per rank: %s" %
          sorted({r["layers"] for r in ranks.values()}))
    print("all-to-alls per attention layer: %s" %
          ", ".join("%g" % x for x in per_layer))
    print("asynchronous all-to-alls: %d" %
          sum(r["async_a2a"] * (world // stages) for r in ranks.values()))
    full = sorted({t for r in ranks.values() for t, w in r["shards"] if not w})
    print("kv shard tokens (full attention): %s" % full)
    if context and kvp and block and full:
        exact = context / kvp
        ok = all(abs(t - exact) < block for t in full)
        print("context / kvp = %g, block %d: within one block: %s" %
              (exact, block, "yes" if ok else "no"))


if __name__ == "__main__":
    main(sys.argv[1])
