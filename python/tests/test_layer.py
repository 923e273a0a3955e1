"""Layers as trained: numpy weights in spec dicts, ``.npy`` files in PyTorch's layout
compiling to the command line's program, and ``choose_layer``'s scale and depth."""

import numpy as np
import pytest

import scamp

# A Sobel kernel and a 1/16 blur, PyTorch's layout [out, in, kh, kw].
CONV = np.array(
    [
        [[[-0.25, 0.0, 0.25], [-0.5, 0.0, 0.5], [-0.25, 0.0, 0.25]]],
        [[[1, 2, 1], [2, 4, 2], [1, 2, 1]]],
    ]
) * np.array([1.0, 1 / 16]).reshape(2, 1, 1, 1)

LAYER = """name: conv
input: A
layer:
  weights: conv.npy
  outputs: [B, C]
search: { work: 400, workers: 1 }
"""


def test_a_layer_npy_compiles_to_the_cli_program(cli, tmp_path):
    np.save(tmp_path / "conv.npy", CONV.astype(">f4"))
    spec = tmp_path / "conv.yaml"
    spec.write_text(LAYER)
    expected = cli.json("compile", spec, "--work", 400)
    compiled = scamp.compile(spec, work=400)
    assert compiled.program == expected["program"]
    assert [k["depth"] for k in compiled.report["kernels"]] == [2, 4]


def test_numpy_arrays_are_taken_in_spec_dicts(tmp_path):
    typed = {
        "name": "conv",
        "kernels": [
            {"out": "B", "weights": CONV[0, 0].tolist()},
            {"out": "C", "weights": CONV[1, 0].tolist()},
        ],
        "search": {"work": 400, "workers": 1},
    }
    arrays = {
        "name": "conv",
        "kernels": [
            {"out": "B", "weights": CONV[0, 0]},
            {"out": "C", "weights": CONV[1, 0].astype(np.float32), "scale": np.float64(1)},
        ],
        "search": {"work": np.int64(400), "workers": 1},
    }
    assert scamp.compile(arrays).program == scamp.compile(typed).program


def test_choose_layer_picks_the_scale_and_depth():
    chosen = scamp.choose_layer(CONV, [0.5, -1.0], outputs=["B", "C"], noise="scamp5")
    # Sobel's sum of |w| is 2: the largest power of two within +-128 is 1/2.
    assert (chosen["scale"], chosen["exponent"]) == (0.5, -1)
    assert chosen["bias"] == [0.25, -0.5]
    least = min(t["mse"] for t in chosen["tried"])
    assert chosen["tried"][chosen["depth"]]["mse"] == least
    assert [k["out"] for k in chosen["kernels"]] == ["B", "C"]
    assert all(k["peak"] <= chosen["limit"] for k in chosen["kernels"])
    compiled = scamp.compile(chosen["spec"], work=300)
    assert compiled.report["kernels"][0]["out"] == "B"


def test_choose_layer_reads_npy_files(tmp_path):
    np.save(tmp_path / "w.npy", CONV.astype(np.float32))
    from_file = scamp.choose_layer(tmp_path / "w.npy", outputs=["B", "C"])
    assert from_file["spec"] == scamp.choose_layer(CONV, outputs=["B", "C"])["spec"]


@pytest.mark.parametrize(
    "weights, kwargs, message",
    [
        (CONV[0], {}, "weights must have 4 dimensions"),
        (np.full((2, 1, 3, 3), np.nan), {}, "is NaN"),
        (CONV, {"outputs": ["B"]}, "2 outputs, 1 output registers are given"),
        (CONV, {"outputs": ["B", "Q1"]}, "not a general register"),
        (CONV, {"groups": 3}, "divide the 2 outputs"),
        (CONV, {"max_depth": 21}, "max_depth must be at most 20"),
        ("absent.npy", {}, "absent.npy: cannot read"),
        (["a", "b"], {}, "could not convert"),
    ],
)
def test_choose_layer_refuses_bad_input(weights, kwargs, message):
    args = {"outputs": ["B", "C"], **kwargs}
    with pytest.raises(ValueError, match=message):
        scamp.choose_layer(weights, **args)


# Two filters over three input channels, PyTorch's layout [out, in, kh, kw].
DEEP = np.stack(
    [
        np.stack([np.array([[1, 2, 1], [2, 4, 2], [1, 2, 1]]) / 64] * 2 + [np.eye(3) / 8]),
        np.stack([np.array([[-1, 0, 1], [-2, 0, 2], [-1, 0, 1]]) / 32] * 3),
    ]
)


def test_a_multi_input_spec_dict_compiles_to_the_cli_program(cli, tmp_path):
    np.save(tmp_path / "deep.npy", DEEP)
    spec = tmp_path / "deep.yaml"
    spec.write_text(
        "name: deep\ninputs: [A, B, C]\nlayer:\n  weights: deep.npy\n  outputs: [D, E]\n"
        "search: { work: 400, workers: 1 }\n"
    )
    expected = cli.json("compile", spec, "--work", 400)
    assert scamp.compile(spec, work=400).program == expected["program"]
    as_dict = {
        "name": "deep",
        "inputs": ["A", "B", "C"],
        "kernels": [{"out": "D", "weights": DEEP[0]}, {"out": "E", "weights": DEEP[1]}],
        "search": {"work": 400, "workers": 1},
    }
    assert scamp.compile(as_dict, work=400).program == expected["program"]

