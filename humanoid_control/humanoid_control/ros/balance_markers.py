"""RViz markers of a balance estimate: CoM, its projection, both ZMPs and the support
polygon coloured by the margin.

By default they are expressed in the robot's URDF root link, so that RViz places them
over the robot with nothing but robot_state_publisher's TF (which starts at that link);
the points are moved there from the ground frame with the estimate's base placement.
"""

from __future__ import annotations

import numpy as np
import pinocchio as pin
from builtin_interfaces.msg import Time
from geometry_msgs.msg import Point
from std_msgs.msg import ColorRGBA
from visualization_msgs.msg import Marker, MarkerArray

from humanoid_control.ros.namespaces import prefixed
from humanoid_core.balance import BalanceEstimate

NAMESPACE = "balance"
COM_COLOUR = ColorRGBA(r=1.0, g=0.55, b=0.0, a=1.0)
MODEL_ZMP_COLOUR = ColorRGBA(r=0.1, g=0.4, b=1.0, a=1.0)
MEASURED_ZMP_COLOUR = ColorRGBA(r=0.9, g=0.1, b=0.9, a=1.0)
SAFE, CLOSE, OUTSIDE = (ColorRGBA(r=0.1, g=0.8, b=0.1, a=1.0), ColorRGBA(r=1.0, g=0.8, b=0.0, a=1.0),
                        ColorRGBA(r=0.9, g=0.1, b=0.1, a=1.0))


def margin_colour(margin: float, min_margin: float) -> ColorRGBA:
    """Green with at least min_margin, yellow inside but closer, red outside (or no support)."""
    if margin >= min_margin:
        return SAFE
    return CLOSE if margin >= 0.0 else OUTSIDE


def balance_markers(estimate: BalanceEstimate, stamp: Time, min_margin: float,
                    frame: str | None = None, frame_prefix: str = "") -> MarkerArray:
    """Markers of ``estimate`` in ``frame``: None = the estimate's ground frame, else the
    name of the URDF root link (points moved there with ``estimate.base``); the frame's name
    carries the robot's ``frame_prefix`` (its namespace's, humanoid_control.ros.namespaces)."""
    to_frame = pin.SE3.Identity() if frame is None else estimate.base.inverse()
    frame_id = prefixed(frame_prefix, estimate.frame if frame is None else frame)

    def point(x: float, y: float, z: float) -> Point:
        p = to_frame.act(np.array([x, y, z]))
        return Point(x=float(p[0]), y=float(p[1]), z=float(p[2]))

    def marker(marker_id: int, kind: int, colour: ColorRGBA, scale: float) -> Marker:
        m = Marker(type=kind, id=marker_id, ns=NAMESPACE, action=Marker.ADD, color=colour)
        m.header.stamp, m.header.frame_id = stamp, frame_id
        m.pose.orientation.w = 1.0
        m.scale.x = m.scale.y = m.scale.z = scale
        return m

    def spot(marker_id: int, colour: ColorRGBA, xyz: tuple[float, float, float] | None, scale: float) -> Marker:
        m = marker(marker_id, Marker.SPHERE, colour, scale)
        if xyz is None:
            m.action = Marker.DELETE
        else:
            m.pose.position = point(*xyz)
        return m

    x, y, z = estimate.com
    colour = margin_colour(estimate.margin, min_margin)
    drop = marker(2, Marker.LINE_LIST, COM_COLOUR, 0.003)
    drop.points = [point(x, y, z), point(x, y, 0.0)]
    polygon = marker(3, Marker.LINE_STRIP, colour, 0.004)
    vertices = [point(float(vx), float(vy), 0.0) for vx, vy in estimate.polygon.vertices]
    polygon.points = vertices + vertices[:1]
    if not vertices:
        polygon.action = Marker.DELETE
    zmp_model = estimate.zmp_model
    zmp_measured = estimate.zmp_measured
    return MarkerArray(markers=[
        spot(0, COM_COLOUR, estimate.com, 0.02),
        spot(1, colour, (x, y, 0.0), 0.015),
        drop,
        polygon,
        spot(4, MODEL_ZMP_COLOUR, None if zmp_model is None else (*zmp_model, 0.0), 0.012),
        spot(5, MEASURED_ZMP_COLOUR, None if zmp_measured is None else (*zmp_measured, 0.0), 0.012),
    ])
