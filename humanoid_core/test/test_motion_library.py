"""The motion library: every motion loads, stays within the limits, keeps the CoM over the feet
and is free of self-collision at its keyframes; lookup by name and by path."""

import functools

import numpy as np
import pytest

from humanoid_core.balance import FallManagerParameters
from humanoid_core.motion import JointBounds, MotionError, list_motions, load_motion, plan_playback
from humanoid_description import ROBOTS, CollisionModel, convex_hull, load_model, signed_margin

COMMON = {"home", "arms_lowered", "squat", "bow", "wave"}
BALANCED = {f"P{i}" for i in range(1, 14)}
MIN_MARGIN = 0.005  # m: CoM projection at least this far inside the support polygon
FLAT = 0.002  # m: in double support every sole corner lies this close to the ground

LIBRARY = [(robot, name) for robot in ROBOTS for name in list_motions(robot)]
#: The motions played standing: a get-up (the fall manager's getup_<side>) starts lying down
#: (humanoid_sim/test/test_getup_motions.py plays them).
STANDING = [(robot, name) for robot, name in LIBRARY if not name.startswith(FallManagerParameters().getup_prefix)]


@functools.cache
def collision_model(robot):
    return CollisionModel(load_model(robot))


def keyframe_positions(motion, index):
    model = load_model(motion.robot)
    return model.joints.to_array(motion.keyframe(index), default=model.home_positions())


def test_every_robot_has_the_common_motions_and_the_bioloid_its_balanced_poses():
    assert set(list_motions("hoap2")) >= COMMON
    assert set(list_motions("bioloid")) >= COMMON | BALANCED
    assert list_motions("bioloid") == sorted(list_motions("bioloid"))
    assert set(list_motions("bioloid_quadruped")) >= {"home", "crouch"}


@pytest.mark.parametrize(("robot", "name"), LIBRARY)
def test_library_motion_loads_within_limits_and_plays_at_nominal_speed(robot, name):
    motion = load_motion(robot, name)
    assert (motion.robot, motion.name) == (robot, name)
    assert motion.description
    assert motion.joint_names == load_model(robot).joints.names  # whole-body motions
    bounds = JointBounds.for_robot(robot)
    assert np.all(motion.positions >= bounds.lower) and np.all(motion.positions <= bounds.upper)
    playback = plan_playback(motion, current=dict(zip(bounds.joint_names, bounds.lower * 0.0, strict=True)))
    assert not playback.scaling.slowed, playback.scaling.describe()
    assert np.all(np.abs(playback.trajectory.velocities) <= bounds.velocity)


@pytest.mark.parametrize(("robot", "name"), STANDING)
def test_library_motion_keeps_the_com_over_the_feet_at_every_keyframe(robot, name):
    motion = load_motion(robot, name)
    model = load_model(robot)
    for i in range(motion.keyframe_count):
        q = keyframe_positions(motion, i)
        support = motion.support(i)
        base = model.standing_base(q, support=support)
        sides = model.support_feet(q, support)  # both = every foot (four for the quadruped)
        corners = np.vstack([model.sole_corners(side, q, base) for side in sides])
        assert np.all(np.abs(corners[:, 2]) <= FLAT), f"{motion.label(i)}: feet not on the ground"
        margin = signed_margin(model.com(q, base)[:2], convex_hull(corners[:, :2]))
        assert margin >= MIN_MARGIN, f"{name}, {motion.label(i)}: CoM margin {margin * 1000:.1f} mm"


@pytest.mark.parametrize(("robot", "name"), LIBRARY)
def test_library_motion_is_free_of_self_collision_at_every_keyframe(robot, name):
    motion = load_motion(robot, name)
    for i in range(motion.keyframe_count):
        report = collision_model(robot).check(keyframe_positions(motion, i))
        assert not report.in_collision, f"{name}, {motion.label(i)}: {report.colliding}"


def test_load_by_path_and_helpful_errors(tmp_path):
    pages = tmp_path / "nod.yaml"
    pages.write_text("format: bioloid_pages\nrobot: bioloid\npages:\n  - steps:\n"
                     "      - {positions: {5: 512}}\n      - {speed: 100, positions: {5: 400}}\n")
    assert load_motion("bioloid", pages).joint_names == ("r_elbow",)
    assert load_motion("bioloid", str(pages)).name == "nod"
    with pytest.raises(MotionError, match=r"no motion 'dance' in the hoap2 library \(known: arms_lowered, bow"):
        load_motion("hoap2", "dance")
    with pytest.raises(MotionError, match="no such file"):
        load_motion("hoap2", tmp_path / "absent.yaml")
    with pytest.raises(MotionError, match=r"nod.yaml:2: this motion is for robot 'bioloid', not 'hoap2'"):
        load_motion("hoap2", pages)
    odd = tmp_path / "walk.mtn"
    odd.write_text("binary")
    with pytest.raises(MotionError, match=r"unknown motion file type '\.mtn'"):
        load_motion("bioloid", odd)
    unknown = tmp_path / "x.yaml"
    unknown.write_text("format: bvh\nrobot: hoap2\n")
    with pytest.raises(MotionError, match=r"x.yaml:1: unknown format 'bvh'"):
        load_motion("hoap2", unknown)
