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
