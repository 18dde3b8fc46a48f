"""Physics profiles: a profile is chosen by name, an unknown one is refused before anything
starts, the profile's values reach PyBullet (in-process and through the simulation node's
parameters), the HOAP-2 walks under the fast profile, the same twice, and the quadruped
trots under its fast profile as under its reference, within the bounds docs/physics_profiles.md
gives.

The profile's speed and its fidelity against the reference are measured by
``humanoid bench physics``, not here."""

from __future__ import annotations

import pybullet
import pytest
import rclpy
from rclpy.parameter import Parameter

from humanoid_bringup import main
from humanoid_core import node_parameters
from humanoid_description import SIM_NODE_PARAMETERS, load_model, resolve_robot
from humanoid_experiments.walk_in_process import walk_in_process
from humanoid_sim import (
    NODE_NAME,
    HeadlessSimulation,
    SimDriverConfig,
    SimulatedRobot,
    declare_driver,
    physics_profiles,
)

ROBOT = "hoap2"


def fast_values() -> dict:
    return physics_profiles.robot_profiles(resolve_robot(ROBOT))["fast"]


@pytest.mark.parametrize("command", [
    ["sim", "--robot", ROBOT], ["walk", "--robot", ROBOT, "--distance", "1"], ["postures", "--robot", ROBOT],
    ["demo"], ["bench", "physics", "--robot", ROBOT]])
def test_an_unknown_profile_is_one_line_and_exit_2_naming_the_known_ones(command, capsys):
    assert main([*command, "--physics", "nope"]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1, err
    assert "unknown physics profile 'nope'" in err and "known: reference, fast" in err


def test_bench_physics_set_takes_physics_values_and_names_a_typo(capsys):
    from humanoid_experiments.bench import parse_values

    assert parse_values(["physics_rate=500", "servo.position_gain = 0.36", "enable_cone_friction=false"]) == {
        "physics_rate": 500, "servo.position_gain": 0.36, "enable_cone_friction": False}
    assert main(["bench", "physics", "--robot", ROBOT, "--set", "solver_iteration=100"]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "'solver_iteration'" in err and "solver_iterations" in err, err
    assert main(["bench", "physics", "--robot", ROBOT, "--set", "real_time_factor=0"]) == 2  # not physics
    assert "'real_time_factor'" in capsys.readouterr().err


def test_a_profile_sets_physics_only():
    values = {"physics_rate": 1000.0, "physics_profiles.broken.fall_tilt": 90.0}
    with pytest.raises(ValueError, match="sets fall_tilt"):
        physics_profiles.apply(values, "broken")
    assert physics_profiles.apply(values, "reference") == values


def engine(robot: SimulatedRobot | HeadlessSimulation) -> dict:
    return pybullet.getPhysicsEngineParameters(physicsClientId=robot.driver._client)


def test_the_fast_profiles_values_reach_pybullet_in_process():
    fast = fast_values()
    assert fast["physics_rate"] < 1000.0  # else there is nothing to check
    with SimulatedRobot(ROBOT, "fast") as robot:
        assert engine(robot)["fixedTimeStep"] == pytest.approx(1.0 / fast["physics_rate"])
        assert engine(robot)["numSolverIterations"] == fast.get("solver_iterations", 50)
        assert robot.driver.servos.params.position_gain == pytest.approx(fast["servo.position_gain"])
        # PyBullet does not report its contact settings back: what the driver gave it
        assert robot.driver.params.engine_settings()["contactERP"] == pytest.approx(fast["contact_erp"])
    with SimulatedRobot(ROBOT) as robot:  # the reference: the file's own values
        assert engine(robot)["fixedTimeStep"] == pytest.approx(0.001)
        assert robot.driver.servos.params.position_gain == pytest.approx(0.2)


@pytest.fixture
def node():
    rclpy.init()
    nodes = []

    def make(profile: str | None, overrides: dict | None = None):
        parameters = [Parameter(k, value=v) for k, v in (overrides or {}).items()]
        if profile is not None:
            parameters.append(Parameter("physics_profile", value=profile))
        made = rclpy.create_node(NODE_NAME, parameter_overrides=parameters)
        nodes.append(made)
        return made
    yield make
    for made in nodes:
        made.destroy_node()
    rclpy.shutdown()


def test_the_simulation_node_takes_its_profile_from_the_physics_profile_parameter(node):
    model = load_model(ROBOT)
    defaults = node_parameters(SIM_NODE_PARAMETERS.path(ROBOT), NODE_NAME)
    fast = fast_values()

    def declared(made) -> SimDriverConfig:
        return declare_driver(made, model, defaults).config

    made = node("fast")
    config = declared(made)
    assert config.sim.physics_rate == fast["physics_rate"]
    assert config.servo.position_gain == pytest.approx(fast["servo.position_gain"])
    assert made.get_parameter("physics_rate").value == fast["physics_rate"]
    # a value given on the command line wins over the profile's
    assert declared(node("fast", {"physics_rate": 500.0})).sim.physics_rate == 500.0
    # the default is the reference
    assert declared(node(None)).sim.physics_rate == defaults["physics_rate"] == 1000.0
    with pytest.raises(physics_profiles.UnknownProfileError, match="known: reference, fast"):
        declared(node("nope"))


def test_the_hoap2_walks_under_the_fast_profile_and_twice_the_same():
    first = walk_in_process(ROBOT, 0.2, profile="fast", settle=0.5)
    assert not first.fell and first.error_code == 0, first.text()
    assert first.distance_m == pytest.approx(0.2, abs=0.02), first.text()
    again = walk_in_process(ROBOT, 0.2, profile="fast", settle=0.5)
    assert (again.distance_m, again.lateral_m, again.turn_rad) == (first.distance_m, first.lateral_m, first.turn_rad)


#: The quadruped's fast profile against its reference on the flat-path trot `humanoid bench
#: world` plays (0.5 Hz, 10 s, in process): how much farther or shorter it may go (a share of the
#: reference's distance) and how much more it may turn (deg). Settings more accurate than the
#: reference (2 kHz, or 100 solver iterations) moved the distance by -7 and +3 % and the heading by
#: up to 1.5 deg; fast: -10 %, 0.6 deg (docs/physics_profiles.md, "The quadruped's fast profile").
QUADRUPED_DISTANCE_SHARE, QUADRUPED_HEADING_DEG = 0.15, 2.0


def test_the_quadrupeds_fast_profile_trots_as_its_reference():
    from humanoid_core.quadruped_gaits import ik_player

    outcomes = {}
    for profile in ("reference", "fast"):
        with HeadlessSimulation("bioloid_quadruped", profile) as simulation:
            rate = 1.0 / engine(simulation)["fixedTimeStep"]
            player = ik_player(simulation.model, "trot", simulation.control_period, foot_path="flat", frequency=0.5)
            outcomes[profile] = (rate, simulation.run(player, 10.0))
    (reference_rate, reference), (fast_rate, fast) = outcomes["reference"], outcomes["fast"]
    assert (reference_rate, fast_rate) == (pytest.approx(1000.0), pytest.approx(500.0))
    assert not reference.fell and not fast.fell
    assert reference.distance > 0.2  # it trots forward: else there is nothing to compare
    assert fast.distance == pytest.approx(reference.distance, rel=QUADRUPED_DISTANCE_SHARE)
    assert abs(fast.heading_deg - reference.heading_deg) <= QUADRUPED_HEADING_DEG
