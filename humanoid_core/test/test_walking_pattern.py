"""The walking pattern without a robot: preview control, footsteps, the ZMP reference and
the CoM path (ROS-free, in-process, fast)."""

from __future__ import annotations

import math

import numpy as np
import pytest

from humanoid_core.biped_walking import (
    Footstep,
    Mode,
    Pose2,
    PreviewController,
    StepLimits,
    SwingProfile,
    WalkParameters,
    WalkPattern,
    plan_step,
    preview_gains,
    rest_to_rest,
    soles_gap,
)
from humanoid_description import convex_hull, load_model, signed_margin

HOAP2_SOLE = (0.094, 0.062)


def make_pattern(robot: str = "hoap2", **overrides) -> tuple[WalkPattern, WalkParameters]:
    params = WalkParameters.for_robot(robot, **overrides)
    model = load_model(robot)
    gains = preview_gains(params.period, params.com_height, params.preview_horizon)
    feet = {"right": Pose2(0.0, -params.stance_width / 2), "left": Pose2(0.0, params.stance_width / 2)}
    pattern = WalkPattern(gains, params.timing, params.step_limits(model.config.feet["right"]), params.com_height,
                          params.swing_profile, params.max_velocity, params.acceleration,
                          (params.zmp_offset_x, params.zmp_offset_y), feet)
    return pattern, params


def support_polygon(pattern: WalkPattern, sample, length: float, width: float) -> np.ndarray:
    from humanoid_core.biped_walking import sole_polygon

    sides = ("right", "left") if sample.support == "both" else (sample.support,)
    return convex_hull(np.vstack([sole_polygon(sample.feet[s][0], length, width) for s in sides]))


def run(pattern: WalkPattern, limit: float = 60.0) -> list:
    samples = []
    while pattern.walking and pattern.time < limit:
        samples.append((pattern.advance(), pattern._preview.zmp.copy()))
    return samples


# -- preview control ---------------------------------------------------------------------
def test_preview_control_tracks_a_zmp_step_and_moves_the_com_before_it():
    gains = preview_gains(0.01, 0.25, 1.2)
    controller = PreviewController(gains, np.zeros(2))
    reference = np.zeros((600 + gains.steps + 1, 2))
    reference[200:, 0] = 0.05  # the ZMP reference steps 5 cm forward at t = 2 s
    com, zmp = [], []
    for k in range(600):
        controller.step(reference[k:k + gains.steps + 1])
        com.append(controller.com[0])
        zmp.append(controller.zmp[0])
    # anticipation: the CoM starts moving (backwards first: the ZMP must lead it) before 2 s
    assert abs(com[190]) > 1e-4
    # settled on the new reference, CoM over the ZMP
    assert zmp[-1] == pytest.approx(0.05, abs=1e-4) and com[-1] == pytest.approx(0.05, abs=1e-4)


@pytest.mark.parametrize(("dt", "com_height", "r_jerk"), [(0.01, 0.25, 1e-6), (0.01, 0.18, 1e-6), (0.005, 0.3, 1e-6),
                                                        (0.02, 0.2, 1e-8)])
def test_riccati_solves_the_preview_equation_as_scipy_does(dt, com_height, r_jerk):
    """The doubling solver (no scipy at a container's start) against scipy's own solver, on
    the augmented cart-table system preview_gains builds."""
    from scipy.linalg import solve_discrete_are

    from humanoid_core.biped_walking import riccati

    a = np.array([[1.0, dt, dt * dt / 2.0], [0.0, 1.0, dt], [0.0, 0.0, 1.0]])
    b = np.array([dt**3 / 6.0, dt * dt / 2.0, dt])
    c = np.array([1.0, 0.0, -com_height / 9.81])
    a_aug = np.zeros((4, 4))
    a_aug[0, 0], a_aug[0, 1:], a_aug[1:, 1:] = 1.0, c @ a, a
    b_aug = np.concatenate([[c @ b], b]).reshape(4, 1)
    q, r = np.diag([1.0, 0.0, 0.0, 0.0]), np.array([[r_jerk]])
    p = riccati(a_aug, b_aug, q, r)
    residual = (a_aug.T @ p @ a_aug - p + q
                - a_aug.T @ p @ b_aug @ np.linalg.solve(r + b_aug.T @ p @ b_aug, b_aug.T @ p @ a_aug))
    assert np.linalg.norm(residual) <= 1e-12 * np.linalg.norm(p)
    np.testing.assert_allclose(p, solve_discrete_are(a_aug, b_aug, q, r), rtol=1e-10, atol=0.0)


def test_riccati_refuses_an_unstabilizable_system():
    from humanoid_core.biped_walking import riccati

    with pytest.raises(ValueError):  # an unstable mode the input cannot reach
        riccati(np.diag([2.0, 0.5]), np.array([[0.0], [1.0]]), np.eye(2), np.eye(1))


def test_preview_gains_refuse_nonsense():
    with pytest.raises(ValueError):
        preview_gains(0.0, 0.25, 1.0)
    with pytest.raises(ValueError):
        preview_gains(0.01, 0.25, 0.001)


# -- footsteps ---------------------------------------------------------------------------
LIMITS = StepLimits(forward=0.05, backward=0.03, lateral=0.04, turn=0.3, stance_width=0.078,
                    sole_length=HOAP2_SOLE[0], sole_width=HOAP2_SOLE[1], min_gap=0.005)


@pytest.mark.parametrize("velocity", [(0.1, 0.0, 0.0), (0.0, 0.05, 0.0), (0.0, -0.05, 0.0), (0.0, 0.0, 0.4),
                                      (0.0, 0.0, -0.4), (0.08, 0.03, 0.3), (-0.05, 0.0, 0.0)])
def test_steps_stay_within_the_limits_and_never_bring_the_soles_together(velocity):
    support = Footstep("right", Pose2(0.0, -0.039, 0.0))
    for _ in range(12):
        step = plan_step(support, velocity, 0.5, LIMITS)
        assert soles_gap(support.pose, step.pose, *HOAP2_SOLE) >= LIMITS.min_gap - 1e-9
        centre_before = support.pose.compose(Pose2(0.0, (1 if step.side == "left" else -1) * 0.039, 0.0))
        moved = centre_before.relative(step.pose.compose(Pose2(0.0, (-1 if step.side == "left" else 1) * 0.039)))
        assert moved.x <= LIMITS.forward + 1e-9 and -moved.x <= LIMITS.backward + 1e-9
        assert abs(moved.yaw) <= LIMITS.turn + 1e-9
        support = step


def test_moving_sideways_only_the_leading_foot_opens_the_stance():
    support = Footstep("right", Pose2(0.0, -0.039, 0.0))
    left = plan_step(support, (0.0, 0.04, 0.0), 0.5, LIMITS)  # left foot leads to the left
    assert left.pose.y - support.pose.y == pytest.approx(0.078 + 0.04)
    right = plan_step(left, (0.0, 0.04, 0.0), 0.5, LIMITS)  # the right foot closes up
    assert left.pose.y - right.pose.y == pytest.approx(0.078)


# -- the swing foot ----------------------------------------------------------------------
@pytest.mark.parametrize(("lift", "ramp"), [(0.15, 0.5), (0.0, 0.2), (0.1, 0.3)])
def test_the_swing_foot_goes_from_rest_to_rest_at_its_stated_peak_speed(lift, ramp):
    profile = SwingProfile(0.02, lift, ramp)
    start, target = Pose2(0.0, -0.04, 0.0), Pose2(0.16, -0.04, 0.2)
    phases = np.linspace(0.0, 1.0, 20001)
    poses = [profile.pose(start, target, s) for s in phases]
    x = np.array([p.x for p, _ in poses])
    height = np.array([h for _, h in poses])
    assert (x[0], x[-1], height[0], height[-1]) == pytest.approx((0.0, 0.16, 0.0, 0.0), abs=1e-12)
    assert poses[-1][0].yaw == pytest.approx(0.2) and height.max() == pytest.approx(0.02)
    speed = np.gradient(x, phases)
    assert speed[0] == pytest.approx(0.0, abs=1e-6) and speed[-1] == pytest.approx(0.0, abs=1e-6)
    assert np.all(speed >= -1e-9)  # never backwards
    assert speed.max() / 0.16 == pytest.approx(profile.peak_speed_ratio, rel=1e-3)
    assert np.all(x[phases <= lift] == 0.0) and np.all(x[phases >= 1.0 - lift] == pytest.approx(0.16))
    assert np.max(np.abs(np.diff(np.gradient(speed, phases)))) < 0.01  # acceleration continuous


def test_a_swing_ramp_of_half_is_the_minimum_jerk_quintic_and_shares_are_checked():
    profile = SwingProfile(0.02, 0.0, 0.5)
    for s in np.linspace(0.0, 1.0, 11):
        assert profile.pose(Pose2(), Pose2(1.0), s)[0].x == pytest.approx(rest_to_rest(s), abs=1e-12)
    assert profile.peak_speed_ratio == pytest.approx(1.875)
    with pytest.raises(ValueError, match="swing_ramp_share"):
        WalkParameters(swing_ramp_share=0.0)
    with pytest.raises(ValueError, match="swing_lift_share"):
        WalkParameters(swing_lift_share=0.5)


# -- the pattern -------------------------------------------------------------------------
@pytest.mark.parametrize(("goal", "robot"), [((1.0, 0.0, 0.0), "hoap2"), ((0.0, 0.0, math.pi / 2), "hoap2"),
                                             ((0.0, 0.2, 0.0), "hoap2"), ((-0.2, 0.0, 0.0), "hoap2"),
                                             ((0.5, 0.0, 0.0), "bioloid"), ((0.3, -0.1, -0.5), "bioloid")])
def test_the_pattern_walks_to_its_goal_and_stands_with_the_cart_table_zmp_in_the_support(goal, robot):
    pattern, params = make_pattern(robot)
    foot = load_model(robot).config.feet["right"]
    pattern.set_goal(Pose2(*goal))
    samples = run(pattern)
    assert not pattern.walking and pattern.mode is Mode.STANDING
    centre = pattern.centre
    assert (centre.x, centre.y) == pytest.approx(goal[:2], abs=params.goal_position_tolerance)
    assert centre.yaw == pytest.approx(goal[2], abs=params.goal_turn_tolerance)
    # feet side by side at the stance width, parallel (a step of less than 2 mm and 1 deg is not taken)
    right, left = pattern.feet["right"], pattern.feet["left"]
    assert right.relative(left).y == pytest.approx(params.stance_width, abs=0.002)
    assert right.relative(left).x == pytest.approx(0.0, abs=0.002) and abs(right.relative(left).yaw) < 0.018
    # the planned CoM's ZMP (cart-table) stays inside the support polygon, with margin
    margins = [signed_margin(zmp, support_polygon(pattern, sample, foot.length, foot.width))
               for sample, zmp in samples]
    assert min(margins) > 0.005, min(margins)
    # and the reference itself is on the support foot in single support
    for sample, _ in samples:
        if sample.support != "both":
            assert signed_margin(sample.zmp, support_polygon(pattern, sample, foot.length, foot.width)) > 0.02


def test_cmd_vel_walking_accelerates_within_limits_and_stops_in_double_support():
    pattern, params = make_pattern("hoap2")
    pattern.set_velocity(1.0, 0.0, 0.0)  # far beyond the limit: clipped
    lengths = []
    while pattern.time < 6.0:
        pattern.advance()
        if pattern.steps and (not lengths or pattern.steps[0].velocity[0] != lengths[-1]):
            lengths.append(pattern.steps[0].velocity[0])
    assert max(lengths) == pytest.approx(params.max_velocity[0])
    increments = np.diff(lengths)
    assert np.all(increments <= params.linear_acceleration * params.step_period + 1e-9)
    pattern.stop()
    run(pattern)
    assert pattern.mode is Mode.STANDING and not pattern.steps
    right, left = pattern.feet["right"], pattern.feet["left"]
    assert right.relative(left).x == pytest.approx(0.0, abs=1e-9)


def test_a_new_wish_replaces_only_the_steps_not_yet_begun():
    pattern, _ = make_pattern("hoap2")
    pattern.set_velocity(0.06, 0.0, 0.0)
    while pattern.time < 3.0:
        pattern.advance()
    under_way = [s for s in pattern.steps if s.lift - pattern.timing.double_support <= pattern.time]
    pattern.set_velocity(0.0, 0.0, 0.4)
    assert pattern.steps[:len(under_way)] == under_way


def test_walking_parameters_are_checked():
    with pytest.raises(ValueError, match="double_support_ratio"):
        WalkParameters(double_support_ratio=1.0)
    with pytest.raises(ValueError, match="com_height"):
        WalkParameters(com_height=0.0)
