"""``humanoid walk --teleop SECONDS``: a humanoid walked on ``cmd_vel`` as a user teleoperates it,
for minutes, and what it lasted: the minutes walked, the falls, the distance covered.

The commands are a seeded schedule of segments of 2-6 s of robot time: forward, backward,
sideways, turning, and their combinations, each at 30-80 % of the walk's velocity limits
(the robot's ``walking.yaml``: one step limit per step period), with stops between some of
them. The client publishes the segment's command every ``PUBLISH_PERIOD`` of robot time
(``cmd_vel_timeout`` is longer); in lockstep it holds the simulation between two
publications, so that the same seed gives the same walk. A fall (the simulator's ground
truth) is counted with its time, the robot is reset to its home pose where it lies, and the
walk goes on from the next segment. The distance is the path of the base's ground-truth
position, sampled once per gait cycle (two steps).
"""

from __future__ import annotations

import math
import random
from dataclasses import asdict, dataclass, field

from geometry_msgs.msg import Twist

from humanoid_control.ros import topics

__all__ = ["Segment", "TeleopReport", "schedule", "teleop"]

#: s of robot time between two cmd_vel messages (the walk controller stops after 0.5 s without).
PUBLISH_PERIOD = 0.1
#: s, the shortest and longest segment.
SEGMENT = (2.0, 6.0)
#: Share of the walk's velocity limits a segment asks for, at least and at most.
SHARE = (0.3, 0.8)
#: How often a segment is a stop.
STOPS = 0.15
#: The kinds of segment (unit directions in vx, vy, wz), drawn in turn.
KINDS = ((1, 0, 0), (-1, 0, 0), (0, 1, 0), (0, -1, 0), (0, 0, 1), (0, 0, -1), (1, 0, 1), (1, 0, -1),
         (1, 1, 0), (1, -1, 0))


@dataclass(frozen=True)
class Segment:
    """From ``start`` (s from the walk's start) on, walk at this velocity (m/s, m/s, rad/s)."""

    start: float
    vx: float
    vy: float
    wz: float


def schedule(seconds: float, seed: int, limits: tuple[float, float, float]) -> list[Segment]:
    """The seeded segments that fill ``seconds``, within ``limits`` (vx, vy, wz)."""
    draw = random.Random(seed)
    segments, t = [], 0.0
    while t < seconds:
        if draw.random() < STOPS:
            segments.append(Segment(t, 0.0, 0.0, 0.0))
        else:
            kind = draw.choice(KINDS)
            share = draw.uniform(*SHARE)
            segments.append(Segment(t, *(sign * share * limit for sign, limit in zip(kind, limits, strict=True))))
        t += draw.uniform(*SEGMENT)
    return segments


@dataclass
class TeleopReport:
    robot: str
    seconds: float  # of robot time asked for
    seed: int
    falls_at: list[float] = field(default_factory=list)  # s from the start, each fall
    distance_m: float = 0.0  # the base's path on the ground
    segments: int = 0

    @property
    def first_fall_s(self) -> float | None:
        return self.falls_at[0] if self.falls_at else None

    @property
    def minutes_before_a_fall(self) -> float:
        """Minutes walked until the first fall (all of them without one)."""
        return (self.first_fall_s if self.falls_at else self.seconds) / 60.0

    def as_dict(self) -> dict:
        return {**asdict(self), "falls": len(self.falls_at), "minutes": self.seconds / 60.0,
                "minutes_before_a_fall": self.minutes_before_a_fall}

    def text(self) -> str:
        falls = (f"{len(self.falls_at)} fall(s), at " + ", ".join(f"{t:.1f} s" for t in self.falls_at)
                 if self.falls_at else "no fall")
        return (f"{self.robot} teleoperated on cmd_vel for {self.seconds / 60.0:.1f} min (seed {self.seed}, "
                f"{self.segments} segments): {falls}; {self.minutes_before_a_fall:.2f} min before the first fall; "
                f"{self.distance_m:.2f} m covered")


def teleop(client, robot: str, seconds: float, seed: int = 0, timeout: float = 3600.0,
           segments: list[Segment] | None = None) -> TeleopReport:
    """Walk ``robot`` on cmd_vel for ``seconds`` of robot time (a lockstep client holds the
    simulation between two publications) and measure it. ``segments``: these instead of the
    seeded schedule (a stretch of one that made the robot fall, replayed)."""
    from humanoid_control.ros import poll_until
    from humanoid_core.biped_walking import WalkParameters

    params = WalkParameters.for_robot(robot)
    if segments is None:
        segments = schedule(seconds, seed, params.max_velocity)
    # the base's path is sampled once per gait cycle (two steps), at the same phase of the
    # sway while the robot walks steadily: the sway does not count as distance
    cycle = 2.0 * params.step_period
    report = TeleopReport(robot, seconds, seed, segments=len(segments))
    publisher = client.node.create_publisher(Twist, topics.CMD_VEL, 10)
    client.wait_for_joint_states(60.0)
    client.wait_for_base_pose()
    poll_until(lambda: publisher.get_subscription_count() > 0, "the walk controller's cmd_vel subscription", 60.0)
    start = client.lockstep.run_to(client.now(), timeout) if client.lockstep else client.now()
    position: tuple[float, float] | None = _ground(client)
    k, fallen, sampled = 0, False, 0.0
    while (t := client.now() - start) < seconds:
        while k + 1 < len(segments) and segments[k + 1].start <= t:
            k += 1
        segment = segments[k]
        if client.fallen and not fallen:
            report.falls_at.append(t)
            fallen = True
            publisher.publish(Twist())
            client.reset()
            position = None  # the ground truth's next pose is the reset robot's
        elif not client.fallen:
            fallen = False
            message = Twist()
            message.linear.x, message.linear.y, message.angular.z = segment.vx, segment.vy, segment.wz
            publisher.publish(message)
        if client.lockstep:
            client.lockstep.run_to(start + t + PUBLISH_PERIOD, timeout)
        else:
            client.wait_until(start + t + PUBLISH_PERIOD, timeout)
        if position is None or client.now() - start >= sampled + cycle - 1e-9:
            now, sampled = _ground(client), client.now() - start
            if position is not None:
                report.distance_m += math.dist(position, now)
            position = now
    publisher.publish(Twist())
    return report


def _ground(client) -> tuple[float, float]:
    position = client.wait_for_base_pose().pose.position
    return position.x, position.y
