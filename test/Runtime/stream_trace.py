#!/usr/bin/env python3
"""Reads the CUDA emulation's stream trace of one rank (HELIX_CUDA_EMU_TRACE,
runtime/lib/CUDA/Emu; docs/cuda-on-cpu.md) and reports its stream structure:

- every stream wait names an event recorded earlier (else the program waits
  on nothing, and on a GPU would race);
- the exchanges: runs of NCCL sends and receives (the all-to-alls; the
  all-reduces are not HOP-B's) on a stream other than the compute stream,
  ended by the event recorded after them; for each, how many
  attention kernels the compute stream was given between the exchange and
  its wait for that event. HOP-B with C slices overlaps the all-to-alls of
  slices 0..C-2 with the attention of the next slice, so (C-1)/C of the
  exchanges are overlapped; without HOP-B none is.

- with --expect-graph-steps K: the decode step captured once as a CUDA
  graph (a "capture begin ... mode global" section), replayed K - 1 times
  (each replay's host pass checked in a "mode thread-local" capture that
  must stay empty), K graph launches, and no kernel launched outside a
  capture after the first one.

Usage: stream_trace.py TRACE [--expect-overlap F] [--expect-graph-steps K]
(exit 1 on a mismatch)
"""

import argparse
import re
import sys


def analyze(path):
    recorded = {}        # event -> stream
    errors = []
    exchanges = []       # [first line, completion event, attention launches]
    current = None       # open run of NCCL calls: (stream, first line)
    open_exchanges = {}  # completion event -> exchange
    compute = None
    with open(path) as f:
        lines = [l.split() for l in f if l.strip()]
    for n, w in enumerate(lines, 1):
        if w[0] == "launch":
            stream = int(w[3])
            if compute is None:
                compute = stream
            if w[1] == "attentionKernel" and stream == compute:
                for ex in open_exchanges.values():
                    ex[2] += 1
        elif w[0] == "nccl" and w[1] == "group":
            continue
        elif w[0] == "nccl":
            stream = int(w[-1])
            if w[1] not in ("ncclSend", "ncclRecv"):
                current = None
            elif stream != compute and current is None:
                current = (stream, n)
        elif w[0] == "record":
            event, stream = int(w[2]), int(w[4])
            recorded[event] = stream
            if current and stream == current[0]:
                ex = [current[1], event, 0]
                exchanges.append(ex)
                open_exchanges[event] = ex
                current = None
        elif w[0] == "wait":
            stream, event = int(w[2]), int(w[4])
            if event not in recorded:
                errors.append(f"line {n}: stream {stream} waits for event "
                              f"{event}, never recorded")
            elif recorded[event] == stream:
                errors.append(f"line {n}: stream {stream} waits for its own "
                              f"event {event}")
            open_exchanges.pop(event, None)
    overlapped = sum(1 for ex in exchanges if ex[2] > 0)
    return {"errors": errors, "exchanges": len(exchanges),
            "overlapped": overlapped}


def graphs(path):
    """CUDA graphs in the trace: the step captures (mode global), the replay
    checks (mode thread-local: StepGraph.h), the graph launches, and the
    kernel launches outside any capture after the first one (a replayed step
    that launched eagerly)."""
    r = {"captures": 0, "checks": 0, "launches": 0, "eager": 0,
         "check_nodes": 0}
    capturing = None  # the open capture's mode
    seen = False
    with open(path) as f:
        for line in f:
            w = line.split()
            if not w:
                continue
            if w[:2] == ["capture", "begin"]:
                capturing = w[-1]
                r["captures" if capturing == "global" else "checks"] += 1
            elif w[:2] == ["capture", "end"]:
                if capturing != "global" and "nodes" in w:
                    r["check_nodes"] += int(w[w.index("nodes") + 1])
                capturing = None
                seen = True
            elif w[:2] == ["graph", "launch"]:
                r["launches"] += 1
            elif w[0] == "launch" and seen and capturing is None:
                r["eager"] += 1
    return r


def captured_work(path):
    """What the step captured in the trace issues (its "mode global"
    capture): kernel launches, cuBLAS calls, and collective operations (a
    grouped send/receive exchange counts once)."""
    work = {"launches": 0, "cublas": 0, "collectives": 0}
    capturing = grouped = False
    with open(path) as f:
        for line in f:
            w = line.split()
            if w[:2] == ["capture", "begin"]:
                capturing = w[-1] == "global"
            elif w[:2] == ["capture", "end"]:
                if capturing:
                    return work
                capturing = False
            elif not capturing:
                continue
            elif w[0] == "launch":
                work["launches"] += 1
            elif w[0] == "cublas":
                work["cublas"] += 1
            elif w[:3] == ["nccl", "group", "start"]:
                grouped = True
            elif w[:3] == ["nccl", "group", "end"]:
                grouped = False
                work["collectives"] += 1
            elif w[0] == "nccl" and not grouped:
                work["collectives"] += 1
    return work


def check_graphs(path, steps):
    """The step captured once and launched as a graph every step, nothing
    launched eagerly once captured; returns the failures."""
    g = graphs(path)
    print(f"{path}: {g['captures']} capture(s), {g['checks']} replay "
          f"check(s), {g['launches']} graph launch(es), {g['eager']} eager "
          f"kernel launch(es) after the capture")
    fails = []
    if g["captures"] != 1:
        fails.append(f"{g['captures']} step captures, expected 1")
    if g["launches"] != steps:
        fails.append(f"{g['launches']} graph launches for {steps} steps")
    if g["checks"] != steps - 1:
        fails.append(f"{g['checks']} replays for {steps - 1} steps after "
                     f"the first")
    if g["eager"]:
        fails.append(f"{g['eager']} kernel launches outside the graph")
    if g["check_nodes"]:
        fails.append(f"the replays issued {g['check_nodes']} device "
                     f"operations from the host")
    return fails


def main(argv=None):
    p = argparse.ArgumentParser()
    p.add_argument("trace")
    p.add_argument("--expect-overlap", type=float)
    p.add_argument("--expect-graph-steps", type=int,
                   help="the decode ran this many steps as one captured "
                        "CUDA graph, replayed")
    a = p.parse_args(argv)
    if a.expect_graph_steps is not None:
        fails = check_graphs(a.trace, a.expect_graph_steps)
        for f in fails:
            print("FAIL: " + f)
        if fails:
            return 1
    r = analyze(a.trace)
    print(f"{a.trace}: {r['exchanges']} exchanges on the communication "
          f"stream, {r['overlapped']} overlapped by attention")
    for e in r["errors"]:
        print("FAIL: " + e)
    if r["errors"]:
        return 1
    if a.expect_overlap is not None:
        if not r["exchanges"]:
            print("FAIL: no exchange on a communication stream")
            return 1
        got = r["overlapped"] / r["exchanges"]
        if abs(got - a.expect_overlap) > 1e-9:
            print(f"FAIL: overlapped fraction {got:.4f}, expected "
                  f"{a.expect_overlap:.4f}")
            return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
