"""Pins the program of every stage of `programs/fashion3/` (run after train.py, with the
`scamp` Python package installed):

    python programs/fashion3/programs.py

The generator compiles each stage of `net.yaml` once; its program is written beside the
weights (`w1.scamp` for `w1.npy`, ...) and named by `program:` in `net.yaml`,
`layers1.yaml` and `layers2.yaml` (stages with the same weights and registers share
it). `scamp eval` then proves each program against its weights when it loads the network
instead of compiling it: no search at evaluation time, and the same program on every
machine (the generator's search also stops at a time limit, so a busy machine could
otherwise find another one).
"""

import json
from pathlib import Path

import scamp

HERE = Path(__file__).resolve().parent
FILES = ("net.yaml", "layers1.yaml", "layers2.yaml")


def stage_lines(path):
    """The network file's lines, with each stage line's dict (None for other lines)."""
    out = []
    for line in path.read_text().splitlines():
        stage = json.loads(line[4:]) if line.startswith("  - {") else None
        out.append((line, stage))
    return out


def header(stage):
    """The comment a stage program starts with."""
    return (
        f"// The convolution of {stage['weights']} at depth {stage['depth']} (programs/fashion3),\n"
        f"// from {stage.get('input', 'A')}, compiled by programs.py and proven when loaded.\n"
    )


def main():
    net = scamp.Network.load(HERE / "net.yaml")
    compiled = net.compile()
    programs = {}
    for (_, stage), built in zip(
        [ls for ls in stage_lines(HERE / "net.yaml") if ls[1] is not None], compiled["stages"]
    ):
        name = stage["weights"].replace(".npy", ".scamp")
        (HERE / name).write_text(header(stage) + built["program"])
        programs[(stage["weights"], stage.get("input"), tuple(stage.get("outputs", [])))] = name
    for file in FILES:
        lines = []
        for line, stage in stage_lines(HERE / file):
            if stage is not None:
                stage.pop("program", None)
                key = (stage["weights"], stage.get("input"), tuple(stage.get("outputs", [])))
                stage["program"] = programs[key]
                line = f"  - {json.dumps(stage)}"
            lines.append(line)
        (HERE / file).write_text("\n".join(lines) + "\n")
    print(f"{len(programs)} programs written: {compiled['instructions']} instructions per frame")


if __name__ == "__main__":
    main()
