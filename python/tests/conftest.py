"""Shared fixtures: the repository, the ``scamp`` binary the figures are compared with,
and a helper that runs it."""

import json
import os
import subprocess
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]


def _binary() -> Path:
    given = os.environ.get("SCAMP_BIN")
    return Path(given) if given else REPO / "target" / "release" / "scamp"


class Cli:
    """Runs the command-line tool from the repository root."""

    def __init__(self, binary: Path):
        self.binary = binary

    def run(self, *args: str) -> subprocess.CompletedProcess:
        return subprocess.run(
            [str(self.binary), *map(str, args)],
            cwd=REPO,
            capture_output=True,
            text=True,
            check=False,
        )

    def json(self, *args: str) -> dict:
        """The JSON a ``--json`` command prints; fails unless it exits 0."""
        done = self.run(*args, "--json")
        assert done.returncode == 0, done.stderr
        return json.loads(done.stdout)

    def error(self, *args: str) -> str:
        """The one-line error of a command that exits 2, without ``error: ``."""
        done = self.run(*args)
        assert done.returncode == 2, (done.returncode, done.stderr)
        line = done.stderr.strip().splitlines()[-1]
        assert line.startswith("error: "), line
        return line[len("error: "):]


@pytest.fixture(scope="session")
def repo() -> Path:
    return REPO


@pytest.fixture(scope="session")
def cli() -> Cli:
    binary = _binary()
    if not binary.exists():
        pytest.fail(f"{binary} is missing: build it with `cargo build --release` or set SCAMP_BIN")
    return Cli(binary)
