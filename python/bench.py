"""Per-frame cost of a batch: ``scamp.run`` from Python against the library's own batch
path (``scamp run --runs N``, which runs the frames side by side on every core the same
way, with run seeds seed, seed + 1, ...).

    python python/bench.py [--frames 64] [--repeats 5] [--program programs/analognet2_layer.scamp]

The library's figure is ``(t(N runs) - t(1 run)) / (N - 1)`` so that process start,
parsing and image loading are left out; Python's is ``t(batch of N) / N``. Both take the
median of the repeats and read out the same registers (the analogue ones the program
writes). Prints one JSON object.
"""

import argparse
import json
import os
import statistics
import subprocess
import time
from pathlib import Path

import sys

import numpy as np

# Import the installed package, not the sources beside this script (they lack the
# compiled extension).
HERE = Path(__file__).resolve().parent
sys.path = [p for p in sys.path if Path(p or ".").resolve() != HERE]
import scamp  # noqa: E402

REPO = HERE.parent


def median_seconds(fn, repeats):
    times = []
    for _ in range(repeats):
        t = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t)
    return statistics.median(times)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--frames", type=int, default=64)
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--program", default="programs/analognet2_layer.scamp")
    ap.add_argument("--image", default="images/camera.png")
    ap.add_argument("--noise", default="scamp5")
    ap.add_argument("--binary", default=os.environ.get("SCAMP_BIN", str(REPO / "target" / "release" / "scamp")))
    a = ap.parse_args()

    program = scamp.load(REPO / a.program)
    image = scamp.load_image(REPO / a.image)
    batch = np.stack([image] * a.frames)
    registers = program.written_registers

    def python_batch():
        scamp.run(program, {"PIX": batch}, noise=a.noise, seed=1, chip_seed=1, registers=registers)

    python_batch()  # warm up (pages, thread pool)
    py = median_seconds(python_batch, a.repeats) / a.frames

    def cli(runs):
        subprocess.run(
            [a.binary, "run", a.program, "--image", a.image, "--noise", a.noise, "--runs", str(runs), "--json"],
            cwd=REPO, check=True, capture_output=True,
        )

    cli(1)
    one = median_seconds(lambda: cli(1), a.repeats)
    many = median_seconds(lambda: cli(a.frames), a.repeats)
    lib = (many - one) / (a.frames - 1)
    print(json.dumps({
        "program": a.program,
        "frames": a.frames,
        "noise": a.noise,
        "python_ms_per_frame": round(py * 1e3, 3),
        "library_ms_per_frame": round(lib * 1e3, 3),
        "ratio": round(py / lib, 3),
        "threads": os.cpu_count(),
    }))


if __name__ == "__main__":
    main()
