"""Self-collision along a path (trajectory_collision.check_path): a fast move that brings
two links near each other without touching is cleared by sampling it more densely where
the coarse samples could not prove it (there only), not refused; a path into a collision
is still refused, where it collides, and so is a path that comes within the safety
distance only between two coarse samples, after a near miss. The work is bounded: a path
is checked a chunk of samples at a time (stoppable between chunks), and one needing more
samples than the bound is refused before any."""

from __future__ import annotations

import numpy as np
import pytest

from humanoid_core.guards import FINEST_PERIOD, check_path, sample_times, trajectory_collision
from humanoid_core.loop import CheckInterruptedError, CommandRejectedError, ErrorCode
from humanoid_description import CollisionModel, CollisionTracker, load_model

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
    assert result.samples > duration / coarse + 1  # sampled again


def keyframed(frames: list[np.ndarray], durations: list[float]):
    """The arm through ``frames`` (values of ``ARM``), straight in joint space from one to the
    next in ``durations`` s (each joint monotonic between two frames), the rest at zero."""
    model = load_model(ROBOT)
    columns = [model.joints.index(j) for j in ARM]
    zero = model.pose_positions("zero")
    stamps = np.concatenate([[0.0], np.cumsum(durations)])
    values = np.array(frames)

    def along(times: np.ndarray) -> np.ndarray:
        rows = np.tile(zero, (len(times), 1))
        for k, column in enumerate(columns):
            rows[:, column] = np.interp(times, stamps, values[:, k])
        return rows
    return along, float(stamps[-1])


def test_only_the_unproven_stretch_is_sampled_again(setting):
    """A long path whose only unproven samples are at its end: the rest is sampled once."""
    model, _, head_distance = setting
    near = np.array([*RAISED[:2], elbow_near_the_head(head_distance, 6.0, 9.0)])
    along, duration = keyframed([RAISED, RAISED, near], [1.9, 0.1])
    coarse = 0.02
    coarse_samples = len(np.append(np.arange(0.0, duration, coarse), duration))
    tracker = CollisionTracker(CollisionModel(model), SAFETY)
    unproven = tracker.first_violation_along(along(np.append(np.arange(0.0, duration, coarse), duration)))
    assert unproven is not None and unproven[0] > 0.9 * coarse_samples and unproven[1].distance > SAFETY
    result = check_path(tracker, along, duration, coarse)
    assert result.hit is None, result.describe(model.joints.names, SAFETY)
    # re-sampling the whole path four times as densely would take four times as many samples
    assert coarse_samples < result.samples < 1.2 * coarse_samples


#: The thin collisions: (coarse period, duration of the sweep across the head, s), and what
#: the stretch within the safety distance (about a tenth of the sweep) is thinner than.
THIN = {"thinner than a refined interval": (0.05, 0.02, 0.05 / 4),
        "thinner than the finest sampling": (0.002, 0.002, FINEST_PERIOD)}


@pytest.mark.parametrize(("coarse", "sweep", "thinner_than"), THIN.values(), ids=list(THIN))
def test_a_thin_collision_between_coarse_samples_after_a_near_miss_is_refused(setting, coarse, sweep, thinner_than):
    """The forearm swept past the head (a near miss, clear but unproven at the coarse
    samples), then fast back across it a little closer: within the safety distance for a
    stretch far shorter than the coarse period, with no coarse sample in it, wherever it
    falls between two coarse samples. The refinement of the near miss must not end the
    check, and the thin stretch must be found (where the check cannot refine further, an
    unproven sample counts as a collision)."""
    model = setting[0]
    collision = CollisionModel(model)
    tracker = CollisionTracker(CollisionModel(model), SAFETY)
    frames = [np.radians(f) for f in ([-90.0, 90.0, 0.0], [-90.0, 19.0, -60.0], [-90.0, 22.0, -60.0],
                                      [-90.0, 90.0, 0.0])]
    unproven_hits = 0
    for offset in (np.arange(5) + 0.5) * coarse / 5:  # where the thin stretch falls between coarse samples
        along, duration = keyframed(frames, [0.3, 0.05 + offset, sweep])
        across = duration - sweep  # the sweep across the head begins
        times = sample_times(duration, coarse)
        # the truth: within the safety distance only in a thin stretch of the sweep, between coarse samples
        dense = np.concatenate([np.arange(0.0, across, 0.001), np.linspace(across, duration, 501)])
        within = dense[[collision.pair_distances(q).min() <= SAFETY for q in along(dense)]]
        assert len(within) and within[0] > across and within[-1] - within[0] < thinner_than
        assert all(collision.pair_distances(q).min() > SAFETY for q in along(times))
        # the coarse samples cannot prove the near miss clear: it is refined first
        unproven = tracker.first_violation_along(along(times))
        assert unproven is not None and times[unproven[0]] < 0.3 and unproven[1].distance > SAFETY
        result = check_path(tracker, along, duration, coarse)
        assert result.hit is not None, (offset, result.describe(model.joints.names, SAFETY))
        assert {result.hit.pair.link_a, result.hit.pair.link_b} == {"head", "rarm_forearm"}
        assert across - coarse <= result.hit.time <= within[-1], offset
        # the message says which: within the safety distance at a sample, or not proven clear
        message = result.describe(model.joints.names, SAFETY)
        if result.hit.pair.distance > SAFETY:
            assert result.hit.unproven and message.startswith("self-collision not excluded:"), message
        else:
            assert not result.hit.unproven and "mm apart (safety distance 5 mm)" in message, message
        unproven_hits += result.hit.unproven
    if thinner_than == FINEST_PERIOD:  # some offsets put no sample inside the thin stretch
        assert unproven_hits > 0


def test_a_move_into_the_head_is_refused_where_it_collides(setting):
    model, configurations, head_distance = setting
    target = np.array([*RAISED[:2], np.radians(-60.0)])
    assert head_distance(target[2]) <= SAFETY  # a true collision at the end
    tracker = CollisionTracker(CollisionModel(model), SAFETY)
    result = check_path(tracker, configurations(target, 0.2), 0.2, 0.02)
    assert result.hit is not None and result.hit.pair.distance <= SAFETY + 0.001  # at, or just before, contact
    assert any("head" in link for link in (result.hit.pair.link_a, result.hit.pair.link_b))
    assert 0.0 < result.hit.time <= 0.2


@pytest.mark.parametrize("chunk", [1, 2, 7])
def test_a_path_checked_a_chunk_at_a_time_gives_what_it_gives_whole(setting, chunk, monkeypatch):
    """Chunks share their edge samples, each clearing its own side: the near misses are
    still cleared, and the thin collision after one found at the same time, whatever the
    chunk boundaries."""
    model, _, head_distance = setting
    near = np.array([*RAISED[:2], elbow_near_the_head(head_distance, 6.0, 9.0)])
    frames = [np.radians(f) for f in ([-90.0, 90.0, 0.0], [-90.0, 19.0, -60.0], [-90.0, 22.0, -60.0],
                                      [-90.0, 90.0, 0.0])]
    paths = {"cleared": keyframed([RAISED, RAISED, near, RAISED, near], [0.3, 0.1, 0.1, 0.1]),
             "thin collision": keyframed(frames, [0.3, 0.06, 0.02])}
    tracker = CollisionTracker(CollisionModel(model), SAFETY)
    whole = {name: check_path(tracker, along, duration, 0.05) for name, (along, duration) in paths.items()}
    assert whole["cleared"].hit is None and whole["thin collision"].hit is not None
    assert whole["cleared"].samples > 0.6 / 0.05 + 1  # the near misses were sampled again
    monkeypatch.setattr(trajectory_collision, "CHUNK", chunk)
    for name, (along, duration) in paths.items():
        chunked = check_path(tracker, along, duration, 0.05)
        assert (chunked.hit is None) == (whole[name].hit is None), name
        if chunked.hit is not None:
            assert chunked.hit.time == whole[name].hit.time and chunked.hit.pair == whole[name].hit.pair


def test_a_long_path_is_checked_in_bounded_chunks_and_can_be_stopped_between_them(setting):
    model = setting[0]
    along, duration = keyframed([RAISED, RAISED], [40.0])  # 20 000 samples every 2 ms: 3 chunks
    asked: list[int] = []

    def configurations(times: np.ndarray) -> np.ndarray:
        asked.append(len(times))
        return along(times)

    tracker = CollisionTracker(CollisionModel(model), SAFETY)
    with pytest.raises(CheckInterruptedError):
        check_path(tracker, configurations, duration, 0.002, stop=lambda: len(asked) >= 2)
    assert asked == [trajectory_collision.CHUNK + 1] * 2  # the memory of a chunk, never the whole path
    result = check_path(tracker, configurations, duration, 0.002)
    assert result.hit is None and result.samples == 20_001
    assert max(asked) == trajectory_collision.CHUNK + 1


def test_a_path_needing_more_samples_than_the_bound_is_refused_before_any_is_taken(setting):
    model = setting[0]
    along, _ = keyframed([RAISED, RAISED], [1.0])
    asked: list[int] = []
    tracker = CollisionTracker(CollisionModel(model), SAFETY)
    with pytest.raises(CommandRejectedError) as info:
        check_path(tracker, lambda times: asked.append(len(times)) or along(times), 1e6, 0.002, max_samples=500,
                   stop=lambda: bool(asked))  # a check that went ahead would end there
    assert info.value.code is ErrorCode.INVALID_GOAL and not asked
    message = str(info.value)
    assert "takes 500000000 samples" in message and "max_trajectory_samples = 500" in message, message
    assert "1e+06 s path" in message and "every 0.002 s" in message, message
    assert check_path(tracker, along, 1.0, 0.002, max_samples=500).hit is None  # exactly the bound
