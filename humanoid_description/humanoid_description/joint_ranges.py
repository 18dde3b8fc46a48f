"""Which part of a servo's range the mechanism forbids: the narrowings the collision model proves.

A robot's joint limits are its servos' range (an AX-12: raw 0-1023 over 300 deg), narrowed
only where the collision geometry shows that the joint cannot go: at an angle where the links
the joint moves collide with the links it is mounted on (through its own chain: its ancestors
and descendants) whatever the chain's other joints do. "Whatever" is checked on the zero pose
``samples`` seeded random configurations of those joints over their range, and a 5 deg grid of
them too when they are two or fewer (a leg's hip roll: its hip pitch and knee; the neck pitch:
the neck yaw and head pitch): an angle is forbidden when every one of them collides. A sampled
proof can miss a narrow way out, and so narrow a joint too much (the neck pitch's upper end: 141
deg here and on a 1 deg grid of the neck yaw and head pitch, where one other set of 300 random
samples found a way out up to 144 deg); a larger chain, the spine's, is not narrowed at all: a
free configuration turns up at every angle. Collisions with other limbs do not count (the other
limb can move away); adjacent links are not checked (they touch by construction).

``humanoid describe``'s model and the xacro's limits (dimensions.yaml) use the outcome; the
test ``test_joint_ranges.py`` checks that each narrowing in force is one this proves.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from humanoid_description.collision import CollisionModel
from humanoid_description.model import RobotModel


@dataclass(frozen=True)
class Narrowing:
    """The free interval around 0 of one joint within the servo's range (rad), and why it ends."""

    joint: str
    lower: float
    upper: float
    lower_pairs: tuple[tuple[str, str], ...]  # the pairs colliding just beyond lower (empty: the servo's end)
    upper_pairs: tuple[tuple[str, str], ...]


def chain(model: RobotModel, joint: str) -> list[str]:
    """The actuated joints above and below ``joint`` in the tree (not ``joint`` itself)."""
    pin_model = model.model
    actuated = set(model.joints.names)
    index = pin_model.getJointId(joint)

    def ancestors(k: int) -> list[int]:
        found = []
        while (k := pin_model.parents[k]) > 0:
            found.append(k)
        return found

    above = ancestors(index)
    below = [k for k in range(1, pin_model.njoints) if index in ancestors(k)]
    return [pin_model.names[k] for k in above + below if pin_model.names[k] in actuated]


def free_at(collision: CollisionModel, joint: str, angle: float, others: np.ndarray) -> tuple[bool, set]:
    """Whether ``joint`` at ``angle`` has one collision-free configuration among ``others`` (rows of
    every joint's position; the joint's own column replaced); else the pairs of the first."""
    model = collision.robot
    names = model.joints.names
    j = names.index(joint)
    allowed = {j, *(names.index(n) for n in chain(model, joint))}
    pairs = [p for p in range(len(collision.pairs))
             if collision.path_joints[p, j] and set(np.flatnonzero(collision.path_joints[p])) <= allowed]
    first: set = set()
    for row in others:
        q = row.copy()
        q[j] = angle
        colliding = collision.colliding_pairs(q)[pairs]
        if not colliding.any():
            return True, set()
        if not first:
            first = {collision.pairs[pairs[k]] for k in np.flatnonzero(colliding)}
    return False, first


def configurations(model: RobotModel, joint: str, lower: np.ndarray, upper: np.ndarray, samples: int,
                   seed: int, grid_step: float = math.radians(5.0)) -> np.ndarray:
    """The zero pose, ``samples`` seeded random values of the chain's other joints over their
    range and, when they are two or fewer, a grid of ``grid_step`` too (the rest at 0)."""
    names = model.joints.names
    columns = [names.index(name) for name in chain(model, joint)]
    rng = np.random.default_rng(seed)
    random = np.zeros((samples, len(names)))
    for k in columns:
        random[:, k] = rng.uniform(lower[k], upper[k], samples)
    blocks = [np.zeros((1, len(names))), random]
    if 0 < len(columns) <= 2:
        axes = [np.arange(lower[k], upper[k] + 1e-9, grid_step) for k in columns]
        grid = np.zeros((int(np.prod([len(a) for a in axes])), len(names)))
        grid[:, columns] = np.array(np.meshgrid(*axes, indexing="ij")).reshape(len(columns), -1).T
        blocks.append(grid)
    return np.vstack(blocks)


def narrowing(model: RobotModel, collision: CollisionModel, joint: str, lower: np.ndarray, upper: np.ndarray,
              step: float = math.radians(1.0), samples: int = 400, seed: int = 0) -> Narrowing:
    """From 0 outward in ``step``, the first angle each way that no sampled configuration frees."""
    names = model.joints.names
    k = names.index(joint)
    rows = configurations(model, joint, lower, upper, samples, seed)
    ends, why = [], []
    for bound, sign in ((lower[k], -1.0), (upper[k], 1.0)):
        angle, pairs = 0.0, set()
        while abs(angle) < abs(bound) - 1e-12:
            trial = sign * min(abs(angle) + step, abs(bound))
            free, pairs = free_at(collision, joint, trial, rows)
            if not free:
                break
            angle = trial
        else:
            pairs = set()
        ends.append(angle if pairs else float(bound))
        why.append(tuple(sorted(pairs)))
    return Narrowing(joint, ends[0], ends[1], why[0], why[1])
