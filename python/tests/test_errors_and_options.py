"""The exception classes (one per kind, all under ``scamp.Error``) and the compile
options (the native signature against the library's one declaration)."""

import ast
import inspect
import json
from pathlib import Path

import numpy as np
import pytest

import scamp
from scamp import _scamp

BLUR = "name: blur\ninput: A\nregisters: [A, B, C, D]\nkernels:\n  - out: A\n    scale: 1/4\n    weights: [[1, 2, 1]]\n"


def test_the_classes_form_one_hierarchy_under_error():
    assert issubclass(scamp.Error, ValueError)
    for cls in (scamp.SourceError, scamp.OptionError, scamp.DatasetError, scamp.CompileError):
        assert cls.__bases__ == (scamp.Error,), cls
    for cls in (scamp.ProgramError, scamp.SpecError, scamp.ProfileError):
        assert cls.__bases__ == (scamp.SourceError,), cls


def test_compile_keywords_are_the_declared_options_in_order():
    params = list(inspect.signature(scamp.compile).parameters.values())
    assert params[0].name == "spec"
    assert all(p.kind is inspect.Parameter.KEYWORD_ONLY for p in params[1:])
    assert [p.name for p in params[1:]] == list(_scamp.COMPILE_OPTIONS)
    assert len(_scamp.COMPILE_OPTIONS) == 13


def test_the_stub_declares_the_same_compile_keywords():
    stub = Path(scamp.__file__).with_name("__init__.pyi")
    tree = ast.parse(stub.read_text())
    (compile_def,) = [n for n in tree.body if isinstance(n, ast.FunctionDef) and n.name == "compile"]
    assert [a.arg for a in compile_def.args.kwonlyargs] == list(_scamp.COMPILE_OPTIONS)


def test_a_bad_program_is_a_program_error():
    with pytest.raises(scamp.ProgramError) as e:
        scamp.parse("nonsense(A)\n")
    assert (e.value.line, e.value.column) == (1, 1)
    assert isinstance(e.value, scamp.SourceError)


def test_a_bad_spec_is_a_spec_error():
    with pytest.raises(scamp.SpecError) as e:
        scamp.compile("kernels: 3\n")
    assert e.value.file == "<spec>"


def test_a_missing_profile_is_a_profile_error():
    with pytest.raises(scamp.ProfileError):
        scamp.Profile.load("no-such-profile.yaml")


@pytest.mark.parametrize(
    "options, option",
    [
        ({"workers": 0}, "workers"),
        ({"work": 0}, "work"),
        ({"node_limit": 0}, "node_limit"),
        ({"memory_limit": 0}, "memory_limit"),
        ({"time_limit": -1.0}, "time_limit"),
        ({"slack": -1.0}, "slack"),
        ({"ops": "fancy"}, "ops"),
        ({"registers": ["A", "A"]}, "registers"),
        ({"registers": ["B", "C"]}, "registers"),
        ({"objective": "speed"}, "objective"),
        ({"noise": "ideal"}, "noise"),
    ],
)
def test_an_option_out_of_range_is_an_option_error_naming_it(options, option):
    with pytest.raises(scamp.OptionError) as e:
        scamp.compile(BLUR, **{"work": 100, "workers": 1, **options})
    assert e.value.option == option


def test_runs_out_of_range_is_an_option_error(repo):
    with pytest.raises(scamp.OptionError) as e:
        scamp.check(repo / "programs/gauss3x3.scamp", kernel=repo / "programs/gauss3x3.yaml", runs=0)
    assert e.value.option == "runs"


def test_an_empty_image_folder_is_a_dataset_error(tmp_path):
    with pytest.raises(scamp.DatasetError):
        scamp.load_images(tmp_path)


def test_a_spec_without_a_program_is_a_compile_error():
    # One register cannot hold two taps whose weights do not sum to 0.
    single = "input: A\nregisters: [A]\nkernels:\n  - out: A\n    scale: 1/2\n    weights: [[1, 1]]\n"
    with pytest.raises(scamp.CompileError, match="no program can exist"):
        scamp.compile(single, work=100, workers=1)


def test_accept_approximation_and_the_search_keywords_reach_the_generator():
    thirds = "input: A\nregisters: [A, B, C, D]\nkernels:\n  - out: A\n    scale: 1/3\n    weights: [[1, 1, 1]]\napproximation: { max_depth: 2 }\n"
    with pytest.raises(scamp.CompileError, match="max_error"):
        scamp.compile(thirds, work=200, workers=1)
    c = scamp.compile(thirds, work=200, workers=1, accept_approximation=True, ops="basic",
                      registers=["A", "B", "C"], seed=3, node_limit=10_000, memory_limit=512,
                      slack=0.5, fit=False, time_limit=60.0)
    report = c.report
    assert (report["search"]["work"], report["search"]["workers"]) == (200, 1)
    assert report["kernels"][0]["depth"] == 2
    assert report["noise"] == "scamp5"
    written = set(scamp.parse(c.program).written_registers)
    assert written <= {"A", "B", "C"}, c.program
    basic = {"mov", "movx", "add", "sub", "neg", "divq", "res"}
    used = {line.split("(")[0].strip() for line in c.program.splitlines() if "(" in line and not line.startswith("//")}
    assert used <= basic, c.program


def test_check_without_images_measures_the_bundled_images(repo):
    target = repo / "programs/gauss3x3.scamp"
    kernel = repo / "programs/gauss3x3.yaml"
    bundled = scamp.check(target, kernel=kernel, noise="ideal")
    folder = scamp.check(target, kernel=kernel, noise="ideal", images=repo / "images")
    assert bundled == folder
    assert bundled["images"] == 8


def _signature_defaults(function):
    return {
        p.name: p.default
        for p in inspect.signature(function).parameters.values()
        if p.default is not inspect.Parameter.empty
    }


@pytest.mark.parametrize(
    "declared, function, stub_path",
    [
        (_scamp.CHECK_OPTIONS, scamp.check, ("check",)),
        (_scamp.EVAL_OPTIONS, scamp.Network.evaluate, ("Network", "evaluate")),
    ],
)
def test_check_and_eval_keywords_are_the_declared_options_with_their_defaults(
    declared, function, stub_path
):
    defaults = _signature_defaults(function)
    keywords = [(name, default) for name, where, default in declared if where == "keyword"]
    for name, default in keywords:
        assert name in defaults, name
        assert repr(defaults[name]) == default, (name, defaults[name], default)
    # A keyword the function has beyond the declared ones is Python's own (the target,
    # a progress callback), never a command-line option left undeclared.
    flags = {name for name, _, _ in declared}
    assert set(defaults) & flags == {name for name, _ in keywords}
    for name, where, _ in declared:
        if where.startswith("via "):
            via = getattr(scamp, where[len("via "):])
            assert via is scamp.merge_shards or name in inspect.signature(via).parameters, name
    stub = ast.parse(Path(scamp.__file__).with_name("__init__.pyi").read_text())
    body = stub.body
    for part in stub_path:
        (node,) = [n for n in body if isinstance(n, (ast.FunctionDef, ast.ClassDef)) and n.name == part]
        body = getattr(node, "body", [])
    stub_args = {a.arg for a in node.args.args + node.args.kwonlyargs}
    assert {name for name, _ in keywords} <= stub_args


def test_uncertainty_without_a_described_profile_is_an_option_error():
    with pytest.raises(scamp.OptionError) as e:
        scamp.Network.load().evaluate(noise="ideal", uncertainty=True)
    assert e.value.option == "uncertainty"


def test_merge_shards_of_no_file_is_an_error():
    with pytest.raises(scamp.Error):
        scamp.merge_shards([])


# A 3x3 box (1/9) approximated at depth 3 at most: 1/9 rounds to 0 up to d = 2 and to
# 1/8 at d = 3, so under `ideal` no depth meets a total-RMSE budget of 3.
BOX3 = (
    "name: box3\ninput: A\nregisters: [A, B, C, D, E, F]\nkernels:\n  - out: A\n"
    "    scale: 1/9\n    weights: [[1, 1, 1], [1, 1, 1], [1, 1, 1]]\n"
    "approximation: { max_depth: 3, max_error: 0.0 }\n"
)


def test_a_total_rmse_budget_the_program_misses_fails_in_python_as_in_the_cli(cli, tmp_path):
    spec = tmp_path / "box3.yaml"
    spec.write_text(BOX3)
    done = cli.run(
        "check", spec, "--noise", "ideal", "--max-total-rmse", 3, "--time-limit", 5,
        "--workers", 1, "--json",
    )
    assert done.returncode == 1, done.stderr
    expected = json.loads(done.stdout)
    # The depth search approximates at every depth itself; the spec's own max_error
    # (0) is missed at max_depth, so compiling it needs accept_approximation.
    compiled = scamp.compile(spec, time_limit=5, workers=1, accept_approximation=True)
    got = scamp.check(compiled, noise="ideal", max_total_rmse=3)
    assert expected["budget_met"] is False and got["budget_met"] is False
    assert [r["depth"] for r in got["budget"]] == [r["depth"] for r in expected["budget"]] == [0, 3]
    assert [r["meets"] for r in got["budget"]] == [False, False]
    # The closest program is the 1/8 box of depth 3, in both.
    assert got["kernels"][0]["depth"] == expected["kernels"][0]["depth"] == 3
    assert got["budget"][1]["total_rmse"] == expected["budget"][1]["total_rmse"] > 3
    # A budget the 1/8 box meets passes.
    assert scamp.check(compiled, noise="ideal", max_total_rmse=100)["budget_met"] is True


@pytest.mark.parametrize("bad", [0, -1.0, float("nan"), float("inf")])
def test_a_total_rmse_budget_out_of_range_is_an_option_error(bad):
    compiled = scamp.compile(BLUR, work=2000, workers=1)
    with pytest.raises(scamp.OptionError) as e:
        scamp.check(compiled, noise="ideal", max_total_rmse=bad)
    assert e.value.option == "max_total_rmse"


def test_a_total_rmse_budget_needs_a_compiled_spec():
    with pytest.raises(scamp.Error, match="needs a compiled spec"):
        scamp.check("mov(A, A);", kernel=BLUR, max_total_rmse=3)
