"""``scamp.compile``, ``scamp.check`` and ``scamp.compare`` give the dicts the command
line's ``--json`` prints: the same program, figures to 1e-9."""

import math

import numpy as np
import pytest

import scamp

SPEC = "programs/gauss3x3.yaml"
PROGRAM = "programs/gauss3x3.scamp"
# Wall-clock figures of a search differ from run to run; everything else must match.
TIMINGS = {"seconds", "seconds_to_best"}


def assert_close(a, b, path="", skip=frozenset()):
    if isinstance(a, dict):
        assert isinstance(b, dict) and a.keys() == b.keys(), (path, sorted(a), sorted(b))
        for k in a:
            if k not in skip:
                assert_close(a[k], b[k], f"{path}.{k}", skip)
    elif isinstance(a, list):
        assert isinstance(b, list) and len(a) == len(b), path
        for i, (x, y) in enumerate(zip(a, b)):
            assert_close(x, y, f"{path}[{i}]", skip)
    elif isinstance(a, float) or isinstance(b, float):
        assert math.isclose(a, b, rel_tol=1e-9, abs_tol=1e-9), (path, a, b)
    else:
        assert a == b, (path, a, b)


@pytest.fixture(scope="module")
def compiled(repo):
    return scamp.compile(repo / SPEC, work=2000)


def test_compile_gives_the_cli_program_and_report(cli, compiled):
    expected = cli.json("compile", SPEC, "--work", 2000)
    assert compiled.program == expected["program"]
    assert_close(compiled.report, expected, skip=TIMINGS)
    assert compiled.report["search"]["work"] == 2000


def test_compile_takes_yaml_text_and_dicts(repo, compiled):
    text = (repo / SPEC).read_text()
    assert scamp.compile(text, work=2000).program == compiled.program
    spec = {
        "name": "gauss3x3",
        "input": "A",
        "registers": ["A", "B", "C", "D", "E", "F"],
        "kernels": [{"out": "A", "scale": "1/16", "weights": [[1, 2, 1], [2, 4, 2], [1, 2, 1]]}],
        "approximation": {"max_depth": 4, "max_error": 0.0},
        "search": {"workers": 2, "ops": "all", "work": 2000},
    }
    assert scamp.compile(spec).program == compiled.program


def test_check_of_a_compiled_spec_equals_the_cli(cli, compiled):
    expected = cli.json("check", SPEC, "--work", 2000)
    assert_close(scamp.check(compiled), expected)


def test_check_of_a_program_equals_the_cli(cli, repo):
    prog = scamp.load(repo / PROGRAM)
    for args, kw in [
        ([], {}),
        (["--noise", "ideal"], {"noise": "ideal"}),
        (["--runs", 3, "--seed", 5, "--chip-seed", 2], {"runs": 3, "seed": 5, "chip_seed": 2}),
    ]:
        expected = cli.json("check", PROGRAM, "--kernel", SPEC, *args)
        assert_close(scamp.check(prog, kernel=repo / SPEC, **kw), expected)


def test_check_takes_images_as_pixels(cli, repo):
    names, images = scamp.load_images(repo / "images")
    expected = cli.json("check", PROGRAM, "--kernel", SPEC)
    got = scamp.check(PROGRAM, kernel=SPEC, images=images)
    assert_close(got, expected)
    few = scamp.check(PROGRAM, kernel=SPEC, images=images[:2])
    assert few["images"] == 2


def test_check_with_uncertainty_equals_the_cli(cli, repo):
    expected = cli.json("check", PROGRAM, "--kernel", SPEC, "--uncertainty")
    assert_close(scamp.check(PROGRAM, kernel=SPEC, uncertainty=True), expected)


def test_a_wrong_program_fails_its_proof(cli):
    expected = cli.run("check", "programs/gauss3x3_wrong.scamp", "--kernel", SPEC, "--json")
    assert expected.returncode == 1
    got = scamp.check("programs/gauss3x3_wrong.scamp", kernel=SPEC)
    assert got["verified"] is False
    import json

    assert_close(got, json.loads(expected.stdout))


def test_spec_errors_carry_the_cli_message(cli, tmp_path):
    bad = tmp_path / "bad.yaml"
    bad.write_text("name: x\ninput: A\nkernels:\n  - out: A\n    weights: [[1, 2], [3]]\n    scale: 1\n")
    with pytest.raises(scamp.SpecError) as info:
        scamp.compile(bad)
    assert isinstance(info.value, ValueError)
    assert str(info.value) == cli.error("compile", bad)
    assert info.value.line > 0 and info.value.column > 0
    with pytest.raises(scamp.SpecError, match=r"^<spec>:\d+:\d+: "):
        scamp.compile("name: x\nkernels: 3\n")


def test_bad_check_and_compile_arguments():
    with pytest.raises(scamp.Error):
        scamp.check(PROGRAM)
    for keyword, value in [("objective", "speed"), ("time_limit", -1)]:
        with pytest.raises(scamp.OptionError) as e:
            scamp.compile(SPEC, **{keyword: value})
        assert e.value.option == keyword
    with pytest.raises(scamp.DatasetError):
        scamp.check(PROGRAM, kernel=SPEC, images="programs")
    with pytest.raises(TypeError, match="uint8"):
        scamp.check(PROGRAM, kernel=SPEC, images=np.zeros((2, 256, 256), np.float32))
    with pytest.raises(scamp.ProfileError):
        scamp.check(PROGRAM, kernel=SPEC, noise="nosuch")


def test_compare_equals_run_compare_json(cli, repo):
    layer = "programs/analognet2_layer.scamp"
    expected = cli.json("run", layer, "--compare", "--images", "images", "--seed", 3, "--chip-seed", 2)
    got = scamp.compare(layer, images=repo / "images", seed=3, chip_seed=2)
    assert_close(got, expected)
    # One scene given as pixels, with a float preload, several runs and a border.
    img = scamp.load_image(repo / "images" / "coffee.png")
    expected = cli.json(
        "run", PROGRAM, "--compare", "--image", "images/coffee.png", "--input", "A",
        "--runs", 3, "--border", 4, "--tolerance", 2,
    )
    got = scamp.compare(PROGRAM, {"A": img}, runs=3, border=4, tolerance=2.0)
    # The scene's name is not part of the figures; the command line names it by file.
    assert_close(got, expected)


def test_compare_refuses_batches_and_two_scene_sources(repo):
    pix = np.zeros((2, 256, 256), np.uint8)
    with pytest.raises(ValueError, match="give several pictures as images="):
        scamp.compare(PROGRAM, {"A": pix})
    with pytest.raises(ValueError, match="both give the pictures"):
        scamp.compare(PROGRAM, {"A": pix[0]}, images=pix)


THREE = """name: three-channel
inputs: [A, B, C]
registers: [A, B, C, D, E, F]
search: { work: 400, workers: 1 }
kernels:
  - out: D
    scale: 1/64
    weights:
      - [[1, 2, 1], [2, 4, 2], [1, 2, 1]]
      - [[1, 2, 1], [2, 4, 2], [1, 2, 1]]
      - [[0, 0, 0], [0, 16, 0], [0, 0, 0]]
  - out: E
    scale: 1/32
    weights:
      - [[-1, 0, 1], [-2, 0, 2], [-1, 0, 1]]
      - [[-1, 0, 1], [-2, 0, 2], [-1, 0, 1]]
      - [[0, 0, 0], [0, 8, 0], [0, 0, 0]]
"""


def test_check_of_a_multi_input_spec_equals_the_cli(cli, tmp_path):
    spec = tmp_path / "three.yaml"
    spec.write_text(THREE)
    compiled = scamp.compile(spec, work=400)
    for args, kw in [([], {}), (["--noise", "ideal"], {"noise": "ideal"})]:
        expected = cli.json("check", spec, "--work", 400, *args)
        assert_close(scamp.check(compiled, **kw), expected)
    # Frame j puts image (j + z) mod n on input z; under ideal every figure is 0.
    ideal = scamp.check(compiled, noise="ideal")
    assert ideal["verified"] and ideal["images"] == 8
    assert [k["analogue"]["rmse"] for k in ideal["kernels"]] == [0.0, 0.0]
