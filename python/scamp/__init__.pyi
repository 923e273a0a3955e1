"""Type stub of the ``scamp`` package (the native module ``scamp._scamp`` and its
Python wrappers)."""

import os
from typing import Any, Callable, Mapping, Optional, Sequence, Union

from typing_extensions import final

import numpy as np
import numpy.typing as npt

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

class Error(ValueError):
    """Every error of the package on bad input."""

class SourceError(Error):
    """A source text (program, spec or noise profile) with an error at a position."""

    file: str
    line: int
    column: int

class ProgramError(SourceError):
    """A program that does not parse, or stops while it runs."""

class SpecError(SourceError):
    """A filter spec with an error."""

class ProfileError(SourceError):
    """A noise profile that cannot be read."""

class OptionError(Error):
    """A keyword argument outside the values it takes."""

    option: str

class DatasetError(Error):
    """A dataset or a set of images that cannot be used."""

class CompileError(Error):
    """A valid spec for which the generator produced no program."""

@final
class Program:
    """A parsed SCAMP-5 program."""

    @property
    def text(self) -> str: ...
    @property
    def file(self) -> str: ...
    @property
    def instructions(self) -> int: ...
    @property
    def cycles(self) -> int: ...
    @property
    def written_registers(self) -> list[str]: ...
    @property
    def written_digital_registers(self) -> list[str]: ...

@final
class Profile:
    """A noise profile: the parameters of the analogue error model."""

    @staticmethod
    def load(name_or_path: Union[str, os.PathLike[str]]) -> Profile: ...
    @staticmethod
    def builtin(name: str) -> Profile: ...
    @staticmethod
    def from_yaml(text: str, name: str = "<profile>") -> Profile: ...
    def to_yaml(self) -> str: ...
    def to_dict(self) -> dict[str, Any]: ...
    def replace(self, **changes: Any) -> Profile: ...
    @property
    def name(self) -> str: ...
    @property
    def description(self) -> str: ...
    @property
    def is_exact(self) -> bool: ...

ProgramLike = Union[Program, str, os.PathLike[str]]
NoiseLike = Union[str, os.PathLike[str], Profile]

def parse(text: str, *, name: Optional[str] = None) -> Program: ...
def load(path: Union[str, os.PathLike[str]]) -> Program: ...
def load_image(path: Union[str, os.PathLike[str]]) -> npt.NDArray[np.uint8]: ...
def load_images(
    folder: Union[None, str, os.PathLike[str]] = None,
) -> tuple[list[str], npt.NDArray[np.uint8]]: ...
def merge_shards(files: Sequence[Union[str, os.PathLike[str]]]) -> dict[str, Any]: ...
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
) -> dict[str, np.ndarray]: ...

SpecLike = Union[str, os.PathLike[str], Mapping[str, Any]]

@final
class Compiled:
    """A compiled spec: the program the generator found and its report."""

    @property
    def program(self) -> str: ...
    @property
    def report(self) -> dict[str, Any]: ...
    @property
    def file(self) -> str: ...

def compile(
    spec: SpecLike,
    *,
    time_limit: Optional[float] = None,
    workers: Optional[int] = None,
    ops: Optional[str] = None,
    registers: Optional[Sequence[str]] = None,
    seed: Optional[int] = None,
    work: Optional[int] = None,
    node_limit: Optional[int] = None,
    memory_limit: Optional[int] = None,
    objective: Optional[str] = None,
    slack: Optional[float] = None,
    noise: Optional[NoiseLike] = None,
    fit: Optional[bool] = None,
    accept_approximation: bool = False,
) -> Compiled: ...
def choose_layer(
    weights: Union[str, os.PathLike[str], npt.ArrayLike],
    bias: Union[None, str, os.PathLike[str], npt.ArrayLike] = None,
    *,
    outputs: Sequence[str],
    groups: int = 1,
    inputs: Sequence[str] = ("A",),
    registers: Optional[Sequence[str]] = None,
    name: str = "layer",
    noise: NoiseLike = "scamp5",
    max_depth: int = 8,
) -> dict[str, Any]: ...
def check(
    program_or_compiled: Union[ProgramLike, Compiled],
    *,
    kernel: Optional[SpecLike] = None,
    images: Union[None, str, os.PathLike[str], np.ndarray] = None,
    noise: NoiseLike = "scamp5",
    runs: int = 1,
    uncertainty: bool = False,
    seed: int = 1,
    chip_seed: int = 1,
    max_total_rmse: Optional[float] = None,
) -> dict[str, Any]: ...
def compare(
    program: ProgramLike,
    inputs: Optional[Mapping[str, np.ndarray]] = None,
    *,
    images: Union[None, str, os.PathLike[str], np.ndarray] = None,
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
) -> dict[str, Any]: ...

class Network:
    """A network: on-sensor layers, a readout and a head (docs/eval.md)."""

    path: Optional[str]
    def __init__(
        self,
        layers: Sequence[Mapping[str, Any]],
        readout: Optional[Mapping[str, Any]] = ...,
        head: Optional[Mapping[str, Any]] = ...,
        *,
        input: Optional[Mapping[str, Any]] = ...,
        name: str = ...,
        folder: Optional[Union[str, os.PathLike[str]]] = ...,
    ) -> None: ...
    @classmethod
    def load(cls, path: Optional[Union[str, os.PathLike[str]]] = ...) -> Network: ...
    @classmethod
    def from_onnx(
        cls,
        path: Union[str, os.PathLike[str]],
        readout: Optional[Mapping[str, Any]] = ...,
        head: Optional[Mapping[str, Any]] = ...,
        *,
        threshold: Union[float, Sequence[float]] = ...,
        depth: int = ...,
        name: Optional[str] = ...,
        folder: Optional[Union[str, os.PathLike[str]]] = ...,
    ) -> Network: ...
    @property
    def name(self) -> str: ...
    def compile(
        self, rows: int = ..., cols: int = ..., *, depth: Optional[int] = ..., work: Optional[int] = ...
    ) -> dict[str, Any]: ...
    def evaluate(
        self,
        dataset: Optional[Union[str, os.PathLike[str]]] = ...,
        *,
        noise: Any = ...,
        chip_seeds: int = ...,
        seed: int = ...,
        train_noise: Any = ...,
        train_images: Optional[int] = ...,
        test_images: Optional[int] = ...,
        depths: Optional[Sequence[int]] = ...,
        work: Optional[int] = ...,
        shard: Optional[str] = ...,
        uncertainty: bool = ...,
        progress: Optional[Callable[[int, int], Any]] = ...,
    ) -> dict[str, Any]: ...
    def features(
        self,
        images: np.ndarray,
        *,
        noise: Any = ...,
        chip_seed: int = ...,
        seed: int = ...,
        depth: Optional[int] = ...,
        work: Optional[int] = ...,
        maps: bool = ...,
    ) -> Any: ...
