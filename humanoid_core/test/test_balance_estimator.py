"""The balance estimator in-process: CoM, frames, contacts, polygon, margins and ZMPs,
each checked against a computation written independently here (link masses and link
CoMs from the URDF, the model's sole corners, point-contact forces, a pendulum)."""

import math

import numpy as np
import pinocchio as pin
import pytest

from humanoid_core.balance import (
    BalanceEstimator,
    BalanceInputs,
    BalanceParameters,
    BasePose,
    BaseSource,
    ContactSource,
    FootWrench,
)
from humanoid_description import convex_hull, load_model, signed_margin


@pytest.fixture(scope="module", params=["hoap2", "bioloid"])
def model(request):
    return load_model(request.param)


def estimator(model, **overrides):
    """The robot's estimator; the measured ZMP raw (its low-pass is tested on its own)."""
    return BalanceEstimator(model, BalanceParameters.for_robot(model.name, **{"zmp_measured_cutoff": 0.0,
                                                                               **overrides}))


def mass_weighted_com(model, positions, base=None):
    """Whole-body CoM from the URDF's link masses and link CoMs (not pinocchio.centerOfMass)."""
    masses, coms = model.link_masses(), model.link_coms(positions, base)
    return sum(masses[k] * coms[k] for k in masses) / sum(masses.values())


def tilted(model, positions, degrees=4.0):
    """A base placement that tilts the standing robot about x and moves it in the world."""
    stand = model.standing_base(positions)
    return pin.SE3(pin.utils.rotate("x", math.radians(degrees)), np.array([0.3, -0.2, 0.01])) * stand


def test_ground_truth_com_is_the_mass_weighted_link_com_in_world(model):
    rng = np.random.default_rng(1)
    q = model.home_positions() + rng.uniform(-0.1, 0.1, len(model.joints))
    base = tilted(model, q)
    inputs = BalanceInputs.at(0.0, base_pose=BasePose("world", base))
    result = estimator(model).update(0.0, q, inputs)
    assert result.frame == "world" and result.base_source is BaseSource.GROUND_TRUTH
    np.testing.assert_allclose(result.com, mass_weighted_com(model, q, base), atol=1e-9)


def test_flat_feet_put_the_ground_frame_on_the_right_sole_in_double_support(model):
    q = model.home_positions()
    est = estimator(model)
    result = est.update(0.0, q)
    assert result.base_source is BaseSource.FLAT_FEET and result.contact_source is ContactSource.MODEL
    assert result.frame == model.config.feet["right"].sole
    assert result.contacts == {"right": True, "left": True}
    sole = model.frame_placement(model.config.feet["right"].sole, q)
    np.testing.assert_allclose(result.com, sole.actInv(mass_weighted_com(model, q)), atol=1e-9)
    # the polygon is the hull of both soles' corners on the right sole's plane, in its frame
    corners = np.vstack([model.sole_corners(s, q, sole.inverse()) for s in ("right", "left")])
    on_ground = corners[np.abs(corners[:, 2]) <= est.params.contact_height][:, :2]
    np.testing.assert_allclose(sorted(map(tuple, result.polygon.vertices)),
                               sorted(map(tuple, convex_hull(on_ground))), atol=1e-9)
    assert result.margin == pytest.approx(signed_margin(np.array(result.com), convex_hull(on_ground)))
    assert result.margin > 0.02 and result.stable


def test_flat_feet_and_ground_truth_agree_for_a_robot_standing_flat(model):
    q = model.pose_positions("zero")  # soles parallel and level: both assumptions hold
    base = model.standing_base(q)
    truth = estimator(model).update(0.0, q, BalanceInputs.at(0.0, base_pose=BasePose("world", base)))
    flat = estimator(model).update(0.0, q)
    assert truth.margin == pytest.approx(flat.margin, abs=1e-6)
    assert truth.com[2] == pytest.approx(flat.com[2], abs=1e-6)  # CoM height above the ground


def test_imu_orientation_levels_a_tilted_robot_like_the_ground_truth(model):
    """Standing on the right foot only, tilted: the IMU path must find the same height and
    margin as the ground truth, and more than the flat-feet assumption sees."""
    q = model.home_positions()
    sole = model.config.feet["right"].sole
    on_right = model.frame_placement(sole, q).inverse()  # right sole frame = world
    base = pin.SE3(pin.utils.rotate("x", math.radians(3.0)), np.zeros(3)) * on_right
    lowest_corner = float(np.min(model.sole_corners("right", q, base)[:, 2]))
    base = pin.SE3(np.eye(3), np.array([0.0, 0.0, -lowest_corner])) * base  # on its edge, on the ground
    imu = model.frame_placement(model.config.imu_frame, q, base).rotation
    contacts = {"right": True, "left": False}
    truth = estimator(model).update(0.0, q, BalanceInputs.at(0.0, base_pose=BasePose("world", base),
                                                             contacts=contacts))
    levelled = estimator(model).update(0.0, q, BalanceInputs.at(0.0, imu_orientation=imu, contacts=contacts))
    flat = estimator(model).update(0.0, q, BalanceInputs.at(0.0, contacts=contacts))
    assert levelled.base_source is BaseSource.IMU and levelled.frame == sole
    assert levelled.com[2] == pytest.approx(truth.com[2], abs=1e-9)
    corners = model.sole_corners("right", q, base)
    truth_polygon = convex_hull(corners[corners[:, 2] <= model_contact_height(model)][:, :2])
    assert truth.margin == pytest.approx(signed_margin(np.array(truth.com), truth_polygon), abs=1e-9)
    # the levelled frame has the sole's heading: distances in the ground plane are the same
    assert levelled.margin == pytest.approx(truth.margin, abs=1e-9)
    assert abs(flat.margin - truth.margin) > 1e-3  # the tilt is what the IMU adds


def model_contact_height(model):
    return BalanceParameters.for_robot(model.name).contact_height


def test_one_foot_support_from_the_model_and_from_foot_sensors(model):
    q = model.home_positions()
    # contact sensors decide: the left foot alone
    sensors = BalanceInputs.at(1.0, contacts={"right": False, "left": True})
    left = estimator(model).update(1.0, q, sensors)
    assert left.contact_source is ContactSource.CONTACT_SENSORS
    assert left.frame == model.config.feet["left"].sole and left.contacts == {"right": False, "left": True}
    assert len(left.polygon) == 4
    # wrenches decide when there are no contact topics
    wrenches = BalanceInputs.at(1.0, wrenches={"right": FootWrench((0.0, 0.0, 30.0), (0.0, 0.0, 0.0)),
                                               "left": FootWrench((0.0, 0.0, 0.2), (0.0, 0.0, 0.0))})
    right = estimator(model).update(1.0, q, wrenches)
    assert right.contact_source is ContactSource.FORCE_SENSORS and right.contacts == {"right": True, "left": False}
    # stale sensors are not used
    stale = estimator(model).update(5.0, q, sensors)
    assert stale.contact_source is ContactSource.MODEL and stale.contacts == {"right": True, "left": True}


def test_measured_zmp_is_the_load_weighted_mean_of_the_contact_points(model):
    """Point forces at known places under each sole, turned into sole-frame wrenches: with
    friction on the right sole (the ground frame's plane), vertical on the left one (its
    corners are not all on that plane); the ZMP is then the load-weighted mean of the points."""
    q = model.home_positions()
    est = estimator(model)
    soles = {s: model.frame_placement(model.config.feet[s].sole, q) for s in ("right", "left")}
    ground = soles["right"]  # flat feet: the right sole frame is the ground frame
    points = {"right": [((0.02, 0.01, 0.0), 20.0), ((-0.03, -0.02, 0.0), 10.0)],
              "left": [((0.01, 0.0, 0.0), 15.0)]}
    wrenches, expected, total = {}, np.zeros(2), 0.0
    for side, contacts in points.items():
        to_sole = soles[side].actInv(ground).rotation  # ground axes -> sole axes
        force, torque = np.zeros(3), np.zeros(3)
        for point, load in contacts:
            f = np.array([0.5, -0.3, load]) if side == "right" else to_sole @ np.array([0.0, 0.0, load])
            force += f
            torque += np.cross(point, f)
            on_ground = ground.actInv(soles[side].act(np.array(point)))
            expected += load * on_ground[:2]
            total += load
        wrenches[side] = FootWrench(tuple(force), tuple(torque))
    result = est.update(0.0, q, BalanceInputs.at(0.0, wrenches=wrenches))
    assert result.frame == model.config.feet["right"].sole
    np.testing.assert_allclose(result.zmp_measured, expected / total, atol=1e-9)
    assert result.zmp_margin == pytest.approx(result.polygon.margin(*result.zmp_measured))
    unloaded = {s: FootWrench((0.0, 0.0, 0.1), (0.0, 0.0, 0.0)) for s in ("right", "left")}
    assert est.update(0.0, q, BalanceInputs.at(0.0, wrenches=unloaded)).zmp_measured is None


def test_flat_feet_estimates_while_the_arms_move_a_leg_moves_and_sensors_come_and_go(model):
    """The flat-feet path works its support out only when the left sole moves in the right
    sole's frame: every estimate equals a fresh estimator's, the polygon stays the same
    object while the soles keep their placement (the node converts its points once per
    polygon), and the filter restarts when the path comes back from another frame."""
    est = estimator(model)
    feet = model.config.feet
    legs = set(model.chain_joints(feet["right"].sole) + model.chain_joints(feet["left"].sole))
    arms = [i for i, joint in enumerate(model.joints.names) if joint not in legs]
    leg = model.joints.index(model.chain_joints(feet["left"].sole)[0])
    home = model.home_positions()
    waving, stepping = home.copy(), home.copy()
    waving[arms] += 0.1
    stepping[leg] += 0.05

    def same_as_fresh(result, q):
        fresh = estimator(model).update(result.stamp, q)
        assert (result.frame, result.contacts, result.margin) == (fresh.frame, fresh.contacts, fresh.margin)
        np.testing.assert_allclose(result.com, fresh.com, atol=1e-12)
        np.testing.assert_allclose(result.base.homogeneous, fresh.base.homogeneous, atol=1e-12)
        np.testing.assert_array_equal(result.polygon.vertices, fresh.polygon.vertices)

    first = est.update(0.0, home)
    same_as_fresh(first, home)
    waved = est.update(0.01, waving)
    assert waved.polygon is first.polygon and waved.com_velocity != (0.0, 0.0, 0.0)
    same_as_fresh(waved, waving)
    stepped = est.update(0.02, stepping)
    assert stepped.polygon is not first.polygon
    same_as_fresh(stepped, stepping)
    est.update(0.03, stepping, BalanceInputs.at(0.03, base_pose=BasePose("world", tilted(model, stepping))))
    back = est.update(0.04, stepping)  # the soles where they were before the sensors came
    same_as_fresh(back, stepping)
    assert back.com_velocity == (0.0, 0.0, 0.0) and back.zmp_model is None  # restarted in the sole frame


def test_cart_table_zmp_of_a_linear_inverted_pendulum_is_its_pivot(model):
    """A CoM falling as a linear inverted pendulum about a fixed ZMP p: x(t) = p + d cosh(t / Tc),
    Tc = sqrt(z / g), fed to the estimator as base motion (ground truth). The cart-table ZMP
    is p; the filter passes an exponential e^(s t) scaled by its gain H(s) = w^2 / (s + w)^2,
    so after its start transient the model ZMP must be exactly what that gain predicts."""
    est = estimator(model, com_filter_cutoff=10.0)
    q = model.home_positions()
    stand = model.standing_base(q)
    height = float(stand.act(mass_weighted_com(model, q))[2])
    tc = math.sqrt(height / est.params.gravity)
    w = 2.0 * math.pi * 10.0
    gain = {sign: (w / (sign / tc + w)) ** 2 for sign in (1.0, -1.0)}
    pivot, start, end = 0.01, 0.002, 0.6  # CoM 2 mm in front of the pivot, diverging
    for t in np.arange(0.0, end + 1e-9, 0.002):
        shift = start * math.cosh(t / tc)
        base = pin.SE3(np.eye(3), np.array([pivot + shift, 0.0, 0.0])) * stand
        result = est.update(float(t), q, BalanceInputs.at(float(t), base_pose=BasePose("world", base)))
    com_x = result.com[0]
    filtered_acceleration_term = start / 2.0 * (gain[1.0] * math.exp(end / tc) + gain[-1.0] * math.exp(-end / tc))
    expected = com_x - filtered_acceleration_term  # = pivot + offset with a perfect filter
    assert result.zmp_model is not None
    assert result.zmp_model[0] == pytest.approx(expected, abs=5e-4)
    perfect = com_x - shift  # the pivot, moved by the CoM's offset from the base origin
    assert abs(result.zmp_model[0] - perfect) > 1e-3  # the filter's lag is real and accounted for


def test_the_filter_restarts_when_the_ground_frame_changes(model):
    est = estimator(model)
    q = model.home_positions()
    for t in np.arange(0.0, 1.0, 0.01):
        result = est.update(float(t), q)
    assert result.zmp_model is not None
    jumped = est.update(1.0, q, BalanceInputs.at(1.0, base_pose=BasePose("world", tilted(model, q))))
    assert jumped.zmp_model is None and jumped.com_velocity == (0.0, 0.0, 0.0)


def test_stable_needs_the_minimum_margin(model):
    q = model.home_positions()
    margin = estimator(model).update(0.0, q).margin
    assert estimator(model, min_margin=margin - 1e-4).update(0.0, q).stable
    assert not estimator(model, min_margin=margin + 1e-4).update(0.0, q).stable


def test_no_support_means_no_margin_and_not_stable(model):
    q = model.home_positions()
    airborne = BalanceInputs.at(0.0, contacts={"right": False, "left": False})
    result = estimator(model).update(0.0, q, airborne)
    assert math.isnan(result.margin) and not result.stable and len(result.polygon) == 0
    assert all(math.isfinite(v) for v in result.com)


def test_the_quadruped_with_no_inputs_stands_on_its_balls():
    """No sensor readings given at all (inputs=None) on ball feet: the model path, supported."""
    model = load_model("bioloid_quadruped")
    result = estimator(model).update(0.0, model.home_positions())
    assert sum(result.contacts.values()) >= 3
    assert math.isfinite(result.margin) and len(result.polygon.vertices) >= 3
