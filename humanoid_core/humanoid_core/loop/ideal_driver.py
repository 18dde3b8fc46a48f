"""An ideal robot behind the driver interface: joints that follow their set-points.

No physics and no bus: each joint moves towards its set-point at most at its velocity
limit, time is the driver's own clock advanced by ``sync`` (so a loop on it runs as
fast as the machine allows, deterministically), and any joint can be made to stop
answering (its reading goes stale) or the whole robot to vanish. It is the back end
for running the control loop and its consumers (a command guard, a controller) in one
process, without PyBullet or a serial port.
"""

from __future__ import annotations

from collections import deque

import numpy as np

from humanoid_core.loop.driver import DriverError, JointCommand, JointState, RobotDriver
from humanoid_description import JointTable


class IdealDriver(RobotDriver):
    """Joints that reach their set-points at their velocity limits, on a clock of its own."""

    def __init__(self, joints: JointTable, initial: np.ndarray | None = None, start_time: float = 0.0) -> None:
        self.joint_names = joints.names
        self.joints = joints
        self.time = start_time
        self.position = np.zeros(len(joints)) if initial is None else np.array(initial, dtype=float)
        self.velocity = np.zeros(len(joints))
        self.goal = self.position.copy()
        #: Joints whose reading is stale (set by a test or a fault scenario).
        self.silent = np.zeros(len(joints), dtype=bool)
        #: The latest commands written, in order (the same object repeated when unchanged).
        self.written: deque[JointCommand] = deque(maxlen=10_000)
        #: An error ``sync`` raises once (then clears), like a bus that failed for a cycle.
        self.fail_next: DriverError | None = None
        self.started = self.closed = False
        #: False while the joints are released (set_torque): they stay where they are (no gravity here).
        self.torque = True
        self._state: JointState | None = None

    releases_torque = True

    def start(self) -> JointState:
        self.started = True
        return self._read()

    def sync(self, period: float) -> None:
        if self.fail_next is not None:
            error, self.fail_next = self.fail_next, None
            raise error
        if not self.torque:  # released: no motor, and no gravity to move the joints
            self.velocity = np.zeros(len(self.position))
            self.time += period
            return
        step = np.clip(self.goal - self.position, -self.joints.velocity * period, self.joints.velocity * period)
        self.position = self.position + step
        self.velocity = step / period
        self.time += period

    def read(self) -> JointState:
        return self._read()

    def _read(self) -> JointState:
        previous = self._state
        valid = ~self.silent
        position, velocity = self.position.copy(), self.velocity.copy()
        if previous is not None:  # a silent joint keeps its last reading (like a real bus)
            position[~valid], velocity[~valid] = previous.position[~valid], previous.velocity[~valid]
        self._state = JointState(self.time, position, velocity, np.zeros(len(position)), valid)
        return self._state

    def write(self, command: JointCommand) -> None:
        self.written.append(command)
        self.goal = np.clip(command.position, self.joints.lower, self.joints.upper)

    def set_torque(self, enabled: bool) -> None:
        self.torque = bool(enabled)

    def now(self) -> float:
        return self.time

    def close(self) -> None:
        self.closed = True
