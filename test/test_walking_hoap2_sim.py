"""The HOAP-2 walks in simulation, through its graph, driven as a user would.

Issue 15's HOAP-2 walks (``humanoid walk --robot hoap2`` runs them at real time): 1 m
forward at 0.1 m/s or more (robot time, from standing to standing) within 5 cm/m of
drift, and shorter subsets of the others, a 45 deg turn in place and 0.1 m sideways,
through the ``walk`` action, stabilised by the IMU; the robot ends standing where the
steps took it, measured by the simulator's ground truth. What they guard: the default
gait's speed with the physics (8 cm steps of 0.5 s, docs/walking.md), the simulated
HOAP-2 servo following trajectories smoothly (its feet chattered and it fell within a
few steps when each sample is a rest-to-rest move), the IMU feedback slow enough not
to feed the sway, and the robot interface taking the walk's trajectories in order
without a standstill at each (without that it falls at real time).

One graph for the module, in lockstep; each walk starts where the previous one stood.
"""

from __future__ import annotations

import math

import pytest

from conftest import MODULE_CLIENT
from humanoid_experiments.walk import walk
from humanoid_sim import sim_nodes

pytestmark = pytest.mark.system

#: Drift allowed per metre walked (issue 15: 5 cm per metre), and on any walk.
DRIFT_PER_METRE = 0.05
DRIFT_FLOOR = 0.005
#: Heading error allowed (deg).
HEADING = 5.0
#: m/s over the 1 m walk, start and stop included (issue 15).
SPEED = 0.1


#: One HOAP-2 graph for the module's walks (each starts where the previous one stood), in
#: lockstep with its client: as fast as the machine allows, however loaded, each walk's goal
#: at a known state.
LOCKSTEP = True
GRAPH = sim_nodes("hoap2", lockstep=True,
                  participants=(MODULE_CLIENT,))


@pytest.fixture(scope="module")
def hoap2(module_graph):
    return module_graph


def walked_standing(client, standing: float, report) -> None:
    assert report.error_code == 0, report.result
    assert not report.fell, report.text()
    client.wait_until(client.now() + 1.0, timeout=60.0)
    assert not client.fallen
    assert client.wait_for_base_pose().pose.position.z > 0.8 * standing  # crouched at the walking height, not lying


def test_hoap2_walks_1_m_forward_at_0_1_m_s_and_stays_up(hoap2):
    standing = hoap2.wait_for_base_pose().pose.position.z
    report = walk(hoap2, "hoap2", 1.0, timeout=300.0)
    walked_standing(hoap2, standing, report)
    assert report.steps >= 12, report.text()
    assert report.distance_m == pytest.approx(1.0, abs=0.04), report.text()
    assert report.speed_mps >= SPEED, report.text()  # robot time: the real-time factor does not count
    assert abs(report.lateral_drift_m) <= DRIFT_PER_METRE * report.distance_m + DRIFT_FLOOR, report.text()
    assert abs(math.degrees(report.heading_error_rad)) <= HEADING, report.text()


def test_hoap2_turns_in_place(hoap2):
    standing = hoap2.wait_for_base_pose().pose.position.z
    report = walk(hoap2, "hoap2", 0.0, turn=math.radians(45.0), timeout=300.0)
    walked_standing(hoap2, standing, report)
    assert abs(math.degrees(report.heading_error_rad)) <= HEADING, report.text()
    assert math.hypot(report.distance_m, report.lateral_m) <= 0.03, report.text()  # in place


def test_hoap2_walks_sideways(hoap2):
    standing = hoap2.wait_for_base_pose().pose.position.z
    report = walk(hoap2, "hoap2", 0.0, lateral=0.1, timeout=300.0)
    walked_standing(hoap2, standing, report)
    assert report.lateral_m == pytest.approx(0.1, abs=0.02), report.text()
    assert abs(report.distance_m) <= DRIFT_PER_METRE * 0.1 + DRIFT_FLOOR, report.text()
    assert abs(math.degrees(report.heading_error_rad)) <= HEADING, report.text()
