"""``scamp.Network``: networks from numpy arrays in PyTorch's layout, their features
against numpy references computed from the images alone (ReLU, leaky ReLU, per-map
thresholds, a bias, binarised input, bins with a cap, an MLP head), the evaluation
equal to ``scamp eval --json``, and bad input."""

import json

import numpy as np
import pytest

import scamp

ROWS = COLS = 6


def images(n, seed=5):
    return np.random.default_rng(seed).integers(0, 256, (n, ROWS, COLS), dtype=np.uint8)


def weights():
    """[2, 1, 3, 3], multiples of 1/4: exact at depth 2."""
    k = np.arange(18).reshape(2, 1, 3, 3)
    return ((k * 5 % 9) - 4) / 4.0


def conv(x, w, pad):
    """Correlation of each image (row 0 north) with each [3, 3] kernel, outside = pad."""
    p = np.pad(x, ((0, 0), (1, 1), (1, 1)), constant_values=pad)
    out = np.zeros((x.shape[0], w.shape[0], ROWS, COLS))
    for o in range(w.shape[0]):
        for dr in range(3):
            for dc in range(3):
                out[:, o] += w[o, 0, dr, dc] * p[:, dr : dr + ROWS, dc : dc + COLS]
    return out


def capture(x):
    return x.astype(np.float64) - 128.0


def capped_bins(maps, bins, cap):
    """Features: per map, the first ``cap`` events in row-major order, counted per bin."""
    n, m = maps.shape[:2]
    flat = maps.reshape(n, m, -1).astype(np.int64)
    read = flat * (np.cumsum(flat, axis=2) <= cap)
    read = read.reshape(maps.shape)
    out = [
        read[:, :, r : r + h, c : c + w].sum(axis=(2, 3)) / (h * w) for r, c, h, w in bins
    ]
    return np.stack(out, axis=2).reshape(n, -1).astype(np.float32)


def test_relu_bias_bins_and_cap_match_numpy():
    bins = [[0, 0, 4, 4], [2, 2, 4, 4], [0, 3, 6, 3]]
    bias = np.array([-30.0, 45.0])
    net = scamp.Network(
        layers=[{"weights": weights(), "bias": bias, "depth": 2, "activation": "relu"}],
        readout={"bins": bins, "cap": 7},
    )
    x = images(40)
    feats, maps = net.features(x, noise="ideal", maps=True)
    v = conv(capture(x), weights(), -128.0) + bias[None, :, None, None]
    want = (np.maximum(v, 0) > 0).astype(np.uint8)
    np.testing.assert_array_equal(maps, want)
    np.testing.assert_array_equal(feats, capped_bins(want, bins, 7))
    assert feats.shape == (40, 6) and feats.dtype == np.float32


def test_leaky_relu_and_per_map_thresholds_match_numpy():
    net = scamp.Network(
        layers=[
            {
                "weights": weights(),
                "depth": 2,
                "activation": {"leaky_relu": "1/4"},
                "threshold": [-5, -20],
            }
        ]
    )
    x = images(30, seed=7)
    _, maps = net.features(x, noise="ideal", maps=True)
    v = conv(capture(x), weights(), -128.0)
    leaky = np.where(v > 0, v, v / 4)
    want = (leaky > np.array([-5, -20])[None, :, None, None]).astype(np.uint8)
    np.testing.assert_array_equal(maps, want)


def test_binarised_input_matches_numpy():
    net = scamp.Network(
        layers=[{"weights": weights(), "depth": 2}],
        input={"binarise": {"level": 100, "value": 50}},
    )
    x = images(30, seed=9)
    _, maps = net.features(x, noise="ideal", maps=True)
    b = np.where(x > 100, 50.0, 0.0)
    want = (conv(b, weights(), 0.0) > 0).astype(np.uint8)
    np.testing.assert_array_equal(maps, want)


def idx_dataset(folder, x, y):
    """x and y as the training and the test split (uncompressed IDX files)."""
    for split in ("train", "t10k"):
        n = len(y)
        (folder / f"{split}-images-idx3-ubyte").write_bytes(
            bytes([0, 0, 8, 3]) + np.array([n, ROWS, COLS], ">u4").tobytes() + x.tobytes()
        )
        (folder / f"{split}-labels-idx1-ubyte").write_bytes(
            bytes([0, 0, 8, 1]) + np.array([n], ">u4").tobytes() + y.astype(np.uint8).tobytes()
        )
    return folder


def test_an_mlp_head_from_arrays_classifies_as_numpy(tmp_path):
    x = images(60, seed=11)
    y = np.arange(60) % 10
    data = idx_dataset(tmp_path, x, y)
    rng = np.random.default_rng(3)
    h1 = rng.normal(size=(5, 2 * 4 + 1))
    h2 = rng.normal(size=(10, 5 + 1))
    net = scamp.Network(
        layers=[{"weights": weights(), "depth": 2}],
        readout={"pool": 3},
        head={"weights": [h1, h2]},
    )
    feats = net.features(x, noise="ideal").astype(np.float32)
    hidden = np.maximum(feats @ h1[:, :-1].T.astype(np.float32) + h1[:, -1].astype(np.float32), 0)
    scores = hidden @ h2[:, :-1].T.astype(np.float32) + h2[:, -1].astype(np.float32)
    want = np.mean(np.argmax(scores, axis=1) == y)
    r = net.evaluate(data, noise="ideal", chip_seeds=1)
    assert r["accuracy"]["ideal"] == pytest.approx(want, abs=1e-12)
    assert r["accuracy"]["lost"] == 0.0


def timeless(report):
    report.pop("images_per_second")
    for row in report["merge"]["rows"]:
        row.pop("noisy_seconds")
    return report


def test_evaluate_equals_the_cli_for_a_network_from_arrays(tmp_path, cli):
    x = images(300, seed=13)
    y = (x[:, 2:4, 2:4].mean(axis=(1, 2)) // 26).astype(np.uint8) % 10
    data = idx_dataset(tmp_path, x, y)
    net = scamp.Network(
        layers=[
            {"weights": weights(), "bias": [3.0, -2.0], "depth": 2, "activation": {"leaky_relu": 0.5}},
        ],
        readout={"bins": [[0, 0, 3, 6], [3, 0, 3, 6], [0, 0, 6, 3]], "cap": 12},
        head={"hidden": [8], "train": {"epochs": 3, "learning_rate": 0.05}},
        folder=tmp_path / "net",
    )
    got = net.evaluate(data, noise="scamp5", chip_seeds=2, train_noise="scamp5")
    want = cli.json("eval", net.path, "--dataset", data, "--chip-seeds", "2", "--train-noise", "scamp5")
    assert timeless(got) == timeless(want)
    assert got["features"] == 6 and got["stages"] == 1
    # Another temporal-noise seed: the same figures from both, on the same chips.
    got5 = net.evaluate(data, noise="scamp5", chip_seeds=2, seed=5, train_noise="scamp5")
    want5 = cli.json("eval", net.path, "--dataset", data, "--chip-seeds", "2", "--seed", "5", "--train-noise", "scamp5")
    assert timeless(got5) == timeless(want5)
    assert (got5["seed"], got5["chip_seeds"], got["seed"]) == (5, [1, 2], 0)
    # The noisy features of test frame 0 on chip 1 are those eval counted: the same
    # call twice gives the same array, and another chip another one.
    a = net.features(x, chip_seed=1)
    np.testing.assert_array_equal(a, net.features(x, chip_seed=1))
    assert not np.array_equal(a, net.features(x, chip_seed=2))


def valid_layer(maps, w, bias):
    """A valid 3x3 correlation of ``maps`` ``[N, in, H, W]`` with ``w[o, z]`` (two
    smaller per side), plus the bias, through ReLU."""
    n, _, h, wd = maps.shape
    out = np.zeros((n, w.shape[0], h - 2, wd - 2))
    for o in range(w.shape[0]):
        for z in range(w.shape[1]):
            for dr in range(3):
                for dc in range(3):
                    out[:, o] += w[o, z, dr, dc] * maps[:, z, dr : dr + h - 2, dc : dc + wd - 2]
        out[:, o] += bias[o]
    return np.maximum(out, 0)


def test_a_layer_over_several_maps_matches_numpy_and_the_cli(tmp_path, cli):
    # Layer 2 reads both maps of layer 1 (groups 1): one multi-input stage.
    w1 = weights()
    w2 = ((np.arange(36).reshape(2, 2, 3, 3) * 7 % 9) - 4) / 4.0
    b1, b2 = [-20.0, 35.0], [-60.0, 90.0]
    net = scamp.Network(
        layers=[
            {"weights": w1, "bias": b1, "depth": 2, "activation": "relu", "decision": "none"},
            {"weights": w2, "bias": b2, "depth": 2, "activation": "relu"},
        ],
        readout={"pool": 3},
        head={"hidden": [6], "train": {"epochs": 2, "learning_rate": 0.05}},
        folder=tmp_path / "net",
    )
    x = images(40, seed=17)
    _, maps = net.features(x, noise="ideal", maps=True, work=2000)
    # The background around each image is pixel 0 (-128 after capture); layer 1's
    # outputs there are what layer 2 reads beyond the image's edge.
    captured = np.pad(capture(x), ((0, 0), (2, 2), (2, 2)), constant_values=-128.0)
    first = valid_layer(captured[:, None], w1, b1)
    want = (valid_layer(first, w2, b2) > 0).astype(np.uint8)
    np.testing.assert_array_equal(maps, want)
    assert 0 < want.mean() < 1
    y = (np.arange(40) % 10).astype(np.uint8)
    data = idx_dataset(tmp_path, x, y)
    got = net.evaluate(data, noise="scamp5", chip_seeds=1, work=2000)
    cli_report = cli.json("eval", net.path, "--dataset", data, "--chip-seeds", "1", "--work", "2000")
    assert timeless(got) == timeless(cli_report)
    assert got["stages"] == 2


def test_a_depthwise_layer_matches_numpy_and_the_cli(tmp_path, cli):
    # Four maps, then a depthwise layer (groups 4, each output reads its own map) with a
    # bias and ReLU, decided by sign: one stage per channel.
    w1 = ((np.arange(36).reshape(4, 1, 3, 3) * 5 % 9) - 4) / 4.0
    w2 = ((np.arange(36).reshape(4, 1, 3, 3) * 7 % 9) - 4) / 4.0
    b1, b2 = [-20.0, 35.0, 5.0, 12.0], [-60.0, 90.0, 7.0, -3.0]
    net = scamp.Network(
        layers=[
            {"weights": w1, "bias": b1, "depth": 2, "activation": "relu", "decision": "none"},
            {"weights": w2, "bias": b2, "groups": 4, "depth": 2, "activation": "relu"},
        ],
        readout={"pool": 3},
        head={"hidden": [8], "train": {"epochs": 2}},
        folder=tmp_path / "net",
    )
    x = images(30, seed=19)
    _, maps = net.features(x, noise="ideal", maps=True)
    captured = np.pad(capture(x), ((0, 0), (2, 2), (2, 2)), constant_values=-128.0)
    first = valid_layer(captured[:, None], w1, b1)
    second = np.concatenate(
        [valid_layer(first[:, o : o + 1], w2[o : o + 1], b2[o : o + 1]) for o in range(4)], axis=1
    )
    want = (second > 0).astype(np.uint8)
    np.testing.assert_array_equal(maps, want)
    assert 0 < want.mean() < 1
    data = idx_dataset(tmp_path, x, (np.arange(30) % 10).astype(np.uint8))
    got = net.evaluate(data, noise="scamp5", chip_seeds=1)
    cli_report = cli.json("eval", net.path, "--dataset", data, "--chip-seeds", "1")
    assert timeless(got) == timeless(cli_report)
    assert (got["stages"], got["maps"]) == (5, 4)


def test_the_bundled_network_loads_and_compiles():
    net = scamp.Network.load()
    assert net.name == "analognet2"
    c = net.compile()
    assert c["maps"] == 3 and c["features"] == 147 and c["images_per_frame"] == 64
    assert c["program"].startswith("get_image(")


def test_bad_networks_raise_clear_errors(tmp_path):
    with pytest.raises(ValueError, match="at least one layer"):
        scamp.Network(layers=[])
    with pytest.raises(ValueError, match=r"net\.yaml:\d+:\d+: unknown activation `tanh`"):
        scamp.Network(layers=[{"weights": weights(), "activation": "tanh"}])
    with pytest.raises(ValueError, match="threshold 300 cannot be loaded"):
        scamp.Network(layers=[{"weights": weights(), "threshold": [1, 300]}])
    with pytest.raises(TypeError, match="numeric array"):
        scamp.Network(layers=[{"weights": np.array(["a"])}])
    net = scamp.Network(layers=[{"weights": weights(), "depth": 2}])
    with pytest.raises(TypeError, match="uint8"):
        net.features(np.zeros((2, ROWS, COLS), np.float32))
    with pytest.raises(ValueError, match="empty batch"):
        net.features(np.zeros((0, ROWS, COLS), np.uint8))
    with pytest.raises(scamp.Error):
        net.features(np.zeros((1, 300, 300), np.uint8))
    with pytest.raises(scamp.Error):
        scamp.Network.load(tmp_path / "missing.yaml")
