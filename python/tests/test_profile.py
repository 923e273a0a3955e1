"""``scamp.Profile``: built-ins, files, YAML and edits, against the command line."""

import pytest

import scamp


def test_builtins_load_and_round_trip_through_yaml(tmp_path):
    for name in ["ideal", "scamp5"]:
        p = scamp.Profile.builtin(name)
        assert p.name == name
        assert scamp.Profile.load(name) == p
        f = tmp_path / f"{name}.yaml"
        f.write_text(p.to_yaml())
        assert scamp.Profile.load(f) == p
        assert scamp.Profile.from_yaml(p.to_yaml()) == p
    assert scamp.Profile.builtin("ideal").is_exact
    assert not scamp.Profile.builtin("scamp5").is_exact


def test_unknown_builtin_and_missing_file_raise(cli):
    with pytest.raises(ValueError, match="no built-in noise profile `nosuch`"):
        scamp.Profile.builtin("nosuch")
    with pytest.raises(scamp.ProfileError) as info:
        scamp.Profile.load("nosuch")
    assert str(info.value) == cli.error("run", "programs/identity.scamp", "--noise", "nosuch")


def test_broken_profile_file_gives_the_cli_message(cli, tmp_path):
    bad = tmp_path / "bad.yaml"
    bad.write_text("name: x\nreadout:\n  enable: 1\n")
    with pytest.raises(scamp.ProfileError) as info:
        scamp.Profile.load(bad)
    assert (info.value.line, info.value.column) == (3, 3)
    assert str(info.value) == cli.error("run", "programs/identity.scamp", "--noise", bad)


def test_replace_edits_nested_fields_and_checks_them():
    p = scamp.Profile.builtin("scamp5")
    quiet = p.replace(name="quiet", readout={"enabled": False}, transfer={"bus_1": {"noise": 0.0}})
    d = quiet.to_dict()
    assert quiet.name == "quiet"
    assert d["readout"]["enabled"] is False
    assert d["transfer"]["bus_1"]["noise"] == 0.0
    # Everything else is untouched.
    assert d["readout"]["noise"] == p.to_dict()["readout"]["noise"]
    assert d["transfer"]["bus_2"] == p.to_dict()["transfer"]["bus_2"]
    assert p.to_dict()["readout"]["enabled"] is True
    with pytest.raises(ValueError, match=r"unknown field `readout\.enable`"):
        p.replace(readout={"enable": False})
    with pytest.raises(ValueError, match="0..64, got -5"):
        p.replace(transfer={"bus_1": {"noise": -5}})


def test_edited_profile_file_reads_back_as_the_cli_reads_it(cli, tmp_path):
    p = scamp.Profile.builtin("scamp5").replace(name="edited", readout={"enabled": False})
    f = tmp_path / "edited.yaml"
    f.write_text(p.to_yaml())
    figures = cli.json("run", "programs/identity.scamp", "--noise", f)
    assert figures["noise"]["profile"] == "edited"
    assert figures["noise"]["readout"] is False
