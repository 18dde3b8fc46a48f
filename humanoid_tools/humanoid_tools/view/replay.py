"""The page replaying a bag: the recorded robot, balance and self-collision state at the
time a slider chooses (robot time, from the header stamps), with play/pause."""

from __future__ import annotations

import bisect
import time
from pathlib import Path

import numpy as np
import viser

from humanoid_control.ros import seconds
from humanoid_tools.recording import Bag
from humanoid_tools.view import frames
from humanoid_tools.view.frames import Frame

#: Topics replayed, and how a message becomes part of a frame (as the live page does it).
TOPICS = {"/joint_states": frames.joint_positions, "/ground_truth/base_pose": frames.base_pose,
          "/balance_state": frames.balance_sample, "/self_collision_state": frames.collision_sample}


class BagReplay:
    """Frames of a recording, by robot time."""

    def __init__(self, path: Path) -> None:
        self.series: dict[str, tuple[list[float], list]] = {}
        self.description: str | None = None
        with Bag(path) as bag:
            bag.preload([*TOPICS, "/robot_description"])  # one pass over the bag for every topic
            for topic, convert in TOPICS.items():
                if topic in bag.types:
                    samples = sorted(((seconds(m.header.stamp), convert(m)) for _log, m in bag.all(topic)),
                                     key=lambda sample: sample[0])
                    self.series[topic] = ([t for t, _ in samples], [v for _, v in samples])
            if "/robot_description" in bag.types:
                self.description = bag.all("/robot_description")[-1][1].data
        if "/joint_states" not in self.series or not self.series["/joint_states"][0]:
            raise ValueError(f"{path} holds no joint_states: nothing to replay")
        times = self.series["/joint_states"][0]
        self.start, self.end = times[0], times[-1]

    def _at(self, topic: str, t: float):
        if topic not in self.series:
            return None
        times, values = self.series[topic]
        index = bisect.bisect_right(times, t) - 1
        return values[index] if index >= 0 else None

    def frame(self, t: float) -> Frame:
        return Frame(t, self._at("/joint_states", t) or {}, self._at("/ground_truth/base_pose", t),
                     self._at("/balance_state", t), self._at("/self_collision_state", t))

    def margins(self) -> tuple[np.ndarray, np.ndarray]:
        if "/balance_state" not in self.series:
            return np.zeros(0), np.zeros(0)
        times, samples = self.series["/balance_state"]
        return np.array(times), np.array([1000.0 * s.margin for s in samples])


class ReplayPanel:
    """Time slider and play/pause; :meth:`tick` advances the time while playing."""

    def __init__(self, server: viser.ViserServer, replay: BagReplay) -> None:
        self.replay = replay
        with server.gui.add_folder("Replay"):
            self.time = server.gui.add_slider("robot time (s)", min=round(replay.start, 2),
                                              max=round(max(replay.end, replay.start + 0.01), 2), step=0.01,
                                              initial_value=round(replay.start, 2))
            self.playing = server.gui.add_checkbox("play", False)
            self.speed = server.gui.add_slider("speed", min=0.1, max=4.0, step=0.1, initial_value=1.0)
        self._last = time.monotonic()

    def tick(self) -> float:
        now = time.monotonic()
        elapsed, self._last = now - self._last, now
        if self.playing.value:
            t = float(self.time.value) + elapsed * float(self.speed.value)
            if t >= self.replay.end:
                t, self.playing.value = self.replay.end, False
            self.time.value = round(t, 2)
        return float(self.time.value)
