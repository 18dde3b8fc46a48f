"""balance_markers land over the robot in RViz: expressed in the URDF root link (the frame
robot_state_publisher's TF starts at), each marker must sit where the model puts that
point relative to the robot, whatever ground frame the estimate used."""

import math

import numpy as np
import pinocchio as pin
from builtin_interfaces.msg import Time
from visualization_msgs.msg import Marker

from humanoid_control.ros import CLOSE, OUTSIDE, SAFE, margin_colour
from humanoid_control.ros.balance_markers import balance_markers
from humanoid_core.balance import BalanceEstimator, BalanceInputs, BalanceParameters, BasePose, FootWrench
from humanoid_description import load_model

ROBOT = "hoap2"


def position(marker: Marker) -> np.ndarray:
    p = marker.pose.position
    return np.array([p.x, p.y, p.z])


def test_markers_in_the_root_link_sit_where_the_model_puts_the_points():
    model = load_model(ROBOT)
    q = model.home_positions()
    base = pin.SE3(pin.utils.rotate("z", 0.7) @ pin.utils.rotate("x", 0.05), np.array([0.4, -0.3, 0.0])) \
        * model.standing_base(q)
    loads = {s: FootWrench((0.0, 0.0, 35.0), (0.0, 0.0, 0.0)) for s in ("right", "left")}
    inputs = BalanceInputs.at(0.0, base_pose=BasePose("world", base), wrenches=loads)
    estimate = BalanceEstimator(model, BalanceParameters.for_robot(ROBOT, zmp_measured_cutoff=0.0)).update(
        0.0, q, inputs)
    markers = {m.id: m for m in balance_markers(estimate, Time(), 0.01, model.root_link).markers}
    assert {m.header.frame_id for m in markers.values()} == {"base_link"}
    # the CoM in the root link's frame is the model's CoM with the base at the origin
    np.testing.assert_allclose(position(markers[0]), model.com(q), atol=1e-9)
    # ground points: back in world through the base placement, they are on the ground
    for marker_id in (1, 5):
        world = base.act(position(markers[marker_id]))
        assert abs(world[2]) < 1e-9
    np.testing.assert_allclose(base.act(position(markers[1]))[:2], estimate.com[:2], atol=1e-9)
    polygon = markers[3]
    assert polygon.type == Marker.LINE_STRIP and polygon.points[0] == polygon.points[-1]
    corners = [base.act(np.array([p.x, p.y, p.z])) for p in polygon.points[:-1]]
    np.testing.assert_allclose([c[:2] for c in corners], estimate.polygon.vertices, atol=1e-9)
    assert markers[4].action == Marker.DELETE  # the cart-table ZMP is not valid before the filter settles


def test_markers_in_the_ground_frame_are_the_estimate_itself():
    model = load_model(ROBOT)
    estimate = BalanceEstimator(model, BalanceParameters.for_robot(ROBOT)).update(0.0, model.home_positions())
    markers = {m.id: m for m in balance_markers(estimate, Time(), 0.01, None).markers}
    assert {m.header.frame_id for m in markers.values()} == {estimate.frame}
    np.testing.assert_allclose(position(markers[0]), estimate.com, atol=1e-12)


def test_the_polygon_colour_tells_the_margin():
    assert margin_colour(0.02, 0.01) == SAFE
    assert margin_colour(0.005, 0.01) == CLOSE
    assert margin_colour(-0.001, 0.01) == OUTSIDE
    assert margin_colour(math.nan, 0.01) == OUTSIDE
