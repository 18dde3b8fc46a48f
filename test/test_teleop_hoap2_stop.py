"""The HOAP-2 stopped on cmd_vel from a turn stays up, through its graph, as a user drives it.

The stretch of the seeded 10-minute teleoperation (``humanoid walk --robot hoap2 --teleop
600``, seed 0, 410-419 s) where the robot fell: a slow sideways walk, a turn in place, a stop.
With the stop's ZMP ramp of 0.6 s (``stop_duration``) the last double support drew the CoM back
over the support sole's centre (4 mm from it, where the steps keep it 16-26 mm inside) and the
robot rolled off that sole's outer edge about 1.5 s after the stop (docs/walking.md). The walk
starts from the robot's start, crouching first, as the teleoperation's did: with the old ramp
this stretch falls (turns of 2.3 and 2.4 s), and the stops at other phases, which stood, are
in docs/walking.md.

The graph in lockstep with its client, as ``humanoid walk --teleop`` runs it
(no automatic get-up: a fall is counted, not repaired).
"""

from __future__ import annotations

import pytest

from conftest import MODULE_CLIENT
from humanoid_experiments import Segment
from humanoid_experiments.teleop import teleop
from humanoid_sim import sim_nodes

pytestmark = pytest.mark.system

LOCKSTEP = True
GRAPH = sim_nodes("hoap2", lockstep=True, participants=(MODULE_CLIENT,), auto_getup=False)
#: s of the sideways walk before the turn, its speed (m/s, to the right) and the turn's (rad/s).
SIDEWAYS, SIDEWAYS_SPEED, TURN_SPEED = 4.82, -0.012, -0.142
#: s standing after the stop: the fall came 1.5 s after it.
AFTER = 3.0


#: s of the turn in place.
TURN = 2.4


def test_the_hoap2_stops_upright_from_a_turn_after_a_sideways_walk(module_graph):
    segments = [Segment(0.0, 0.0, SIDEWAYS_SPEED, 0.0), Segment(SIDEWAYS, 0.0, 0.0, TURN_SPEED),
                Segment(SIDEWAYS + TURN, 0.0, 0.0, 0.0)]
    report = teleop(module_graph, "hoap2", SIDEWAYS + TURN + AFTER, segments=segments, timeout=300.0)
    assert not report.falls_at, report.text()
    assert not module_graph.fallen
