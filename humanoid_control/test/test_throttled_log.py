"""A node's repeated log lines print once per period per calling line, as rclpy's throttle
would print them (the reason for the class is its cost, which the flood test shows:
humanoid_control/test/test_node_stop_under_flood.py)."""

from __future__ import annotations

import rclpy.logging

from humanoid_control.ros import ThrottledLog


class Clock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


def test_a_line_prints_at_most_once_per_period(capfd):
    clock = Clock()
    log = ThrottledLog(rclpy.logging.get_logger("throttle_test"), clock=clock)
    for clock.now in (0.0, 0.5, 0.99, 1.0, 1.5, 2.1, 2.2):
        log.error(f"joint_states not readable at {clock.now}", 1.0)
    printed = [line for line in capfd.readouterr().err.splitlines() if "not readable" in line]
    assert [line.split(" at ")[-1] for line in printed] == ["0.0", "1.0", "2.1"]
    assert all(line.startswith("[ERROR]") for line in printed)


def test_each_calling_line_has_its_own_period(capfd):
    clock = Clock()
    log = ThrottledLog(rclpy.logging.get_logger("throttle_test"), clock=clock)
    for clock.now in (0.0, 0.1, 0.2):
        log.error("joint_states rejected", 5.0)
        log.warning("cmd_vel: linear.z ignored", 5.0)
    err = capfd.readouterr().err
    assert err.count("joint_states rejected") == 1
    assert err.count("cmd_vel: linear.z ignored") == 1
    assert "[WARN]" in err
