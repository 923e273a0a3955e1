"""Bad input raises a Python exception with a clear message; the interpreter lives on."""

import numpy as np
import pytest

import scamp

GAUSS = "programs/gauss3x3.scamp"
PLANE = np.zeros((256, 256), np.float32)


@pytest.fixture(scope="module")
def prog(repo):
    return scamp.load(repo / GAUSS)


@pytest.mark.parametrize(
    "value, error, message",
    [
        (np.zeros((255, 256), np.float32), ValueError, r"expected shape \(256, 256\) or \(N, 256, 256\), got \(255, 256\)"),
        (np.zeros(65536, np.float32), ValueError, r"got \(65536,\)"),
        (np.zeros((2, 2, 256, 256), np.float32), ValueError, r"got \(2, 2, 256, 256\)"),
        (np.zeros((0, 256, 256), np.float32), ValueError, "empty batch"),
        (np.zeros((256, 256), np.int16), TypeError, "got dtype int16"),
        (np.zeros((256, 256), np.complex64), TypeError, "float32/float64"),
        ([[0.0] * 256] * 256, TypeError, "expected a numpy array, got list"),
        (np.zeros((256, 256), bool), TypeError, "got dtype"),
    ],
)
def test_wrong_shape_rank_dtype(prog, value, error, message):
    with pytest.raises(error, match=message):
        scamp.run(prog, {"A": value})


def test_nan_inf_and_range_name_the_place(prog):
    for bad, what in [(np.nan, "NaN"), (np.inf, "inf"), (-np.inf, "-inf")]:
        a = PLANE.copy()
        a[10, 5] = bad
        with pytest.raises(ValueError, match=rf'^inputs\["A"\]: value {what} at \(10, 5\) is not finite$'):
            scamp.run(prog, {"A": a})
    b = np.zeros((3, 256, 256))
    b[2, 0, 7] = 1500.0
    with pytest.raises(ValueError, match=r'^inputs\["A"\]\[2\]: value 1500 at \(0, 7\) is outside the register range -1024..1024$'):
        scamp.run(prog, {"A": b})


def test_unknown_registers_and_profiles(prog):
    with pytest.raises(ValueError, match=r"inputs: unknown register `Q` \(expected A..F"):
        scamp.run(prog, {"Q": PLANE})
    with pytest.raises(ValueError, match="registers: unknown register `G`"):
        scamp.run(prog, {"A": PLANE}, registers=["A", "G"])
    with pytest.raises(scamp.ProfileError, match="no such profile"):
        scamp.run(prog, {"A": PLANE}, noise="scamp6")
    with pytest.raises(ValueError, match="unknown edge mode `torus`"):
        scamp.run(prog, {"A": PLANE}, edge="torus")


def test_digital_and_pixel_inputs_are_checked(prog):
    with pytest.raises(ValueError, match=r'^inputs\["R3"\]: a digital register takes 0 or 1, got 2 at \(0, 0\)$'):
        scamp.run(prog, {"R3": np.full((256, 256), 2, np.uint8)})
    with pytest.raises(TypeError, match="a digital register takes a bool"):
        scamp.run(prog, {"R3": PLANE})
    with pytest.raises(TypeError, match="PIX takes uint8 pixels"):
        scamp.run(prog, {"PIX": PLANE})
    pix = np.zeros((256, 256), np.uint8)
    with pytest.raises(ValueError, match="both give uint8 pixels"):
        scamp.run(prog, {"A": pix, "PIX": pix})
    with pytest.raises(ValueError, match="holds 2 images and `B` 3"):
        scamp.run(prog, {"A": np.zeros((2, 256, 256), np.float32), "B": np.zeros((3, 256, 256), np.float32)})


def test_a_batch_too_large_is_refused_before_allocating(prog):
    # A broadcast view: 200,000 images that take no memory until something copies them.
    huge = np.broadcast_to(PLANE, (200_000, 256, 256))
    with pytest.raises(ValueError, match=r"a batch of 200000 images with \d+ output registers would need [\d.]+ GiB of memory, more than the [\d.]+ GiB available"):
        scamp.run(prog, {"A": huge})


def test_bad_programs_raise_program_error(repo):
    with pytest.raises(scamp.ProgramError, match=r"^<program>:1:1: "):
        scamp.run("nonsense(A)\n", {"A": PLANE})
    with pytest.raises(OSError):
        scamp.run(repo / "programs" / "missing.scamp", {"A": PLANE})
