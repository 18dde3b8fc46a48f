"""A robot resolved once: what the graphs ask of it, read from its folder."""

from __future__ import annotations

import pytest

from humanoid_description import ROBOTS, Robot, UnknownRobotError, load_config, resolve_robot, robot_directory


def test_each_robot_resolves_to_one_object_per_process():
    for name in ROBOTS:
        robot = resolve_robot(name)
        assert isinstance(robot, Robot) and robot.name == name
        assert resolve_robot(name) is robot and resolve_robot(robot) is robot
        assert robot.folder.name == name and (robot.folder / "robot.yaml").is_file()
        assert robot.config is load_config(name)


@pytest.mark.parametrize(("name", "walks", "gaits", "bus"), [
    ("hoap2", True, False, False),
    ("bioloid", True, False, True),
    ("bioloid_quadruped", False, True, True),
])
def test_what_a_robot_can_do_comes_from_its_files(name, walks, gaits, bus):
    robot = resolve_robot(name)
    assert robot.configures("walk_controller") is walks
    assert robot.has_gaits is gaits
    assert robot.on_dynamixel_bus is bus
    assert robot.configures("balance_monitor")
    assert not robot.configures("/**")


def test_an_unknown_robot_is_refused_with_the_known_ones():
    with pytest.raises(UnknownRobotError, match=r"unknown robot 'nao' \(known robots: .*hoap2"):
        resolve_robot("nao")


def test_a_robots_urdf_is_its_xacro_description_expanded_once():
    import xacro
    import yaml

    folder = robot_directory("bioloid")
    description = folder / yaml.safe_load((folder / "robot.yaml").read_text())["description"]
    robot = resolve_robot("bioloid")
    assert robot.urdf == xacro.process_file(str(description)).toprettyxml(indent="  ")
    assert robot.urdf is robot.urdf


def test_robot_yaml_is_parsed_once_for_the_files_and_the_configuration():
    """In a fresh interpreter: resolving each robot and asking its files, configuration and URDF
    parses each ``robot.yaml`` once."""
    import json
    import subprocess
    import sys
    import textwrap

    script = textwrap.dedent("""
        import collections, json, sys
        from humanoid_description import ROBOTS, load_config, resolve_robot, robots
        from humanoid_description.data_file import load_package_yaml as parse

        parsed = collections.Counter()

        def counting(text):
            data = parse(text)
            if isinstance(data, dict) and "joints" in data and "srdf" in data:
                parsed[data.get("name", "?")] += 1
            return data

        for module in list(sys.modules.values()):  # every module that took the parser by name
            ours = module.__name__.startswith("humanoid_description")
            if ours and getattr(module, "load_package_yaml", None) is parse:
                module.load_package_yaml = counting
        for name in ROBOTS:
            robot = resolve_robot(name)
            robots.robot_files(name), load_config(name), robot.config, robot.files
        print(json.dumps({"robots": len(ROBOTS), "parsed": sorted(parsed.values())}))
    """)
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=120, check=False)
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout.splitlines()[-1])
    assert report["parsed"] == [1] * report["robots"], report


def test_a_per_robot_file_of_anything_but_a_known_robots_name_is_refused():
    """A robot's file found from anything else (a Robot object, a typo) read as a robot
    without that file: its parameters' defaults silently, none of the robot's values."""
    from humanoid_description import CONTROL_NODE_PARAMETERS

    assert CONTROL_NODE_PARAMETERS.path("hoap2").is_file()
    for wrong in (resolve_robot("hoap2"), "hoap"):
        with pytest.raises(UnknownRobotError, match="unknown robot"):
            CONTROL_NODE_PARAMETERS.path(wrong)
