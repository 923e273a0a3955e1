"""``scamp.parse``, ``scamp.load`` and ``ProgramError``, against the command line."""

import pytest

import scamp


def test_bundled_programs_parse_with_the_cli_counts(cli, repo):
    for name in ["identity", "gauss3x3_hand", "analognet2_layer", "threshold"]:
        path = repo / "programs" / f"{name}.scamp"
        prog = scamp.parse(path.read_text())
        figures = cli.json("run", path, "--noise", "ideal")
        assert prog.cycles == figures["cycles"], name
        assert prog.instructions > 0
        assert scamp.load(path).cycles == prog.cycles
        assert prog.text == path.read_text()


def test_written_registers_are_listed():
    prog = scamp.parse("get_image(A)\nmov(B, A)\n")
    assert prog.written_registers == ["A", "B"]
    assert prog.instructions == 2


def test_program_error_carries_line_and_column_like_the_cli(cli, tmp_path):
    text = "get_image(A)\n  foo(B)\n"
    bad = tmp_path / "bad.scamp"
    bad.write_text(text)
    with pytest.raises(scamp.ProgramError) as info:
        scamp.parse(text)
    err = info.value
    assert isinstance(err, ValueError)
    assert (err.line, err.column) == (2, 3)
    assert str(err).startswith("<program>:2:3: ")
    # The same message as the command line, file name and all.
    with pytest.raises(scamp.ProgramError) as info:
        scamp.load(bad)
    assert str(info.value) == cli.error("run", bad)
    assert info.value.file == str(bad)


def test_parse_names_the_text_in_errors():
    with pytest.raises(scamp.ProgramError, match=r"^mine\.scamp:1:5: "):
        scamp.parse("mov(Q, A)\n", name="mine.scamp")


def test_unreadable_and_non_utf8_files(cli, tmp_path):
    with pytest.raises(OSError, match="cannot read program"):
        scamp.load(tmp_path / "missing.scamp")
    latin = tmp_path / "latin.scamp"
    latin.write_bytes(b"get_image(A)\n// caf\xe9\n")
    with pytest.raises(scamp.ProgramError) as info:
        scamp.load(latin)
    assert (info.value.line, info.value.column) == (2, 7)
    assert str(info.value) == cli.error("run", latin)
