"""``humanoid bench TARGET``: the benchmarks, each a module of this package."""

from __future__ import annotations

import argparse
import importlib

#: target -> (module, help)
TARGETS: dict[str, tuple[str, str]] = {
    "sim": ("humanoid_experiments.bench.sim", "real-time factor of the simulation node vs raw PyBullet"),
    "physics": ("humanoid_experiments.bench.physics", "a physics profile's raw stepping speed vs the reference, and "
                                                      "its fidelity: postures limits and the 1 m walk against the "
                                                      "reference's"),
    "servo-law": ("humanoid_experiments.bench.servo_law", "PyBullet's position motors vs Lima et al.'s PD torque "
                                                          "servo (servo.law pd_torque): tracking of library motions "
                                                          "and postures limits, side by side"),
    "lockstep": ("humanoid_experiments.bench.lockstep", "the 1 m walk through the full graph in lockstep: its "
                                                        "real-time factor vs raw PyBullet, and its distance vs "
                                                        "the same walk in real time"),
    "world": ("humanoid_experiments.bench.world", "quadrupeds trotting in one physics world: the real-time factor "
                                                  "with 1, 2 and 4 robots vs one robot's, in real time and in "
                                                  "lockstep"),
    "graph": ("humanoid_experiments.bench.graph", "a robot's default graph standing: CPU and memory of each process "
                                                  "and in all, one container for the control nodes vs a process "
                                                  "per node"),
    "replay": ("humanoid_experiments.bench.replay", "a bag recorded as users record it (every command path) replayed "
                                                    "in-process: its difference from the recording with the hidden "
                                                    "servo values vs the robot's own, path by path"),
    "balance": ("humanoid_experiments.bench.balance", "balance monitor node fed joint_states at 1 kHz: answers, "
                                                      "latency; estimator updates per second"),
    "self-collision": ("humanoid_experiments.bench.self_collision", "the per-cycle self-collision check vs bare "
                                                                    "Coal on the same configurations, and "
                                                                    "collisions missed vs brute force"),
    "bus": ("humanoid_experiments.bench.bus", "Dynamixel bus bytes vs the protocol's minimum, loop rate vs a bare "
                                              "SDK loop"),
    "record": ("humanoid_experiments.bench.record", "messages in the bag / messages sent at 1 kHz, and the "
                                                    "recorder's cost vs a bare rosbags write loop"),
    "gait-search": ("humanoid_experiments.bench.gait_search", "gait evaluations per core-hour on Ray, speed-up "
                                                              "1 -> 2 workers, projected time of the report's "
                                                              "search on 50 cores"),
    "messages": ("humanoid_experiments.bench.messages", "CPU per ROS message for its sender and each receiver, "
                                                        "one at a time at a state's pace vs back to back"),
    "fall-protection": ("humanoid_experiments.bench.fall_protection", "robot time from a fall seen coming to the "
                                                                      "running goal ended FELL and the protective "
                                                                      "action (hold, posture, limp) in force, beside "
                                                                      "the time to the ground"),
    "service-answers": ("humanoid_experiments.bench.service_answers", "service answers lost while a graph starts on "
                                                                      "a busy machine: the project's DDS profile vs "
                                                                      "Fast DDS's default wait"),
}


def add_arguments(parser: argparse.ArgumentParser) -> None:
    targets = parser.add_subparsers(dest="target", required=True, metavar="TARGET", parser_class=type(parser))
    for name, (module_name, help_text) in TARGETS.items():
        module = importlib.import_module(module_name)
        p = targets.add_parser(name, help=help_text, description=module.__doc__.split("\n\n")[0])
        module.add_arguments(p)
        p.set_defaults(bench_run=module.run)


def run(args: argparse.Namespace) -> int:
    return args.bench_run(args)
