"""Poses played as one motion, the way the thesis' demo program did.

From home to each pose in turn, hold it, back to home (timing from
``config/motion.yaml``). A one-foot pose is entered with both feet planted: the robot
first shifts its weight over the support foot
(:func:`humanoid_description.inverse_kinematics.shift_weight`), then raises the other
foot, then moves to the pose; the way back mirrors it, so that lifting a foot does
not tip the robot over.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from humanoid_core.loop import Law
from humanoid_core.motion.data import load_settings
from humanoid_core.motion.limits import JointBounds
from humanoid_core.motion.model import JointPose, Motion, MotionError
from humanoid_description import InverseKinematicsError, RobotModel, load_model, shift_weight


def pose_demo_motion(robot: str, name: str, poses: Sequence[JointPose], source: str = "<memory>",
                     move_time: float | None = None, hold_time: float | None = None,
                     law: Law | None = None, back_home: bool = True) -> Motion:
    """Home, then for each pose: move there, hold, back home (the thesis' demo program).

    The motion drives the joints the poses give (the same for every pose), in the
    robot's canonical order; timing and law default to ``config/motion.yaml``.
    ``back_home=False``: the motion ends at the end of the last pose's hold (without the
    way back), for a caller that only judges the pose (``humanoid balance-poses --simulate``).
    """
    settings = load_settings()
    move = settings.pose_move_time if move_time is None else move_time
    hold = settings.pose_hold_time if hold_time is None else hold_time
    bounds = JointBounds.for_robot(robot)
    if not poses:
        raise MotionError(source, "no poses")
    joints = tuple(j for j in bounds.joint_names if j in poses[0].positions)
    for pose in poses:
        if set(pose.positions) != set(joints):
            raise MotionError(source, f"pose {pose.label!r} drives other joints than the first pose", pose.line)
    model = load_model(robot)
    home = model.config.home
    rows, times, holds, labels, supports = [[home[j] for j in joints]], [0.0], [0.0], ["home"], ["both"]

    def add(positions: list[float], label: str, support: str, hold: float = 0.0) -> None:
        rows.append(positions)
        times.append(times[-1] + holds[-1] + move)
        holds.append(hold)
        labels.append(label)
        supports.append(support)

    for number, pose in enumerate(poses, 1):
        target = [pose.positions[j] for j in joints]
        steps = _one_foot_steps(model, joints, pose, settings.pose_lift, source) if pose.support != "both" else []
        for positions, label in steps:
            add(positions, label, "both" if label.startswith("weight") else pose.support)
        add(target, pose.label, pose.support, hold)
        if not back_home and number == len(poses):
            break
        for positions, label in reversed(steps):
            add(positions, label, "both" if label.startswith("weight") else pose.support)
        add([home[j] for j in joints], "home", "both")
    return Motion(name=name, robot=robot, joint_names=joints, times=np.array(times), positions=np.array(rows),
                  law=settings.pose_law if law is None else law, holds=np.array(holds), labels=tuple(labels),
                  supports=tuple(supports), source=source,
                  description=f"home -> (weight shift, foot raised) -> pose -> hold {hold:g} s -> (foot "
                              f"raised, weight shift) -> home, for: {', '.join(p.label for p in poses)}"
                              + ("" if back_home else " (the last pose's way back left out)"))


def _one_foot_steps(model: RobotModel, joints: tuple[str, ...], pose: JointPose, lift: float,
                    source: str) -> list[tuple[list[float], str]]:
    """Postures between home and a one-foot pose: the weight over the support foot (both
    feet planted), then the free foot raised by ``lift``; the CoM where the pose has it.
    None are needed (empty list) when the poses drive only some joints."""
    if set(joints) != set(model.joints.names):
        return []
    target = model.joints.to_array(pose.positions)
    sole = model.frame_placement(model.config.feet[pose.support].sole, target)
    com = sole.actInv(model.com(target))[:2]
    free = "left" if pose.support == "right" else "right"
    steps = []
    try:
        for height, label in ((0.0, f"weight on the {pose.support} foot"), (lift, f"{free} foot raised")):
            if label.endswith("raised") and lift == 0.0:
                continue
            posture = shift_weight(model, model.home_positions(), pose.support, com, lift=height)
            steps.append(([float(posture[model.joints.index(j)]) for j in joints], label))
    except InverseKinematicsError as error:
        raise MotionError(source, f"pose {pose.label!r}: {error}", pose.line or None) from None
    return steps
