"""The collision geometry matches the robots: what they are known to do is free of
self-collision, what they cannot do is caught.

Free (every checked pair at least the robot's safety distance apart, along densely
sampled paths): the motion library played as the robot plays it, the HOAP-2's csv
motion, the HOAP-2 postures protocol's sweeps from both start poses to the joint
limits of the reference (hoap2.md), the Bioloid balanced poses P1-P13 (library
motions), the arms raised forward and sideways over their whole range, the head over
its range. Caught (the named pair collides): arm into head, arm into torso, forearm
into thigh, legs crossing, on both robots.
"""

from __future__ import annotations

import functools

import numpy as np
import pytest

from humanoid_core.loop import Law, Spline
from humanoid_core.motion import list_motions, load_motion, plan_playback, read_motion_file
from humanoid_description import CollisionModel, CollisionTracker, load_model

LIBRARY = [(robot, name) for robot in ("hoap2", "bioloid") for name in list_motions(robot)]
#: The reference's csv line (hoap2.md): a symmetric crouch with the arms lowered.
CSV_LINE = ("1,2,-2,-3,4178,8357,-4598,-3,18807,-2091,-2090,5222,-2,-3,-4180,-8360,4595,0,-18811,2087,2087,-5228,"
            "3,60,R,R,R")
#: The postures protocol's moves (hoap2.md): one joint or a symmetric pair, swept here over
#: the whole joint range (the real robot falls before the ends; the geometry must not collide).
POSTURE_SWEEPS = {"leg3": ("rleg_joint3", "lleg_joint3"), "body": ("body_joint1",),
                  "leg5": ("rleg_joint5", "lleg_joint5"), "leg4": ("rleg_joint4", "lleg_joint4"),
                  "leg6": ("rleg_joint6", "lleg_joint6")}


@functools.cache
def collision_model(robot: str) -> CollisionModel:
    return CollisionModel(load_model(robot))


def tracker(robot: str) -> CollisionTracker:
    """A fresh checker with the robot's safety distance (robot.yaml)."""
    return CollisionTracker(collision_model(robot), load_model(robot).config.safety_distance)


def pose(robot: str, base: str | np.ndarray = "home", **degrees: float) -> np.ndarray:
    model = load_model(robot)
    q = model.pose_positions(base) if isinstance(base, str) else np.array(base, dtype=float)
    for joint, value in degrees.items():
        q[model.joints.index(joint)] = np.radians(value)
    assert np.all(q >= model.joints.lower - 1e-9) and np.all(q <= model.joints.upper + 1e-9), degrees
    return q


def assert_clear(robot: str, configurations: np.ndarray, what: str, path: bool = False) -> None:
    """Every configuration keeps every checked pair at least the safety distance apart, and
    with ``path`` the motion between consecutive ones too (configurations a few ms apart)."""
    check = tracker(robot)
    if path:
        hit = check.first_violation_along(np.asarray(configurations))
    else:
        hit = next(((i, pair) for i, q in enumerate(configurations)
                    if (pair := check.first_violation(q)) is not None), None)
    if hit is not None:
        index, pair = hit
        model = load_model(robot)
        angles = {n: round(float(np.degrees(v)), 1) for n, v in zip(model.joints.names, configurations[index],
                                                                      strict=True) if abs(v) > 1e-9}
        pytest.fail(f"{what}: {pair.link_a} and {pair.link_b} {pair.distance * 1000:.1f} mm apart "
                    f"(safety distance {model.config.safety_distance * 1000:g} mm) at {angles}")


def played(robot: str, motion, period: float = 0.002) -> np.ndarray:
    """The motion as the robot plays it, from home, every ``period`` s: the trajectory
    generator's samples (positions, velocities, accelerations) joined by the quintic the
    robot interface uses for such points."""
    model = load_model(robot)
    playback = plan_playback(motion, current=model.joints.to_dict(model.home_positions()))
    samples = playback.trajectory
    spline = Spline.build(samples.times, samples.positions, samples.velocities, samples.accelerations,
                          Law.QUINTIC)
    times = np.append(np.arange(samples.times[0], samples.times[-1], period), samples.times[-1])
    dense = spline.sample_many(times)[0]
    indices = [model.joints.index(name) for name in samples.joint_names]
    configurations = np.tile(model.home_positions(), (len(dense), 1))
    configurations[:, indices] = dense
    return configurations


def sweep(robot: str, base: np.ndarray, joints: tuple[str, ...], step_deg: float = 1.0) -> np.ndarray:
    """From ``base``, the joints (together) to their lower limit, back, and to their upper limit."""
    limits = load_model(robot).joints[joints[0]].limits
    lower, upper = np.degrees(limits.lower), np.degrees(limits.upper)
    values = np.concatenate([np.arange(0.0, lower, -step_deg), [lower], np.arange(lower, upper, step_deg), [upper]])
    return np.array([pose(robot, base, **dict.fromkeys(joints, v)) for v in values])


def grid(robot: str, axes: dict[str, np.ndarray], base: str = "home") -> np.ndarray:
    """Every combination, in boustrophedon order (consecutive configurations are neighbours)."""
    names = list(axes)
    rows: list[dict[str, float]] = [{}]
    for name in names:
        extended = []
        for i, row in enumerate(rows):
            values = axes[name] if i % 2 == 0 else axes[name][::-1]
            extended.extend({**row, name: float(v)} for v in values)
        rows = extended
    return np.array([pose(robot, base, **row) for row in rows])


# -- free ------------------------------------------------------------------------------------
@pytest.mark.parametrize(("robot", "name"), LIBRARY)
def test_library_motion_is_free_of_self_collision_all_along(robot, name):
    assert_clear(robot, played(robot, load_motion(robot, name)), f"{robot} motion {name}", path=True)


def test_hoap2_csv_motion_is_free_of_self_collision(tmp_path):
    path = tmp_path / "crouch.csv"
    path.write_text(CSV_LINE + "\n")
    assert_clear("hoap2", played("hoap2", read_motion_file(path, "hoap2")), "csv crouch", path=True)


@pytest.mark.parametrize("start", ["zero", "arms_lowered"])
@pytest.mark.parametrize("test", sorted(POSTURE_SWEEPS))
def test_hoap2_postures_protocol_sweeps_to_the_joint_limits_are_free(start, test):
    base = load_model("hoap2").pose_positions(start)
    assert_clear("hoap2", sweep("hoap2", base, POSTURE_SWEEPS[test]), f"{test} from {start}")


def test_hoap2_arm_raised_sideways_by_11_degrees_is_free():
    """The false positive of the old boxes: shoulder roll -0.19 .. -1.29 rad reported as a
    collision of the shoulder with the upper arm."""
    roll = np.linspace(-0.19, -1.29, 45)
    configurations = np.array([pose("hoap2", "zero", rarm_joint2=np.degrees(r)) for r in roll])
    assert_clear("hoap2", configurations, "right arm raised sideways")
    report = collision_model("hoap2").check(configurations[0])
    assert not report.in_collision and report.closest.distance >= 0.005


@pytest.mark.parametrize("side", ["r", "l"])
def test_hoap2_arm_over_its_whole_range_with_a_straight_or_bent_elbow_is_free(side):
    """Shoulder pitch (forward, up, back) x roll (sideways) x elbow, each over its full range."""
    roll = np.arange(0.0, 97.0, 8.0) * (-1 if side == "r" else 1)
    axes = {f"{side}arm_joint1": np.arange(-91.0, 152.0, 8.0), f"{side}arm_joint2": roll,
            f"{side}arm_joint4": np.array([0.0, -40.0, -80.0, -115.0])}
    assert_clear("hoap2", grid("hoap2", axes, "zero"), f"{side} arm")


def test_hoap2_head_over_its_range_is_free():
    axes = {"head_joint1": np.arange(-60.0, 61.0, 5.0), "head_joint2": np.arange(-15.0, 61.0, 5.0)}
    assert_clear("hoap2", grid("hoap2", axes, "zero"), "head")


@pytest.mark.parametrize("side", ["r", "l"])
def test_bioloid_arm_raised_forward_and_sideways_over_its_range_is_free(side):
    """Shoulder pitch over its whole range x roll from the arm hanging in the sagittal plane
    (90 deg) through sideways (0) to straight up (-91 deg), elbow straight."""
    sign = 1 if side == "r" else -1
    pitch = load_model("bioloid").joints[f"{side}_shoulder_pitch"].limits
    axes = {f"{side}_shoulder_pitch": np.linspace(np.degrees(pitch.lower), np.degrees(pitch.upper), 51),
            f"{side}_shoulder_roll": sign * np.arange(90.0, -92.0, -6.0)}
    assert_clear("bioloid", grid("bioloid", axes), f"{side} arm")


# -- caught ------------------------------------------------------------------------------
#: (robot, what, joint angles in degrees from the pose, the pose, the pair that must collide:
#: the beginnings of the two link names).
TRUE_COLLISIONS = [
    ("hoap2", "right arm raised, forearm over the head", dict(rarm_joint1=-90, rarm_joint3=90, rarm_joint4=-60),
     "zero", ("rarm_forearm", "head")),
    ("hoap2", "left arm raised, forearm over the head", dict(larm_joint1=-90, larm_joint3=-90, larm_joint4=-60),
     "zero", ("larm_forearm", "head")),
    ("hoap2", "right forearm turned into the torso", dict(rarm_joint3=90, rarm_joint4=-115), "zero",
     ("rarm_", "torso")),
    ("hoap2", "left forearm turned into the torso", dict(larm_joint3=-90, larm_joint4=-115), "zero",
     ("larm_", "torso")),
    ("hoap2", "right forearm across the raised thigh",
     dict(rleg_joint3=-30, rarm_joint1=70, rarm_joint3=90, rarm_joint4=-40), "arms_lowered",
     ("rarm_forearm", "rleg_thigh")),
    ("hoap2", "left thigh swung out into the hanging arm", dict(lleg_joint2=31), "arms_lowered",
     ("larm_forearm", "lleg_thigh")),
    ("hoap2", "legs crossing", dict(rleg_joint2=21, lleg_joint2=-21), "zero", ("rleg_", "lleg_")),
    ("bioloid", "right arm raised, forearm over the head", dict(r_shoulder_roll=-91, r_elbow=-90), "home",
     ("r_forearm", "base_link")),
    ("bioloid", "left arm raised, forearm over the head", dict(l_shoulder_roll=91, l_elbow=90), "home",
     ("l_forearm", "base_link")),
    ("bioloid", "right forearm bent into the belly", dict(r_shoulder_pitch=75, r_shoulder_roll=90, r_elbow=100),
     "home", ("r_forearm", "base_link")),
    ("bioloid", "right forearm across the raised thigh",
     dict(r_shoulder_pitch=60, r_shoulder_roll=90, r_elbow=40, r_hip_pitch=-80), "home", ("r_forearm", "r_thigh")),
    ("bioloid", "left forearm across the raised thigh",
     dict(l_shoulder_pitch=60, l_shoulder_roll=-90, l_elbow=-40, l_hip_pitch=-80), "home", ("l_forearm", "l_thigh")),
    ("bioloid", "legs crossing", dict(r_hip_roll=30, l_hip_roll=-30), "home", ("r_", "l_")),
]


@pytest.mark.parametrize(("robot", "what", "angles", "base", "pair"), TRUE_COLLISIONS,
                         ids=[f"{c[0]}: {c[1]}" for c in TRUE_COLLISIONS])
def test_true_collision_is_caught(robot, what, angles, base, pair):
    q = pose(robot, base, **angles)
    report = collision_model(robot).check(q)  # the exact check of every pair
    a, b = pair
    named = [p for p in report.colliding if (p.link_a.startswith(a) and p.link_b.startswith(b))
             or (p.link_b.startswith(a) and p.link_a.startswith(b))]
    assert named, f"{what}: no {a}/{b} contact among {report.colliding}"
    assert named[0].distance < 0.0
    # and the per-cycle checker, starting from the robot's home pose, stops there
    check = tracker(robot)
    assert check.first_violation(load_model(robot).home_positions()) is None
    assert check.first_violation(q) is not None
