"""``scamp.Network.from_onnx`` on the bundled ``programs/fashion3/fashion3.onnx`` (the
same network as ``programs/fashion3/net.yaml``, so the same ideal features bit for bit,
and the binary maps a numpy reference computes from the ONNX arrays), operators it refuses,
and ``evaluate``'s progress callback."""

import json
import sys

import numpy as np
import pytest

import scamp

onnx = pytest.importorskip("onnx")
from onnx import TensorProto, helper, numpy_helper  # noqa: E402

FASHION3 = "programs/fashion3"


def bins(repo):
    """The readout of the bundled network file."""
    for line in (repo / FASHION3 / "net.yaml").read_text().splitlines():
        if line.startswith("readout: "):
            return json.loads(line[len("readout: ") :])["bins"]
    raise AssertionError("net.yaml has no readout line")


def images(n, seed):
    rng = np.random.default_rng(seed)
    x = rng.integers(0, 256, (n, 28, 28), dtype=np.uint8)
    x[:, :4] = 0  # a black band, as Fashion-MNIST's surround
    return x


def arrays(repo):
    model = onnx.load(str(repo / FASHION3 / "fashion3.onnx"))
    return {t.name: numpy_helper.to_array(t).astype(np.float64) for t in model.graph.initializer}


def correlate(x, w):
    """[N, H, W] with one [3, 3] kernel (row 0 north), zeros beyond the edge."""
    n, rows, cols = x.shape
    p = np.pad(x, ((0, 0), (1, 1), (1, 1)))
    out = np.zeros((n, rows, cols))
    for dr in range(3):
        for dc in range(3):
            out += w[dr, dc] * p[:, dr : dr + rows, dc : dc + cols]
    return out


def test_from_onnx_is_the_bundled_network(repo):
    net = scamp.Network.from_onnx(repo / FASHION3 / "fashion3.onnx", readout={"bins": bins(repo)})
    bundled = scamp.Network.load(repo / FASHION3 / "net.yaml")
    x = images(16, seed=3)
    # Under exact arithmetic any program computing the same kernels gives the same
    # maps (the bundled file pins programs, the import compiles its own).
    np.testing.assert_array_equal(net.features(x, noise="ideal"), bundled.features(x, noise="ideal"))
    c = net.compile()
    assert len(c["stages"]) == 7 and c["maps"] == 3 and c["features"] == 48
    # The dense head of the graph became the head's weights, [out, in + 1].
    a = arrays(repo)
    head = json.loads(open(net.path).read())["head"]["weights"]
    h1 = np.load(f"{net.path[: -len('net.yaml')]}{head[0]}")
    np.testing.assert_array_equal(h1, np.hstack([a["h1"], a["c1"][:, None]]))


def test_from_onnx_ideal_maps_match_a_numpy_reference(repo):
    """The ONNX arrays through numpy: capture p - 128, three correlations with their
    biases, leaky ReLU 1/4 between, bit = map > 0 (`ideal` is exact arithmetic)."""
    net = scamp.Network.from_onnx(repo / FASHION3 / "fashion3.onnx", readout={"bins": bins(repo)})
    a = arrays(repo)
    x = images(24, seed=11)
    _, maps = net.features(x, noise="ideal", maps=True)
    # The black surround, three pixels of it (three 3x3 layers reach that far), is
    # computed too: the sensor computes it.
    v = np.pad(x.astype(np.float64) - 128, ((0, 0), (3, 3), (3, 3)), constant_values=-128)
    layer = [v] * 3
    for k, (w, b) in enumerate((("w1", "b1"), ("w2", "b2"), ("w3", "b3"))):
        layer = [correlate(layer[c], a[w][c, 0]) + a[b][c] for c in range(3)]
        if k < 2:
            layer = [np.where(z > 0, z, z / 4) for z in layer]
    want = (np.stack(layer, 1)[:, :, 3:-3, 3:-3] > 0).astype(np.uint8)
    assert 0.05 < want.mean() < 0.95
    np.testing.assert_array_equal(maps, want)


def tiny_model(tmp_path, nodes, inits, inputs=("image",)):
    graph = helper.make_graph(
        nodes,
        "tiny",
        [helper.make_tensor_value_info(i, TensorProto.FLOAT, ["N", 1, 8, 8]) for i in inputs],
        [helper.make_tensor_value_info(nodes[-1].output[0], TensorProto.FLOAT, None)],
        [numpy_helper.from_array(v.astype(np.float32), k) for k, v in inits.items()],
    )
    path = tmp_path / "tiny.onnx"
    onnx.save(helper.make_model(graph), str(path))
    return path


def test_from_onnx_refuses_what_it_cannot_run(tmp_path):
    w = {"w": np.full((2, 1, 3, 3), 0.25)}
    conv = helper.make_node("Conv", ["image", "w"], ["z"], name="conv1", pads=[1, 1, 1, 1])
    pool = helper.make_node("MaxPool", ["z"], ["p"], name="pool1", kernel_shape=[2, 2])
    with pytest.raises(ValueError, match=r"node pool1 \(MaxPool\) is not supported"):
        scamp.Network.from_onnx(tiny_model(tmp_path, [conv, pool], w))
    leaky = helper.make_node("LeakyRelu", ["z"], ["a"], name="leaky1", alpha=0.1)
    with pytest.raises(ValueError, match=r"node leaky1 \(LeakyRelu\): the slope 0.1"):
        scamp.Network.from_onnx(tiny_model(tmp_path, [conv, leaky], w))
    valid = helper.make_node("Conv", ["image", "w"], ["z"], name="conv2")
    with pytest.raises(ValueError, match=r"node conv2 \(Conv\): only odd kernels padded"):
        scamp.Network.from_onnx(tiny_model(tmp_path, [valid], w))
    w4 = {"w": np.full((4, 1, 3, 3), 0.25), "v": np.full((2, 1, 3, 3), 0.25)}
    quarters = helper.make_node("Conv", ["z", "v"], ["y"], name="quarters", pads=[1, 1, 1, 1], group=4)
    with pytest.raises(ValueError, match=r"node quarters \(Conv\): its 4 groups do not divide its 2 outputs"):
        scamp.Network.from_onnx(tiny_model(tmp_path, [conv, quarters], w4))
    w3 = dict(w, v=np.full((2, 3, 3, 3), 0.25))
    wide = helper.make_node("Conv", ["z", "v"], ["y"], name="wide", pads=[1, 1, 1, 1])
    with pytest.raises(ValueError, match=r"node wide \(Conv\): its weights read 3 channels, the layer before makes 2"):
        scamp.Network.from_onnx(tiny_model(tmp_path, [conv, wide], w3))
    with pytest.raises(ValueError, match="threshold: expected one number or 2, got 3"):
        scamp.Network.from_onnx(tiny_model(tmp_path, [conv], w), threshold=[1, 2, 3])


def test_from_onnx_reads_a_full_convolution_as_one_multi_input_stage(tmp_path):
    """A Conv with group 1 over the three maps before it becomes one stage reading all
    three; under `ideal` its binary maps equal a numpy reference of the ONNX arrays."""
    rng = np.random.default_rng(21)
    inits = {
        "w1": rng.integers(-4, 5, (3, 1, 3, 3)) / 4.0,
        "b1": np.array([-20.0, 10.0, 35.0]),
        "w2": rng.integers(-4, 5, (2, 3, 3, 3)) / 4.0,
        "b2": np.array([-30.0, 25.0]),
    }
    nodes = [
        helper.make_node("Conv", ["image", "w1", "b1"], ["z1"], name="conv1", pads=[1, 1, 1, 1]),
        helper.make_node("LeakyRelu", ["z1"], ["a1"], name="leaky1", alpha=0.25),
        helper.make_node("Conv", ["a1", "w2", "b2"], ["z2"], name="full", pads=[1, 1, 1, 1]),
        helper.make_node("Relu", ["z2"], ["a2"], name="relu2"),
    ]
    levels = [0.0, 8.0]
    net = scamp.Network.from_onnx(
        tiny_model(tmp_path, nodes, inits), readout={"pool": 4}, threshold=levels
    )
    stages = net.compile(8, 8)["stages"]
    assert len(stages) == 2
    assert stages[1]["inputs"] == ["B", "C", "D"] and stages[1]["outputs"] == ["A", "E"]
    x = images(24, seed=5)
    _, maps = net.features(x, noise="ideal", maps=True)
    # Two 3x3 layers reach two pixels into the black surround, which the sensor computes.
    v = np.pad(x.astype(np.float64) - 128, ((0, 0), (2, 2), (2, 2)), constant_values=-128)
    first = [correlate(v, inits["w1"][c, 0]) + inits["b1"][c] for c in range(3)]
    first = [np.where(z > 0, z, z / 4) for z in first]

    def second(channels):
        sums = [
            sum(correlate(first[c], inits["w2"][o, c]) for c in channels) + inits["b2"][o]
            for o in range(2)
        ]
        # ReLU then threshold: bit = relu(sum) > level.
        bits = [np.maximum(z, 0) > t for z, t in zip(sums, levels)]
        return np.stack(bits, 1)[:, :, 2:-2, 2:-2].astype(np.uint8)

    want = second(range(3))
    assert 0.05 < want.mean() < 0.95
    np.testing.assert_array_equal(maps, want)
    # The stage reads the third channel too.
    assert (second(range(2)) != want).any()


def test_from_onnx_runs_a_grouped_convolution_one_stage_per_group(tmp_path):
    """A Conv with group 2 over four maps: each output reads its own two maps, one stage
    per group; under `ideal` the binary maps equal a numpy reference."""
    rng = np.random.default_rng(23)
    inits = {
        "w1": rng.integers(-4, 5, (4, 1, 3, 3)) / 4.0,
        "b1": np.array([-20.0, 10.0, 35.0, 5.0]),
        "w2": rng.integers(-4, 5, (2, 2, 3, 3)) / 4.0,
        "b2": np.array([-30.0, 25.0]),
    }
    nodes = [
        helper.make_node("Conv", ["image", "w1", "b1"], ["z1"], name="conv1", pads=[1, 1, 1, 1]),
        helper.make_node("Relu", ["z1"], ["a1"], name="relu1"),
        helper.make_node("Conv", ["a1", "w2", "b2"], ["z2"], name="halves", pads=[1, 1, 1, 1], group=2),
    ]
    net = scamp.Network.from_onnx(tiny_model(tmp_path, nodes, inits), readout={"pool": 4}, threshold=[0, 8])
    stages = net.compile(8, 8)["stages"]
    assert [s["inputs"] for s in stages[1:]] == [["B", "C"], ["D", "E"]]
    x = images(24, seed=7)
    _, maps = net.features(x, noise="ideal", maps=True)
    v = np.pad(x.astype(np.float64) - 128, ((0, 0), (2, 2), (2, 2)), constant_values=-128)
    first = [np.maximum(correlate(v, inits["w1"][c, 0]) + inits["b1"][c], 0) for c in range(4)]
    sums = [
        sum(correlate(first[2 * o + k], inits["w2"][o, k]) for k in range(2)) + inits["b2"][o]
        for o in range(2)
    ]
    want = np.stack([z > t for z, t in zip(sums, [0, 8])], 1)[:, :, 2:-2, 2:-2].astype(np.uint8)
    assert 0.05 < want.mean() < 0.95
    np.testing.assert_array_equal(maps, want)


def test_from_onnx_without_onnx_says_how_to_install_it(repo, monkeypatch):
    monkeypatch.setitem(sys.modules, "onnx", None)
    with pytest.raises(ImportError, match=r"pip install 'scamp\[onnx\]'"):
        scamp.Network.from_onnx(repo / FASHION3 / "fashion3.onnx")


def timeless(report):
    report.pop("images_per_second")
    for row in report["merge"]["rows"]:
        row.pop("noisy_seconds")
    return report


def test_progress_is_reported_and_an_exception_in_it_stops_the_evaluation(repo):
    net = scamp.Network.load(repo / FASHION3 / "net.yaml")
    calls = []
    opts = dict(train_images=640, test_images=320, chip_seeds=1, depths=[2])
    r = net.evaluate(progress=lambda done, total: calls.append((done, total)), **opts)
    assert calls, "progress was never called"
    assert all(isinstance(d, int) and isinstance(t, int) and 0 < d <= t for d, t in calls)
    # The last call is the last phase finished: the test frames.
    assert calls[-1][0] == calls[-1][1]
    assert timeless(r) == timeless(net.evaluate(**opts))

    class Stop(Exception):
        pass

    def stop(done, total):
        raise Stop(f"{done}/{total}")

    with pytest.raises(Stop):
        net.evaluate(progress=stop, train_images=20000, test_images=320, chip_seeds=1, depths=[2])
    with pytest.raises(TypeError, match="progress: expected a callable"):
        net.evaluate(progress=3, **opts)


def test_from_onnx_reads_a_matmul_add_head(tmp_path):
    rng = np.random.default_rng(4)
    inits = {
        "w": np.full((2, 1, 3, 3), 0.25),
        "m1": rng.normal(size=(8, 5)),
        "c1": rng.normal(size=5),
        "m2": rng.normal(size=(5, 10)),
        "c2": rng.normal(size=10),
    }
    nodes = [
        helper.make_node("Conv", ["image", "w"], ["z"], name="conv1", pads=[1, 1, 1, 1]),
        helper.make_node("MatMul", ["features", "m1"], ["h"], name="mm1"),
        helper.make_node("Add", ["h", "c1"], ["hb"], name="add1"),
        helper.make_node("Relu", ["hb"], ["hr"], name="relu1"),
        helper.make_node("MatMul", ["hr", "m2"], ["s"], name="mm2"),
        helper.make_node("Add", ["c2", "s"], ["scores"], name="add2"),
    ]
    net = scamp.Network.from_onnx(tiny_model(tmp_path, nodes, inits, inputs=("image", "features")))
    folder = net.path[: -len("net.yaml")]
    files = json.loads(open(net.path).read())["head"]["weights"]
    f32 = {k: v.astype(np.float32).astype(np.float64) for k, v in inits.items()}
    np.testing.assert_array_equal(np.load(folder + files[0]), np.hstack([f32["m1"].T, f32["c1"][:, None]]))
    np.testing.assert_array_equal(np.load(folder + files[1]), np.hstack([f32["m2"].T, f32["c2"][:, None]]))
    nodes[3] = helper.make_node("Identity", ["hb"], ["hr"], name="ident")
    with pytest.raises(ValueError, match=r"node ident \(Identity\) is not supported"):
        scamp.Network.from_onnx(tiny_model(tmp_path, nodes, inits, inputs=("image", "features")))
