"""``scamp.run`` against ``scamp run --out``: the same planes, bit for bit, for the same
seeds; batches step the run seed as ``--runs`` does."""

import threading

import numpy as np
import pytest

import scamp

LAYER = "programs/analognet2_layer.scamp"
GAUSS = "programs/gauss3x3.scamp"


def cli_planes(cli, tmp_path, tag, *args):
    """Runs ``scamp run ... --out DIR`` and returns DIR."""
    out = tmp_path / tag
    done = cli.run("run", *args, "--out", out)
    assert done.returncode == 0, done.stderr
    return out


def bits(path):
    return np.load(path).astype(bool)


def test_captured_batch_equals_the_cli_image_by_image(cli, repo, tmp_path):
    names, images = scamp.load_images(repo / "images")
    batch = images[:3]
    out = scamp.run(scamp.load(repo / LAYER), {"PIX": batch}, seed=11, chip_seed=5)
    assert out["A"].shape == (3, 256, 256) and out["A"].dtype == np.float32
    assert out["R5"].dtype == np.bool_
    for i, name in enumerate(names[:3]):
        d = cli_planes(
            cli, tmp_path, name, LAYER, "--image", repo / "images" / f"{name}.png",
            "--seed", 11 + i, "--chip-seed", 5, "--save", "A,B,C,R5,R6,R7",
        )
        for reg in "ABC":
            cli_plane = np.load(d / f"{reg}.npy")
            assert cli_plane.dtype == np.float32
            assert np.array_equal(out[reg][i], cli_plane), (name, reg)
        for reg in ["R5", "R6", "R7"]:
            assert np.array_equal(out[reg][i], bits(d / f"{reg}.npy")), (name, reg)


def test_float_input_equals_cli_set_npy_raw_and_read_out(cli, repo, tmp_path):
    rng = np.random.default_rng(3)
    values = rng.uniform(-100, 100, (256, 256)).astype(np.float32)
    np.save(tmp_path / "a.npy", values)
    prog = scamp.load(repo / GAUSS)
    for raw in [False, True]:
        out = scamp.run(prog, {"A": values}, seed=2, chip_seed=9, readout=not raw)
        flags = ["--raw"] if raw else []
        d = cli_planes(
            cli, tmp_path, f"raw{raw}", GAUSS, "--set", f"A={tmp_path / 'a.npy'}",
            "--seed", 2, "--chip-seed", 9, *flags,
        )
        assert out["A"].shape == (256, 256)
        assert np.array_equal(out["A"], np.load(d / "A.npy")), raw
    # float64 is the same values.
    out64 = scamp.run(prog, {"A": values.astype(np.float64)}, seed=2, chip_seed=9)
    out32 = scamp.run(prog, {"A": values}, seed=2, chip_seed=9)
    assert np.array_equal(out64["A"], out32["A"])


def test_pixels_in_a_register_equal_cli_input(cli, repo, tmp_path):
    img = scamp.load_image(repo / "images" / "coffee.png")
    out = scamp.run(GAUSS, {"A": img}, seed=4, chip_seed=1, edge="replicate")
    d = cli_planes(
        cli, tmp_path, "input", GAUSS, "--image", "images/coffee.png", "--input", "A",
        "--seed", 4, "--chip-seed", 1, "--edge", "replicate",
    )
    assert np.array_equal(out["A"], np.load(d / "A.npy"))


def test_ideal_values_are_exact(repo):
    prog = scamp.parse("get_image(A, B)\n")
    out = scamp.run(prog, {"PIX": np.full((256, 256), 200, np.uint8)}, noise="ideal")
    assert np.all(out["A"] == 72.0)
    # The layer's binary maps are the signs of its ideal responses.
    img = scamp.load_image(repo / "images" / "camera.png")
    out = scamp.run(scamp.load(repo / LAYER), {"PIX": img}, noise="ideal", readout=False)
    for reg, bit in zip("ABC", ["R5", "R6", "R7"]):
        assert np.array_equal(out[bit], out[reg] > 0)


def test_digital_inputs_and_flag(repo):
    prog = scamp.parse("where(A);\nMOV(R6, FLAG);\nall();\n")
    a = np.zeros((256, 256), np.float32)
    a[:, 128:] = 5.0
    r3 = np.zeros((256, 256), bool)
    r3[0, 0] = True
    out = scamp.run(prog, {"A": a, "R3": r3}, noise="ideal", registers=["R6", "R3", "FLAG", "A"])
    assert np.array_equal(out["R6"], a > 0)
    assert np.array_equal(out["R3"], r3)
    assert out["FLAG"].all()
    assert np.array_equal(out["A"], a)


def test_batch_steps_the_run_seed_like_runs(repo):
    names, images = scamp.load_images(repo / "images")
    prog = scamp.load(repo / LAYER)
    batch = np.stack([images[0]] * 3)
    out = scamp.run(prog, {"PIX": batch}, seed=7, chip_seed=2)
    for i in range(3):
        one = scamp.run(prog, {"PIX": images[0]}, seed=7 + i, chip_seed=2)
        assert np.array_equal(out["A"][i], one["A"])
    assert not np.array_equal(out["A"][0], out["A"][1])


def test_two_threads_give_the_sequential_results(repo):
    _, images = scamp.load_images(repo / "images")
    prog = scamp.load(repo / LAYER)
    jobs = [(images[:4], 1), (images[4:], 100)]
    sequential = [scamp.run(prog, {"PIX": b}, seed=s, chip_seed=3) for b, s in jobs]
    results = [None, None]

    def work(k):
        b, s = jobs[k]
        results[k] = scamp.run(prog, {"PIX": b}, seed=s, chip_seed=3)

    threads = [threading.Thread(target=work, args=(k,)) for k in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    for seq, par in zip(sequential, results):
        assert seq.keys() == par.keys()
        for reg in seq:
            assert np.array_equal(seq[reg], par[reg]), reg


def test_noise_profile_objects_and_paths(repo, tmp_path):
    prog = scamp.load(repo / GAUSS)
    a = np.full((256, 256), 10.0, np.float32)
    p = scamp.Profile.builtin("scamp5")
    f = tmp_path / "p.yaml"
    f.write_text(p.to_yaml())
    by_name = scamp.run(prog, {"A": a}, seed=1, chip_seed=1)
    assert np.array_equal(by_name["A"], scamp.run(prog, {"A": a}, noise=p, seed=1, chip_seed=1)["A"])
    assert np.array_equal(by_name["A"], scamp.run(prog, {"A": a}, noise=f, seed=1, chip_seed=1)["A"])
    quiet = p.replace(readout={"enabled": False})
    raw = scamp.run(prog, {"A": a}, noise=quiet, seed=1, chip_seed=1)["A"]
    assert np.array_equal(raw, scamp.run(prog, {"A": a}, seed=1, chip_seed=1, readout=False)["A"])


def test_the_gil_is_released_while_a_batch_runs(repo):
    # While another thread is inside `run`, this thread keeps running Python: with the
    # GIL held throughout, the loop below could not turn until the batch was done.
    _, images = scamp.load_images(repo / "images")
    prog = scamp.load(repo / LAYER)
    worker = threading.Thread(target=scamp.run, args=(prog, {"PIX": images}))
    turns = 0
    worker.start()
    while worker.is_alive():
        turns += 1
        worker.join(timeout=0.001)
    assert turns > 5
