"""The walk controller without ROS: commands and readings in, joint set-points out.

The robot here is kinematic: each set-point is read back as the next measurement (an
ideal position servo), so the tests check what the controller commands (soles flat and
where the pattern puts them, joints within limits, a clean stop in double support) and
how it treats commands and unknown readings; walking with physics is the system tests'.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
import yaml

from humanoid_core.biped_walking import (
    NODE_NAME,
    GoalState,
    Phase,
    WalkController,
    WalkParameters,
    WalkRefusedError,
    walking_robot,
)
from humanoid_core.loop import VELOCITY_MARGIN
from humanoid_description import CONTROL_NODE_PARAMETERS, load_model


class KinematicRobot:
    """Reads back what was commanded; a joint can be made unknown (NaN)."""

    def __init__(self, robot: str, **overrides) -> None:
        self.model = load_model(robot)
        self.params = WalkParameters.for_robot(robot, **overrides)
        self.controller = WalkController(self.model, self.params)
        self.positions = self.model.home_positions()
        self.time = 0.0
        self.setpoints = []
        self.stale: set[str] = set()

    def measured(self) -> np.ndarray:
        reading = self.positions.copy()
        for name in self.stale:
            reading[self.model.joints.index(name)] = math.nan
        return reading

    def cycle(self):
        setpoint = self.controller.update(self.time, self.measured())
        if setpoint is not None:
            self.positions = setpoint.positions
            self.setpoints.append(setpoint)
        self.time += self.params.period
        return setpoint

    def run_until(self, condition, limit: float = 60.0) -> None:
        end = self.time + limit
        while not condition() and self.time < end:
            self.cycle()
        assert condition(), f"not within {limit} s of robot time"

    def soles(self):
        """Sole placements of the current set-point with the IK's base (walking frame)."""
        base = self.controller.solver.q
        import pinocchio as pin

        placement = pin.XYZQUATToSE3(base[:7])
        feet = self.model.config.feet
        return {side: self.model.frame_placement(feet[side].sole, self.positions, placement)
                for side in ("right", "left")}


@pytest.fixture(params=["hoap2", "bioloid"])
def robot(request) -> KinematicRobot:
    return KinematicRobot(request.param)


def test_a_walk_goal_is_reached_with_the_soles_flat_and_the_joints_within_limits(robot):
    goal = robot.controller.walk_to(0.2, 0.0, 0.3)
    walked = []

    def done():
        if robot.controller.phase is Phase.WALKING:
            walked.append(robot.soles())
        return goal.done

    robot.run_until(done)
    assert goal.state is GoalState.SUCCEEDED, goal.message
    where = robot.controller.progress(goal)
    assert (where.x, where.y, where.yaw) == pytest.approx((0.2, 0.0, 0.3), abs=0.02)
    assert robot.controller.steps(goal) >= 4
    assert robot.controller.solver.error < 1e-5
    positions = np.array([s.positions for s in robot.setpoints])
    assert np.all(positions >= robot.model.joints.lower - 1e-9) and np.all(positions <= robot.model.joints.upper + 1e-9)
    for soles in walked:  # the soles stay level (a swing foot lifts, never tilts)
        for sole in soles.values():
            assert sole.rotation[2, 2] > math.cos(math.radians(0.5))
    assert robot.controller.phase is Phase.IDLE and robot.cycle() is None  # standing: nothing more sent
    last = robot.setpoints[-1]
    assert np.all(last.velocities == 0.0)  # the last set-point arrives at rest
    assert robot.model.support_side(last.positions) == "both"


def test_the_hoap2_default_gait_walks_1_m_at_0_1_m_s_as_the_ik_solves_it_within_the_joint_speeds():
    """Issue 15's walk, planned: 1 m at 0.1 m/s or more from standing to standing, and every
    set-point the IK's own solution, within VELOCITY_MARGIN of the joints' speed limits (a
    faster solution is clipped to the margin and the swing sole then tilts: 10 deg with a
    vertical lift and landing at 7 cm per 0.5 s), soles flat."""
    robot = KinematicRobot("hoap2")
    joints, model = robot.model.joints, robot.model
    goal = robot.controller.walk_to(1.0, 0.0, 0.0)
    clipped, tilt = [], 0.0

    def done():
        nonlocal tilt
        if robot.controller.phase is Phase.WALKING and robot.setpoints:
            solution = robot.controller.solver.q[model.q_index]
            if not np.allclose(robot.setpoints[-1].positions, solution, atol=1e-9):
                clipped.append(robot.setpoints[-1].stamp)
            tilt = max(tilt, *(math.acos(min(1.0, sole.rotation[2, 2])) for sole in robot.soles().values()))
        return goal.done

    robot.run_until(done)
    assert goal.state is GoalState.SUCCEEDED, goal.message
    speed = robot.controller.progress(goal).x / (goal.ended - goal.started)
    assert speed >= 0.1, f"{speed:.4f} m/s"
    assert not clipped, f"{len(clipped)} set-points clipped (the IK's solution moved faster) from {clipped[0]:.2f} s"
    stamps = np.array([s.stamp for s in robot.setpoints])
    positions = np.array([s.positions for s in robot.setpoints])
    peak = float(np.max(np.abs(np.diff(positions, axis=0)) / np.diff(stamps)[:, None] / joints.velocity))
    assert peak < VELOCITY_MARGIN, f"peak joint speed {peak:.3f} of the limit"
    assert math.degrees(tilt) < 0.5


def test_a_stale_joint_stops_the_walk_in_double_support_and_says_which(robot):
    goal = robot.controller.walk_to(1.0, 0.0, 0.0)
    robot.run_until(lambda: robot.controller.steps(goal) >= 3)
    leg = robot.controller.leg_joints[3]
    robot.stale.add(leg)
    robot.run_until(lambda: goal.done)
    assert goal.state is GoalState.STOPPED
    assert leg in goal.message and "NaN" in goal.message
    assert robot.controller.progress(goal).x < 0.9
    assert robot.model.support_side(robot.setpoints[-1].positions) == "both"  # stands on both feet
    assert all(np.all(np.isfinite(s.positions)) for s in robot.setpoints)  # never a NaN set-point
    # and it refuses to start again while the joint is unknown
    again = robot.controller.walk_to(0.1, 0.0, 0.0)
    assert robot.cycle() is None
    assert again.state is GoalState.REFUSED and leg in again.message


def one_foot(robot: KinematicRobot) -> np.ndarray:
    """The HOAP-2 on its right foot, the left raised 4 cm (its hip and knee bent)."""
    positions = robot.model.home_positions()
    positions[robot.model.joints.index("lleg_joint3")] = -0.4
    positions[robot.model.joints.index("lleg_joint4")] = 0.8
    positions[robot.model.joints.index("lleg_joint5")] = -0.4
    return positions


def test_a_walk_from_one_foot_puts_the_other_down_beneath_it_first_then_walks():
    robot = KinematicRobot("hoap2")
    robot.positions = one_foot(robot)
    model = robot.model
    feet = model.config.feet

    def from_the_right_sole(positions):  # the left sole and the CoM seen from the stance sole
        right = model.frame_placement(feet["right"].sole, positions)
        return (right.actInv(model.frame_placement(feet["left"].sole, positions).translation),
                right.actInv(model.com(positions)))

    assert model.support_side(robot.positions) == "right"
    lifted, com = from_the_right_sole(robot.positions)
    goal = robot.controller.walk_to(0.1, 0.0, 0.0)
    robot.cycle()
    assert "stands on its right foot" in robot.controller.message
    preparation = robot.controller._preparation
    landing_end = preparation.start + preparation.landing
    robot.run_until(lambda: robot.setpoints[-1].stamp >= landing_end + 0.1)
    at_landing = min(robot.setpoints, key=lambda setpoint: abs(setpoint.stamp - landing_end)).positions
    assert model.support_side(at_landing) == "both"  # both soles flat on the ground
    landed, com_landed = from_the_right_sole(at_landing)
    assert np.allclose(landed[:2], lifted[:2], atol=1e-3) and abs(landed[2]) < 1e-3  # beneath where it was
    assert np.allclose(com_landed[:2], com[:2], atol=2e-3)  # the CoM stayed where it was over the ground
    robot.run_until(lambda: goal.done)
    assert goal.state is GoalState.SUCCEEDED, goal.message


def test_a_foot_that_cannot_be_put_down_is_said_and_the_walk_refused():
    robot = KinematicRobot("hoap2")
    positions = one_foot(robot)
    positions[robot.model.joints.index("lleg_joint2")] = 0.6  # the left leg swung far out to the side
    robot.positions = positions
    goal = robot.controller.walk_to(0.1, 0.0, 0.0)
    robot.cycle()
    assert goal.state is GoalState.REFUSED, goal.message
    assert "stands on its right foot" in goal.message and "bring it down with a trajectory" in goal.message


def test_cmd_vel_walks_and_stops_when_it_stops_coming():
    robot = KinematicRobot("hoap2")
    controller = robot.controller
    controller.walk_velocity(0.05, 0.0, 0.0, robot.time)
    robot.run_until(lambda: controller.pattern is not None and controller.pattern.landed >= 2)
    assert controller.phase is Phase.WALKING
    robot.run_until(lambda: controller.phase is Phase.IDLE, limit=10.0)  # no cmd_vel repeated: timeout
    assert "no cmd_vel" in controller.message
    assert robot.model.support_side(robot.setpoints[-1].positions) == "both"


def test_a_zero_cmd_vel_stops_and_a_canceled_goal_ends_once_standing():
    robot = KinematicRobot("hoap2")
    controller = robot.controller
    goal = controller.walk_to(1.0, 0.0, 0.0)
    robot.run_until(lambda: controller.steps(goal) >= 2)
    controller.cancel(goal)
    assert not goal.done  # the step under way ends first
    robot.run_until(lambda: goal.done)
    assert goal.state is GoalState.CANCELED and controller.phase is Phase.IDLE
    # cmd_vel then a zero cmd_vel
    controller.walk_velocity(0.05, 0.0, 0.0, robot.time)
    robot.run_until(lambda: controller.phase is Phase.WALKING and controller.pattern.landed >= 2)
    controller.walk_velocity(0.0, 0.0, 0.0, robot.time)
    robot.run_until(lambda: controller.phase is Phase.IDLE, limit=5.0)


def test_bad_commands_are_refused_with_the_reason():
    controller = KinematicRobot("hoap2").controller
    with pytest.raises(WalkRefusedError, match="non-finite"):
        controller.walk_to(math.nan, 0.0, 0.0)
    with pytest.raises(WalkRefusedError, match="pi"):
        controller.walk_to(0.0, 0.0, 4.0)
    with pytest.raises(WalkRefusedError, match="non-finite"):
        controller.walk_velocity(math.inf, 0.0, 0.0, 0.0)
    with pytest.raises(WalkRefusedError, match="non-finite"):
        controller.walk_to(0.0, -math.inf, 0.0)
    with pytest.raises(WalkRefusedError, match=r"distance 1e\+308 m is beyond max_goal_distance = 20 m"):
        controller.walk_to(1e308, 0.0, 0.0)
    with pytest.raises(WalkRefusedError, match=r"lateral -1e\+09 m is beyond max_goal_lateral = 5 m"):
        controller.walk_to(0.0, -1e9, 0.0)
    assert not controller.active
    assert controller.walk_to(-20.0, 5.0, -math.pi).state is GoalState.PENDING  # the bounds themselves


@pytest.mark.parametrize("robot", [r for r in CONTROL_NODE_PARAMETERS.robots() if walking_robot(r)])
def test_every_walking_parameter_in_a_robot_file_is_a_parameter(robot):
    data = yaml.safe_load(CONTROL_NODE_PARAMETERS.path(robot).read_text())
    keys = set(data[NODE_NAME]["ros__parameters"])
    fields = set(WalkParameters.__dataclass_fields__)
    assert keys <= fields, keys - fields
    WalkParameters.for_robot(robot)  # and the values pass the checks


@pytest.mark.parametrize("robot_name", ["hoap2", "bioloid"])
def test_the_first_trajectories_of_a_walk_reaching_the_robot_late_are_still_accepted(robot_name):
    """A loaded controller's trajectories reach the robot after the reading they answer; the
    robot joins a late one on its timeline, from where it stands. The walk's first ones must
    not ask for a jump: arriving up to most of ``command_lead`` late, the robot's validator
    (with its measured position) accepts them."""
    from humanoid_core.biped_walking import WalkCycle
    from humanoid_core.loop import CommandValidator, PointData

    robot = KinematicRobot(robot_name)
    robot.positions = np.zeros(len(robot.model.joints))  # every joint at its zero (a servo bus's centres)
    cycle = WalkCycle(robot.controller)
    validator = CommandValidator(robot.model.joints)
    late = 0.8 * robot.params.command_lead
    robot.controller.walk_velocity(0.02, 0.0, 0.0, robot.time)
    batches = []
    while robot.time < 2.0 * robot.params.command_lead:
        batch = cycle.cycle(robot.time, robot.measured(), None)
        if batch is not None:
            batches.append((robot.time, batch))
        robot.time += robot.params.period
    assert batches
    for k, (sent_at, batch) in enumerate(batches):
        arrival = sent_at + late
        # where the robot is when the trajectory arrives: on the path it got before, or where it stood
        passed = sorted((s.stamp, s.positions) for _, before in batches[:k] for s in before.setpoints
                        if s.stamp <= arrival)
        current = passed[-1][1] if passed else robot.positions
        points = [PointData(s.stamp - batch.start, s.positions, v) for s, v in zip(batch.setpoints, batch.velocities,
                                                                                    strict=True)]
        validator.trajectory(robot.model.joints.names, points, current, start_time=batch.start, now=arrival)
