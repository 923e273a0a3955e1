"""docs/python.md: its code runs as written, and the figures it quotes are what the
code computes."""

import contextlib
import io
import re

import pytest


def blocks(text):
    return re.findall(r"```python\n(.*?)```", text, re.S)


def quoted_flip_rates(text):
    """The rows of the table under the `flip rates` marker: map -> (percent, image)."""
    table = text.split("<!-- flip rates: asserted by python/tests/test_docs.py -->", 1)[1]
    rows = re.findall(r"^\| (R\d+) \| ([\d.]+) % \| (\w+) \|$", table, re.M)
    return {m: (pct, img) for m, pct, img in rows}


def test_worked_example_runs_and_its_figures_hold(repo, tmp_path, monkeypatch):
    text = (repo / "docs" / "python.md").read_text()
    # Run from a scratch folder that sees the repository's images and programs, so that
    # the figure the example saves lands there.
    for name in ["images", "programs"]:
        (tmp_path / name).symlink_to(repo / name)
    monkeypatch.chdir(tmp_path)
    namespace = {}
    printed = io.StringIO()
    with contextlib.redirect_stdout(printed):
        for code in blocks(text):
            exec(compile(code, "docs/python.md", "exec"), namespace)
    quoted = quoted_flip_rates(text)
    assert set(quoted) == {"R5", "R6", "R7"}
    lines = printed.getvalue().splitlines()
    for m, (pct, img) in quoted.items():
        assert f"{100 * namespace['flip_rates'][m]:.2f}" == pct, m
        assert f"{m}: {pct} % flipped (most on {img})" in lines
    table = text.split("<!-- compared flip rates: asserted by python/tests/test_docs.py -->", 1)[1]
    rows = dict(re.findall(r"^\| (R\d+) \| ([\d.]+) % \|$", table, re.M))
    assert set(rows) == {"R5", "R6", "R7"}
    for m, pct in rows.items():
        assert f"{100 * namespace['compared'][m]:.2f}" == pct, m
    # The edited profile changed only what it names.
    quiet = namespace["quiet"].to_dict()
    assert quiet["readout"]["noise"] == 0.0 and quiet["name"] == "quiet-readout"
    try:
        import matplotlib  # noqa: F401
    except ImportError:
        return
    assert (tmp_path / "analognet2_decisions.png").stat().st_size > 10_000
