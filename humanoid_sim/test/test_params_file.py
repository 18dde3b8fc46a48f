"""Simulation parameter files (:mod:`humanoid_sim.params_file`): one loader for the node, the
in-process runs and the commands; its values reach PyBullet (the servo, the gears, a link's
mass and centre of mass), a wrong name or value is refused naming it (the commands' side:
test/test_params_file_commands.py)."""

from __future__ import annotations

from pathlib import Path

import pybullet
import pytest
import rclpy
from rclpy.parameter import Parameter

from humanoid_core import node_parameters
from humanoid_description import SIM_NODE_PARAMETERS, load_model
from humanoid_sim import NODE_NAME, SimulatedRobot, build_driver, declare_driver, params_file

ROBOT = "hoap2"
FILE = """\
servo: {position_gain: 0.25, max_velocity: 4.0}
transmission: {stiffness: 80, ankle_stiffness: 60}
ground_friction: 0.8
model:
  links:
    torso: {mass_scale: 1.5, com_x: 0.01}
"""


@pytest.fixture
def file(tmp_path: Path) -> Path:
    path = tmp_path / "params.yaml"
    path.write_text(FILE)
    return path


def torso(driver) -> tuple[float, tuple[float, float, float]]:
    """PyBullet's mass and inertial-frame position (the CoM in the link frame) of the torso."""
    info = pybullet.getDynamicsInfo(driver._body, driver._link["torso"], physicsClientId=driver._client)
    return info[0], info[3]


def test_the_files_values_reach_pybullet_in_process(file):
    model = load_model(ROBOT)
    with SimulatedRobot(ROBOT) as plain:
        mass, com = torso(plain.driver)
        assert plain.settings.servo.position_gain != 0.25
    with SimulatedRobot(ROBOT, params_file=file) as robot:
        assert robot.settings.servo.position_gain == 0.25 and robot.settings.servo.max_velocity == 4.0
        assert robot.settings.transmission.stiffness == 80.0
        assert robot.driver.params.ground_friction == 0.8
        corrected_mass, corrected_com = torso(robot.driver)
        assert corrected_mass == pytest.approx(1.5 * mass)
        assert corrected_com[0] == pytest.approx(com[0] + 0.01)
        assert corrected_com[1:] == pytest.approx(com[1:])
        line = robot.settings.describe_params_file(file)
        assert "model.links.torso.com_x 0.01" in line and "servo.position_gain 0.25" in line
    assert model.total_mass == load_model(ROBOT).total_mass  # the controllers' model is the robot's


def test_values_given_one_by_one_win_over_the_files(file):
    with SimulatedRobot(ROBOT, overrides={"servo.position_gain": 0.4}, params_file=file) as robot:
        assert robot.settings.servo.position_gain == 0.4 and robot.settings.servo.max_velocity == 4.0


@pytest.mark.parametrize(("text", "message"), [
    ("transmission: {stifness: 50}", r"unknown parameter 'transmission.stifness' \(did you mean "
                                     r"transmission.stiffness"),
    ("model: {links: {torsoo: {mass_scale: 1.1}}}", r"the robot has no link 'torsoo' \(did you mean torso"),
    ("model: {links: {torso: {mass: 2.0}}}", "a link correction has no 'mass'"),
    ("model: {links: {torso: {mass_scale: -1}}}", "mass_scale must be a finite number > 0"),
    ("servo: {position_gain: fast}", "servo.position_gain must be a number, got 'fast'"),
    ("- servo", "expected a mapping of names"),
    ("servo: {position_gain: [", "is not YAML"),
])
def test_a_wrong_file_is_refused_naming_the_culprit(tmp_path, text, message):
    path = tmp_path / "bad.yaml"
    path.write_text(text)
    with pytest.raises(params_file.ParamsFileError, match=message):
        params_file.load(path, params_file.link_names(load_model(ROBOT).urdf))


@pytest.fixture
def node():
    rclpy.init()
    nodes = []

    def make(overrides: dict):
        made = rclpy.create_node(NODE_NAME, parameter_overrides=[Parameter(k, value=v) for k, v in overrides.items()])
        nodes.append(made)
        return made
    yield make
    for made in nodes:
        made.destroy_node()
    rclpy.shutdown()


def test_the_simulation_node_loads_the_file_of_its_params_file_parameter(node, file):
    model = load_model(ROBOT)
    defaults = node_parameters(SIM_NODE_PARAMETERS.path(ROBOT), NODE_NAME)
    assert defaults["servo.position_gain"] != 0.25  # the file's value replaces the robot's
    made = node({"params_file": str(file)})
    spec = declare_driver(made, model, defaults)
    assert spec.config.servo.position_gain == 0.25 and spec.config.servo.max_velocity == 4.0
    assert spec.config.transmission.stiffness == 80.0
    # a group's own stiffness, over the group the robot's sim.yaml lists
    transmission = spec.config.transmission
    assert transmission.ankle_stiffness == 60.0 and "rleg_joint5" in transmission.ankle_joints
    assert transmission.stiffness_of("rleg_joint5") == 60.0 and transmission.stiffness_of("rleg_joint3") == 80.0
    assert made.get_parameter("servo.position_gain").value == 0.25
    assert spec.config.corrections == {"torso": params_file.LinkCorrection(mass_scale=1.5, com_x=0.01)}
    assert build_driver(model, spec.config).urdf == params_file.corrected_urdf(model.urdf, spec.config.corrections)
    # a value given on the command line wins over the file's
    spec = declare_driver(node({"servo.position_gain": 0.4, "params_file": str(file)}), model, defaults)
    assert spec.config.servo.position_gain == 0.4
    with pytest.raises(params_file.ParamsFileError, match="stifness"):
        bad = file.parent / "bad.yaml"
        bad.write_text("transmission: {stifness: 50}\n")
        declare_driver(node({"params_file": str(bad)}), model, defaults)


@pytest.mark.parametrize("fit", ["hoap2_postures_fit", "hoap2_postures_fit_groups", "hoap2_postures_fit_all"])
def test_the_documented_hoap2_postures_fits_load_and_are_their_reports_fits(fit):
    """docs/data/<fit>.yaml are what docs/postures.md tells users to try: each loads for the
    HOAP-2 and holds the values its report (the fit's own output) says were fitted."""
    import json

    from humanoid_description import urdf_xml

    data = Path(__file__).resolve().parents[2] / "docs" / "data"
    loaded = params_file.load(data / f"{fit}.yaml", params_file.link_names(urdf_xml("hoap2")))
    report = json.loads((data / f"{fit}.report.json").read_text())
    assert set(loaded) == set(report["parameters"])
    for name, entry in report["parameters"].items():
        assert loaded[name] == entry["value"], name
