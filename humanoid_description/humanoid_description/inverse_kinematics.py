"""Whole-body inverse kinematics for standing: shift the weight with both feet planted.

Moving a humanoid from a two-foot stance into a one-foot pose by interpolating its
joints lifts the free foot while the centre of mass is still between the feet: the
robot tips over. The thesis' poses were reached by first shifting the weight over
the support foot. :func:`shift_weight` computes that intermediate posture: both soles
stay exactly where they are (relative to each other), the CoM's ground projection
moves to a target over the support sole, and the posture stays as close as possible
to the starting one. With a ``lift`` it also raises the other foot straight up: the
step between standing on one foot and swinging the free leg to the pose, so that the
swinging foot never scrapes the ground. Damped least squares on Pinocchio's Jacobians.
"""

from __future__ import annotations

import numpy as np
import pinocchio as pin

from humanoid_description.model import JointPositions, RobotModel

#: Largest change of any coordinate per iteration (rad or m).
MAX_STEP = 0.05


class InverseKinematicsError(RuntimeError):
    """No posture satisfies the request within the joint limits."""


def shift_weight(model: RobotModel, positions: JointPositions, support: str, com_target: np.ndarray,
                 lift: float = 0.0, iterations: int = 200, tolerance: float = 1e-5,
                 damping: float = 1e-6) -> np.ndarray:
    """Joint positions with the support sole unmoved, the other sole where it was (raised
    straight up by ``lift`` metres) and the CoM projection at ``com_target``.

    ``com_target`` is (x, y) in the ``support`` sole's frame (``right`` or ``left``),
    the sole lying flat on the ground. Raises :class:`InverseKinematicsError` when the
    target cannot be reached within the joint limits.
    """
    feet = model.config.feet
    other = "left" if support == "right" else "right"
    support_id = model.frame_id(feet[support].sole)
    other_id = model.frame_id(feet[other].sole)
    start = model.joints.to_array(positions)
    # the world is the support sole's frame: put the robot there
    base = model.frame_placement(feet[support].sole, start).inverse()
    q = model.configuration(start, base)
    other_goal = model.frame_placement(feet[other].sole, start, base)
    other_goal.translation = other_goal.translation + np.array([0.0, 0.0, lift])
    target = np.asarray(com_target, dtype=float)[:2]
    data = model.data
    lower, upper = model.joints.lower, model.joints.upper
    joint_q = model.q_index
    for _ in range(iterations):
        pin.forwardKinematics(model.model, data, q)
        pin.updateFramePlacements(model.model, data)
        com = pin.centerOfMass(model.model, data, q)
        errors = [
            pin.log6(data.oMf[support_id]).vector,  # support sole stays at the origin, flat
            pin.log6(other_goal.actInv(data.oMf[other_id])).vector,  # the other sole stays put
            com[:2] - target,
        ]
        error = np.concatenate(errors)
        if np.max(np.abs(error)) < tolerance:
            break
        jacobian = np.vstack([
            pin.computeFrameJacobian(model.model, data, q, support_id, pin.LOCAL),
            pin.computeFrameJacobian(model.model, data, q, other_id, pin.LOCAL),
            pin.jacobianCenterOfMass(model.model, data, q)[:2],
        ])
        step = -jacobian.T @ np.linalg.solve(jacobian @ jacobian.T + damping * np.eye(len(error)), error)
        largest = float(np.max(np.abs(step)))
        if largest > MAX_STEP:  # stay in the region where the linearisation holds
            step *= MAX_STEP / largest
        q = pin.integrate(model.model, q, step)
        q[joint_q] = np.clip(q[joint_q], lower, upper)
    else:
        raise InverseKinematicsError(
            f"could not move the CoM to {target} over the {support} sole with the other foot "
            f"{'raised by ' + format(lift, 'g') + ' m' if lift else 'planted'} "
            f"(remaining error {np.max(np.abs(error)):.2e})")
    return q[joint_q].copy()
