"""FallWatch over real DDS: what counts as a fall for the controllers. The fall estimate going
fallen counts, the fall manager seeing one coming counts; the estimate going fallen while the
manager gets the robot up does not (a dynamic get-up rocks the trunk past the estimate's
tilt, and the manager, not the estimate, judges the attempt)."""

import math

import pytest

from humanoid_control.ros import FALL_STATE_QOS, FallWatch, poll_until, topics
from humanoid_interfaces.msg import FallManagerState, FallState

PATIENCE = 30.0


@pytest.fixture
def watch_and_publishers(spinning_nodes):
    watching, publishing = spinning_nodes("fall_watch_under_test", "fall_watch_publisher")
    falls: list[str] = []
    watch = FallWatch(watching, falls.append)
    estimate = publishing.create_publisher(FallState, topics.FALL_STATE, FALL_STATE_QOS)
    manager = publishing.create_publisher(FallManagerState, topics.FALL_MANAGER_STATE, FALL_STATE_QOS)
    poll_until(lambda: estimate.get_subscription_count() and manager.get_subscription_count(),
               "the watch's subscriptions", PATIENCE)
    return watch, falls, estimate, manager


def manager_state(state: int, name: str) -> FallManagerState:
    return FallManagerState(state=state, state_name=name, side="belly", cause="test", tilt=math.nan,
                            tilt_rate=math.nan, attempt=1, max_attempts=3)


def estimate_state(fallen: bool, tilt: float = 1.0) -> FallState:
    return FallState(fallen=fallen, posture="on_belly" if fallen else "upright", source="imu", tilt=tilt)


def test_a_fall_estimate_counts_except_while_the_manager_gets_the_robot_up(watch_and_publishers):
    watch, falls, estimate, manager = watch_and_publishers
    manager.publish(manager_state(FallManagerState.CONTROLLABLE, "controllable"))
    poll_until(lambda: watch.manager is not None, "the manager's state", PATIENCE)
    estimate.publish(estimate_state(True))
    poll_until(lambda: watch.count == 1, "the estimate's fall counted", PATIENCE)
    assert "the robot fell (on_belly" in falls[0]

    manager.publish(manager_state(FallManagerState.GETTING_UP, "getting_up"))
    poll_until(lambda: watch.manager.state == FallManagerState.GETTING_UP, "getting up", PATIENCE)
    estimate.publish(estimate_state(False))  # the rise passes upright ...
    estimate.publish(estimate_state(True, 1.2))  # ... and rocks back past the estimate's tilt (69 deg)
    poll_until(lambda: watch.fall is not None and "tilt 69 deg" in watch.fall, "the estimate's latest", PATIENCE)
    assert watch.count == 1 and len(falls) == 1

    manager.publish(manager_state(FallManagerState.CONTROLLABLE, "controllable"))
    estimate.publish(estimate_state(False))
    manager.publish(manager_state(FallManagerState.FALLING, "falling"))
    poll_until(lambda: watch.count == 2, "the manager's fall counted", PATIENCE)
    assert "the fall manager: falling" in falls[1]
