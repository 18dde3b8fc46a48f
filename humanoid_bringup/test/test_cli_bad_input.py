"""Every `humanoid` command refuses bad arguments and bad files with one line on stderr
and exit status 2: no traceback, nothing started (a parse error must not bring up a
graph), no command that runs forever on a nonsense value.

The real `humanoid` command runs as a process for each case; the cases run a few at a
time (each is one short process start) so that the whole table stays fast.
"""

from __future__ import annotations

import subprocess
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

POSE = ",".join(["0"] * 18)

#: (case id, arguments ({dir} is a folder with the files below), text the one line must contain).
CASES: list[tuple[str, list[str], str]] = [
    ("no command", [], "required: COMMAND"),
    ("unknown command", ["fly"], "invalid choice: 'fly'"),
    ("describe: unknown robot", ["describe", "--robot", "nao"], "unknown robot 'nao'"),
    ("describe: no robot", ["describe"], "--robot"),
    ("balance-poses: binary file", ["balance-poses", "--robot", "bioloid", "--poses", "{dir}/binary.csv",
                                    "--json", "-"], "binary.csv:1: NUL byte"),
    ("balance-poses: not UTF-8", ["balance-poses", "--robot", "bioloid", "--poses", "{dir}/latin1.csv",
                                  "--json", "-"], "latin1.csv:2: not UTF-8 text"),
    ("balance-poses: missing file", ["balance-poses", "--robot", "bioloid", "--poses", "{dir}/none.csv",
                                     "--json", "-"], "none.csv: cannot read: No such file"),
    ("balance-poses: empty file", ["balance-poses", "--robot", "bioloid", "--poses", "{dir}/empty.csv",
                                   "--json", "-"], "empty.csv: no poses found"),
    ("balance-poses: 1e308 deg", ["balance-poses", "--robot", "bioloid", "--poses", "{dir}/huge.csv",
                                  "--json", "-"], "huge.csv:1: J3 = 1e308 is not a servo angle"),
    ("balance-poses: json into a missing folder", ["balance-poses", "--robot", "bioloid", "--poses",
                                                   "{dir}/poses.csv", "--json", "{dir}/nowhere/out.json"],
     "no folder"),
    ("balance-poses: json onto a folder", ["balance-poses", "--robot", "bioloid", "--poses", "{dir}/poses.csv",
                                           "--json", "{dir}"], "it is a folder"),
    ("balance-poses: hoap2", ["balance-poses", "--robot", "hoap2", "--poses", "{dir}/poses.csv", "--json", "-"],
     "has no thesis joint numbering"),
    ("balance-poses: negative hold", ["balance-poses", "--robot", "bioloid", "--poses", "{dir}/poses.csv",
                                      "--json", "-", "--simulate", "--hold", "-1"], "argument --hold"),
    ("balance-poses: nan hold", ["balance-poses", "--robot", "bioloid", "--poses", "{dir}/poses.csv",
                                 "--json", "-", "--simulate", "--hold", "nan"], "argument --hold"),
    ("sim: negative duration", ["sim", "--robot", "bioloid", "--duration", "-5"], "argument --duration"),
    ("sim: zero duration", ["sim", "--robot", "bioloid", "--duration", "0"], "argument --duration"),
    ("sim: infinite duration", ["sim", "--robot", "bioloid", "--duration", "inf"], "argument --duration"),
    ("sim: negative real-time factor", ["sim", "--robot", "bioloid", "--real-time-factor", "-1"],
     "argument --real-time-factor"),
    ("sim: zero control rate", ["sim", "--robot", "bioloid", "--control-rate", "0"], "argument --control-rate"),
    ("sim: nan publish rate", ["sim", "--robot", "bioloid", "--publish-rate", "nan"], "argument --publish-rate"),
    ("sim: unknown robot", ["sim", "--robot", "nao"], "unknown robot 'nao'"),
    ("real: hoap2 emulated", ["real", "--robot", "hoap2", "--emulate"], "hoap2 has no Dynamixel joint map"),
    ("real: hoap2 on a port", ["real", "--robot", "hoap2", "--port", "/dev/null"], "hoap2 has no Dynamixel"),
    ("real: neither port nor emulator", ["real", "--robot", "bioloid"], "give either --port"),
    ("real: both port and emulator", ["real", "--robot", "bioloid", "--port", "/dev/null", "--emulate"],
     "give either --port"),
    ("real: missing port", ["real", "--robot", "bioloid", "--port", "/dev/ttyUSB_nonexistent"],
     "no such serial device"),
    ("real: zero baud", ["real", "--robot", "bioloid", "--emulate", "--baud", "0"], "argument --baud"),
    ("real: negative duration", ["real", "--robot", "bioloid", "--emulate", "--duration", "-5"],
     "argument --duration"),
    ("emulate: hoap2", ["emulate", "--robot", "hoap2"], "has no Dynamixel joint map"),
    ("emulate: zero baud", ["emulate", "--baud", "0"], "argument --baud"),
    ("emulate: return delay beyond the register", ["emulate", "--return-delay", "999"], "argument --return-delay"),
    ("emulate: link in a missing folder", ["emulate", "--link", "{dir}/nowhere/tty"], "no folder"),
    ("pose: unknown robot", ["pose", "--robot", "nao"], "argument --robot"),
    ("pose: negative timeout", ["pose", "--robot", "hoap2", "--timeout", "-1"], "argument --timeout"),
    ("demo: negative real-time factor", ["demo", "--real-time-factor", "-1"], "argument --real-time-factor"),
    ("demo: log folder is a file", ["demo", "--log-dir", "{dir}/poses.csv"], "is a file, not a folder"),
    ("demo: negative walk", ["demo", "--walk", "-0.5"], "argument --walk"),
    ("bench sim: negative seconds", ["bench", "sim", "--seconds", "-1"], "--seconds"),
    ("bench sim: zero rounds", ["bench", "sim", "--rounds", "0"], "--rounds"),
    ("bench sim: unknown robot", ["bench", "sim", "--robot", "nao"], "argument --robot"),
    ("bench bus: hoap2", ["bench", "bus", "--robot", "hoap2"], "has no Dynamixel joint map"),
    ("bench bus: zero baud", ["bench", "bus", "--baud", "0"], "argument --baud"),
    ("bench bus: zero cycles", ["bench", "bus", "--cycles", "0"], "argument --cycles"),
    ("bench: no target", ["bench"], "TARGET"),
    ("gaits: hoap2", ["gaits", "--robot", "hoap2", "--sweep"], "robot hoap2 has no gaits"),
    ("gaits: unknown robot", ["gaits", "--robot", "nao", "--sweep"], "unknown robot 'nao'"),
    ("gaits: unknown gait", ["gaits", "--gait", "canter"], "unknown gait 'canter'"),
    ("optimize-gait: unknown structure", ["optimize-gait", "--structure", "pronk", "--output", "{dir}/search"],
     "unknown coupling structure 'pronk'"),
    ("optimize-gait: hoap2", ["optimize-gait", "--robot", "hoap2", "--output", "{dir}/search"],
     "robot hoap2 has no legs"),
    ("optimize-gait: zero particles", ["optimize-gait", "--particles", "0"], "argument --particles"),
    ("optimize-gait: nan seconds", ["optimize-gait", "--seconds", "nan"], "argument --seconds"),
    ("optimize-gait: resume nothing", ["optimize-gait", "--resume", "--output", "{dir}/no_search"],
     "cannot resume from"),
    ("optimize-gait: a folder in the way", ["optimize-gait", "--output", "{dir}"], "exists and is not empty"),
    ("optimize-gait: resume and overwrite", ["optimize-gait", "--resume", "--overwrite", "--output", "{dir}"],
     "not both"),
    ("bench gait-search: one evaluation", ["bench", "gait-search", "--evaluations", "1"], "--evaluations"),
    ("gaits: 3 Hz", ["gaits", "--gait", "trot", "--frequency", "3"], "3 Hz is outside 0.5-2 Hz"),
    ("gaits: neither sweep nor gait", ["gaits"], "give either --sweep or --gait"),
    ("gaits: unknown CPG structure", ["gaits", "--cpg", "--gait", "ring"], "unknown coupling structure 'ring'"),
    ("gaits: zero seconds", ["gaits", "--sweep", "--seconds", "0"], "argument --seconds"),
    ("identify-masses: hoap2", ["identify-masses", "--robot", "hoap2"], "not the robot of the thesis"),
    ("view: keyframe file outside its folder", ["view", "--keyframes-dir", "{dir}", "--keyframes", "../poses.yaml"],
     "'../poses.yaml' is not a file name"),
    ("view: keyframe file not yaml", ["view", "--keyframes-dir", "{dir}", "--keyframes", "poses.csv"],
     "not a keyframe file name"),
    ("view: keyframe folder missing", ["view", "--keyframes-dir", "{dir}/nowhere"], "argument --keyframes-dir"),
    ("view: host not of this computer", ["view", "--host", "203.0.113.7"], "cannot listen on '203.0.113.7'"),
    ("view: unknown host", ["view", "--host", "no-such-host.invalid"], "unknown host 'no-such-host.invalid'"),
    ("generate-srdf: zero samples", ["generate-srdf", "--robot", "hoap2", "--samples", "0"], "argument --samples"),
    ("generate-srdf: output into a missing folder", ["generate-srdf", "--robot", "hoap2", "--output",
                                                     "{dir}/nowhere/x.srdf"], "no folder"),
]


def write_files(folder: Path) -> None:
    (folder / "binary.csv").write_bytes(bytes(range(256)) * 16)
    (folder / "latin1.csv").write_bytes(f"{POSE}\n# caf\xe9\n".encode("latin-1"))
    (folder / "empty.csv").write_text("# nothing\n")
    (folder / "huge.csv").write_text("0,0,1e308" + ",0" * 15 + "\n")
    (folder / "poses.csv").write_text(f"{POSE}\n")


@pytest.fixture(scope="module")
def outcomes(tmp_path_factory) -> dict[str, subprocess.CompletedProcess]:
    """Every case run once, a few processes at a time."""
    folder = tmp_path_factory.mktemp("files")
    write_files(folder)

    def run(args: list[str]) -> subprocess.CompletedProcess:
        command = ["humanoid", *(a.format(dir=folder) for a in args)]
        return subprocess.run(command, capture_output=True, text=True, timeout=120, stdin=subprocess.DEVNULL)

    with ThreadPoolExecutor(max_workers=4) as pool:
        results = pool.map(run, [args for _, args, _ in CASES])
        return {case: result for (case, _, _), result in zip(CASES, results, strict=True)}


@pytest.mark.parametrize(("case", "expected"), [(case, expected) for case, _, expected in CASES],
                         ids=[case for case, _, _ in CASES])
def test_bad_input_is_one_line_and_exit_2(outcomes, case, expected):
    result = outcomes[case]
    lines = result.stderr.strip().splitlines()
    assert result.returncode == 2, result.stderr
    assert len(lines) == 1, result.stderr
    assert "error:" in lines[0] and expected in lines[0], lines[0]
    assert result.stdout == ""
