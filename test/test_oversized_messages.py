"""No message, however large, stalls the robot: a trajectory of 100 000 points sent on
`joint_trajectory` and as a `follow_joint_trajectory` goal is refused (INVALID_GOAL, both
numbers named) while `joint_states` keeps its rate, on the simulator and on the emulated
Dynamixel bus.

rclpy converts a received message into Python objects in one call that holds the
interpreter lock (about 0.1 ms per point): in the process that receives it (the driver
node's front) nothing else runs meanwhile. The control loop and `joint_states` live in a
process of their own (humanoid_control.ros.loop_process), so the gaps are measured on the
publisher's side, from each joint_states message's DDS source timestamp (taken when the
loop's process publishes it): the test's own work (building and sending the big message)
cannot pass for a stall. What a loaded machine does to such a process is measured beside it: a
canary process doing, every publishing period, as much CPU work as the loop's process did per
period just before (measured from /proc), over the same window, so that a gap the CPU's
scarcity explains is told from one the message causes.
"""

from __future__ import annotations

import array
import os
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest
from builtin_interfaces.msg import Duration
from system_support import SourceStamps, largest_gap
from trajectory_msgs.msg import JointTrajectory, JointTrajectoryPoint

from humanoid_bringup import real_nodes
from humanoid_control.ros import poll_until
from humanoid_core.loop import InterfaceParameters
from humanoid_core.processes import process_tree
from humanoid_experiments.bench import own_cpu_seconds
from humanoid_hw.emulator import emulator_process
from humanoid_interfaces.action import FollowJointTrajectory
from humanoid_sim import sim_nodes

pytestmark = pytest.mark.system

POINTS = 100_000
MAX_POINTS = InterfaceParameters().max_trajectory_points
PUBLISH_RATE = 100.0
PATIENCE = 120.0
#: The largest joint_states gap during the flood, against the largest gap of a canary process
#: over the same window (a process doing the loop's CPU work and sleeping the rest of each
#: publishing period, as the loop's does): during the flood two processes take a core each (this one building and
#: sending the message, the node's front converting it), so on a loaded 2-core machine every
#: other process, the loop's and the canary's alike, waits for the CPU now and then (the
#: loop's gaps measured 45-170 ms at load 7-10, and 0.99 s once at load 10 beside other
#: work); the message's own effect, a loop stopped while rclpy converted it, was 4 s
#: (simulator) and 1 s (bus) with the canary undisturbed, before the loop had a process of its
#: own. The figure on a quiet machine: ``humanoid bench flood``.
GAP_RATIO = 3.0
#: On the bus a cycle is 19 request/answer round trips with the emulator's process, each of
#: which waits for the CPU; the canary makes as many with a partner (BUS_TRIPS), which works
#: what the emulator works per trip. With a canary of one wake-up a period the loop's gap
#: reached 8.5 times the canary's once in a loaded suite (1.99 s beside 0.23 s); with the
#: round trips, quiet and beside four CPU hogs, the loop's gap was 0.5-2.5 times the canary's
#: (41-202 ms beside 41-82 ms), and once in a quiet suite 8.8 times (0.70 s beside 0.08 s)
#: while the partner only echoed (the emulator's own work was not in the canary). The
#: message's own effect, a loop stopped while rclpy converted it, was 1 s beside a canary of
#: 10-50 ms.
BUS_GAP_RATIO = 8.0
#: ... or this many publishing periods (0.5 s), whichever is larger.
GAP_FLOOR_PERIODS = 50.0
#: s of wall time over which the loop's CPU share is measured before the flood.
DUTY_WINDOW = 1.0
#: The canary: every period it works ``work`` s of CPU in ``trips`` round trips with a partner
#: process that works ``partner_work`` s a period (a bus cycle's request/answer exchanges with
#: the emulator: each trip waits for the CPU twice, as the loop's transactions do), notes the
#: time, sleeps to the next period (at once when late, as the loop catches up); on end of input
#: it prints its times (ns).
CANARY = ("import subprocess, sys, threading, time\n"
          "echo = subprocess.Popen([sys.executable, '-c', {echo!r}], bufsize=0,\n"
          "                        stdin=subprocess.PIPE, stdout=subprocess.PIPE)\n"
          "stamps, done = [], threading.Event()\n"
          "threading.Thread(target=lambda: (sys.stdin.read(), done.set()), daemon=True).start()\n"
          "due = time.monotonic()\n"
          "while not done.is_set():\n"
          "    for _ in range({trips}):\n"
          "        end = time.thread_time() + {work} / {trips}\n"
          "        while time.thread_time() < end:\n"
          "            pass\n"
          "        echo.stdin.write(b'x')\n"
          "        echo.stdout.read(1)\n"
          "    stamps.append(time.time_ns())\n"
          "    if len(stamps) == 1:\n"
          "        print('working', flush=True)\n"
          "    due += {period}\n"
          "    time.sleep(max(0.0, due - time.monotonic()))\n"
          "echo.stdin.close()\n"
          "echo.wait()\n"
          "print(' '.join(map(str, stamps)))\n")
#: The canary's partner: answers each byte after ``work`` s of CPU; ends at end of input.
ECHO = ("import os, time\n"
        "while byte := os.read(0, 1):\n"
        "    end = time.thread_time() + {work}\n"
        "    while time.thread_time() < end:\n"
        "        pass\n"
        "    os.write(1, byte)\n")
#: Round trips per period: the simulator's loop has none (one wake-up a period), the bus's 19
#: (18 reads and a sync write per cycle: docs/graph_cost.md).
SIM_TRIPS = 1
BUS_TRIPS = 19


class Canary:
    """A process that works ``work`` s of CPU every ``period`` s in ``trips`` round trips with
    a partner process, recording when it finished each period: its largest gap in a window is
    what the machine's load alone did to a periodic process of that demand and that many
    wake-ups then. Ends (and is waited for) with the block; it also ends with this process (end
    of its input)."""

    def __init__(self, period: float, work: float, trips: int, partner_work: float = 0.0) -> None:
        script = CANARY.format(period=period, work=work, trips=trips, echo=ECHO.format(work=partner_work / trips))
        self._process = subprocess.Popen([sys.executable, "-c", script],
                                         stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
        self.stamps = np.array([], dtype=np.int64)

    def __enter__(self) -> Canary:
        assert self._process.stdout is not None and self._process.stdout.readline() == "working\n"
        return self

    def __exit__(self, *_exc: object) -> None:
        try:
            out, _ = self._process.communicate("", timeout=PATIENCE)
        finally:
            self._process.kill()
            self._process.wait()
        self.stamps = np.array(out.split(), dtype=np.int64)

    def largest_gap(self, since_ns: int, until_ns: int) -> float:
        """Largest gap (s) between wake-ups in [since, until] (system_support.largest_gap)."""
        return largest_gap(self.stamps, since_ns, until_ns)


def huge_trajectory(names: list[str], current: np.ndarray) -> JointTrajectory:
    """POINTS points 10 ms apart, every one at the current pose (valid but for its size). The
    points share one array of positions (what the message carries is the same), which the
    message's setter takes as it is instead of checking 100 000 lists value by value."""
    positions = array.array("d", np.asarray(current, dtype=float))
    return JointTrajectory(joint_names=list(names), points=[
        JointTrajectoryPoint(positions=positions, time_from_start=Duration(sec=k // 100, nanosec=k % 100 * 10_000_000))
        for k in range(1, POINTS + 1)])


def loop_work(node_pid: int, period: float, partner: int | None = None) -> tuple[float, float]:
    """CPU seconds the driver node's loop process (its children) and the ``partner`` process
    (the emulator) each used per ``period``, over DUTY_WINDOW s of wall time now (at most 90 %
    of the period)."""
    def used(pids: list[int]) -> float:
        return sum(seconds for pid in pids if (seconds := own_cpu_seconds(pid)) is not None)

    loop, partners = process_tree(node_pid)[1:], [] if partner is None else [partner]
    start, wall = (used(loop), used(partners)), time.monotonic()
    time.sleep(DUTY_WINDOW)  # a measurement window, not a wait for an event
    elapsed = time.monotonic() - wall
    return (min(0.9, (used(loop) - start[0]) / elapsed) * period,
            min(0.9, (used(partners) - start[1]) / elapsed) * period)


def emulator_pid() -> int:
    """The bus emulator this test process started (humanoid_hw.emulator.emulator_process)."""
    found = [pid for pid in process_tree(os.getpid())[1:]
             if b"humanoid_hw.emulator" in Path(f"/proc/{pid}/cmdline").read_bytes()]
    assert len(found) == 1, f"{len(found)} emulator processes among this test's children"
    return found[0]


def flood(graph, client, gap_ratio: float = GAP_RATIO, trips: int = SIM_TRIPS, partner: int | None = None) -> None:
    """Send the huge trajectory on the topic and as a goal; both refused, naming both numbers."""
    period = 1.0 / PUBLISH_RATE
    with SourceStamps() as stamps:
        state = client.wait_for_joint_states(PATIENCE)
        trajectory = huge_trajectory(list(state.name), np.array(state.position))  # built before the window
        poll_until(lambda: len(stamps.stamps) > 10, "joint_states from the robot", PATIENCE)
        work, partner_work = loop_work(graph.processes[graph.nodes[0].name].pid, period, partner)
        with Canary(period, work, trips, partner_work) as canary:
            flood_start = time.time_ns()
            client.send_trajectory(trajectory)
            outcome = client.follow(trajectory, timeout=PATIENCE)
            flood_end = time.time_ns()
            poll_until(lambda: stamps.stamps and stamps.stamps[-1] > flood_end, "joint_states after the flood",
                       PATIENCE)


    assert outcome.error_code == FollowJointTrajectory.Result.INVALID_GOAL
    assert f"{POINTS} points" in outcome.error_string
    assert f"max_trajectory_points = {MAX_POINTS}" in outcome.error_string
    during = stamps.largest_gap(flood_start, flood_end)
    load = canary.largest_gap(flood_start, flood_end)
    bound = max(gap_ratio * load, GAP_FLOOR_PERIODS / PUBLISH_RATE)
    print(f"largest joint_states gap: {during * 1e3:.1f} ms during the flood "
          f"({(flood_end - flood_start) * 1e-9:.1f} s); the canary's ({work * 1e3:.2f} ms of work and {trips} "
          f"round trips a period with a partner working {partner_work * 1e3:.2f} ms, as the loop's): "
          f"{load * 1e3:.1f} ms")
    assert during <= bound, (f"joint_states stalled {during:.3f} s while the huge messages were handled "
                             f"(a process merely waiting for the CPU meanwhile: {load:.3f} s)")


def test_a_huge_trajectory_does_not_stall_the_simulated_robot(robot_graph):
    # the fast physics profile (docs/physics_profiles.md): the property is the front's handling of
    # the message beside the loop; the canary measures whatever the loop's physics costs
    graph, client = robot_graph([n for n in sim_nodes("hoap2", publish_rate=PUBLISH_RATE, physics_profile="fast")
                                 if n.name == "humanoid_sim"])
    flood(graph, client)


def test_a_huge_trajectory_does_not_stall_the_robot_on_its_bus(robot_graph):
    with emulator_process("bioloid", 1, 1_000_000, timing=False) as port:
        graph, client = robot_graph([n for n in real_nodes("bioloid", port=port, publish_rate=PUBLISH_RATE)
                                     if n.name == "humanoid_hw"])
        flood(graph, client, BUS_GAP_RATIO, BUS_TRIPS, emulator_pid())
