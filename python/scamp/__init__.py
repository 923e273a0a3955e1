"""Python bindings of ``scamp``, the SCAMP-5 simulator, code generator and checker.

Run programs on numpy arrays, compile filter specs and check programs with the same
figures as the ``scamp`` command line (its ``--json`` output, as dicts)::

    import numpy as np
    import scamp

    prog = scamp.parse("get_image(A, B)\\n")  # full-range capture: A = p - 128
    out = scamp.run(prog, {"PIX": np.full((256, 256), 200, np.uint8)}, noise="ideal")
    out["A"]          # float32 (256, 256): 72.0 everywhere

Every function raises a :class:`scamp.Error` (a ``ValueError``) of the class of its
kind with a clear message on bad input (or ``TypeError`` for a wrong dtype, ``OSError``
for a file that cannot be read): errors in a source text (``ProgramError``,
``SpecError``, ``ProfileError``, all ``SourceError``) carry ``.file``, ``.line`` and
``.column``; ``OptionError`` carries ``.option``; ``DatasetError`` and ``CompileError``
complete the set. See docs/python.md in the repository for a worked example.
"""

from __future__ import annotations

import functools
import os
from typing import Any, Mapping, Optional, Sequence, Union

import numpy as np

from . import _scamp
from ._scamp import (
    Compiled,
    CompileError,
    DatasetError,
    Error,
    OptionError,
    Profile,
    ProfileError,
    Program,
    ProgramError,
    SourceError,
    SpecError,
    load,
    load_image,
    load_images,
    merge_shards,
    parse,
)
from .network import Network

__all__ = [
    "Compiled",
    "check",
    "choose_layer",
    "compare",
    "compile",
    "CompileError",
    "DatasetError",
    "Error",
    "OptionError",
    "Profile",
    "ProfileError",
    "Program",
    "ProgramError",
    "SourceError",
    "SpecError",
    "load",
    "load_image",
    "load_images",
    "merge_shards",
    "Network",
    "parse",
    "run",
]

ProgramLike = Union[Program, str, "os.PathLike[str]"]
NoiseLike = Union[str, "os.PathLike[str]", Profile]


def _register_names(registers):
    """``registers`` as a list of names: one name as a string, or a sequence of them."""
    if registers is None:
        return None
    if isinstance(registers, str):
        return [registers]
    return list(registers)


def run(
    program: ProgramLike,
    inputs: Optional[Mapping[str, np.ndarray]] = None,
    *,
    noise: NoiseLike = "scamp5",
    seed: int = 0,
    chip_seed: int = 0,
    edge: str = "zero",
    readout: bool = True,
    registers: Optional[Sequence[str]] = None,
) -> dict[str, np.ndarray]:
    """Runs a program on the 256x256 array and returns its registers.

    ``program`` is a :class:`Program`, a program text or a path to a program file.

    ``inputs`` maps register names to numpy arrays of shape (256, 256), or (N, 256, 256)
    for a batch of N images (every batch input must hold the same N; a (256, 256) input
    is used for every image):

    - float32/float64: register values preloaded into a general register (``"A"``..)
      or ``"NEWS"``, finite and within -1024..1024;
    - uint8: pixels, exposed as the scene ``get_image`` captures (as ``scamp run
      --image`` does); under a general register name they are also preloaded there as
      ``p - 128`` (as ``scamp run --input REG``), under ``"PIX"`` only exposed. Without
      pixels the scene is the built-in default image, as on the command line;
    - bool (or integer 0/1): digital registers ``"R0"``..``"R12"`` and ``"FLAG"``.

    Image ``i`` of a batch runs with run seed ``seed + i`` on the chip ``chip_seed``, as
    ``scamp run --runs`` steps its seeds; the images run side by side on every core,
    with the GIL released.

    ``noise`` is ``"ideal"``, ``"scamp5"``, a profile file or a :class:`Profile`;
    ``edge`` is ``"zero"``, ``"replicate"`` or ``"wrap"``.

    Returns a dict with one array per register the program writes (or per name in
    ``registers``), shaped like the inputs' leading shape: float32 values as read out
    (the profile's readout noise and 8-bit ADC; bit for bit what ``scamp run --out``
    writes for the same seeds), the raw analogue values with ``readout=False``, and bool
    for digital registers and ``FLAG``.
    """
    options = dict(
        noise=noise,
        seed=seed,
        chip_seed=chip_seed,
        edge=edge,
        readout=readout,
        registers=_register_names(registers),
    )
    return _scamp.run(program, None if inputs is None else dict(inputs), options)


SpecLike = Union[str, "os.PathLike[str]", Mapping[str, Any]]


def _plain(value: Any) -> Any:
    """A spec dict's value with numpy arrays and numbers as lists and Python numbers.

    A dict spec goes to the library as JSON, which knows no numpy types: an array of
    weights becomes nested lists, a numpy number a Python one, and anything else is
    left for the spec's own checks.
    """
    if isinstance(value, Mapping):
        return {k: _plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value]
    if isinstance(value, (np.ndarray, np.generic)):
        return value.tolist()
    return value


def _spec_arg(spec: Any) -> Any:
    """``spec`` with numpy arrays in a dict made plain (see :func:`_plain`)."""
    return _plain(spec) if isinstance(spec, Mapping) else spec


@functools.wraps(_scamp.compile)
def compile(spec: SpecLike, **options: Any) -> "Compiled":
    # The signature, defaults and docstring are the native function's (one
    # declaration, checked against the option list by the tests); only numpy arrays
    # in a dict spec are made plain here.
    return _scamp.compile(_spec_arg(spec), **options)


ArrayLike = Union[str, "os.PathLike[str]", np.ndarray, Sequence[Any]]


def _floats(value: ArrayLike) -> Any:
    """A path as it is; anything else as a float64 numpy array."""
    if isinstance(value, (str, os.PathLike)):
        return value
    return np.ascontiguousarray(value, dtype=np.float64)


def choose_layer(
    weights: ArrayLike,
    bias: Optional[ArrayLike] = None,
    *,
    outputs: Sequence[str],
    groups: int = 1,
    inputs: Sequence[str] = ("A",),
    registers: Optional[Sequence[str]] = None,
    name: str = "layer",
    noise: NoiseLike = "scamp5",
    max_depth: int = 8,
) -> dict[str, Any]:
    """Turns a trained convolution layer into a spec, choosing its scale and depth.

    ``weights`` is PyTorch's ``Conv2d.weight`` as a numpy array (or a ``.npy`` file)
    of shape ``[out, in/groups, kh, kw]``, ``bias`` its bias ``[out]``; ``outputs``
    names one register per output channel and ``inputs`` one per input channel.
    The scale is the largest power of two that keeps every output within the
    profile's saturation limit for inputs of +-128 (the pixel minus 128), and the
    depth (up to ``max_depth``) the one with the lowest predicted error: the
    approximation's plus the chip's, under ``noise``.

    Returns a dict: ``spec`` (YAML text for :func:`compile`), ``scale``,
    ``exponent`` (scale = 2**exponent), ``depth``, ``limit``, ``bias`` (times the
    scale: the program cannot add it, the caller does), ``kernels`` (per output:
    ``out``, ``error``, ``approximation_rmse``, ``chip_rmse``, ``peak``) and
    ``tried`` (every depth's predicted summed MSE). Bad arrays or registers raise
    ``ValueError``.
    """
    options = dict(
        outputs=list(outputs),
        groups=groups,
        inputs=list(inputs),
        registers=None if registers is None else list(registers),
        name=name,
        noise=noise,
        max_depth=max_depth,
    )
    return _scamp.choose_layer(
        _floats(weights), None if bias is None else _floats(bias), options
    )


def check(
    program_or_compiled: Union[ProgramLike, "Compiled"],
    *,
    kernel: Optional[SpecLike] = None,
    images: Union[None, str, "os.PathLike[str]", np.ndarray] = None,
    noise: NoiseLike = "scamp5",
    runs: int = 1,
    uncertainty: bool = False,
    seed: int = 1,
    chip_seed: int = 1,
    max_total_rmse: Optional[float] = None,
) -> dict[str, Any]:
    """Proves a program computes its kernels and measures its error, as ``scamp check``.

    The target is a :class:`Compiled` spec, or a program (a :class:`Program`, text or
    path) with ``kernel``, the spec of the kernels it is meant to compute. ``images``
    is a folder of pictures, uint8 pixels (256, 256) or (N, 256, 256), or ``None``
    (the default): the images bundled with the package, the ones ``scamp check``
    measures on. ``runs`` run seeds
    per image (``seed``, ``seed + 1``, ... on the chip ``chip_seed``; the defaults are
    the command line's), and ``uncertainty`` adds the range of the total error over
    the profile's uncertainty ensemble. ``max_total_rmse`` (a :class:`Compiled` target
    only) compiles its spec again at each depth with the same options and checks the
    shortest program whose worst total RMSE meets the budget, as ``scamp check SPEC
    --max-total-rmse``; ``result["budget_met"]`` is False when no depth does (the
    closest program is reported). The depth search sets its own approximation error
    bound, so a spec whose ``max_error`` is missed at ``max_depth`` is compiled with
    ``accept_approximation=True`` first.

    Returns the dict ``scamp check --json`` prints, with the same numbers;
    ``result["verified"]`` is False when the proof fails.
    """
    options = dict(
        kernel=None if kernel is None else _spec_arg(kernel),
        images=images,
        noise=noise,
        runs=runs,
        uncertainty=uncertainty,
        seed=seed,
        chip_seed=chip_seed,
        max_total_rmse=max_total_rmse,
    )
    return _scamp.check(program_or_compiled, options)


def compare(
    program: ProgramLike,
    inputs: Optional[Mapping[str, np.ndarray]] = None,
    *,
    images: Union[None, str, "os.PathLike[str]", np.ndarray] = None,
    noise: NoiseLike = "scamp5",
    seed: int = 1,
    chip_seed: int = 1,
    runs: int = 1,
    tolerance: Optional[float] = None,
    border: int = 0,
    edge: str = "zero",
    readout: bool = True,
    registers: Optional[Sequence[str]] = None,
    uncertainty: bool = False,
) -> dict[str, Any]:
    """Measures how far noisy runs drift from ideal ones, as ``scamp run --compare``.

    ``inputs`` are one (256, 256) plane per register, as for :func:`run` (a uint8 plane
    is the scene); ``images`` (a folder or uint8 (N, 256, 256) pixels) runs the
    comparison on several scenes instead. ``tolerance`` defaults to one 8-bit step of
    the profile's readout range; ``border`` leaves that many PEs on every side out of
    the figures; ``registers`` restricts the comparison (default: every register the
    program writes); ``uncertainty`` compares again under the profile's uncertainty
    ensemble, as ``--uncertainty``.

    Returns the dict ``scamp run --compare --json`` prints (the first run's figures,
    and under ``"compare"`` the RMSE, bias, max and share beyond the tolerance of each
    analogue register, the share of flipped bits of each digital one, and saturation).
    """
    options = dict(
        images=images,
        noise=noise,
        seed=seed,
        chip_seed=chip_seed,
        runs=runs,
        tolerance=tolerance,
        border=border,
        edge=edge,
        readout=readout,
        registers=_register_names(registers),
        uncertainty=uncertainty,
    )
    return _scamp.compare(program, None if inputs is None else dict(inputs), options)
