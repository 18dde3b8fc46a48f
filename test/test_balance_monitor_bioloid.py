"""The balance monitor on the Bioloid: in simulation against the thesis' static analysis
(``humanoid balance-poses``), and on the hardware node with its emulated bus, where the
robot has no IMU and no foot sensors.

What users rely on:
- standing still in simulation, the margin the monitor publishes is the one
  ``balance-poses`` reports for the same pose (within 1 mm), and positive;
- on the hardware (no foot sensors), a balance_state for every joint_states message, in
  the support sole's frame, with the flat-feet assumption stated in diagnostics.

``humanoid balance-poses`` runs through the command's entry point in this process
(:func:`cli_entry.entry_point`): what is compared is the margin it reports, not its process
(an interpreter start and the model's imports saved).
"""

from __future__ import annotations

import csv
import json
import threading

import numpy as np
import pytest
from cli_entry import entry_point
from diagnostic_msgs.msg import DiagnosticStatus
from system_support import on_emulated_bus

from humanoid_bringup import real_nodes
from humanoid_control.ros import RobotClient, poll_until, seconds
from humanoid_description import load_model
from humanoid_hw.emulator import emulator_process
from humanoid_interfaces.msg import BalanceState
from humanoid_robot_bioloid.thesis import ThesisFrame
from humanoid_sim import sim_nodes

pytestmark = pytest.mark.system

ROBOT = "bioloid"
#: Generous limit (wall seconds) for anything awaited; every wait ends as soon as its condition holds.
PATIENCE = 60.0


class Recorder:
    """Every message of one topic, as it arrives."""

    def __init__(self, client: RobotClient, kind, topic: str, depth: int = 500) -> None:
        self.messages: list = []
        self._lock = threading.Lock()
        client.node.create_subscription(kind, topic, self._on_message, depth)

    def _on_message(self, msg) -> None:
        with self._lock:
            self.messages.append(msg)

    def snapshot(self) -> list:
        with self._lock:
            return list(self.messages)


def settled(states: list, after: float, span: float) -> list | None:
    """The first ``span`` seconds of states stamped after ``after`` with both feet on the ground
    throughout (None while there is no such run yet)."""
    run: list = []
    for state in states:
        stamp = seconds(state.header.stamp)
        if stamp < after:
            continue
        if not (state.left_foot_contact and state.right_foot_contact):
            run = []
            continue
        run.append(state)
        if stamp - seconds(run[0].header.stamp) >= span and len(run) >= 20:
            return run
    return None


def balance_status(client: RobotClient) -> DiagnosticStatus | None:
    diagnostics = client.diagnostics
    if diagnostics is None:
        return None
    return next((s for s in diagnostics.status if s.name.startswith("balance_monitor")), None)


def test_standing_margin_equals_balance_poses(robot_graph, tmp_path):
    """The zero pose (the thesis' assembly check pose: both soles level with each other).
    balance-poses analyses the joints the robot really holds (its servos sag a little under
    load), written as thesis angles J1..J18 like any pose file."""
    _graph, client = robot_graph(sim_nodes(ROBOT, real_time_factor=0.0))
    model = load_model(ROBOT)
    states = Recorder(client, BalanceState, "balance_state")
    # the monitor has discovered the ground truth (on a busy machine discovery matches its
    # subscriptions one by one: joint_states may come first)
    poll_until(lambda: any(s.header.frame_id == "world" for s in states.snapshot()),
               "a balance_state in the world frame", PATIENCE)
    client.reset(dict.fromkeys(model.joints.names, 0.0))
    after = client.simulator_time()
    # standing still: the first 0.5 s of robot time in which every state has both feet down
    # (the simulator drops the robot 0.5 mm onto the ground at the reset)
    window = poll_until(lambda: settled(states.snapshot(), after, 0.5), "the robot standing still", PATIENCE)
    held = client.current_positions()
    off = [(seconds(s.header.stamp), s.header.frame_id, s.stability_margin) for s in window
           if not (s.header.frame_id == "world" and s.stable)]
    assert not off, f"states not in the world frame or not stable (stamp, frame, margin): {off}"
    margins = np.array([s.stability_margin for s in window])

    angles = ThesisFrame(model).angles_deg(model.joints.to_array(held))
    poses = tmp_path / "held.csv"
    with poses.open("w", newline="") as f:
        csv.writer(f).writerow(["held", *angles])
    result = entry_point("balance-poses", "--robot", ROBOT, "--poses", poses, "--json", "-")
    assert result.returncode == 0, result.stderr
    reported = json.loads(result.stdout)[0]["margin_mm"] / 1000.0
    print(f"zero pose: monitor margin {margins.mean() * 1000:.2f} mm (spread {np.ptp(margins) * 1000:.2f} mm), "
          f"balance-poses {reported * 1000:.2f} mm")
    assert reported > 0.0
    assert np.all(np.abs(margins - reported) <= 0.001)


def test_hardware_node_answers_every_joint_state_with_flat_feet(robot_graph):
    with emulator_process(ROBOT, 1, 1_000_000, timing=False) as port:
        _graph, client = robot_graph(on_emulated_bus(real_nodes(ROBOT, port=port)))
        states = Recorder(client, BalanceState, "balance_state")
        client.start_recording()
        poll_until(lambda: len(states.snapshot()) > 200, "200 balance_state", PATIENCE)
        status = poll_until(lambda: (s := balance_status(client)) is not None
                            and any(kv.key == "assumption" for kv in s.values) and s,
                            "diagnostics of the balance monitor with an estimate", PATIENCE)
        joint_states = client.stop_recording()
        answered = {(s.header.stamp.sec, s.header.stamp.nanosec) for s in states.snapshot()}

    # every joint_states the test saw once the monitor was up (its first answer) has its balance_state
    first = min(seconds(s.header.stamp) for s in states.snapshot())
    last = max(seconds(s.header.stamp) for s in states.snapshot())
    seen = [m for m in joint_states if first <= seconds(m.header.stamp) <= last - 0.1]
    assert len(seen) > 100
    missed = [m for m in seen if (m.header.stamp.sec, m.header.stamp.nanosec) not in answered]
    assert len(missed) <= 0.01 * len(seen), f"{len(missed)} of {len(seen)} joint_states not answered"

    sample = states.snapshot()[-1]
    assert sample.header.frame_id == "r_sole"  # the support sole: the home pose stands on both
    assert sample.right_foot_contact and sample.left_foot_contact and sample.stable
    assert not sample.zmp_measured_valid and sample.zmp_model_valid
    values = {kv.key: kv.value for kv in status.values}
    assert "flat feet" in values["assumption"] and "flat feet" in status.message
    assert "not available" in values["measured_zmp"]
    assert values["contacts"].startswith("model")
    assert float(values["rate_hz"]) == pytest.approx(float(values["input_rate_hz"]), rel=0.05)
