"""Every `humanoid` command refuses bad arguments and bad files with one line on stderr
and exit status 2: no traceback, nothing started (a parse error must not bring up a
graph), no command that runs forever on a nonsense value, and no file of the user's
replaced, deleted or left behind.

The table runs through the `humanoid` command's own entry point
(``humanoid_bringup.cli.main``) in this process, its output captured at the file
descriptors (what a library prints from C too): 131 process starts took half a minute. The
real `humanoid` command, the installed script in a process of its own, answers a few cases
the same way (``test_the_installed_command_answers_as_the_entry_point``).
"""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest
from cli_entry import entry_point, one_collection

from humanoid_core.quadruped_gaits import FitnessSettings, cpg_path, search_box
from humanoid_experiments.gait_search import SearchSettings, SwarmSettings, new_swarm

POSE = ",".join(["0"] * 18)
#: A small search, as saved, to resume with these arguments.
SEARCH = SearchSettings("bioloid_quadruped", "paired", 1.5, 0, SwarmSettings(particles=4, iterations=3))
DIMENSIONS = len(search_box()[0])
#: A search of the report's experiment 5, as saved, to resume as another experiment.
EXPERIMENT_SEARCH = SearchSettings("bioloid_quadruped", None, 2.0, 0, SwarmSettings(particles=3, iterations=2),
                                   "5", None, FitnessSettings(seconds=2.0))
RESUME = ["optimize-gait", "--resume", "--particles", "4", "--iterations", "3", "--seconds", "1.5", "--output"]

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
     "has no thesis pose format"),
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
    ("sim: no robot in a world", ["sim", "--robot", "bioloid_quadruped", "--count", "0"], "a world holds 1 to"),
    ("sim: more robots than a world holds", ["sim", "--robot", "bioloid_quadruped", "--count", "99"],
     "99 robots: a world holds 1 to"),
    ("sim: a count that is not a number", ["sim", "--robot", "bioloid_quadruped", "--count", "two"],
     "'two' is not a whole number"),
    ("sim: spacing without a world", ["sim", "--robot", "bioloid_quadruped", "--spacing", "1"],
     "--spacing needs --count above 1"),
    ("sim: one bag for a world", ["sim", "--robot", "bioloid_quadruped", "--count", "2", "--record", "{dir}/bag"],
     "--record records one robot"),
    ("sim: a world's robots in an invalid namespace", ["sim", "--robot", "bioloid_quadruped", "--count", "2",
                                                       "--namespace", "1a"], "--namespace"),
    ("bench lockstep: unknown physics profile", ["bench", "lockstep", "--physics", "nope"],
     "unknown physics profile 'nope'"),
    ("bench lockstep: a walk the controller refuses", ["bench", "lockstep", "--distance", "1000"],
     "beyond max_goal_distance"),
    ("sim: a lockstep participant without lockstep", ["sim", "--robot", "bioloid", "--lockstep-participant", "me"],
     "--lockstep-participant needs --lockstep"),
    ("real: hoap2 emulated", ["real", "--robot", "hoap2", "--emulate"], "hoap2 has no Dynamixel joint map"),
    ("real: hoap2 on a port", ["real", "--robot", "hoap2", "--port", "/dev/null"], "hoap2 has no Dynamixel"),
    ("real: neither port nor emulator", ["real", "--robot", "bioloid"], "give either --port"),
    ("real: both port and emulator", ["real", "--robot", "bioloid", "--port", "/dev/null", "--emulate"],
     "give either --port"),
    ("real: missing port", ["real", "--robot", "bioloid", "--port", "/dev/ttyUSB_nonexistent"],
     "no such serial device"),
    ("real: port is a regular file", ["real", "--robot", "bioloid", "--port", "{dir}/poses.csv"],
     "'{dir}/poses.csv' is not a serial device (a regular file)"),
    ("real: port is a folder", ["real", "--robot", "bioloid", "--port", "{dir}"], "is not a serial device (a folder)"),
    ("real: record into /proc", ["real", "--robot", "bioloid", "--emulate", "--record", "/proc/nope"],
     "cannot write '/proc/nope': the folder '/proc' takes no new file"),
    ("sim: record into /proc", ["sim", "--robot", "hoap2", "--record", "/proc/nope"],
     "cannot write '/proc/nope': the folder '/proc' takes no new file"),
    ("real: zero baud", ["real", "--robot", "bioloid", "--emulate", "--baud", "0"], "argument --baud"),
    ("real: negative duration", ["real", "--robot", "bioloid", "--emulate", "--duration", "-5"],
     "argument --duration"),
    ("compare: not a bag", ["compare", "{dir}", "{dir}/none"], "is not a bag (no metadata.yaml)"),
    ("compare: one bag", ["compare", "{dir}"], "BAG_B"),
    ("compare: nan offset", ["compare", "{dir}", "{dir}", "--offset", "nan"], "argument --offset"),
    ("emulate: hoap2", ["emulate", "--robot", "hoap2"], "has no Dynamixel joint map"),
    ("emulate: zero baud", ["emulate", "--baud", "0"], "argument --baud"),
    ("emulate: return delay beyond the register", ["emulate", "--return-delay", "999"], "argument --return-delay"),
    ("emulate: nice beyond the range", ["emulate", "--nice", "20"], "argument --nice"),
    ("emulate: link in a missing folder", ["emulate", "--link", "{dir}/nowhere/tty"], "no folder"),
    ("emulate: link onto a file", ["emulate", "--link", "{dir}/poses.csv"],
     "'{dir}/poses.csv' exists and is not a link an emulator made: not replacing it"),
    ("emulate: link onto a link of someone else", ["emulate", "--link", "{dir}/latest.csv"],
     "'{dir}/latest.csv' exists and is not a link an emulator made"),
    ("record: output into /proc", ["record", "--output", "/proc/nope"],
     "argument --output/-o: cannot write '/proc/nope': the folder '/proc' takes no new file"),
    ("record: nan duration", ["record", "--output", "{dir}/bag", "--duration", "nan"],
     "argument --duration: must be a finite number, got 'nan'"),
    ("record: infinite duration", ["record", "--output", "{dir}/bag", "--duration", "inf"],
     "argument --duration: must be a finite number, got 'inf'"),
    ("record: negative duration", ["record", "--output", "{dir}/bag", "--duration", "-1"], "argument --duration"),
    ("pose: unknown robot", ["pose", "--robot", "nao"], "argument --robot"),
    ("pose: negative timeout", ["pose", "--robot", "hoap2", "--timeout", "-1"], "argument --timeout"),
    ("demo: negative real-time factor", ["demo", "--real-time-factor", "-1"], "argument --real-time-factor"),
    ("demo: log folder is a file", ["demo", "--log-dir", "{dir}/poses.csv"], "is a file, not a folder"),
    ("demo: negative walk", ["demo", "--walk", "-0.5"], "argument --walk"),
    ("demo: walk 1e9 m", ["demo", "--walk", "1e9"], "distance 1e+09 m is beyond max_goal_distance = 20 m"),
    ("walk: 1e308 m", ["walk", "--robot", "bioloid", "--distance", "1e308"],
     "distance 1e+308 m is beyond max_goal_distance = 20 m"),
    ("walk: 1e9 m lateral", ["walk", "--robot", "hoap2", "--distance", "0", "--lateral=-1e9"],
     "lateral -1e+09 m is beyond max_goal_lateral = 5 m"),
    ("walk: nan distance", ["walk", "--robot", "hoap2", "--distance", "nan"], "argument --distance"),
    ("walk: no goal", ["walk", "--robot", "bioloid"],
     "give --distance METRES (a walk goal) or --teleop SECONDS (cmd_vel), one of them"),
    ("walk: goal and teleop", ["walk", "--robot", "bioloid", "--distance", "1", "--teleop", "10"],
     "give --distance METRES (a walk goal) or --teleop SECONDS (cmd_vel), one of them"),
    ("walk: teleop a quadruped", ["walk", "--robot", "bioloid_quadruped", "--teleop", "10"],
     "--teleop walks a biped: bioloid_quadruped has no walk controller"),
    ("walk: teleop 0 s", ["walk", "--robot", "bioloid", "--teleop", "0"], "argument --teleop"),
    ("push: no robot", ["push"], "--robot"),
    ("push: unknown robot", ["push", "--robot", "nao"], "argument --robot"),
    ("push: negative iterations", ["push", "--robot", "hoap2", "--iterations", "-1"], "argument --iterations"),
    ("push: 1000 iterations", ["push", "--robot", "hoap2", "--iterations", "1000"], "argument --iterations"),
    ("push: nan push duration", ["push", "--robot", "hoap2", "--push-duration", "nan"], "argument --push-duration"),
    ("push: zero push duration", ["push", "--robot", "hoap2", "--push-duration", "0"], "argument --push-duration"),
    ("push: 60 s push", ["push", "--robot", "hoap2", "--push-duration", "60"],
     "--push-duration must be at most 10 s (push.max_duration), got 60"),
    ("push: negative watch", ["push", "--robot", "hoap2", "--watch", "-2"], "argument --watch"),
    ("push: unknown physics profile", ["push", "--robot", "hoap2", "--physics", "warp"], "warp"),
    ("getup: the quadruped", ["getup", "--robot", "bioloid_quadruped"], "argument --robot"),
    ("getup: unknown start", ["getup", "--robot", "hoap2", "--from", "head"], "argument --from"),
    ("getup: zero trials", ["getup", "--robot", "hoap2", "--trials", "0"], "argument --trials"),
    ("getup: negative push", ["getup", "--robot", "hoap2", "--push", "-0.5"], "argument --push"),
    ("getup: no such motions folder", ["getup", "--robot", "hoap2", "--motions", "/nonexistent/getups"],
     "--motions /nonexistent/getups: not a folder"),
    ("bench world: no robot", ["bench", "world", "--counts", "1,0"], "0 robots: a world holds 1 to"),
    ("bench replay: a robot that does not walk", ["bench", "replay", "--robot", "bioloid_quadruped"],
     "the walk controller does not walk it"),
    ("bench replay: an output folder that exists", ["bench", "replay", "--robot", "bioloid", "--output", "/"],
     "it exists (the bags go into a new folder)"),
    ("bench world: a count that is not a number", ["bench", "world", "--counts", "1,x"], "'x' is not a whole number"),
    ("bench world: an unknown gait", ["bench", "world", "--gait", "tolt"], "unknown gait 'tolt'"),
    ("bench world: an unknown physics profile", ["bench", "world", "--physics", "nope"],
     "unknown physics profile 'nope' for bioloid_quadruped (known: reference, fast"),
    ("bench world: a gait too fast to play", ["bench", "world", "--frequency", "2"], "trot at 2 Hz drives"),
    ("bench sim: negative seconds", ["bench", "sim", "--seconds", "-1"], "--seconds"),
    ("bench sim: zero rounds", ["bench", "sim", "--rounds", "0"], "--rounds"),
    ("bench sim: unknown robot", ["bench", "sim", "--robot", "nao"], "argument --robot"),
    ("bench bus: hoap2", ["bench", "bus", "--robot", "hoap2"], "has no Dynamixel joint map"),
    ("bench bus: zero baud", ["bench", "bus", "--baud", "0"], "argument --baud"),
    ("bench bus: zero cycles", ["bench", "bus", "--cycles", "0"], "argument --cycles"),
    ("bench bus: negative poll", ["bench", "bus", "--answer-poll-us", "-1"], "argument --answer-poll-us"),
    ("bench: no target", ["bench"], "TARGET"),
    ("gaits: hoap2", ["gaits", "--robot", "hoap2", "--sweep"], "robot hoap2 has no gaits"),
    ("gaits: unknown robot", ["gaits", "--robot", "nao", "--sweep"], "unknown robot 'nao'"),
    ("gaits: unknown gait", ["gaits", "--gait", "tolt"], "unknown gait 'tolt'"),
    ("optimize-gait: unknown structure", ["optimize-gait", "--structure", "pronk", "--output", "{dir}/search"],
     "unknown coupling structure 'pronk'"),
    ("optimize-gait: hoap2", ["optimize-gait", "--robot", "hoap2", "--output", "{dir}/search"],
     "robot hoap2 has no legs"),
    ("optimize-gait: zero particles", ["optimize-gait", "--particles", "0"], "argument --particles"),
    ("optimize-gait: nan seconds", ["optimize-gait", "--seconds", "nan"], "argument --seconds"),
    ("optimize-gait: resume nothing", ["optimize-gait", "--resume", "--output", "{dir}/no_search"],
     "cannot resume from"),
    ("optimize-gait: resume a file that is no search", [*RESUME, "{dir}/not_a_search"],
     "search.json: not a saved search (not a saved swarm: no 'lower')"),
    ("optimize-gait: resume a swarm short of particles", [*RESUME, "{dir}/short_swarm"],
     f"not a saved search (not a saved swarm: positions has the shape (2, {DIMENSIONS}), not (4, {DIMENSIONS})"),
    ("optimize-gait: resume settings of another kind", [*RESUME, "{dir}/odd_settings"],
     "not a saved search (robot 'bioloid_quadruped', structure 'ring' and experiment None are not"),
    ("optimize-gait: unknown experiment", ["optimize-gait", "--experiment", "7", "--describe"],
     "unknown experiment '7' (experiments of"),
    ("optimize-gait: a configuration naming an unknown servo", ["optimize-gait", "--experiment", "1", "--describe",
                                                                "--config", "{dir}/cpg_unknown_servo.yaml"],
     "unknown servo 'FL9'"),
    ("optimize-gait: resume an experiment with another", ["optimize-gait", "--resume", "--experiment", "6",
                                                          "--output", "{dir}/experiment_search"],
     "not resumed with {{'experiment': '6'}}"),
    ("optimize-gait: describe without an experiment", ["optimize-gait", "--describe"],
     "--describe describes an --experiment"),
    ("optimize-gait: experiment and structure", ["optimize-gait", "--experiment", "1", "--structure", "paired"],
     "not both"),
    ("optimize-gait: not an address", ["optimize-gait", "--address", "notanaddress", "--output", "{dir}/search"],
     "argument --address: 'notanaddress' is not an address (ray://HOST:PORT or HOST:PORT"),
    ("optimize-gait: port out of range", ["optimize-gait", "--address", "ray://head:70000", "--output",
                                          "{dir}/search"], "argument --address"),
    ("optimize-gait: nobody at the address", ["optimize-gait", "--address", "127.0.0.1:1", "--output",
                                              "{dir}/search"], "no Ray cluster answers at 127.0.0.1:1"),
    ("optimize-gait: a folder in the way", ["optimize-gait", "--output", "{dir}"], "exists and is not empty"),
    ("optimize-gait: resume and overwrite", ["optimize-gait", "--resume", "--overwrite", "--output", "{dir}"],
     "not both"),
    ("bench gait-search: one evaluation", ["bench", "gait-search", "--evaluations", "1"], "--evaluations"),
    ("gaits: 3 Hz", ["gaits", "--gait", "trot", "--frequency", "3"], "3 Hz is outside 0.5-2 Hz"),
    ("gaits: neither sweep nor gait", ["gaits"], "give either --sweep or --gait"),
    ("gaits: unknown CPG structure", ["gaits", "--cpg", "--gait", "ring"], "unknown coupling structure 'ring'"),
    ("gaits: zero seconds", ["gaits", "--sweep", "--seconds", "0"], "argument --seconds"),
    ("gaits: bad gait file", ["gaits", "--gait", "{dir}/gait.yaml"], "gait.yaml:2: unknown coupling structure 'ring'"),
    ("gaits: frequency with a sweep", ["gaits", "--sweep", "--frequency", "1"], "--frequency goes with --gait"),
    ("gaits: 0.25 Hz", ["gaits", "--gait", "pronk", "--frequency", "0.25"], "0.25 Hz is outside 0.5-2 Hz"),
    ("gaits: chart without a sweep", ["gaits", "--gait", "trot", "--chart", "{dir}/chart.png"],
     "--chart draws a sweep of IK gaits"),
    ("gaits: chart into a missing folder", ["gaits", "--sweep", "--chart", "{dir}/nowhere/chart.png"],
     "no folder"),
    ("gaits: unknown foot path", ["gaits", "--gait", "trot", "--foot-path", "round"], "argument --foot-path"),
    ("play-gait: unknown gait", ["play-gait", "tolt"], "unknown gait 'tolt'"),
    ("play-gait: no gait", ["play-gait"], "required: gait"),
    ("play-gait: 3 Hz", ["play-gait", "trot", "--frequency", "3"], "3 Hz is outside 0.5-2 Hz"),
    ("play-gait: faster than the servos", ["play-gait", "pace", "--frequency", "2"],
     "pace at 2 Hz drives fr_hip_pitch at"),
    ("play-gait: negative frequency", ["play-gait", "trot", "--frequency", "-1"], "argument --frequency"),
    ("play-gait: zero duration", ["play-gait", "trot", "--duration", "0"], "argument --duration"),
    ("play-gait: hoap2", ["play-gait", "trot", "--robot", "hoap2"], "robot hoap2 has no gaits"),
    ("play-gait: bad gait file", ["play-gait", "{dir}/gait.yaml"], "gait.yaml:2: unknown coupling structure 'ring'"),
    ("play-gait: not a gait file", ["play-gait", "{dir}/poses.csv"], "poses.csv: not a gait file"),
    ("identify-masses: hoap2", ["identify-masses", "--robot", "hoap2"], "has no balanced poses"),
    ("view: keyframe file outside its folder", ["view", "--keyframes-dir", "{dir}", "--keyframes", "../poses.yaml"],
     "'../poses.yaml' is not a file name"),
    ("view: keyframe file not yaml", ["view", "--keyframes-dir", "{dir}", "--keyframes", "poses.csv"],
     "not a keyframe file name"),
    ("view: keyframe folder missing", ["view", "--keyframes-dir", "{dir}/nowhere"], "argument --keyframes-dir"),
    ("view: metadata not YAML", ["view", "--bag", "{dir}/broken_bag"], "cannot read {dir}/broken_bag: "),
    ("plot: metadata not YAML", ["plot", "{dir}/broken_bag"], "cannot read {dir}/broken_bag: "),
    ("view: host not of this computer", ["view", "--host", "203.0.113.7"], "cannot listen on '203.0.113.7'"),
    ("view: unknown host", ["view", "--host", "no-such-host.invalid"], "unknown host 'no-such-host.invalid'"),
    ("generate-srdf: zero samples", ["generate-srdf", "--robot", "hoap2", "--samples", "0"], "argument --samples"),
    ("generate-srdf: output into a missing folder", ["generate-srdf", "--robot", "hoap2", "--output",
                                                     "{dir}/nowhere/x.srdf"], "no folder"),
    ("generate-srdf: output into /proc", ["generate-srdf", "--robot", "hoap2", "--output", "/proc/nope.srdf"],
     "argument --output: cannot write '/proc/nope.srdf': the folder '/proc' takes no new file"),
    ("postures: a misspelt parameter", ["postures", "--robot", "hoap2", "--set", "transmission.stifness=50"],
     "--set: the simulation has no parameter 'transmission.stifness' (did you mean transmission.stiffness"),
    ("postures: an unknown parameter", ["postures", "--robot", "hoap2", "--set", "xyzzy=1"],
     "the simulation's parameters: clock_rate,"),
    ("postures: no robot", ["postures"], "--robot is required (but with --compare A.json B.json)"),
    ("postures: unknown reference experiment", ["postures", "--robot", "bioloid_quadruped", "--experiments", "12"],
     "--experiments: no experiment 12 (experiments: 1, 2, 3, 4, 5, 6, 7, 8, 9)"),
    ("postures: unknown candidate servo", ["postures", "--robot", "bioloid_quadruped", "--experiments", "8",
                                           "--servos", "FL9"], "--servos: unknown servo 'FL9'"),
    ("postures: reference experiments on the real robot", ["postures", "--robot", "bioloid_quadruped",
                                                           "--experiments", "reference", "--real"],
     "--real cannot go with it"),
    ("postures: workers without experiments", ["postures", "--robot", "bioloid_quadruped", "--workers", "2"],
     "--servos, --workers and --address go with --experiments"),
    ("postures: experiments of a robot without", ["postures", "--robot", "hoap2", "--experiments", "reference"],
     "keeps no reference experiments"),
    ("postures: answers without --real", ["postures", "--robot", "bioloid_quadruped", "--answers",
                                          "{dir}/answers.txt"], "--answers is the operator's, for --real"),
    ("postures: an answer that is none", ["postures", "--robot", "bioloid_quadruped", "--real", "--answers",
                                          "{dir}/answers_yes.txt"],
     "--answers: {dir}/answers_yes.txt:2: 'yes' is not an answer (ready, stood, fell or abort, one a line)"),
    ("postures: an empty answer line", ["postures", "--robot", "bioloid_quadruped", "--real", "--answers",
                                        "{dir}/answers_blank.txt"],
     "--answers: {dir}/answers_blank.txt:2: an empty line: one answer a line (ready, stood, fell or abort)"),
    ("postures: no answers", ["postures", "--robot", "bioloid_quadruped", "--real", "--answers",
                              "{dir}/answers_empty.txt"],
     "--answers: {dir}/answers_empty.txt: no answers (ready, stood, fell or abort, one a line)"),
    ("postures: binary answers", ["postures", "--robot", "bioloid_quadruped", "--real", "--answers",
                                  "{dir}/binary.csv"], "--answers: {dir}/binary.csv:1: NUL byte"),
    ("postures: missing answers", ["postures", "--robot", "bioloid_quadruped", "--real", "--answers",
                                   "{dir}/none.txt"], "--answers: {dir}/none.txt: cannot read: No such file"),
    ("postures: compare one file", ["postures", "--compare", "{dir}/results_1.json"],
     "argument --compare: expected 2 arguments"),
    ("postures: compare with a robot", ["postures", "--robot", "hoap2", "--compare", "{dir}/results_1.json",
                                        "{dir}/results_1.json"],
     "--compare reads two results files: --robot cannot go with it"),
    ("postures: compare a missing file", ["postures", "--compare", "{dir}/results_1.json", "{dir}/none.json"],
     "{dir}/none.json: cannot read: No such file"),
    ("postures: compare YAML", ["postures", "--compare", "{dir}/gait.yaml", "{dir}/results_1.json"],
     "{dir}/gait.yaml:1: not JSON"),
    ("postures: compare a search", ["postures", "--compare", "{dir}/results_1.json",
                                    "{dir}/not_a_search/search.json"],
     "{dir}/not_a_search/search.json: not a postures results file"),
    ("postures: compare other tests", ["postures", "--compare", "{dir}/results_1.json", "{dir}/results_2.json"],
     "{dir}/results_1.json and {dir}/results_2.json have no test in common (tests 1 against 2)"),
    ("postures: compare another protocol", ["postures", "--compare", "{dir}/results_1.json",
                                            "{dir}/results_1_spine.json"],
     "test 1 is not the same test in {dir}/results_1.json and {dir}/results_1_spine.json ('FL swing back': "
     "fl_hip_pitch + from zero against 'FL swing back': spine_pitch + from zero): not the same protocol"),
]

#: A test's entry in a results file of ``humanoid postures`` (its --json).
RESULT = {"test": 1, "name": "FL swing back", "joints": ["fl_hip_pitch"], "direction": 1, "start": "zero",
          "limit_rad": 0.3, "limit_raw": [571]}


def test_push_help_describes_the_command():
    result = subprocess.run(["humanoid", "push", "--help"], capture_output=True, text=True, timeout=120,
                            stdin=subprocess.DEVNULL)
    assert result.returncode == 0, result.stderr
    assert "--iterations" in result.stdout and "bisection" in result.stdout


def write_files(folder: Path) -> None:
    (folder / "binary.csv").write_bytes(bytes(range(256)) * 16)
    (folder / "latin1.csv").write_bytes(f"{POSE}\n# caf\xe9\n".encode("latin-1"))
    (folder / "empty.csv").write_text("# nothing\n")
    (folder / "huge.csv").write_text("0,0,1e308" + ",0" * 15 + "\n")
    (folder / "poses.csv").write_text(f"{POSE}\n")
    (folder / "latest.csv").symlink_to("poses.csv")
    (folder / "gait.yaml").write_text("cpg:\n  structure: ring\n")
    (folder / "answers.txt").write_text("ready\nfell\n")
    (folder / "answers_yes.txt").write_text("ready\nyes\n")
    (folder / "answers_blank.txt").write_text("ready\n\nfell\n")
    (folder / "answers_empty.txt").write_text("")
    (folder / "results_1.json").write_text(json.dumps([RESULT]))
    (folder / "results_2.json").write_text(json.dumps([RESULT | {"test": 2}]))
    (folder / "results_1_spine.json").write_text(json.dumps([RESULT | {"joints": ["spine_pitch"]}]))
    (folder / "cpg_unknown_servo.yaml").write_text(
        cpg_path("bioloid_quadruped").read_text().replace("FL2: {from: [FL1]}", "FL2: {from: [FL9]}", 1))
    (folder / "broken_bag").mkdir()
    (folder / "broken_bag" / "metadata.yaml").write_text("rosbag2_bagfile_information: {version: [\n")
    (folder / "experiment_search").mkdir()
    (folder / "experiment_search" / "search.json").write_text(json.dumps(
        {"settings": EXPERIMENT_SEARCH.as_dict(), "swarm": new_swarm(EXPERIMENT_SEARCH).state(), "best": None}))
    swarm = new_swarm(SEARCH).state()
    searches = {"not_a_search": {"settings": SEARCH.as_dict(), "swarm": {}, "best": None},
                "short_swarm": {"settings": SEARCH.as_dict(), "swarm": swarm | {"positions": swarm["positions"][:2]},
                                "best": None},
                "odd_settings": {"settings": SEARCH.as_dict() | {"structure": "ring"}, "swarm": swarm, "best": None}}
    for name, content in searches.items():
        (folder / name).mkdir()
        (folder / name / "search.json").write_text(json.dumps(content))


def snapshot(folder: Path) -> dict[str, str | bytes]:
    """Every file (its bytes) and link (its target) under ``folder``."""
    return {str(path.relative_to(folder)): os.readlink(path) if path.is_symlink() else path.read_bytes()
            for path in sorted(folder.rglob("*")) if path.is_symlink() or path.is_file()}


@pytest.fixture(scope="module")
def folder(tmp_path_factory) -> Path:
    folder = tmp_path_factory.mktemp("files")
    write_files(folder)
    return folder


@pytest.fixture(scope="module")
def outcomes(folder) -> dict[str, subprocess.CompletedProcess]:
    """Every case run once."""
    with one_collection():
        return {case: entry_point(*(a.format(dir=folder) for a in args)) for case, args, _ in CASES}


@pytest.mark.parametrize("case", ["no command", "describe: unknown robot", "balance-poses: binary file",
                                  "sim: negative duration", "postures: compare another protocol"])
def test_the_installed_command_answers_as_the_entry_point(outcomes, folder, case):
    """The installed script, in a process of its own (its environment set up as a user's),
    answers exactly as the entry point in this process did."""
    args = next(args for name, args, _ in CASES if name == case)
    result = subprocess.run(["humanoid", *(a.format(dir=folder) for a in args)], capture_output=True, text=True,
                            timeout=120, stdin=subprocess.DEVNULL)
    assert (result.returncode, result.stdout, result.stderr) == \
        (outcomes[case].returncode, outcomes[case].stdout, outcomes[case].stderr)


@pytest.mark.parametrize(("case", "expected"), [(case, expected) for case, _, expected in CASES],
                         ids=[case for case, _, _ in CASES])
def test_bad_input_is_one_line_and_exit_2(outcomes, folder, case, expected):
    result = outcomes[case]
    lines = result.stderr.strip().splitlines()
    assert result.returncode == 2, result.stderr
    assert len(lines) == 1, result.stderr
    assert "error:" in lines[0] and expected.format(dir=folder) in lines[0], lines[0]
    assert result.stdout == ""


def test_no_case_changed_created_or_deleted_a_file(outcomes, folder, tmp_path_factory):
    """The files the cases were given are as they were, and no case left anything (a bag
    directory, a search directory, a link) behind."""
    assert outcomes
    reference = tmp_path_factory.mktemp("reference")
    write_files(reference)
    assert snapshot(folder) == snapshot(reference)
