"""Whole-body inverse kinematics: joint positions that put frames and the CoM where asked.

One solver, :func:`solve`, serves every user: damped least squares on Pinocchio's
Jacobians over the floating base and a chosen set of joints, each iteration limited
in size (the linearisation holds) and clipped to the joint limits. Tasks say what is
wanted: a frame's placement (:class:`FramePlacement`), the CoM on some axes
(:class:`CentreOfMass`), the base's orientation (:class:`BaseOrientation`).

- :func:`shift_weight`: moving a humanoid from a two-foot stance into a one-foot pose
  by interpolating its joints lifts the free foot while the centre of mass is still
  between the feet: the robot tips over. The thesis' poses were reached by first
  shifting the weight over the support foot. This computes that intermediate
  posture: both soles stay exactly where they are (relative to each other), the CoM's
  ground projection moves to a target over the support sole, and the posture stays as
  close as possible to the starting one. With a ``lift`` it also raises the other foot
  straight up, so that the swinging foot never scrapes the ground.
- :class:`StanceSolver`: the walking pattern's whole-body IK, once per control cycle:
  both soles where the pattern puts them, the CoM at its planned point, the trunk
  upright, the legs (and the base) moving, every other joint held in its posture.
  Warm-started from the previous cycle's answer, it converges in one to three
  iterations.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np
import pinocchio as pin

from humanoid_description.model import JointPositions, RobotModel

#: Largest change of any coordinate per iteration (rad or m).
MAX_STEP = 0.05
#: rad: the least knee flexion a stance solve starts from.
KNEE_SEED = 0.3


class InverseKinematicsError(RuntimeError):
    """No posture satisfies the request within the joint limits."""


@dataclass
class FramePlacement:
    """A frame (by name) at a placement in the world: 6 residuals (local twist)."""

    frame: str
    target: pin.SE3

    def residual(self, model: RobotModel, q: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        fid = model.frame_id(self.frame)
        error = pin.log6(self.target.actInv(model.data.oMf[fid])).vector
        jacobian = pin.getFrameJacobian(model.model, model.data, fid, pin.LOCAL)
        return error, jacobian


@dataclass
class CentreOfMass:
    """The whole-body CoM at ``target`` on the world ``axes`` (0 = x, 1 = y, 2 = z)."""

    target: np.ndarray
    axes: tuple[int, ...] = (0, 1, 2)

    def residual(self, model: RobotModel, q: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        axes = list(self.axes)
        # from the placements computeJointJacobians left in data; also sets data.com[0]
        jacobian = pin.jacobianCenterOfMass(model.model, model.data, False)
        return model.data.com[0][axes] - np.asarray(self.target, dtype=float)[: len(axes)], jacobian[axes]


@dataclass
class BaseOrientation:
    """The floating base's orientation: 3 residuals (rotation vector, base frame)."""

    target: np.ndarray  # 3 x 3 rotation matrix
    _jacobian: np.ndarray | None = field(default=None, repr=False)

    def residual(self, model: RobotModel, q: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        rotation = pin.Quaternion(q[3:7]).normalized().toRotationMatrix()
        error = pin.log3(np.asarray(self.target).T @ rotation)
        if self._jacobian is None or self._jacobian.shape[1] != model.model.nv:
            self._jacobian = np.zeros((3, model.model.nv))
            self._jacobian[:, 3:6] = np.eye(3)  # free-flyer angular velocity, base frame
        return error, self._jacobian


Task = FramePlacement | CentreOfMass | BaseOrientation


@dataclass(frozen=True)
class Solution:
    """Where :func:`solve` ended: the configuration, its worst residual and the iterations."""

    q: np.ndarray
    error: float
    iterations: int


def solve(model: RobotModel, q: np.ndarray, tasks: Sequence[Task], joints: Sequence[str] | None = None,
          iterations: int = 200, tolerance: float = 1e-5, damping: float = 1e-6,
          max_step: float = MAX_STEP, lower: np.ndarray | None = None, upper: np.ndarray | None = None) -> Solution:
    """Move the base and ``joints`` (all when None) of configuration ``q`` (Pinocchio's, as
    :meth:`RobotModel.configuration` builds) until every task's residual is below
    ``tolerance`` or ``iterations`` ran out; the other joints keep their values. The
    moving joints stay within their limits, or within ``lower``/``upper`` (canonical
    order, all joints) when given."""
    pinocchio_model, data = model.model, model.data
    lower = model.joints.lower if lower is None else lower
    upper = model.joints.upper if upper is None else upper
    if joints is None:
        columns = np.arange(pinocchio_model.nv)
        limited = model.q_index
    else:
        indices = np.array([model.joints.index(name) for name in joints], dtype=int)
        columns = np.concatenate([np.arange(6), model.v_index[indices]])
        limited = model.q_index[indices]
        lower, upper = lower[indices], upper[indices]
    q = np.array(q, dtype=float)
    step_full = np.zeros(pinocchio_model.nv)
    worst = np.inf
    for iteration in range(iterations + 1):
        pin.computeJointJacobians(pinocchio_model, data, q)  # joint placements too
        pin.updateFramePlacements(pinocchio_model, data)
        residuals = [task.residual(model, q) for task in tasks]
        error = np.concatenate([r[0] for r in residuals])
        worst = float(np.max(np.abs(error)))
        if worst < tolerance or iteration == iterations:
            return Solution(q, worst, iteration)
        jacobian = np.vstack([r[1] for r in residuals])[:, columns]
        normal = jacobian @ jacobian.T
        normal.flat[::len(error) + 1] += damping
        step = -jacobian.T @ np.linalg.solve(normal, error)
        largest = float(np.max(np.abs(step)))
        if largest > max_step:  # stay in the region where the linearisation holds
            step *= max_step / largest
        step_full[:] = 0.0
        step_full[columns] = step
        q = pin.integrate(pinocchio_model, q, step_full)
        q[limited] = np.clip(q[limited], lower, upper)
    return Solution(q, worst, iterations)  # not reached


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
    start = model.joints.to_array(positions)
    # the world is the support sole's frame: put the robot there
    base = model.frame_placement(feet[support].sole, start).inverse()
    other_goal = model.frame_placement(feet[other].sole, start, base)
    other_goal.translation = other_goal.translation + np.array([0.0, 0.0, lift])
    target = np.asarray(com_target, dtype=float)[:2]
    tasks = [FramePlacement(feet[support].sole, pin.SE3.Identity()),  # support sole stays at the origin, flat
             FramePlacement(feet[other].sole, other_goal),  # the other sole stays put
             CentreOfMass(target, axes=(0, 1))]
    solution = solve(model, model.configuration(start, base), tasks, iterations=iterations,
                     tolerance=tolerance, damping=damping)
    if solution.error >= tolerance:
        raise InverseKinematicsError(
            f"could not move the CoM to {target} over the {support} sole with the other foot "
            f"{'raised by ' + format(lift, 'g') + ' m' if lift else 'planted'} "
            f"(remaining error {solution.error:.2e})")
    return solution.q[model.q_index].copy()


class StanceSolver:
    """Whole-body IK for walking: soles, CoM and trunk orientation -> joint positions.

    The legs' joints and the floating base move; every other joint stays at its value
    in ``posture`` (e.g. arms lowered). Each call starts from the previous answer.
    """

    def __init__(self, model: RobotModel, posture: JointPositions, leg_joints: Sequence[str],
                 iterations: int = 5, tolerance: float = 1e-5, damping: float = 1e-8) -> None:
        self.model = model
        self.leg_joints = tuple(leg_joints)
        self.iterations = iterations
        self.tolerance = tolerance
        self.damping = damping
        feet = model.config.feet
        self._soles = (feet["right"].sole, feet["left"].sole)
        legs = {model.joints.index(name) for name in self.leg_joints}
        self._others = np.array([i for i in range(len(model.joints)) if i not in legs], dtype=int)
        self._other_q = model.q_index[self._others]
        self._knees = [knee for sole in self._soles if (knee := _knee(model, sole)) is not None]
        # the knees bend one way only: never past straight (the other branch of the leg IK)
        self._lower, self._upper = model.joints.lower.copy(), model.joints.upper.copy()
        for knee, straight, flexion in self._knees:
            if flexion > 0.0:
                self._lower[knee] = max(self._lower[knee], straight)
            else:
                self._upper[knee] = min(self._upper[knee], straight)
        self.q = model.configuration(posture)
        #: Residual and iterations of the latest call.
        self.error = 0.0
        self.last_iterations = 0

    def reset(self, positions: JointPositions, base: pin.SE3) -> None:
        """Start the next solve from these joint positions and base placement, the knees
        bent at least ``KNEE_SEED`` from straight (a straight leg is a singularity:
        lowering the hips could bend the knee either way, and the Jacobian cannot tell)."""
        self.q = self.model.configuration(positions, base)
        for knee, straight, flexion in self._knees:
            index = self.model.q_index[knee]
            self.q[index] = straight + flexion * max(flexion * (self.q[index] - straight), KNEE_SEED)

    def seed(self, positions: JointPositions) -> None:
        """Start the next solve from these joint positions (the base where it is)."""
        self.q[self.model.q_index] = self.model.joints.to_array(positions)

    def solve(self, right: pin.SE3, left: pin.SE3, com: np.ndarray, trunk: np.ndarray,
              posture: np.ndarray | None = None, iterations: int | None = None) -> np.ndarray:
        """Joint positions (canonical order) with the right and left soles at their
        placements, the CoM at ``com`` and the base's rotation ``trunk``; the joints other
        than the legs at their values in ``posture`` (canonical order) when given."""
        if posture is not None:
            self.q[self._other_q] = np.asarray(posture, dtype=float)[self._others]
        tasks = [FramePlacement(self._soles[0], right), FramePlacement(self._soles[1], left),
                 CentreOfMass(com), BaseOrientation(trunk)]
        solution = solve(self.model, self.q, tasks, self.leg_joints,
                         iterations=self.iterations if iterations is None else iterations,
                         tolerance=self.tolerance, damping=self.damping, lower=self._lower, upper=self._upper)
        self.q = solution.q
        self.error, self.last_iterations = solution.error, solution.iterations
        return self.q[self.model.q_index].copy()


def _knee(model: RobotModel, sole: str) -> tuple[int, float, float] | None:
    """The knee of the leg carrying ``sole``: the middle of its three pitch joints (axis
    along y), the angle at which that leg is straight (hip and ankle pitch axes farthest
    apart: not always 0, the Bioloid's is at 22 deg) and the flexion sign (the side of
    straight with the larger range)."""
    pitch = [name for name in model.chain_joints(sole) if abs(model.joints[name].axis[1]) > 0.9]
    if len(pitch) != 3:
        return None
    hip, ankle = model.model.getJointId(pitch[0]), model.model.getJointId(pitch[2])
    joint = model.joints[pitch[1]]
    angles = np.linspace(joint.limits.lower, joint.limits.upper, 181)
    lengths = []
    for angle in angles:
        model.frame_placement(sole, model.joints.to_array({joint.name: float(angle)}))  # updates joint placements
        lengths.append(np.linalg.norm(model.data.oMi[hip].translation - model.data.oMi[ankle].translation))
    best = int(np.argmax(lengths))
    if 0 < best < len(angles) - 1:  # the vertex of the parabola through the best three samples
        y0, y1, y2 = lengths[best - 1: best + 2]
        curvature = y0 - 2.0 * y1 + y2
        offset = 0.5 * (y0 - y2) / curvature if curvature < 0.0 else 0.0
        straight = float(angles[best] + offset * (angles[1] - angles[0]))
    else:
        straight = float(angles[best])
    flexion = 1.0 if joint.limits.upper - straight > straight - joint.limits.lower else -1.0
    return joint.index, straight, flexion
