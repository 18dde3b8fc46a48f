"""Self-collision along a path (trajectory_collision.check_path): a fast move that brings
two links near each other without touching is cleared by sampling it more densely, not
refused because the coarse samples could not prove it; a path into a collision is still
refused, where it collides."""

from __future__ import annotations

import numpy as np
import pytest

from humanoid_control.trajectory_collision import check_path
from humanoid_description.collision import CollisionModel, CollisionTracker
from humanoid_description.model import load_model

ROBOT = "hoap2"
SAFETY = 0.005  # m, the HOAP-2's
#: The right arm raised and turned in; its elbow bends the forearm toward the head.
ARM = ("rarm_joint1", "rarm_joint3", "rarm_joint4")
RAISED = np.radians([-90.0, 90.0, 0.0])


@pytest.fixture(scope="module")
def setting():
    model = load_model(ROBOT)
    columns = [model.joints.index(j) for j in ARM]
    zero = model.pose_positions("zero")

    def configurations(target: np.ndarray, duration: float):
        def along(times: np.ndarray) -> np.ndarray:
            rows = np.tile(zero, (len(times), 1))
            rows[:, columns] = RAISED + np.outer(times / duration, target - RAISED)
            return rows
        return along

    collision = CollisionModel(model)

    def head_distance(elbow: float) -> float:
        """The right arm's nearest distance to the head with the elbow at ``elbow``."""
        positions = configurations(np.array([*RAISED[:2], elbow]), 1.0)(np.array([1.0]))[0]
        return min(p.distance for p in collision.distances(positions)
                   if any("head" in link for link in (p.link_a, p.link_b))
                   if any(link.startswith("rarm") for link in (p.link_a, p.link_b)))

    return model, configurations, head_distance


def elbow_near_the_head(head_distance, low_mm: float, high_mm: float) -> float:
    """An elbow angle (rad) at which the forearm is ``low_mm``-``high_mm`` from the head."""
    for degrees in np.arange(0.0, -90.0, -0.5):
        if low_mm <= head_distance(np.radians(degrees)) * 1000.0 <= high_mm:
            return float(np.radians(degrees))
    raise AssertionError("no elbow angle brings the forearm that near the head")


def test_a_fast_move_near_the_head_is_cleared_by_denser_samples(setting):
    model, configurations, head_distance = setting
    target = np.array([*RAISED[:2], elbow_near_the_head(head_distance, 6.0, 9.0)])
    along, duration, coarse = configurations(target, 0.2), 0.2, 0.1
    tracker = CollisionTracker(CollisionModel(model), SAFETY)
    # the coarse samples alone cannot prove the move clear (it is fast and ends near the head) ...
    unproven = tracker.first_violation_along(along(np.append(np.arange(0.0, duration, coarse), duration)))
    assert unproven is not None and unproven[1].distance > SAFETY
    # ... the check samples it again, more densely, and clears it
    result = check_path(tracker, along, duration, coarse)
    assert result.hit is None, result.describe(model.joints.names, SAFETY)
    assert result.samples > duration / coarse * 4


def test_a_move_into_the_head_is_refused_where_it_collides(setting):
    model, configurations, head_distance = setting
    target = np.array([*RAISED[:2], np.radians(-60.0)])
    assert head_distance(target[2]) <= SAFETY  # a true collision at the end
    tracker = CollisionTracker(CollisionModel(model), SAFETY)
    result = check_path(tracker, configurations(target, 0.2), 0.2, 0.02)
    assert result.hit is not None and result.hit.pair.distance <= SAFETY + 0.001  # at, or just before, contact
    assert any("head" in link for link in (result.hit.pair.link_a, result.hit.pair.link_b))
    assert 0.0 < result.hit.time <= 0.2
