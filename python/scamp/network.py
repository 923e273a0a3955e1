"""``scamp.Network``: a small CNN whose first layers run on the sensor, evaluated ideal
against a noise profile as ``scamp eval`` does (docs/eval.md).

A network comes from a network file (:meth:`Network.load`) or from numpy arrays
(``Network(layers=..., readout=..., head=...)``): the arrays are written as ``.npy``
files beside a ``net.yaml`` in a folder (a temporary one unless :meth:`save` names
another), so the same network runs with ``scamp eval FOLDER/net.yaml`` and gives the
same figures.
"""

from __future__ import annotations

import json
import os
import tempfile
from typing import Any, Callable, Mapping, Optional, Sequence, Union

import numpy as np

from . import _scamp

PathLike = Union[str, "os.PathLike[str]"]

#: Keys of a layer dict that hold arrays (written as .npy files).
_ARRAY_KEYS = ("weights", "bias")


def _array_file(folder: str, name: str, value: Any) -> str:
    """Writes ``value`` (array-like of floats) as ``name`` in ``folder``."""
    array = np.asarray(value)
    if array.dtype.kind not in "fiu":
        raise TypeError(f"{name}: expected a numeric array, got dtype {array.dtype}")
    np.save(os.path.join(folder, name), array.astype(np.float64))
    return name


def _plain(value: Any) -> Any:
    """Numbers and lists from numpy scalars and arrays (for the YAML file)."""
    if isinstance(value, np.ndarray):
        return value.tolist()
    if isinstance(value, np.generic):
        return value.item()
    if isinstance(value, Mapping):
        return {k: _plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value]
    return value


def _network_file(
    folder: str,
    name: str,
    layers: Sequence[Mapping[str, Any]],
    readout: Optional[Mapping[str, Any]],
    head: Optional[Mapping[str, Any]],
    input: Optional[Mapping[str, Any]],
) -> str:
    """Writes ``net.yaml`` and its arrays into ``folder``; returns the file's path."""
    if not layers:
        raise ValueError("layers: a network needs at least one layer")
    stages = []
    for i, layer in enumerate(layers):
        if not isinstance(layer, Mapping):
            raise TypeError(f"layers[{i}]: expected a dict, got {type(layer).__name__}")
        stage = {}
        for key, value in layer.items():
            if key in _ARRAY_KEYS and not isinstance(value, (str, os.PathLike)):
                stage[key] = _array_file(folder, f"layer{i}_{key}.npy", value)
            else:
                stage[key] = _plain(value)
        stages.append(stage)
    net: dict = {"name": name, "stages": stages}
    if input is not None:
        net["input"] = _plain(input)
    if readout is not None:
        net["readout"] = _plain(readout)
    if head is not None:
        head = dict(head)
        weights = head.get("weights")
        if weights is not None and not isinstance(weights, (str, os.PathLike)):
            head["weights"] = [
                w if isinstance(w, (str, os.PathLike)) else _array_file(folder, f"head{k}.npy", w)
                for k, w in enumerate(weights)
            ]
        net["head"] = _plain(head)
    path = os.path.join(folder, "net.yaml")
    with open(path, "w", encoding="utf-8") as f:
        # JSON is YAML: the network file scamp eval reads.
        json.dump(net, f, indent=1)
    return path


class Network:
    """A network: on-sensor layers, a readout and a head (docs/eval.md).

    ``layers`` is a list of dicts, one per on-sensor stage, with the keys of a network
    file's stage: ``weights`` (a float array ``[out, in/groups, kh, kw]``, PyTorch's
    ``Conv2d.weight``), ``bias`` (``[out]``), ``groups``, ``depth``, ``activation``
    (``"relu"`` or ``{"leaky_relu": "1/4"}``), ``decision``, ``threshold``, ... or
    ``spec`` naming a spec file. ``readout`` is ``{"pool": 4}`` or ``{"bins": [[row,
    col, height, width], ...], "cap": N}``; ``head`` is ``{"hidden": [50], "train":
    {...}}`` or ``{"weights": [array, ...]}`` (each ``[out, in + 1]``, the last column
    the bias); ``input`` is ``{"binarise": {"level": L, "value": V}}``.
    """

    def __init__(
        self,
        layers: Sequence[Mapping[str, Any]],
        readout: Optional[Mapping[str, Any]] = None,
        head: Optional[Mapping[str, Any]] = None,
        *,
        input: Optional[Mapping[str, Any]] = None,
        name: str = "network",
        folder: Optional[PathLike] = None,
    ) -> None:
        if folder is None:
            self._tmp: Optional[tempfile.TemporaryDirectory] = tempfile.TemporaryDirectory(
                prefix="scamp-net-"
            )
            folder = self._tmp.name
        else:
            self._tmp = None
            os.makedirs(folder, exist_ok=True)
        self.path = _network_file(os.fspath(folder), name, layers, readout, head, input)
        self._native = _scamp.NativeNetwork.load(self.path)

    @classmethod
    def load(cls, path: Optional[PathLike] = None) -> "Network":
        """Reads a network file (the files it names relative to its folder); no path
        for the bundled default network (AnalogNet2)."""
        net = cls.__new__(cls)
        net._tmp = None
        net.path = None if path is None else os.fspath(path)
        net._native = _scamp.NativeNetwork.load(net.path)
        return net

    @property
    def name(self) -> str:
        """The network's name."""
        return self._native.name

    def compile(
        self,
        rows: int = 28,
        cols: int = 28,
        *,
        depth: Optional[int] = None,
        work: Optional[int] = None,
    ) -> dict:
        """The chip part for ``rows x cols`` images: every stage's program (given
        programs proven, the others compiled by the generator) and the frame program
        with its instructions, cycles, gap and images per frame."""
        return self._native.compile(rows, cols, depth, work)

    def evaluate(
        self,
        dataset: Optional[PathLike] = None,
        *,
        noise: Any = "scamp5",
        chip_seeds: int = 3,
        seed: int = 0,
        train_noise: Any = None,
        train_images: Optional[int] = None,
        test_images: Optional[int] = None,
        depths: Optional[Sequence[int]] = None,
        work: Optional[int] = None,
        shard: Optional[str] = None,
        uncertainty: bool = False,
        progress: Optional[Callable[[int, int], Any]] = None,
    ) -> dict:
        """Accuracy ideal against ``noise``: the dict ``scamp eval --json`` prints for
        the same network and options (``dataset`` a folder of IDX files, Debian's
        Fashion-MNIST by default). ``progress(done, total)``, if given, is called with
        the frames done of each phase (the training features, then the test frames, for
        each depth: ``done`` starts again at each phase), at most five times a second
        and once at the end; an exception it raises stops the evaluation and is
        raised. ``seed`` is the temporal-noise seed of the noisy runs (``scamp eval
        --seed``). ``uncertainty`` adds the accuracy's range over the profile's uncertainty
        ensemble (``uncertainty`` in the dict), as ``scamp eval --uncertainty``."""
        return self._native.evaluate(
            None if dataset is None else os.fspath(dataset),
            noise,
            chip_seeds,
            seed,
            train_noise,
            train_images,
            test_images,
            None if depths is None else list(depths),
            work,
            shard,
            uncertainty,
            progress,
        )

    def features(
        self,
        images: np.ndarray,
        *,
        noise: Any = "scamp5",
        chip_seed: int = 1,
        seed: int = 0,
        depth: Optional[int] = None,
        work: Optional[int] = None,
        maps: bool = False,
    ):
        """The readout features, float32 ``[N, features]``, of uint8 images ``[N, H,
        W]`` (or one ``[H, W]``) under ``noise`` on chip ``chip_seed``, tiled on frames
        as ``scamp eval`` tiles its test split (seed 0 runs frame f as its test frame
        f). With ``maps=True`` also the binary maps, uint8 ``[N, maps, H, W]``."""
        return self._native.features(images, noise, chip_seed, seed, depth, work, maps)

    @classmethod
    def from_onnx(
        cls,
        path: PathLike,
        readout: Optional[Mapping[str, Any]] = None,
        head: Optional[Mapping[str, Any]] = None,
        *,
        threshold: Union[float, Sequence[float]] = 0,
        depth: int = 2,
        name: Optional[str] = None,
        folder: Optional[PathLike] = None,
    ) -> "Network":
        """The convolution layers of an ONNX model (needs ``pip install
        'scamp[onnx]'``): a chain of ``Conv`` (the first reading the image, in the DAC's
        units ``pixel - 128``; the next ones with ``group`` = 1, every output reading
        every channel, as one multi-input stage, or grouped, such as depthwise, as one
        stage per group) with ``Relu`` or
        ``LeakyRelu`` (slope 1/2^k) after any of them, from the graph's first input. The last convolution's maps are decided on
        the sensor, bit = map + bias > ``threshold`` (one number, or one per map). A
        dense head fed from another graph input (``Gemm``, or ``MatMul`` + ``Add``, with
        ``Relu`` between) becomes the head's weights unless ``head`` is given. Weights
        are approximated to multiples of 2^-``depth``. Any other operator is refused
        with the node's name."""
        onnx, numpy_helper = _onnx_module()
        model = onnx.load(os.fspath(path))
        graph = model.graph
        arrays = {t.name: numpy_helper.to_array(t).astype(np.float64) for t in graph.initializer}
        for node in graph.node:
            if node.op_type not in _ONNX_OPS:
                raise ValueError(
                    f"{os.fspath(path)}: {_node_label(node)} is not supported "
                    f"(scamp reads {', '.join(_ONNX_OPS)})"
                )
        inputs = [i.name for i in graph.input if i.name not in arrays]
        consumers: dict = {}
        for node in graph.node:
            for x in node.input:
                consumers.setdefault(x, []).append(node)
        if not inputs:
            raise ValueError(f"{os.fspath(path)}: the graph has no input")
        convs = _onnx_chain(inputs[0], consumers, ("Conv", "Relu", "LeakyRelu"))
        heads = [_onnx_chain(i, consumers, ("Gemm", "MatMul", "Add", "Relu")) for i in inputs[1:]]
        used = {id(n) for n in convs} | {id(n) for chain in heads for n in chain}
        for node in graph.node:
            if id(node) not in used:
                raise ValueError(
                    f"{os.fspath(path)}: {_node_label(node)} is outside the chain of "
                    "convolutions from the image and the dense head"
                )
        if not convs:
            raise ValueError(f"{os.fspath(path)}: no convolution reads the input {inputs[0]}")
        stages = _conv_layers(convs, arrays, depth)
        tail = stages[-1]
        maps = len(tail["weights"])
        levels = [threshold] * maps if np.isscalar(threshold) else list(threshold)
        if len(levels) != maps:
            raise ValueError(f"threshold: expected one number or {maps}, got {len(levels)}")
        tail.pop("decision")
        tail["threshold"] = levels
        if head is None:
            dense = [h for h in heads if h]
            if len(dense) > 1:
                raise ValueError(f"{os.fspath(path)}: more than one dense head")
            head = {"weights": _head_layers(dense[0], arrays)} if dense else None
        return cls(
            stages,
            readout,
            head,
            name=name or graph.name or "onnx",
            folder=folder,
        )

    def __repr__(self) -> str:
        return f"<scamp.Network {self.name}>"


# ---------------------------------------------------------------------------------------
# ONNX import

#: Operators `Network.from_onnx` reads.
_ONNX_OPS = ("Conv", "Relu", "LeakyRelu", "Gemm", "MatMul", "Add")


def _onnx_module():
    try:
        import onnx
        from onnx import numpy_helper
    except ImportError as e:
        raise ImportError(
            "scamp.Network.from_onnx needs the onnx package: pip install 'scamp[onnx]'"
        ) from e
    return onnx, numpy_helper


def _node_label(node) -> str:
    return f"node {node.name or '(unnamed)'} ({node.op_type})"


def _leaky_slope(node) -> str:
    """A LeakyRelu's slope as the network file writes it, 1/2^k for k = 1..8."""
    alpha = next((a.f for a in node.attribute if a.name == "alpha"), 0.01)
    k = -np.log2(alpha) if alpha > 0 else 0.0
    if not (1 <= round(k) <= 8 and abs(k - round(k)) < 1e-9):
        raise ValueError(
            f"{_node_label(node)}: the slope {alpha} is not 1/2^k for k = 1..8 "
            "(the sensor halves k times)"
        )
    return f"1/{2 ** round(k)}"


def _conv_weights(node, arrays):
    """A Conv's weights, bias (or None) and groups, after checking it keeps the size."""
    attrs = {a.name: a for a in node.attribute}
    if len(node.input) < 2 or node.input[1] not in arrays:
        raise ValueError(f"{_node_label(node)}: its weights must be an initializer")
    w = arrays[node.input[1]]
    b = arrays.get(node.input[2]) if len(node.input) > 2 and node.input[2] else None
    if w.ndim != 4:
        raise ValueError(f"{_node_label(node)}: expected 2-D weights [out, in, kh, kw]")
    kh, kw = w.shape[2:]
    same = [kh // 2, kw // 2, kh // 2, kw // 2]
    pads = list(attrs["pads"].ints) if "pads" in attrs else [0, 0, 0, 0]
    auto = attrs["auto_pad"].s.decode() if "auto_pad" in attrs else "NOTSET"
    strides = list(attrs["strides"].ints) if "strides" in attrs else [1, 1]
    dilations = list(attrs["dilations"].ints) if "dilations" in attrs else [1, 1]
    if kh % 2 == 0 or kw % 2 == 0 or (pads != same and auto not in ("SAME_UPPER", "SAME_LOWER")):
        raise ValueError(
            f"{_node_label(node)}: only odd kernels padded to keep the image size run on the sensor"
        )
    if strides != [1, 1] or dilations != [1, 1]:
        raise ValueError(f"{_node_label(node)}: strides and dilations must be 1")
    groups = attrs["group"].i if "group" in attrs else 1
    return w, b, groups


def _onnx_chain(start, consumers, ops):
    """The nodes from graph input `start` on, each the only reader of the one before,
    while they are among `ops`."""
    chain, tensor = [], start
    while len(consumers.get(tensor, [])) == 1 and consumers[tensor][0].op_type in ops:
        node = consumers[tensor][0]
        chain.append(node)
        tensor = node.output[0]
    return chain


def _conv_layers(chain, arrays, depth):
    """The network file's layers of a Conv / Relu / LeakyRelu chain, one per Conv, with
    the registers left to the network file's defaults (a grouped layer runs as one
    stage per group there, docs/eval.md)."""
    layers, channels = [], None
    i = 0
    while i < len(chain):
        node = chain[i]
        if node.op_type != "Conv":
            raise ValueError(f"{_node_label(node)}: an activation must follow a convolution")
        w, b, groups = _conv_weights(node, arrays)
        layer = {"weights": w, "depth": depth, "decision": "none"}
        if b is not None:
            layer["bias"] = b
        if i + 1 < len(chain) and chain[i + 1].op_type != "Conv":
            act = chain[i + 1]
            relu = act.op_type == "Relu"
            layer["activation"] = "relu" if relu else {"leaky_relu": _leaky_slope(act)}
            i += 1
        if channels is None:
            if w.shape[1] != 1 or groups != 1:
                raise ValueError(f"{_node_label(node)}: the first convolution must read one image")
            # The capture's register and five others.
            if w.shape[0] > 5:
                raise ValueError(f"{_node_label(node)}: at most 5 outputs fit the registers")
        elif w.shape[1] * groups != channels:
            raise ValueError(
                f"{_node_label(node)}: its weights read {w.shape[1] * groups} channels, the "
                f"layer before makes {channels}"
            )
        elif w.shape[0] % groups:
            raise ValueError(
                f"{_node_label(node)}: its {groups} groups do not divide its {w.shape[0]} outputs"
            )
        if groups > 1:
            layer["groups"] = groups
        layers.append(layer)
        channels = w.shape[0]
        i += 1
    return layers


def _head_layers(chain, arrays):
    """`[out, in + 1]` matrices (the last column the bias) of a Gemm / MatMul + Add /
    Relu chain."""
    layers, pattern = [], ""
    for node in chain:
        pattern += "R" if node.op_type == "Relu" else "A" if node.op_type == "Add" else "L"
        if node.op_type == "Relu":
            if not pattern.endswith(("LR", "LAR")):
                raise ValueError(f"{_node_label(node)}: a ReLU must follow a dense layer")
            continue
        if node.op_type == "Add":
            if not layers or layers[-1][1] is not None:
                raise ValueError(f"{_node_label(node)}: an Add must follow a MatMul")
            constant = [x for x in node.input if x in arrays]
            if not constant:
                raise ValueError(f"{_node_label(node)}: the bias must be an initializer")
            layers[-1][1] = arrays[constant[0]]
            continue
        if node.op_type not in ("Gemm", "MatMul") or node.input[1] not in arrays:
            raise ValueError(f"{_node_label(node)}: not part of a dense head")
        attrs = {a.name: a for a in node.attribute}
        if any(attrs[k].i for k in ("transA",) if k in attrs) or any(
            attrs[k].f != 1.0 for k in ("alpha", "beta") if k in attrs
        ):
            raise ValueError(f"{_node_label(node)}: transA, alpha and beta must keep their defaults")
        w = arrays[node.input[1]]
        w = w if node.op_type == "Gemm" and "transB" in attrs and attrs["transB"].i else w.T
        bias = arrays.get(node.input[2]) if len(node.input) > 2 and node.input[2] else None
        layers.append([w, bias if node.op_type == "Gemm" else None])
    if pattern.endswith("R"):
        raise ValueError("the head's last layer must give the scores (no ReLU after it)")
    if pattern.replace("A", "").count("LL"):
        raise ValueError("the head's hidden layers must each be followed by a ReLU")
    return [
        np.hstack([w, (np.zeros(w.shape[0]) if b is None else np.broadcast_to(b, w.shape[0]))[:, None]])
        for w, b in layers
    ]
