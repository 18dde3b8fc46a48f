"""The runtime YAML files, listed once (humanoid_description.runtime_files): each exists for
the robots its reader serves, and every key of a node's parameter file is a parameter the
node really declares (a misspelt key would otherwise be ignored without a word)."""

import json
import subprocess
import sys

import pytest
import yaml

from humanoid_description import HW_BUS_CONFIGURATION, HW_NODE_PARAMETERS, ROBOTS, RUNTIME_FILES, SIM_NODE_PARAMETERS


def test_every_runtime_file_exists_for_the_robots_it_serves():
    assert SIM_NODE_PARAMETERS.robots() == ROBOTS  # every robot is simulated
    assert HW_NODE_PARAMETERS.robots() == HW_BUS_CONFIGURATION.robots() == ("bioloid", "bioloid_quadruped")
    for runtime_file in RUNTIME_FILES:
        robots = runtime_file.robots() if runtime_file.per_robot else (None,)
        assert robots, f"{runtime_file.pattern} of {runtime_file.package} exists for no robot"
        for robot in robots:
            assert yaml.safe_load(runtime_file.path(robot).read_text()), runtime_file.path(robot)


def flattened(section: dict, prefix: str = "") -> set[str]:
    keys = set()
    for key, value in section.items():
        keys |= flattened(value, f"{prefix}{key}.") if isinstance(value, dict) else {prefix + key}
    return keys


# Run in a child process: a node built in the test process would stay in the ROS graph
# (its DDS participant lives as long as the process) and be mistaken for the robot node of
# later tests in the same session.
DECLARED_PARAMETERS = """
import json, sys
import rclpy
from humanoid_control.ros import DriverNode
from humanoid_description.runtime_files import {runtime_file}
from humanoid_{package} import {module} as module
rclpy.init(args=["--ros-args", "-p", "robot:={robot}"])
node = DriverNode(module.NODE_NAME, {runtime_file}, module.declare_driver, getattr(module, "EXTENSION", None))
json.dump({{name: parameter.value for name, parameter in node.node._parameters.items()}}, sys.stdout)
"""


def declared_parameters(runtime_file_name: str, module: str, robot: str) -> dict:
    """Every parameter the node declares with the value in force, from a child process."""
    code = DECLARED_PARAMETERS.format(runtime_file=runtime_file_name, package=module.split("_")[0],
                                      module=module, robot=robot)
    child = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert child.returncode == 0, child.stderr
    return json.loads(child.stdout)


@pytest.mark.parametrize(("runtime_file", "runtime_file_name", "module", "robot"), [
    *((SIM_NODE_PARAMETERS, "SIM_NODE_PARAMETERS", "sim_node", robot) for robot in SIM_NODE_PARAMETERS.robots()),
    *((HW_NODE_PARAMETERS, "HW_NODE_PARAMETERS", "hw_node", robot) for robot in HW_NODE_PARAMETERS.robots())])
def test_every_key_of_a_parameter_file_is_declared_by_its_node(runtime_file, runtime_file_name, module, robot):
    data = yaml.safe_load(runtime_file.path(robot).read_text())
    keys = flattened(data["/**"]["ros__parameters"])
    declared = declared_parameters(runtime_file_name, module, robot)
    assert keys <= declared.keys(), f"{runtime_file.path(robot)}: not parameters of the node: {keys - declared.keys()}"
    for key in keys - {"robot"}:  # the file's value is the one in force
        assert declared[key] == pytest.approx(flattened_value(data["/**"]["ros__parameters"], key)), key


def flattened_value(section: dict, key: str):
    for part in key.split("."):
        section = section[part]
    return section
