#!/usr/bin/env python3
"""A stalled rank ends the run: the watchdog test.

usage: stall.py --bin DIR --config CONFIG --work DIR [--timeout 3]
                [--stop-rank 1] -- <helix-handwritten-decode layout options>

Starts a long greedy decode of helix-handwritten-decode under mpirun -np 4
with --step-timeout TIMEOUT, waits until the step loop runs (rank 0 prints
the logits line), then stops one rank with SIGSTOP. Every other rank must
report the stalled collective ("no answer in TIMEOUT s", naming itself as
"[rank r/4]"), the job must end with a non-zero exit within TIMEOUT + 15 s,
rank 0 must print no result rows, and the logits file must not appear
under its final name (only FILE.partial).
"""
import argparse
import os
import re
import signal
import subprocess
import sys
import time


def rank_pid(parent, rank):
    """The pid of MPI rank `rank` among the descendants of `parent`."""
    for pid in os.listdir("/proc"):
        if not pid.isdigit():
            continue
        try:
            with open(f"/proc/{pid}/environ", "rb") as f:
                env = f.read().split(b"\0")
            with open(f"/proc/{pid}/stat") as f:
                ppid = int(f.read().rsplit(")", 1)[1].split()[1])
        except OSError:
            continue
        if (f"OMPI_COMM_WORLD_RANK={rank}".encode() in env and
                ppid == parent):
            return int(pid)
    return None


def main():
    argv = sys.argv[1:]
    layout = []
    if "--" in argv:
        i = argv.index("--")
        argv, layout = argv[:i], argv[i + 1:]
    p = argparse.ArgumentParser()
    p.add_argument("--bin", required=True)
    p.add_argument("--config", required=True)
    p.add_argument("--work", required=True)
    p.add_argument("--timeout", type=float, default=3)
    p.add_argument("--stop-rank", type=int, default=1)
    a = p.parse_args(argv)
    os.makedirs(a.work, exist_ok=True)
    ckpt = os.path.join(a.work, "ckpt")
    subprocess.run([os.path.join(a.bin, "helix-make-checkpoint"), "--config",
                    a.config, "-o", ckpt], check=True,
                   stdout=subprocess.DEVNULL)
    prompts = os.path.join(a.work, "prompt.txt")
    with open(prompts, "w") as f:
        f.write("1,2,3\n")
    logits = os.path.join(a.work, "logits.bin")
    for stale in (logits, logits + ".partial"):
        if os.path.exists(stale):
            os.remove(stale)
    cmd = ["mpirun", "-np", "4", "--oversubscribe"]
    if os.geteuid() == 0:
        cmd.append("--allow-run-as-root")
    cmd += [os.path.join(a.bin, "helix-handwritten-decode"), "--config",
            a.config, "--weights", ckpt, "--prompts", prompts, "--steps",
            "4000", "--context", "4096", "--step-timeout", str(a.timeout),
            "--dump-logits", logits] + layout
    env = dict(os.environ, OMPI_MCA_btl_vader_single_copy_mechanism="none")
    print("$ " + " ".join(cmd))
    job = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                           text=True, env=env)
    # The step loop runs once rank 0 has printed the logits line.
    first = job.stdout.readline()
    print(first.strip())
    if not first.startswith("logits:"):
        job.kill()
        print("FAIL: the decode did not start:\n" + job.communicate()[1])
        return 1
    time.sleep(0.5)
    pid = rank_pid(job.pid, a.stop_rank)
    if pid is None:
        job.kill()
        print(f"FAIL: no process of rank {a.stop_rank} under mpirun")
        return 1
    os.kill(pid, signal.SIGSTOP)
    stopped = time.time()
    print(f"stopped rank {a.stop_rank} (pid {pid})")
    try:
        out, err = job.communicate(timeout=a.timeout + 15)
    except subprocess.TimeoutExpired:
        job.kill()
        os.kill(pid, signal.SIGKILL)
        print(f"FAIL: the job still runs {a.timeout + 15:g} s after the stop")
        return 1
    took = time.time() - stopped
    try:
        os.kill(pid, signal.SIGKILL)
    except OSError:
        pass
    print(err.strip())
    print(f"the job ended {took:.1f} s after the stop, exit {job.returncode}")
    bad = 0
    if job.returncode == 0:
        print("FAIL: exit status 0")
        bad = 1
    pattern = re.escape(f"no answer in {a.timeout:g} s")
    ranks = {m.group(1) for line in err.splitlines()
             for m in [re.search(r"\[rank (\d+)/4\]: error during decoding", line)]
             if m and re.search(pattern, line)}
    want = {str(r) for r in range(4) if r != a.stop_rank}
    # (The stopped rank may report too: mpirun continues it to end it.)
    if not want <= ranks:
        print(f"FAIL: expected every rank but {a.stop_rank} to report the "
              f"stall, got ranks {sorted(ranks)}")
        bad = 1
    if re.search(r"^row \d+:", out, re.M):
        print("FAIL: rank 0 printed results of an interrupted run")
        bad = 1
    if os.path.exists(logits):
        print(f"FAIL: {logits} exists after an interrupted run")
        bad = 1
    if not bad:
        print("ok: every other rank reported the stall; no result was "
              "printed or written")
    return bad


if __name__ == "__main__":
    sys.exit(main())
