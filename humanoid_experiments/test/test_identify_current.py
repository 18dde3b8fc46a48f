"""``humanoid identify --current BAG``: the energy monitor's current model fitted to a bag with
joint efforts and a measured supply current, with a known answer. The bag is written with
the recorder's bag writer and standard types (rosbags' Kilted definitions): Bioloid joint
efforts swinging over a few seconds, and a power board's BatteryState whose current is the
model's with chosen constants, plus seeded noise."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pytest
import yaml
from cli_entry import entry_point
from rosbags.typesys import Stores, get_typestore

from humanoid_core.energy import CurrentModel, EnergyParameters
from humanoid_description import load_model
from humanoid_tools.recording import BagWriter

ROBOT = "bioloid"
TRUE_K, TRUE_IDLE = 0.62, 1.30  # A / N m, A
NOISE = 0.005  # A
STORE = get_typestore(Stores.ROS2_KILTED)


def known_bag(path: Path, swing: float = 0.3, current_topic: str | None = "/battery_state") -> Path:
    """4 s of joint_states at 100 Hz (efforts swinging by ``swing`` N m, each joint its own
    phase) and, at 20 Hz, the current eq 8 draws with the true constants (BatteryState counts
    a discharge negative)."""
    types = STORE.types
    joints = load_model(ROBOT).joints.names
    writer = BagWriter(path)

    def topic(name: str, kind: str):
        return writer.add_topic(name, kind, STORE.generate_msgdef(kind)[0], STORE.hash_rihs01(kind))

    states = topic("/joint_states", "sensor_msgs/msg/JointState")
    battery = topic(current_topic, "sensor_msgs/msg/BatteryState") if current_topic else None
    rng = np.random.default_rng(7)
    phases = np.linspace(0.0, math.pi, len(joints))
    for k in range(400):
        t = 1.0 + 0.01 * k
        sec, nanosec = int(t), round((t - int(t)) * 1e9)
        header = types["std_msgs/msg/Header"](stamp=types["builtin_interfaces/msg/Time"](sec=sec, nanosec=nanosec),
                                              frame_id="")
        effort = 0.05 + swing * np.abs(np.sin(2.0 * math.pi * 0.5 * t + phases))
        state = types["sensor_msgs/msg/JointState"](header=header, name=list(joints), position=np.zeros(len(joints)),
                                                    velocity=np.zeros(len(joints)), effort=effort)
        log = round(t * 1e9)
        writer.write(states, log, STORE.serialize_cdr(state, "sensor_msgs/msg/JointState"))
        if battery is not None and k % 5 == 0:
            current = TRUE_K * float(effort.sum()) + TRUE_IDLE + rng.normal(0.0, NOISE)
            reading = types["sensor_msgs/msg/BatteryState"](
                header=header, voltage=11.1, temperature=math.nan, current=-current, charge=math.nan,
                capacity=math.nan, design_capacity=math.nan, percentage=math.nan, power_supply_status=2,
                power_supply_health=0, power_supply_technology=0, present=True, cell_voltage=np.array([]),
                cell_temperature=np.array([]), location="", serial_number="")
            writer.write(battery, log + 1, STORE.serialize_cdr(reading, "sensor_msgs/msg/BatteryState"))
    writer.close()
    return path


def test_the_fit_recovers_the_constants_and_writes_the_energy_monitors_parameters(tmp_path):
    bag, output = known_bag(tmp_path / "bag"), tmp_path / "energy.yaml"
    result = entry_point("identify", "--current", bag, "--robot", ROBOT, "--json", "--output", output)
    assert result.returncode == 0, result.stderr
    report = yaml.safe_load(result.stdout)
    assert report["samples"] == 80
    assert report["fitted"]["torque_to_current"] == pytest.approx(TRUE_K, rel=0.01)
    assert report["idle_current_a"] == pytest.approx(TRUE_IDLE, rel=0.01)
    assert report["rms_error_a"] == pytest.approx(NOISE, rel=0.3)
    written = yaml.safe_load(output.read_text())["energy_monitor"]["ros__parameters"]
    assert written == report["fitted"]
    # the written values are the monitor's parameters, and its model then draws the measured current
    params = EnergyParameters.for_robot(ROBOT, **written)
    model = CurrentModel.of(params, len(load_model(ROBOT).joints.names))
    assert model.idle_current == pytest.approx(TRUE_IDLE, rel=0.01)
    assert written["controller_current"] == EnergyParameters.for_robot(ROBOT).controller_current


def test_the_text_report_says_what_was_fitted_and_what_was_kept(tmp_path):
    result = entry_point("identify", "--current", known_bag(tmp_path / "bag"), "--robot", ROBOT)
    assert result.returncode == 0, result.stderr
    assert "80 readings of /battery_state" in result.stdout
    assert "controller_current" in result.stdout and "kept as configured" in result.stdout


@pytest.mark.parametrize(("make", "arguments", "said"), [
    (lambda p: known_bag(p, current_topic=None), (), "holds no /battery_state message"),
    (lambda p: known_bag(p, current_topic="/power/battery"), (), "give the topic with --current-topic"),
    (lambda p: known_bag(p, swing=0.0), (), "cannot be told apart"),
    (known_bag, ("--fit", "servo.max_velocity"), "--fit and --validate are for the simulation"),
    (None, ("--current-topic", "/power/battery"), "--current-topic goes with --current BAG"),
])
def test_bad_input_is_one_line(tmp_path, make, arguments, said):
    source = ("--current", make(tmp_path / "bag")) if make is not None else ()
    result = entry_point("identify", *source, "--robot", ROBOT, *arguments)
    assert result.returncode == 2, result
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and said in lines[0], result.stderr


def test_the_other_topic_is_read_when_named(tmp_path):
    bag = known_bag(tmp_path / "bag", current_topic="/power/battery")
    result = entry_point("identify", "--current", bag, "--robot", ROBOT, "--current-topic", "power/battery", "--json")
    assert result.returncode == 0, result.stderr
    assert yaml.safe_load(result.stdout)["fitted"]["torque_to_current"] == pytest.approx(TRUE_K, rel=0.01)
