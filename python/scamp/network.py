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
from typing import Any, Mapping, Optional, Sequence, Union

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
        train_noise: Any = None,
        train_images: Optional[int] = None,
        test_images: Optional[int] = None,
        depths: Optional[Sequence[int]] = None,
        work: Optional[int] = None,
        shard: Optional[str] = None,
    ) -> dict:
        """Accuracy ideal against ``noise``: the dict ``scamp eval --json`` prints for
        the same network and options (``dataset`` a folder of IDX files, Debian's
        Fashion-MNIST by default)."""
        return self._native.evaluate(
            None if dataset is None else os.fspath(dataset),
            noise,
            chip_seeds,
            train_noise,
            train_images,
            test_images,
            None if depths is None else list(depths),
            work,
            shard,
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

    def __repr__(self) -> str:
        return f"<scamp.Network {self.name}>"
