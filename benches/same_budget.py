#!/usr/bin/env python3
"""Same-budget check of the code generator (not a timed test: a harness to run by hand).

For random kernel sets of six families (one 3x3, one 5x5, banks of 2, 3 and 4 3x3
kernels in eighths, CNN-like layers of three 3x3 kernels in -4..4 over 4), compiles each
set with the default objective and with `--objective length` under the same clock
budget, several times, and counts the runs where the default's program is both longer
than the slack allows of the length objective's and predicted worse than it.

    python3 benches/same_budget.py [--scamp target/release/scamp] [--sets 20]
        [--runs 3] [--time 2] [--workers 1] [--slack 0.25] [--families r3,cnn]
        [--seed 4000]

The sets are made from fixed seeds here (xorshift64*, seeds from `--seed` on), not taken
from `benches/specs/`, so that they are sets the search was never tuned on.
"""

import argparse
import json
import math
import os
import subprocess
import sys
import tempfile

MASK = (1 << 64) - 1

# name: (kernels, size, top, depth, what)
FAMILIES = {
    "r3": (1, 3, 8, 3, "one 3x3 kernel in eighths"),
    "r5": (1, 5, 8, 3, "one 5x5 kernel in eighths"),
    "b2": (2, 3, 8, 3, "two 3x3 kernels in eighths"),
    "b3": (3, 3, 8, 3, "three 3x3 kernels in eighths"),
    "b4": (4, 3, 8, 3, "four 3x3 kernels in eighths"),
    "cnn": (3, 3, 4, 2, "three 3x3 kernels in -4..4 over 4 (CNN-like)"),
}


class Rng:
    """xorshift64*, as benches/cain_search.rs uses for its sets."""

    def __init__(self, seed):
        self.x = ((seed * 0x9E3779B97F4A7C15) & MASK) | 1

    def next(self):
        x = self.x
        x ^= x >> 12
        x ^= (x << 25) & MASK
        x ^= x >> 27
        self.x = x
        return (x * 0x2545F4914F6CDD1D) & MASK

    def range(self, lo, hi):
        return lo + self.next() % (hi - lo + 1)


def spec(name, seed, family):
    """The YAML of a random set of `family` from `seed` (about a third of weights 0)."""
    kernels, size, top, depth, what = FAMILIES[family]
    rng = Rng(seed)
    out = [
        f"# Same-budget set (seed {seed}): {what}.",
        f"name: {name}",
        "input: A",
        "registers: [A, B, C, D, E, F]",
        "kernels:",
    ]
    for reg in "ABCDEF"[:kernels]:
        out += [f"  - out: {reg}", f"    scale: 1/{top}", "    weights:"]
        for _ in range(size):
            row = []
            for _ in range(size):
                if rng.range(0, 2) == 0:
                    row.append(0)
                else:
                    v = rng.range(1, top)
                    row.append(v if rng.range(0, 1) == 0 else -v)
            out.append("      - [" + ", ".join(str(v) for v in row) + "]")
    out.append(f"approximation: {{ max_depth: {depth}, max_error: 0.0 }}")
    return "\n".join(out) + "\n"


def compile_json(scamp, path, objective, args):
    """(instructions, root of the summed predicted MSE) of one compile."""
    cmd = [
        scamp, "compile", path, "--json", "--objective", objective,
        "--time-limit", str(args.time), "--workers", str(args.workers),
    ]
    done = subprocess.run(cmd, capture_output=True, text=True, check=False)
    if done.returncode != 0:
        raise RuntimeError(f"{' '.join(cmd)}: {done.stderr.strip()}")
    d = json.loads(done.stdout)
    mse = sum(k["predicted"]["rmse"] ** 2 for k in d["kernels"])
    return d["instructions"], math.sqrt(mse)


def violates(default, length, slack):
    """The same-budget rule, as crates/scamp/src/cain/drive/choice.rs states it: the default's
    program may not be both beyond the slack of the length objective's and predicted
    worse than it."""
    (n, e), (m, f) = default, length
    return n > math.floor(m * (1 + slack)) and e > f * (1 + 1e-9)


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--scamp", default="target/release/scamp")
    p.add_argument("--sets", type=int, default=20)
    p.add_argument("--runs", type=int, default=3)
    p.add_argument("--time", type=float, default=2.0)
    p.add_argument("--workers", type=int, default=1)
    p.add_argument("--slack", type=float, default=0.25)
    p.add_argument("--families", default=",".join(FAMILIES))
    p.add_argument("--seed", type=int, default=4000)
    args = p.parse_args()
    families = [f for f in args.families.split(",") if f]
    for f in families:
        if f not in FAMILIES:
            sys.exit(f"error: unknown family `{f}` (one of {', '.join(FAMILIES)})")
    totals = {}
    with tempfile.TemporaryDirectory() as tmp:
        for fi, family in enumerate(families):
            bad = runs = longer = worse = 0
            for k in range(args.sets):
                seed = args.seed + 100 * fi + k
                name = f"sb_{family}_{seed}"
                path = os.path.join(tmp, name + ".yaml")
                with open(path, "w") as fh:
                    fh.write(spec(name, seed, family))
                for r in range(args.runs):
                    d = compile_json(args.scamp, path, "error", args)
                    l = compile_json(args.scamp, path, "length", args)
                    v = violates(d, l, args.slack)
                    runs += 1
                    bad += v
                    longer += d[0] > math.floor(l[0] * (1 + args.slack))
                    worse += d[1] > l[1] * (1 + 1e-9)
                    print(
                        f"{family:4} {name:14} run {r + 1}: default {d[0]:3} @ {d[1]:7.2f}"
                        f"  length {l[0]:3} @ {l[1]:7.2f}{'  VIOLATES' if v else ''}",
                        flush=True,
                    )
            totals[family] = (bad, runs, longer, worse)
    print("\nfamily  violations/runs  (beyond slack, predicted worse)")
    for family, (bad, runs, longer, worse) in totals.items():
        print(f"{family:6}  {bad:3}/{runs:<3}           ({longer}, {worse})")


if __name__ == "__main__":
    main()
