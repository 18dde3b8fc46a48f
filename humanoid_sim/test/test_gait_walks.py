"""An IK gait walks the quadruped forward in the simulation (the node's physics, headless),
and the distance comes from the stride: the same gait stepping in place stays put. The trot
here follows our flat foot path (the default, the report's rules of thumb, makes this model
fall: docs/quadruped.md)."""

import math

import pytest

from humanoid_core.odometry import KinematicOdometry, OdometryParameters
from humanoid_core.quadruped_gaits import CPGParameters, GaitPlayer, IKGait, cpg_player, default_parameters
from humanoid_sim import HeadlessSimulation

ROBOT = "bioloid_quadruped"
SECONDS = 4.0
#: Slow enough for the feet to follow their paths: at 1.5 Hz the body hops and drifts forward
#: even stepping in place (docs/quadruped.md).
FREQUENCY = 0.5


@pytest.fixture(scope="module")
def simulation():
    with HeadlessSimulation(ROBOT) as sim:
        yield sim


def flat_trot(model, period: float, **overrides) -> GaitPlayer:
    params = default_parameters(model, frequency=FREQUENCY, foot_path="flat", **overrides)
    return GaitPlayer(IKGait(model, "trot", params), period, "trot")


def test_the_trot_walks_forward_without_falling(simulation):
    model, period = simulation.model, simulation.control_period
    outcome = simulation.run(flat_trot(model, period), SECONDS)
    print(outcome)
    assert not outcome.fell, f"fell at {outcome.fall_time} s"
    # two cycles of a 40 mm stride: 80 mm if no foot slipped (the sweep saw 231 mm in 8 s)
    assert outcome.distance > 0.05
    assert outcome.distance > 3.0 * abs(outcome.lateral)

    stepping = simulation.run(flat_trot(model, period, half_stride=0.0), SECONDS)
    print(stepping)
    assert not stepping.fell
    assert abs(stepping.distance) < outcome.distance / 4


def test_a_cpg_gait_walks_forward_without_falling(simulation):
    """The oscillators with uncoupled legs (started in a trot's phases, knees in phase with
    their hips): 821 mm in 6 s when measured; here 3 s."""
    gait = cpg_player(simulation.model, CPGParameters(frequency=1.0, structure="independent"),
                      simulation.control_period)
    outcome = simulation.run(gait, 3.0)
    print(outcome)
    assert not outcome.fell, f"fell at {outcome.fall_time} s"
    assert outcome.distance > 0.1 and outcome.distance > 3.0 * abs(outcome.lateral)
    # eq 17's samples: the start and one a second, the last where the run ended
    assert len(outcome.samples) == 4
    start, end = outcome.samples[0], outcome.samples[-1]
    assert math.hypot(end[0] - start[0], end[1] - start[1]) == pytest.approx(math.hypot(outcome.distance,
                                                                                        outcome.lateral))
    assert outcome.path_fitness(0.0, 1.0) == pytest.approx(outcome.path_length)


def test_as_played_the_servos_get_the_velocities_the_gait_controller_sends(simulation):
    """``humanoid gaits --as-played`` writes each set-point with the velocity a run of the gait
    controller gives it; the trot at 0.5 Hz still walks forward without falling that way."""
    import numpy as np

    from humanoid_core.quadruped_gaits import GaitRun, RunTiming
    from humanoid_sim.gait_evaluation import _command

    model, period = simulation.model, simulation.control_period
    home = model.home_positions()
    run = GaitRun(flat_trot(model, period), home, home, 1.0, RunTiming(0.5, 0.5, 1.0))
    played = [run.setpoint(step) for step in range(run.gait_end)]
    evaluated = flat_trot(model, period)
    for point in played[run.gait_start + 1:]:
        command = _command(evaluated, point.step - run.gait_start, as_played=True)
        np.testing.assert_array_equal(command.position, point.positions)
        np.testing.assert_array_equal(command.velocity, point.velocities)
    outcome = simulation.run(flat_trot(model, period), SECONDS, as_played=True)
    print(outcome)
    assert not outcome.fell and outcome.distance > 0.05


def test_the_odometry_follows_the_trot_as_its_balls_roll(simulation):
    """The kinematic odometry fed the trot's joint readings (set-points played with their
    velocities, as the gait controller sends them) against the simulator's base. A standing
    ball rolls as its leg turns, carrying the body further than the stride: with its balls
    held where they came down the odometry came out 10.7 % short over these two cycles (9.4 %
    over four), rolling 2.8 % (1.3 %)."""
    model, period = simulation.model, simulation.control_period
    errors = {}
    for rolling in (True, False):
        odometry = KinematicOdometry(model, OdometryParameters.for_robot(ROBOT, ball_rolling=rolling))
        outcome = simulation.run(flat_trot(model, period), SECONDS, as_played=True, odometry=odometry)
        print(rolling, outcome)
        assert not outcome.fell
        errors[rolling] = outcome.odometry_error_m / outcome.distance
        assert abs(outcome.odometry_heading_error_deg) < 2.0
    assert errors[True] < 0.05, errors
    assert errors[False] > 2.0 * errors[True], errors


def stand(simulation):
    """The robot reset to its home pose and held there 1 s: settled on its four feet."""
    from humanoid_core.loop import JointCommand

    home = simulation.model.home_positions()
    simulation.driver.reset(home)
    hold(simulation, JointCommand(position=home), 1.0)
    return home


def hold(simulation, command, seconds: float) -> None:
    for _ in range(round(seconds / simulation.control_period)):
        simulation.driver.write(command)
        simulation.driver.sync(simulation.control_period)


def send(simulation, point) -> None:
    """One set-point of a run with its velocity, as the gait controller sends it, for a control period."""
    from humanoid_core.loop import JointCommand

    hold(simulation, JointCommand(position=point.positions, velocity=point.velocities), simulation.control_period)


def lead_in_turn(simulation, stepper) -> float:
    """Degrees the body turns while a run takes the robot from its settled stance to the flat
    trot's first set-point."""
    from humanoid_core.quadruped_gaits import GaitRun, RunTiming

    model, driver = simulation.model, simulation.driver
    home = stand(simulation)
    start = driver.base_placement().rotation
    run = GaitRun(flat_trot(model, simulation.control_period), driver.read().position, home, 1.0,
                  RunTiming(1.0, 1.0, 1.0), stepper)
    for step in range(1, run.gait_start + 1):
        send(simulation, run.setpoint(step))
    assert not driver.fall_state().fallen
    turn = driver.base_placement().rotation @ start.T
    return math.degrees(math.atan2(turn[1, 0], turn[0, 0]))


def test_stepping_into_the_trot_turns_the_body_less_than_gliding(simulation):
    """The glide into the trot's first set-point (one diagonal pair forward, the other back, all
    four feet down) turns the body by slipping, which no joint reading shows (-3.3 deg here);
    stepping, a leg at a time with the body shifted over the standing feet, slips no foot
    (-0.6 deg): through the graph the trot's odometry error fell from 6-12 % to 1-2 %
    (docs/walking.md)."""
    from humanoid_core.quadruped_gaits import GaitControllerParameters

    params = GaitControllerParameters.for_robot(ROBOT)
    glide = lead_in_turn(simulation, None)
    step = lead_in_turn(simulation, params.stepper(simulation.model, "step"))
    print(f"lead-in turn: glide {glide:.2f} deg, step {step:.2f} deg")
    assert abs(step) < 1.0
    assert abs(glide) > 2.0 * abs(step) + 1.0


@pytest.mark.parametrize("cancel_at", [1.0, 6.1])
def test_a_stepped_run_canceled_in_its_lead_in_or_mid_gait_ends_standing(simulation, cancel_at):
    """A cancel in the stepped lead-in (the body shifted, a foot in the air) or in the gait (a
    pair lifted) glides back to the stance: a step from there shifted the body over feet
    already shifted, or over two feet, and the robot tipped over (5 of 7 cancels, in process)."""
    from humanoid_core.loop import JointCommand
    from humanoid_core.quadruped_gaits import GaitControllerParameters, GaitRun, Stage

    model, period, driver = simulation.model, simulation.control_period, simulation.driver
    params = GaitControllerParameters.for_robot(ROBOT)
    home = stand(simulation)
    run = GaitRun(flat_trot(model, period), driver.read().position, home, 8.0, params.timing,
                  params.stepper(model, "step"))
    step, stopped = 1, False
    while (point := run.setpoint(step)).stage is not Stage.DONE:
        if not stopped and step * period >= cancel_at:
            stopped = run.stop(step, point.positions)
        send(simulation, point)
        step += 1
    hold(simulation, JointCommand(position=home), 1.0)
    assert stopped and run.stopped_early
    assert not driver.fall_state().fallen, driver.fall_state().reason
