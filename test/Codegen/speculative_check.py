"""Checks of a speculative program (helix compile --mtp K) against
helix-reference, used by codegen_e2e.py.

The reference decodes greedily, one token per step, and (with
--dump-draft-logits) runs the MTP layer at every position on the pair
(the step's hidden state, the next token). The program decodes
speculatively (helix/Runtime/Speculative.h). Checked here:

- the draft logits: the program's MTP layer at every position (from its
  extend passes) against the reference's, within the logit tolerance;
- the acceptance: the candidates accepted at every verify step
  (--dump-acceptance) against a simulation of the greedy chain rule on
  the reference's greedy tokens, written here independently: with a draft
  oracle (--draft-oracle, the greedy tokens with every n-th generated
  position wrong) for any K, and with the MTP layer's own drafts for
  K = 1 (its draft for position p + 1 after a step that ends at p is the
  reference MTP layer's argmax at position p - 1).
"""
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                "..", "Runtime"))
from compare_logits import load  # noqa: E402,F401 (a logits dump)


def argmaxes(logits, positions, batch, vocab):
    """[positions][batch] argmax of a [positions, batch, vocab] dump."""
    out = []
    for t in range(positions):
        row = []
        for r in range(batch):
            at = (t * batch + r) * vocab
            v = logits[at:at + vocab]
            row.append(max(range(vocab), key=lambda i: (v[i], -i)))
        out.append(row)
    return out


def greedy_tokens(prompts, best, positions):
    """Each row's greedy sequence over positions 0 .. T (its prompt, then
    the reference's argmax of every later position)."""
    seqs = []
    for r, prompt in enumerate(prompts):
        x = list(prompt)
        while len(x) <= positions:
            x.append(best[len(x) - 1][r])
        seqs.append(x)
    return seqs


def simulate(prompts, truth, positions, k, candidate):
    """The accepted candidates at every verify step of each row: rows at p
    feed positions p .. p + K (at most T - 1); a known position's token is
    forced, a drafted one (candidate(r, position, p), None for none) is
    accepted while it equals the greedy token; p advances past the
    accepted ones and the bonus token."""
    out = []
    for r, prompt in enumerate(prompts):
        known, p, steps = len(prompt), 0, []
        while p < positions:
            live, cands = min(k, positions - 1 - p), []
            for j in range(1, live + 1):
                c = truth[r][p + j] if p + j < known else candidate(r, p + j, p)
                if c is None:
                    live = j - 1
                    break
                cands.append(c)
            a = 0
            for j in range(1, live + 1):
                if p + j < known or cands[j - 1] == truth[r][p + j]:
                    a = j
                else:
                    break
            known = max(known, p + a + 2)
            steps.append(a)
            p += a + 1
        out.append(steps)
    return out


def read_rows(path):
    """A file of comma-separated integers, one list per line."""
    with open(path) as f:
        return [[int(x) for x in l.strip().split(",") if x.strip()]
                for l in f]


def read_prompts(path):
    """The prompt file's rows (blank lines and '#' comments skipped)."""
    with open(path) as f:
        return [[int(x) for x in l.split(",")] for l in map(str.strip, f)
                if l and not l.startswith("#")]


def write_oracle(path, truth, prompts, every, vocab):
    """The greedy tokens, every `every`-th generated position made wrong;
    returns the oracle's rows."""
    rows = []
    for r, x in enumerate(truth):
        o = list(x)
        for pos in range(len(prompts[r]), len(o)):
            if (pos - len(prompts[r])) % every == every - 1:
                o[pos] = (o[pos] + 1) % vocab
        rows.append(o)
    with open(path, "w") as f:
        for o in rows:
            f.write(",".join(str(t) for t in o) + "\n")
    return rows


def check_acceptance(got_path, want, what):
    got = read_rows(got_path)
    got = got + [[]] * (len(want) - len(got))
    if got != want:
        print(f"FAIL: {what}: accepted per verify step differ\n"
              f"expected: {want}\ngot:      {got}")
        return 1
    print(f"{what}: accepted per verify step as expected: {want}")
    return 0
