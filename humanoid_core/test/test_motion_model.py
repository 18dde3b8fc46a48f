"""The in-memory motion: what makes it playable, holds, stretching, joint subsets."""

import numpy as np
import pytest

from humanoid_core.loop import Law
from humanoid_core.motion import Motion, MotionError, joint_array

JOINTS = ("a", "b")


def motion(**changes):
    fields = dict(name="m", robot="hoap2", joint_names=JOINTS, times=[0.0, 1.0, 2.0],
                  positions=[[0.0, 0.0], [1.0, -1.0], [0.0, 0.5]], source="here.yaml")
    fields.update(changes)
    return Motion(**fields)


@pytest.mark.parametrize(("changes", "problem"), [
    (dict(times=[0.0, 1.0, 1.0]), "strictly increasing"),
    (dict(times=[-1.0, 1.0, 2.0]), "non-negative"),
    (dict(positions=[[0.0, 0.0], [np.nan, 0.0], [0.0, 0.0]]), "NaN"),
    (dict(positions=[[0.0], [1.0], [2.0]]), "position columns"),
    (dict(joint_names=("a", "a")), "unique"),
    (dict(holds=[0.0, 1.0, 0.0]), "hold must end before"),
    (dict(holds=[0.0, -0.1, 0.0]), "non-negative"),
    (dict(velocities=[[0.0, 0.0], [1.0, 0.0], [0.0, 0.1]]), "keyframe 2 must have zero velocity"),
    (dict(velocities=[[0.0, 0.0], [1.0, 0.0], [0.0, 0.0]], holds=[0.0, 0.5, 0.0]), "keyframe 1"),
    (dict(labels=("x",)), "labels"),
    (dict(supports=("both", "both", "middle")), "supports"),
])
def test_unplayable_motions_are_rejected_with_the_source(changes, problem):
    with pytest.raises(MotionError, match=problem) as error:
        motion(**changes)
    assert str(error.value).startswith("here.yaml: ")


def test_holds_become_rest_knots_and_extend_the_duration():
    held = motion(holds=[0.5, 0.25, 1.0])
    times, positions, velocities = held.knots()
    np.testing.assert_allclose(times, [0.0, 0.5, 1.0, 1.25, 2.0, 3.0])
    np.testing.assert_allclose(positions[2], positions[3])
    assert velocities is None
    assert held.duration == 3.0
    spline = held.spline()
    for t in (0.2, 1.1, 2.7):  # inside holds: still, at rest
        _, v, _ = spline.sample(t)
        assert np.all(v == 0.0)
    assert spline.sample(1.1)[0] == pytest.approx([1.0, -1.0])


def test_stretching_scales_times_holds_and_velocities():
    base = motion(velocities=[[0.0, 0.0], [1.0, 2.0], [0.0, 0.0]], holds=[0.0, 0.0, 0.5])
    slow = base.stretched(2.0)
    np.testing.assert_allclose(slow.times, [0.0, 2.0, 4.0])
    np.testing.assert_allclose(slow.velocities[1], [0.5, 1.0])
    assert slow.duration == pytest.approx(5.0)
    p_fast = base.spline().sample(0.7)[0]
    p_slow = slow.spline().sample(1.4)[0]
    np.testing.assert_allclose(p_slow, p_fast)
    with pytest.raises(ValueError, match="positive"):
        base.stretched(0.0)


def test_select_reorders_joints_and_names_unknown_ones():
    chosen = motion().select(["b"])
    assert chosen.joint_names == ("b",)
    np.testing.assert_allclose(chosen.positions[:, 0], [0.0, -1.0, 0.5])
    with pytest.raises(MotionError, match=r"no joint.*c"):
        motion().select(["c"])


def test_labels_supports_and_keyframes_for_progress_feedback():
    m = motion(labels=("start", "", "end"), supports=("both", "right", "both"), law=Law.LINEAR)
    assert [m.label(i) for i in range(3)] == ["start", "keyframe 1", "end"]
    assert m.support(1) == "right"
    assert m.keyframe(1) == {"a": 1.0, "b": -1.0}


def test_joint_array_reports_missing_joints():
    assert list(joint_array({"a": 1.0, "b": 2.0, "c": 3.0}, ["b", "a"])) == [2.0, 1.0]
    with pytest.raises(MotionError, match=r"no value for joint.*b"):
        joint_array({"a": 1.0}, ["a", "b"])
