"""Pushing the simulated HOAP-2 through the simulator's ``apply_push`` service, as a user
or an experiment would: a small push at the trunk rocks the standing robot and leaves it
up, a large one topples it (the simulator's ``fallen``); bad requests are refused with a
message naming what is wrong, and the node goes on.

The robot waits on its own clock (robot time), whatever the machine's load. The graph is the
default one at its default real-time factor (1), as a user runs it: the robot seconds the
checks wait for are the same, and the simulation no longer runs flat out (real-time factor
0) through every moment of the module, the bad requests' and the graph's start included."""

from __future__ import annotations

import math
import threading

import pytest
from geometry_msgs.msg import PoseStamped

from humanoid_control.ros import poll_until
from humanoid_sim import sim_nodes

pytestmark = pytest.mark.system

GRAPH = sim_nodes("hoap2")
#: N and s: 2 N s to the left, the robot (6.9 kg) given 0.3 m/s: it rocks and stands (humanoid push:
#: it stands 3.5 N s, falls at 4.3)
SMALL = ((0.0, 20.0, 0.0), 0.1)
#: 20 N s forward: 2.9 m/s, far beyond what it stands
LARGE = ((200.0, 0.0, 0.0), 0.1)
#: s of robot time the robot is watched after a push
WATCH = 3.0


@pytest.fixture(scope="module")
def hoap2(module_graph):
    return module_graph


class BaseTrack:
    """The ground-truth base position's largest horizontal excursion from where it was at ``start``."""

    def __init__(self, client) -> None:
        self._lock = threading.Lock()
        self._origin: tuple[float, float] | None = None
        self.excursion = 0.0
        client.node.create_subscription(PoseStamped, "ground_truth/base_pose", self._on_pose, 50)

    def start(self) -> None:
        with self._lock:
            self._origin, self.excursion = None, 0.0

    def _on_pose(self, msg: PoseStamped) -> None:
        p = msg.pose.position
        with self._lock:
            if self._origin is None:
                self._origin = (p.x, p.y)
            self.excursion = max(self.excursion, math.hypot(p.x - self._origin[0], p.y - self._origin[1]))


def stand(client) -> None:
    """Reset the robot, and let it settle a second on its feet."""
    client.reset()
    client.wait_until(client.now() + 1.0, timeout=120.0)
    assert not client.fallen


def watch(client, robot_seconds: float) -> bool:
    """Whether the robot fell within ``robot_seconds`` of robot time from now."""
    end = client.now() + robot_seconds
    poll_until(lambda: client.fallen or client.now() >= end, "the end of the watch", timeout=300.0)
    return bool(client.fallen)


@pytest.mark.parametrize(("link", "force", "duration", "message"), [
    ("no_such_link", (1.0, 0.0, 0.0), 0.1, "unknown link 'no_such_link'"),
    ("", (math.nan, 0.0, 0.0), 0.1, "the force must be three finite numbers"),
    ("", (0.0, math.inf, 0.0), 0.1, "the force must be three finite numbers"),
    ("", (1.0, 0.0, 0.0), -0.1, "the duration must be a finite number of seconds > 0, got -0.1"),
    ("", (1.0, 0.0, 0.0), 0.0, "the duration must be a finite number of seconds > 0, got 0.0"),
    ("", (1.0, 0.0, 0.0), math.nan, "the duration must be a finite number of seconds > 0, got nan"),
    ("", (1.0, 0.0, 0.0), 1e-5, "a duration of 1e-05 s is shorter than one physics step (0.001 s)"),
    ("", (1e4, 0.0, 0.0), 0.1, "a force of 10000 N is beyond push.max_force (1000 N)"),
    ("", (1.0, 0.0, 0.0), 100.0, "a duration of 100 s is beyond push.max_duration (10 s)"),
])
def test_bad_push_requests_are_refused_with_a_message(hoap2, link, force, duration, message):
    response = hoap2.apply_push(force, duration, link=link)
    assert not response.success
    assert response.message.startswith("push refused: ") and message in response.message, response.message
    hoap2.wait_for_joint_states(30.0)  # the node goes on


def test_a_small_push_rocks_the_standing_robot_and_leaves_it_up(hoap2):
    track = BaseTrack(hoap2)
    stand(hoap2)
    track.start()
    hoap2.wait_for_base_pose()
    response = hoap2.apply_push(*SMALL, link="base_link")
    assert response.success, response.message
    assert "an impulse of 2 N s" in response.message
    assert not watch(hoap2, WATCH)
    assert track.excursion > 0.001  # it did move the robot


def test_a_large_push_topples_the_standing_robot(hoap2):
    stand(hoap2)
    response = hoap2.apply_push(*LARGE)
    assert response.success, response.message
    assert watch(hoap2, WATCH)
