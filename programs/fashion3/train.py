"""Trains the bundled three-layer on-sensor network `programs/fashion3/` on Fashion-MNIST
and writes its weights (`.npy`), its network files (`net.yaml` and the one- and two-layer
prefixes `layers1.yaml`, `layers2.yaml`) and, when the `onnx` package is installed, the
model as `fashion3.onnx` (docs/eval.md, "A trained network: `programs/fashion3/`").

    python programs/fashion3/train.py [--dataset /usr/share/datasets/fashion-mnist]

numpy only (the gradients are written out below), seed 7: the same files on every run of
the same numpy (two runs here wrote byte-identical files). It takes about 3.5 minutes
of CPU on one core (15 to 17 minutes of wall time on a busy two-core machine).

The model is what the sensor computes, in the DAC's units:
    x0 = pixel - 128                      (the black surround is -128 too)
    a1 = leaky(conv3x3(x0; 3 filters) + b1)          layer 1, one input, three outputs
    a2 = leaky(depthwise3x3(a1) + b2)                layer 2, each channel alone
    bit = depthwise3x3(a2) + b3 > 0                  layer 3 and a threshold per map
    features = set bits per overlapping 10x10 bin / 100    (16 bins per map)
    scores = W2 relu(W1 features + c1) + c2          the host's MLP head
with leaky(x) = x for x > 0, x / 4 otherwise (two halvings on the sensor), weights
rounded to multiples of 1/4 (`depth: 2`) and biases to integers (the DAC loads
integers), every value clipped to +-127 as the chip's registers saturate (exact
arithmetic, `ideal`, does not clip: the head `scamp` trains sees the difference).
Rounding and the decision pass their gradient straight through (the decision as a
sigmoid's).
"""

import argparse
import gzip
import json
import os
import time
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
SEED = 7
CHANNELS = 3
DEPTH = 2
STEP = 2.0**-DEPTH
LIMIT = 127.0
SLOPE = 0.25
PAD = 3  # three 3x3 layers reach three pixels
BIN, STRIDE, SIDE = 10, 6, 28
BINS = [[r, c, BIN, BIN] for r in range(0, SIDE - BIN + 1, STRIDE) for c in range(0, SIDE - BIN + 1, STRIDE)]
HIDDEN = 32
REGISTERS = "ABCDEF"


def read_idx(path):
    with gzip.open(path, "rb") as f:
        data = f.read()
    dims = data[3]
    shape = [int.from_bytes(data[4 + 4 * i : 8 + 4 * i], "big") for i in range(dims)]
    return np.frombuffer(data, np.uint8, offset=4 + 4 * dims).reshape(shape)


def patches(x):
    """3x3 neighbourhoods of [N, C, H, W] with zeros beyond the edge: [N, C, H, W, 9]."""
    p = np.pad(x, ((0, 0), (0, 0), (1, 1), (1, 1)))
    v = np.lib.stride_tricks.sliding_window_view(p, (3, 3), axis=(2, 3))
    return v.reshape(*x.shape, 9)


def flipped(w):
    """Per channel, the kernel rotated by 180 degrees (the transposed correlation)."""
    return w[:, ::-1]


class Model:
    def __init__(self, rng):
        n_feat = CHANNELS * len(BINS)
        self.p = {
            "w1": rng.normal(0, 0.3, (CHANNELS, 9)),
            "b1": np.zeros(CHANNELS),
            "w2": rng.normal(0, 0.3, (CHANNELS, 9)),
            "b2": np.zeros(CHANNELS),
            "w3": rng.normal(0, 0.3, (CHANNELS, 9)),
            "b3": np.zeros(CHANNELS),
            "h1": rng.normal(0, np.sqrt(2 / n_feat), (HIDDEN, n_feat)),
            "c1": np.zeros(HIDDEN),
            "h2": rng.normal(0, np.sqrt(2 / HIDDEN), (10, HIDDEN)),
            "c2": np.zeros(10),
        }
        self.p = {k: v.astype(np.float32) for k, v in self.p.items()}

    def rounded(self):
        q = {k: np.clip(np.round(self.p[k] / STEP) * STEP, -2, 2) for k in ("w1", "w2", "w3")}
        q.update({k: np.clip(np.round(self.p[k]), -100, 100) for k in ("b1", "b2", "b3")})
        return q

    def forward(self, x0, temperature):
        q, p, c = self.rounded(), self.p, {}
        c["P0"] = patches(x0[:, None])[:, 0]
        z1 = np.einsum("nhwk,ck->nchw", c["P0"], q["w1"]) + q["b1"][None, :, None, None]
        a1, c["m1"] = leaky_clip(z1)
        c["P1"] = patches(a1)
        z2 = np.einsum("nchwk,ck->nchw", c["P1"], q["w2"]) + q["b2"][None, :, None, None]
        a2, c["m2"] = leaky_clip(z2)
        c["P2"] = patches(a2)
        z3 = np.einsum("nchwk,ck->nchw", c["P2"], q["w3"]) + q["b3"][None, :, None, None]
        z3 = np.clip(z3, -LIMIT, LIMIT)
        with np.errstate(over="ignore"):  # exp overflows to inf far below 0: s = 0
            s = 1 / (1 + np.exp(-z3 / temperature))
        c["s"], c["T"] = s, temperature
        f = bin_features(s[:, :, PAD:-PAD, PAD:-PAD])
        c["f"] = f
        h = f @ p["h1"].T + p["c1"]
        c["h"] = h
        r = np.maximum(h, 0)
        c["r"] = r
        return r @ p["h2"].T + p["c2"], c

    def backward(self, x0, labels, scores, c):
        q, p, g = self.rounded(), self.p, {}
        n = len(labels)
        e = np.exp(scores - scores.max(1, keepdims=True))
        prob = e / e.sum(1, keepdims=True)
        prob[np.arange(n), labels] -= 1
        ds = prob / n
        g["h2"], g["c2"] = ds.T @ c["r"], ds.sum(0)
        dh = (ds @ p["h2"]) * (c["h"] > 0)
        g["h1"], g["c1"] = dh.T @ c["f"], dh.sum(0)
        df = dh @ p["h1"]
        ds3 = np.zeros_like(c["s"])
        ds3[:, :, PAD:-PAD, PAD:-PAD] = bin_features_grad(df, c["s"].shape[0])
        dz3 = ds3 * c["s"] * (1 - c["s"]) / c["T"]
        g["w3"], g["b3"] = np.einsum("nchwk,nchw->ck", c["P2"], dz3), dz3.sum((0, 2, 3))
        da2 = np.einsum("nchwk,ck->nchw", patches(dz3), flipped(q["w3"]))
        dz2 = da2 * c["m2"]
        g["w2"], g["b2"] = np.einsum("nchwk,nchw->ck", c["P1"], dz2), dz2.sum((0, 2, 3))
        da1 = np.einsum("nchwk,ck->nchw", patches(dz2), flipped(q["w2"]))
        dz1 = da1 * c["m1"]
        g["w1"], g["b1"] = np.einsum("nhwk,nchw->ck", c["P0"], dz1), dz1.sum((0, 2, 3))
        return g


def leaky_clip(z):
    """The activation on the sensor and its derivative (0 where the range clips)."""
    a = np.where(z > 0, z, SLOPE * z)
    grad = np.where(z > 0, 1.0, SLOPE) * (np.abs(a) < LIMIT)
    return np.clip(a, -LIMIT, LIMIT), grad.astype(np.float32)


def bin_features(maps):
    """[N, C, 28, 28] -> [N, C * bins], the mean of each bin, map after map."""
    return np.concatenate(
        [maps[:, :, r : r + h, c : c + w].mean((2, 3)) for r, c, h, w in BINS], axis=1
    ).reshape(len(maps), len(BINS), CHANNELS).transpose(0, 2, 1).reshape(len(maps), -1)


def bin_features_grad(df, n):
    grad = np.zeros((n, CHANNELS, SIDE, SIDE), np.float32)
    df = df.reshape(n, CHANNELS, len(BINS))
    for k, (r, c, h, w) in enumerate(BINS):
        grad[:, :, r : r + h, c : c + w] += df[:, :, k, None, None] / (h * w)
    return grad


class Adam:
    def __init__(self, params, rates):
        self.m = {k: np.zeros_like(v) for k, v in params.items()}
        self.v = {k: np.zeros_like(v) for k, v in params.items()}
        self.rates, self.t = rates, 0

    def step(self, params, grads, scale):
        self.t += 1
        for k, g in grads.items():
            self.m[k] = 0.9 * self.m[k] + 0.1 * g
            self.v[k] = 0.999 * self.v[k] + 0.001 * g * g
            mh = self.m[k] / (1 - 0.9**self.t)
            vh = self.v[k] / (1 - 0.999**self.t)
            params[k] -= (scale * self.rates[k[0]] * mh / (np.sqrt(vh) + 1e-8)).astype(np.float32)


def prepared(images):
    x = images.astype(np.float32) - 128
    return np.pad(x, ((0, 0), (PAD, PAD), (PAD, PAD)), constant_values=-128)


def accuracy(model, x, labels, temperature):
    right = 0
    for i in range(0, len(x), 1000):
        scores, _ = model.forward(x[i : i + 1000], temperature)
        right += int((scores.argmax(1) == labels[i : i + 1000]).sum())
    return right / len(x)


def train(data, epochs):
    rng = np.random.default_rng(SEED)
    model = Model(rng)
    opt = Adam(model.p, {"w": 0.01, "b": 0.2, "h": 0.003, "c": 0.003})
    x, y = prepared(data["train_x"]), data["train_y"].astype(np.int64)
    for epoch in range(epochs):
        temperature = 8.0 / (1 + epoch)
        order = rng.permutation(len(x))
        for i in range(0, len(x), 128):
            batch = order[i : i + 128]
            scores, cache = model.forward(x[batch], temperature)
            grads = model.backward(x[batch], y[batch], scores, cache)
            opt.step(model.p, grads, 0.5 ** (epoch // 3))
        print(f"epoch {epoch + 1}: test accuracy {accuracy(model, prepared(data['test_x'][:2000]), data['test_y'][:2000], temperature):.3f}", flush=True)
    return model


def stage(layer, channel, q, allocation, decision):
    """One per-channel stage of a depthwise layer, in the registers `allocation` chose."""
    inp, out, regs = allocation
    s = {
        "weights": f"w{layer}_{channel}.npy",
        "depth": DEPTH,
        "input": inp,
        "registers": regs,
        "outputs": [out],
    }
    if decision:
        s["threshold"] = [int(-q[f"b{layer}"][channel])]
    else:
        s["bias"] = f"b{layer}_{channel}.npy"
        s["activation"] = {"leaky_relu": "1/4"}
        s["decision"] = "none"
    return s


def depthwise_registers(live):
    """For each channel of a depthwise layer reading the registers `live`, in order:
    (input, output, registers its program may overwrite), so that no stage overwrites a
    channel still to be read or a result already made."""
    made, plan = [], []
    for c, inp in enumerate(live):
        busy = set(live[c + 1 :]) | set(made)
        free = [r for r in REGISTERS if r not in busy and r != inp]
        out = free[0]
        plan.append((inp, out, sorted([inp] + free)))
        made.append(out)
    return plan, made


def network_files(q, head_rows):
    """The network files of 1, 2 and 3 layers (the shorter ones decide after their last
    layer with the bias folded into the threshold)."""
    first = {"weights": "w1.npy", "depth": DEPTH}
    live = list(REGISTERS[1 : 1 + CHANNELS])
    files = {}
    for layers in (1, 2, 3):
        if layers == 1:
            stages = [dict(first, threshold=[int(-b) for b in q["b1"]])]
        else:
            stages = [dict(first, bias="b1.npy", activation={"leaky_relu": "1/4"}, decision="none")]
        regs = live
        for layer in range(2, layers + 1):
            plan, regs = depthwise_registers(regs)
            for c in range(CHANNELS):
                stages.append(stage(layer, c, q, plan[c], layer == layers))
        files[layers] = {
            "name": f"fashion3-{layers}layer" if layers < 3 else "fashion3",
            "stages": stages,
            "readout": {"bins": BINS},
            "head": {"hidden": [HIDDEN], "train": {"epochs": 15, "learning_rate": 0.05, "l2": 0.00001, "batch": 64, "seed": 1}},
        }
    return files


def yaml_text(net):
    """The network file, one stage per line (JSON's flow style is YAML)."""
    lines = [f"name: {net['name']}", "stages:"]
    lines += [f"  - {json.dumps(s)}" for s in net["stages"]]
    lines += [f"readout: {json.dumps(net['readout'])}", f"head: {json.dumps(net['head'])}"]
    return "\n".join(lines) + "\n"


def write(model, out):
    q = model.rounded()
    np.save(out / "w1.npy", q["w1"].reshape(CHANNELS, 1, 3, 3).astype(np.float32))
    np.save(out / "b1.npy", q["b1"].astype(np.float32))
    for layer in (2, 3):
        for c in range(CHANNELS):
            np.save(out / f"w{layer}_{c}.npy", q[f"w{layer}"][c].reshape(1, 1, 3, 3).astype(np.float32))
            np.save(out / f"b{layer}_{c}.npy", q[f"b{layer}"][c : c + 1].astype(np.float32))
    names = {1: "layers1.yaml", 2: "layers2.yaml", 3: "net.yaml"}
    for layers, net in network_files(q, HIDDEN).items():
        header = f"# Written by train.py (seed {SEED}): fashion3 with its first {layers} layer(s) on the sensor.\n"
        (out / names[layers]).write_text(header + yaml_text(net))
    try:
        import onnx  # noqa: F401
    except ImportError:
        print("onnx is not installed: fashion3.onnx not written")
        return
    export_onnx(model, q, out / "fashion3.onnx")


def export_onnx(model, q, path):
    """The convolution layers (input `image`, [N, 1, H, W] in the DAC's units, output the
    last layer's maps before the threshold) and the head (input `features`, output
    `scores`) as one ONNX graph."""
    from onnx import TensorProto, helper, numpy_helper

    inits = [
        numpy_helper.from_array(q["w1"].reshape(CHANNELS, 1, 3, 3).astype(np.float32), "w1"),
        numpy_helper.from_array(q["b1"].astype(np.float32), "b1"),
    ]
    nodes = [helper.make_node("Conv", ["image", "w1", "b1"], ["z1"], name="conv1", pads=[1, 1, 1, 1])]
    nodes.append(helper.make_node("LeakyRelu", ["z1"], ["a1"], name="leaky1", alpha=SLOPE))
    for layer in (2, 3):
        w = q[f"w{layer}"].reshape(CHANNELS, 1, 3, 3).astype(np.float32)
        inits += [numpy_helper.from_array(w, f"w{layer}"), numpy_helper.from_array(q[f"b{layer}"].astype(np.float32), f"b{layer}")]
        src = f"a{layer - 1}"
        nodes.append(helper.make_node("Conv", [src, f"w{layer}", f"b{layer}"], [f"z{layer}"], name=f"conv{layer}", group=CHANNELS, pads=[1, 1, 1, 1]))
        if layer == 2:
            nodes.append(helper.make_node("LeakyRelu", ["z2"], ["a2"], name="leaky2", alpha=SLOPE))
    p = model.p
    inits += [numpy_helper.from_array(p[k].astype(np.float32), k) for k in ("h1", "c1", "h2", "c2")]
    nodes += [
        helper.make_node("Gemm", ["features", "h1", "c1"], ["hidden"], name="head1", transB=1),
        helper.make_node("Relu", ["hidden"], ["hidden_relu"], name="head_relu"),
        helper.make_node("Gemm", ["hidden_relu", "h2", "c2"], ["scores"], name="head2", transB=1),
    ]
    n_feat = CHANNELS * len(BINS)
    graph = helper.make_graph(
        nodes,
        "fashion3",
        [
            helper.make_tensor_value_info("image", TensorProto.FLOAT, ["N", 1, 28, 28]),
            helper.make_tensor_value_info("features", TensorProto.FLOAT, ["N", n_feat]),
        ],
        [
            helper.make_tensor_value_info("z3", TensorProto.FLOAT, ["N", CHANNELS, 28, 28]),
            helper.make_tensor_value_info("scores", TensorProto.FLOAT, ["N", 10]),
        ],
        inits,
    )
    model_proto = helper.make_model(graph, producer_name="scamp programs/fashion3/train.py", opset_imports=[helper.make_opsetid("", 13)])
    model_proto.ir_version = 8
    onnx_mod = __import__("onnx")
    onnx_mod.checker.check_model(model_proto)
    onnx_mod.save(model_proto, str(path))


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--dataset", default="/usr/share/datasets/fashion-mnist")
    ap.add_argument("--epochs", type=int, default=6)
    ap.add_argument("--out", default=str(HERE))
    args = ap.parse_args()
    d = Path(args.dataset)
    data = {
        "train_x": read_idx(d / "train-images-idx3-ubyte.gz"),
        "train_y": read_idx(d / "train-labels-idx1-ubyte.gz"),
        "test_x": read_idx(d / "t10k-images-idx3-ubyte.gz"),
        "test_y": read_idx(d / "t10k-labels-idx1-ubyte.gz"),
    }
    start = time.time()
    model = train(data, args.epochs)
    out = Path(args.out)
    os.makedirs(out, exist_ok=True)
    write(model, out)
    print(f"trained in {time.time() - start:.0f} s; files in {out}")


if __name__ == "__main__":
    main()
