"""Speed of network evaluation: `scamp eval`'s noisy test images per second for the
bundled default network and for the three-layer `programs/fashion3/net.yaml`, and
`scamp.Network.features` from Python against the command line's cost per image.

    python python/bench_network.py [--test-images 10000] [--repeats 3]

`eval`'s figure is its own `images_per_second` (noisy test images, image x chip, per
wall second of the noisy frames). Python's is the images of one `features(images,
noise=..., chip_seed=1)` call per wall second, for the test split's first
`--test-images` images (the programs are built once before timing). Both take the
median over the repeats, run in turns. Prints one JSON object; the machine's other load counts, so
compare figures taken together.
"""

import argparse
import gzip
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

# Import the installed package, not the sources beside this script (they lack the
# compiled extension).
HERE = Path(__file__).resolve().parent
sys.path = [p for p in sys.path if Path(p or ".").resolve() != HERE]
import scamp  # noqa: E402

REPO = HERE.parent
DATASET = Path("/usr/share/datasets/fashion-mnist")
NETWORKS = {"default": None, "fashion3": "programs/fashion3/net.yaml"}


def test_images(n):
    with gzip.open(DATASET / "t10k-images-idx3-ubyte.gz", "rb") as f:
        data = f.read()
    return np.frombuffer(data, np.uint8, offset=16).reshape(-1, 28, 28)[:n].copy()


def cli_rate(binary, network, a):
    """`scamp eval`'s noisy test images per second, one run."""
    args = [binary, "eval", "--json", "--test-images", str(a.test_images), "--train-images",
            str(a.train_images), "--chip-seeds", "1", "--noise", a.noise, "--depths", str(a.depth)]
    if network:
        args.insert(2, network)
    out = subprocess.run(args, cwd=REPO, check=True, capture_output=True, text=True).stdout
    return json.loads(out)["images_per_second"]


def python_rate(net, images, a):
    """`Network.features`' images per second, one call."""
    t = time.perf_counter()
    net.features(images, noise=a.noise, chip_seed=1, depth=a.depth)
    return len(images) / (time.perf_counter() - t)


def rates(binary, network, images, a):
    """The median of each over the repeats, taken in turns (the command, then Python),
    so that a change in the machine's load falls on both alike."""
    net = scamp.Network.load(None if network is None else REPO / network)
    net.features(images[:64], noise=a.noise, depth=a.depth)  # builds the chip part
    cli, py = [], []
    for _ in range(a.repeats):
        cli.append(cli_rate(binary, network, a))
        py.append(python_rate(net, images, a))
    return statistics.median(cli), statistics.median(py)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--test-images", type=int, default=10000)
    ap.add_argument("--train-images", type=int, default=640)
    ap.add_argument("--depth", type=int, default=2)
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--noise", default="scamp5")
    ap.add_argument("--binary", default=os.environ.get("SCAMP_BIN", str(REPO / "target" / "release" / "scamp")))
    a = ap.parse_args()
    images = test_images(a.test_images)
    report = {"test_images": len(images), "noise": a.noise, "threads": os.cpu_count()}
    for name, network in NETWORKS.items():
        cli, py = rates(a.binary, network, images, a)
        report[name] = {
            "eval_images_per_second": round(cli),
            "features_images_per_second": round(py),
            "features_over_eval": round(py / cli, 3),
        }
    print(json.dumps(report))


if __name__ == "__main__":
    main()
