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

Usage: stream_trace.py TRACE [--expect-overlap F]   (exit 1 on a mismatch)
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


def main(argv=None):
    p = argparse.ArgumentParser()
    p.add_argument("trace")
    p.add_argument("--expect-overlap", type=float)
    a = p.parse_args(argv)
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
