"""Ctrl-C stops long calls within a second, and arguments out of range say their range."""

import math
import signal
import subprocess
import sys
import textwrap
import time

import numpy as np
import pytest

import scamp

GAUSS = "programs/gauss3x3.scamp"
PLANE = np.zeros((256, 256), np.float32)

# Each snippet runs long (tens of seconds) unless interrupted; it prints READY first.
LONG_CALLS = {
    "compile": "scamp.compile(open('programs/gauss5x5.yaml').read().replace(', work: 10000', ''), time_limit=60)",
    "check": "scamp.check('programs/gauss3x3.scamp', kernel='programs/gauss3x3.yaml', runs=100000)",
    "batch": "scamp.run('programs/gauss3x3.scamp', {'A': np.zeros((2000, 256, 256), np.float32)})",
    "network": "scamp.Network.load('programs/analognet2_net.yaml').features(np.zeros((200000, 28, 28), np.uint8), noise='scamp5')",
}


@pytest.mark.parametrize("call", sorted(LONG_CALLS))
def test_ctrl_c_stops_a_long_call_within_a_second(repo, call):
    code = textwrap.dedent(
        f"""
        import sys, time
        import numpy as np
        import scamp
        print("READY", flush=True)
        try:
            {LONG_CALLS[call]}
        except KeyboardInterrupt:
            print("INTERRUPTED", time.monotonic(), flush=True)
            sys.exit(0)
        print("FINISHED", flush=True)
        """
    )
    p = subprocess.Popen([sys.executable, "-c", code], cwd=repo, stdout=subprocess.PIPE, text=True)
    assert p.stdout.readline().strip() == "READY"
    time.sleep(2.0)
    sent = time.monotonic()
    p.send_signal(signal.SIGINT)
    try:
        out, _ = p.communicate(timeout=30)
    except subprocess.TimeoutExpired:
        p.kill()
        raise
    assert out.startswith("INTERRUPTED"), out
    raised = float(out.split()[1])
    assert raised - sent < 1.0, f"KeyboardInterrupt {raised - sent:.2f} s after SIGINT"


def test_calls_after_an_interrupt_run_in_full(repo):
    # The cancellation is withdrawn once the interrupted call is over.
    prog = scamp.load(repo / GAUSS)
    a = scamp.run(prog, {"A": np.ones((3, 256, 256), np.float32)}, noise="ideal")
    assert a["A"].shape == (3, 256, 256)


@pytest.mark.parametrize("name", ["seed", "chip_seed"])
def test_seeds_outside_their_range_say_it(repo, name):
    prog = scamp.load(repo / GAUSS)
    with pytest.raises(ValueError, match=rf"^{name}: -1 is outside 0\.\.2\*\*64-1$"):
        scamp.run(prog, {"A": PLANE}, **{name: -1})
    with pytest.raises(ValueError, match=rf"^{name}: 18446744073709551616 is outside"):
        scamp.run(prog, {"A": PLANE}, **{name: 2**64})
    with pytest.raises(TypeError, match=rf"^{name}: expected an integer in 0\.\.2\*\*64-1, got str$"):
        scamp.run(prog, {"A": PLANE}, **{name: "1"})
    assert scamp.run(prog, {"A": PLANE}, noise="ideal", **{name: 2**64 - 1})["A"].shape == (256, 256)


def test_compare_refuses_a_border_without_interior(repo):
    prog = scamp.load(repo / GAUSS)
    with pytest.raises(ValueError, match=r"^border: 128 is outside 0\.\.127"):
        scamp.compare(prog, {"A": PLANE}, border=128)
    assert scamp.compare(prog, {"A": PLANE}, border=127)["registers"]


@pytest.mark.parametrize("bad, shown", [(math.nan, "NaN"), (math.inf, "inf"), (-math.inf, "-inf")])
def test_profile_replace_names_a_non_finite_value(bad, shown):
    p = scamp.Profile.load("scamp5")
    with pytest.raises(ValueError, match=rf"^Profile.replace: readout\.noise: {shown} is not a finite number$"):
        p.replace(readout={"noise": bad})


def test_a_huge_weight_in_a_spec_dict_says_its_range():
    spec = {"name": "x", "input": "A", "registers": ["A", "B"], "kernels": [{"out": "A", "weights": [[2**70]]}]}
    with pytest.raises(scamp.SpecError, match=r"weight 1\.18059e21 too large: \|weight x scale x 2\^0\| must be at most 2\^20"):
        scamp.compile(spec, work=10)


def test_registers_as_one_string_is_one_register(repo):
    prog = scamp.load(repo / GAUSS)
    out = scamp.run(prog, {"A": PLANE}, noise="ideal", registers="R5")
    assert list(out) == ["R5"] and out["R5"].dtype == bool
    with pytest.raises(ValueError, match=r"^registers: unknown register `BA`"):
        scamp.run(prog, {"A": PLANE}, registers="BA")


def test_big_endian_floats_are_the_same_values(repo):
    prog = scamp.load(repo / GAUSS)
    plane = np.arange(65536, dtype=np.float32).reshape(256, 256) % 100 - 50
    native = scamp.run(prog, {"A": plane}, noise="ideal")
    for order in (">f4", ">f8"):
        swapped = scamp.run(prog, {"A": plane.astype(order)}, noise="ideal")
        assert np.array_equal(swapped["A"], native["A"]), order
