"""The balance monitor's compiled core against Python Pinocchio: the same CoM and sole
placements on random configurations (the C++ code works on the Python model's own C++
objects, so a mismatch of compile flags or layouts would show here), its support hold,
and its answers to bad input."""

import dataclasses
import math

import numpy as np
import pinocchio as pin
import pytest

from humanoid_control.balance._core import BalanceCore
from humanoid_control.balance.com_filter import CoMFilter
from humanoid_control.balance.estimator import BalanceEstimate, BaseSource, ContactSource
from humanoid_description.model import RobotModel
from humanoid_description.robots import ROBOTS
from humanoid_description.support import ConvexPolygon

PRECISION = 1e-9  # the polygon_precision the hold is checked against here
SQUARE = ConvexPolygon(np.array([[-1.0, -1.0], [1.0, -1.0], [1.0, 1.0], [-1.0, 1.0]]))


@pytest.fixture(scope="module", params=ROBOTS)
def model(request):
    return RobotModel(request.param)


def soles(model):
    feet = model.config.feet
    return (model.frame_id(feet["right"].sole), model.frame_id(feet["left"].sole)) if "left" in feet else (0, 0)


def core(model, data=None):
    return BalanceCore(model.model, data if data is not None else model.model.createData(), model.q_index,
                       *soles(model), CoMFilter(4.0), 9.81, PRECISION, BalanceEstimate, 0.5)


def hold(compiled, right, frame="a sole"):
    compiled.hold(right, frame, {"right": True, "left": True}, SQUARE, BaseSource.FLAT_FEET, ContactSource.MODEL)


def random_positions(model, rng):
    lower, upper = np.maximum(model.joints.lower, -3.0), np.minimum(model.joints.upper, 3.0)
    return rng.uniform(lower, upper)


def test_com_and_frame_placements_equal_python_pinocchio_on_random_configurations(model):
    rng = np.random.default_rng(7)
    data, reference = model.model.createData(), model.model.createData()
    compiled = core(model, data)
    for _ in range(20):
        positions = random_positions(model, rng)
        base = pin.SE3.Random()
        q = model.configuration(positions, base)
        expected = pin.centerOfMass(model.model, reference, q, False)
        np.testing.assert_allclose(compiled.com(positions, pin.SE3ToXYZQUAT(base)), expected, rtol=0, atol=1e-12)
        for side in model.config.feet.values():  # the joint placements it left in the data
            fid = model.frame_id(side.sole)
            np.testing.assert_allclose(pin.updateFramePlacement(model.model, data, fid).homogeneous,
                                       pin.updateFramePlacement(model.model, reference, fid).homogeneous,
                                       rtol=0, atol=1e-12)
    np.testing.assert_allclose(compiled.com(list(positions), None),  # a list, the base at the identity
                               pin.centerOfMass(model.model, reference, model.configuration(positions)), atol=1e-12)


@pytest.mark.parametrize("robot", ["hoap2", "bioloid"])
def test_flat_feet_answers_in_the_held_sole_frame_while_the_soles_keep_their_placement(robot):
    model = RobotModel(robot)
    rng = np.random.default_rng(3)
    data, reference = model.model.createData(), model.model.createData()
    compiled = core(model, data)
    right, left = soles(model)
    positions = random_positions(model, rng)
    assert compiled.flat_feet(0.0, positions) is None  # nothing held yet
    hold(compiled, False, "l_sole")
    estimate = compiled.flat_feet(0.0, positions)
    q = model.configuration(positions)
    com = pin.centerOfMass(model.model, reference, q, False)
    sole = pin.updateFramePlacement(model.model, reference, left)
    sole_com = sole.actInv(com)
    np.testing.assert_allclose(estimate.com, sole_com, rtol=0, atol=1e-12)
    np.testing.assert_allclose(estimate.base.homogeneous, sole.inverse().homogeneous, rtol=0, atol=1e-12)
    # every field is set (the core fills the slots in directly), the held ones as held
    assert [f.name for f in dataclasses.fields(BalanceEstimate) if not hasattr(estimate, f.name)] == []
    assert estimate.com_velocity == (0.0, 0.0, 0.0) and estimate.zmp_model is None  # at rest, unsettled
    assert estimate.stamp == 0.0 and estimate.frame == "l_sole" and estimate.polygon is SQUARE
    assert estimate.contacts == {"right": True, "left": True} and estimate.zmp_measured is None
    assert estimate.margin == SQUARE.margin(sole_com[0], sole_com[1]) and math.isnan(estimate.zmp_margin)
    assert estimate.stable is (estimate.margin >= 0.5)
    assert estimate.base_source is BaseSource.FLAT_FEET and estimate.contact_source is ContactSource.MODEL
    for fid in (right, left):
        np.testing.assert_allclose(data.oMf[fid].homogeneous,
                                   pin.updateFramePlacement(model.model, reference, fid).homogeneous, atol=1e-12)
    # the upper body alone moves: the soles keep their placement and it still answers
    arms = [i for i, joint in enumerate(model.joints.names) if not set(model.chain_joints(
        model.config.feet["right"].sole) + model.chain_joints(model.config.feet["left"].sole)) & {joint}]
    moved = positions.copy()
    moved[arms] += 0.1
    assert compiled.flat_feet(0.001, moved) is not None
    # a leg moves: the left sole moves in the right one's frame, the support is to work out again
    leg = model.joints.index(model.chain_joints(model.config.feet["left"].sole)[0])
    moved[leg] += 0.05
    assert compiled.flat_feet(0.002, moved) is None
    hold(compiled, True)
    assert compiled.flat_feet(0.002, moved) is not None
    compiled.forget()
    assert compiled.flat_feet(0.003, moved) is None


def test_bad_input_is_refused_with_what_and_why():
    model = RobotModel("hoap2")
    compiled = core(model)
    with pytest.raises(ValueError, match=f"expected {len(model.joints)} joint positions, got 3"):
        compiled.com([0.0, 0.0, 0.0], None)
    with pytest.raises(ValueError, match="expected 7 base placement values"):
        compiled.com(model.home_positions(), [0.0, 0.0, 0.0])
    with pytest.raises(TypeError, match="must be real number"):
        compiled.flat_feet(0.0, ["a"] * len(model.joints))
    data, flt = model.model.createData(), CoMFilter(4.0)
    with pytest.raises(TypeError, match=r"expected a pinocchio\.Model, got dict"):
        BalanceCore({}, data, model.q_index, 0, 0, flt, 9.81, PRECISION, BalanceEstimate, 0.0)
    with pytest.raises(ValueError, match="the model has"):
        BalanceCore(model.model, data, model.q_index, 0, 10_000, flt, 9.81, PRECISION, BalanceEstimate, 0.0)
    with pytest.raises(ValueError, match="is not a joint's place in q"):
        BalanceCore(model.model, data, [0], 0, 0, flt, 9.81, PRECISION, BalanceEstimate, 0.0)
    with pytest.raises(TypeError, match="slots dataclass with the 14 BalanceEstimate fields"):
        BalanceCore(model.model, data, model.q_index, 0, 0, flt, 9.81, PRECISION, ConvexPolygon, 0.0)
    with pytest.raises(TypeError, match="the polygon must have a margin method, got list"):
        compiled.hold(True, "r_sole", {}, [], BaseSource.FLAT_FEET, ContactSource.MODEL)
