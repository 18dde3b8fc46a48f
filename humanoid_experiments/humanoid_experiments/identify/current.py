"""``humanoid identify --current BAG``: the energy monitor's current constants fitted to a
recording with a measured supply current.

The bag holds ``joint_states`` with efforts and a measured current (``sensor_msgs/BatteryState``,
``--current-topic``; its magnitude is taken, the message counting a discharge negative).
Each current reading is paired with the joint torques' sum at its stamp (interpolated between
the two joint_states around it), and K and the idle current are fitted
(:mod:`humanoid_core.energy.current_fit`). The idle current is split with the robot's
configured ``controller_current``: one recording sees only their sum. ``--output`` writes the
values as a ROS 2 parameter file of the energy monitor (``energy_monitor: ros__parameters:``),
the keys of the robot's ``control.yaml`` section ``energy_monitor:``.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any

import numpy as np
import yaml

from humanoid_control.ros import absolute, seconds, topics
from humanoid_core import UsageError

#: The measured current's topic by default: where a ROS power board publishes its BatteryState.
CURRENT_TOPIC = "/battery_state"
JOINT_STATES = absolute(topics.JOINT_STATES)


def run_current(args: argparse.Namespace) -> int:
    from humanoid_core.energy import (
        NODE_NAME,
        CurrentFitError,
        CurrentModel,
        EnergyParameters,
        fit_current,
        servo_idle_share,
    )
    from humanoid_description import load_model

    robot, torque_sums, currents = read_current_bag(args.current, args.current_topic, args.robot)
    params = EnergyParameters.for_robot(robot)
    servos = CurrentModel.of(params, len(load_model(robot).joints.names)).servo_count
    try:
        fit = fit_current(torque_sums, currents)
        servo_idle = servo_idle_share(fit.idle_current, servos, params.controller_current)
    except CurrentFitError as error:
        raise UsageError(f"{args.current}: {error}") from None
    values = {"torque_to_current": round(fit.torque_to_current, 6), "servo_idle_current": round(servo_idle, 6),
              "controller_current": params.controller_current}
    report: dict[str, Any] = {
        "robot": robot, "bag": str(args.current), "topic": args.current_topic, "samples": fit.samples,
        "torque_sum_span_nm": list(fit.torque_span), "current_span_a": list(fit.current_span),
        "idle_current_a": fit.idle_current, "servo_count": servos, "rms_error_a": fit.rms_error,
        "fitted": values,
        "configured": {"torque_to_current": params.torque_to_current, "servo_idle_current": params.servo_idle_current,
                       "controller_current": params.controller_current}}
    if args.output is not None:
        args.output.write_text(yaml.safe_dump({NODE_NAME: {"ros__parameters": values}}, sort_keys=False))
        report["output"] = str(args.output)
    print(json.dumps(report, indent=2) if args.json else _text(report))
    return 0


def read_current_bag(bag: Path, topic: str, robot: str | None) -> tuple[str, np.ndarray, np.ndarray]:
    """The robot, and per measured current reading the joint torques' sum at its stamp and
    the current's magnitude; a UsageError (one line) for a bag that cannot give them."""
    from humanoid_tools.plots import ROBOT_DESCRIPTION, robot_name
    from humanoid_tools.recording import Bag, read_bag

    def read(path: Path) -> tuple[str | None, list, list]:
        with Bag(path) as opened:  # one reading gives the robot and the series
            opened.preload([JOINT_STATES, topic, *([] if robot else [ROBOT_DESCRIPTION])])
            return (robot or robot_name(opened), [m for _log, m in opened.all(JOINT_STATES)],
                    [m for _log, m in opened.all(topic)])

    named, states, measured = read_bag(bag, read)
    if named is None:
        raise UsageError(f"{bag} holds no robot_description: give --robot")
    if not measured:
        raise UsageError(f"{bag} holds no {topic} message (a measured supply current, sensor_msgs/BatteryState): "
                         "give the topic with --current-topic")
    stamps = np.array([seconds(m.header.stamp) for m in states])
    sums = np.array([float(np.sum(np.abs(np.asarray(m.effort, dtype=float)))) if len(m.effort) else np.nan
                     for m in states])
    if not np.isfinite(sums).any():
        raise UsageError(f"{bag}: its {JOINT_STATES} carry no joint efforts (the torques the current is fitted to)")
    at = np.array([seconds(m.header.stamp) for m in measured])
    inside = (at >= stamps[0]) & (at <= stamps[-1]) if len(stamps) else np.zeros(len(at), bool)
    torque = np.full(len(at), np.nan)
    torque[inside] = np.interp(at[inside], stamps, sums)
    return named, torque, np.abs(np.array([float(m.current) for m in measured]))


def _text(report: dict[str, Any]) -> str:
    fitted, configured = report["fitted"], report["configured"]
    lines = [f"{report['robot']}: current model fitted to {report['samples']} readings of {report['topic']} "
             f"(torque sum {report['torque_sum_span_nm'][0]:.3f}..{report['torque_sum_span_nm'][1]:.3f} N m, "
             f"current {report['current_span_a'][0]:.3f}..{report['current_span_a'][1]:.3f} A), "
             f"RMS error {report['rms_error_a'] * 1000:.1f} mA",
             f"  idle current (N I_servo + I_controller): {report['idle_current_a']:.4f} A, {report['servo_count']} "
             "servos",
             *(f"  {name}: {fitted[name]:g} (configured {configured[name]:g})" for name in fitted
               if name != "controller_current"),
             f"  controller_current: {fitted['controller_current']:g} (kept as configured: one recording sees "
             "only the idle sum)"]
    if "output" in report:
        lines.append(f"written: {report['output']} (the energy monitor's parameters)")
    return "\n".join(lines)
