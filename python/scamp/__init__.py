"""Python bindings of ``scamp``, the SCAMP-5 simulator, code generator and checker.

Run programs on numpy arrays, compile filter specs and check programs with the same
figures as the ``scamp`` command line (its ``--json`` output, as dicts)::

    import numpy as np
    import scamp

    prog = scamp.parse("get_image(A, B)\\n")  # full-range capture: A = p - 128
    out = scamp.run(prog, {"PIX": np.full((256, 256), 200, np.uint8)}, noise="ideal")
    out["A"]          # float32 (256, 256): 72.0 everywhere

Every function raises a ``ValueError`` (or ``TypeError`` for a wrong dtype) with a
clear message on bad input; errors in a source text (``ProgramError``,
``SpecError``, ``ProfileError``) carry ``.file``, ``.line`` and ``.column``. See
docs/python.md in the repository for a worked example.
"""

from __future__ import annotations

import os
from typing import Mapping, Optional, Sequence, Union

import numpy as np

from . import _scamp
from ._scamp import (
    Profile,
    ProfileError,
    Program,
    ProgramError,
    SourceError,
    SpecError,
    load,
    load_image,
    load_images,
    parse,
)

__all__ = [
    "Profile",
    "ProfileError",
    "Program",
    "ProgramError",
    "SourceError",
    "SpecError",
    "load",
    "load_image",
    "load_images",
    "parse",
    "run",
]

ProgramLike = Union[Program, str, "os.PathLike[str]"]
NoiseLike = Union[str, "os.PathLike[str]", Profile]


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
        registers=None if registers is None else list(registers),
    )
    return _scamp.run(program, None if inputs is None else dict(inputs), options)
