"""The page live on a running robot (sim or real: only the shared interface is used):
the robot from ``robot_description`` moving with ``joint_states`` in the odometry's frame
(``odom``, the odometry node's nav_msgs/Odometry; without it, the simulator's
``ground_truth/base_pose``), the balance monitor's and self-collision checker's state, and
the posing tool of the HOAP-2 ("hoap2moves") in the browser: one slider per joint (degrees,
within the URDF limits) that sends the joint there through ``joint_commands``, a button
that sets the sliders to the measured pose, and one that saves the measured pose as a
keyframe of a keyframe motion file in the ``--keyframes-dir`` folder (the motion package's
writer, as ``humanoid pose save``)."""

from __future__ import annotations

import math
import sys
import threading
from typing import TYPE_CHECKING

from rclpy.node import Node
from rclpy.qos import DurabilityPolicy, QoSProfile
from sensor_msgs.msg import JointState

from humanoid_control.ros import RobotClientError, topics, wait_until_heard
from humanoid_control.ros import seconds as stamp_seconds
from humanoid_tools.view.frames import (
    Frame,
    balance_sample,
    base_pose,
    collision_sample,
    joint_positions,
)
from humanoid_tools.view.page_input import JointTargets, KeyframeFolder

if TYPE_CHECKING:  # loaded by the command once its node is up (most of the start-up is theirs)
    import viser

    from humanoid_tools.view.scene import RobotScene

#: The odometry node's topic (nav_msgs/Odometry, ``odom`` -> ``base_link``): the page's frame.
ODOM = "odom"
#: s a slider's first command waits for the robot to have matched the view's joint_commands
#: publisher (sent earlier, the robot would never get it, and nothing would say so).
MATCH_WAIT = 5.0


class LiveSource:
    """The latest messages of the robot's topics, as frames; publishes joint commands."""

    def __init__(self, node: Node, on_description) -> None:
        from geometry_msgs.msg import PoseStamped
        from nav_msgs.msg import Odometry
        from std_msgs.msg import String

        from humanoid_interfaces.msg import BalanceState, SelfCollisionState

        self.node = node
        self._lock = threading.Lock()
        self._latest: dict[str, object] = {}
        self._version = 0
        self._on_description = on_description
        latched = QoSProfile(depth=1, durability=DurabilityPolicy.TRANSIENT_LOCAL)
        node.create_subscription(String, topics.ROBOT_DESCRIPTION, self._description, latched)
        for topic, kind in ((topics.JOINT_STATES, JointState), (topics.BASE_POSE, PoseStamped), (ODOM, Odometry),
                            (topics.BALANCE_STATE, BalanceState), (topics.SELF_COLLISION_STATE, SelfCollisionState)):
            node.create_subscription(kind, topic, lambda msg, t=topic: self._store(t, msg), 10)
        self.commands = node.create_publisher(JointState, topics.JOINT_COMMANDS, 10)
        self._heard = False  # the publisher matched the robot's subscription once (command)

    def _description(self, msg) -> None:
        self._on_description(msg.data)

    def _store(self, topic: str, msg) -> None:
        with self._lock:
            self._latest[topic] = msg
            self._version += 1

    @property
    def version(self) -> int:
        return self._version

    def frame(self) -> Frame | None:
        with self._lock:
            latest = dict(self._latest)
        states = latest.get(topics.JOINT_STATES)
        if states is None:
            return None
        pose, balance, collision = (latest.get(t) for t in (topics.BASE_POSE, topics.BALANCE_STATE,
                                                             topics.SELF_COLLISION_STATE))
        odom = latest.get(ODOM)
        if odom is not None:  # the robot in the odometry's frame (sim and real alike)
            pose = odom.pose
        return Frame(stamp_seconds(states.header.stamp), joint_positions(states),
                     base_pose(pose) if pose is not None else None,
                     balance_sample(balance) if balance is not None else None,
                     collision_sample(collision) if collision is not None else None)

    def measured(self) -> dict[str, float]:
        states = self._latest.get(topics.JOINT_STATES)
        return joint_positions(states) if states is not None else {}

    def command(self, joint: str, position: float) -> None:
        """Send ``joint`` to ``position`` (rad); :class:`RobotClientError` when no robot hears
        the view's commands yet (nothing was sent)."""
        if not self._heard:
            try:
                wait_until_heard(self.node, self.commands, MATCH_WAIT)
            except RobotClientError as error:
                raise RobotClientError(f"not sent, the robot does not hear the view yet ({error}); "
                                       "is the robot running?") from None
            self._heard = True
        self.commands.publish(JointState(name=[joint], position=[float(position)]))


class PosingPanel:
    """Joint sliders, "sliders to measured pose" and "save keyframe" (created once the robot's
    joints are known). Every value from the page is checked here before it is used
    (:mod:`~humanoid_tools.view.page_input`): a refused one is said in the page and the log."""

    def __init__(self, server: viser.ViserServer, scene: RobotScene, source: LiveSource, folder: KeyframeFolder,
                 keyframes: str) -> None:
        self.server, self.scene, self.source, self.folder = server, scene, source, folder
        self.targets: JointTargets | None = None  # the robot's limits (set_robot)
        self.sliders: dict[str, object] = {}
        self.synced = False  # the sliders start at the measured pose, once there is one
        with server.gui.add_folder("Pose (joint_commands)"):
            self.file = server.gui.add_text("keyframe file", keyframes, hint=f"a .yaml file in {folder.path}")
            self.label = server.gui.add_text("keyframe label", "")
            self.save = server.gui.add_button("save measured pose as keyframe")
            self.sync = server.gui.add_button("sliders to measured pose")
            self.message = server.gui.add_markdown("")
            for name in scene.joint_names:
                # the range rounded inwards to the step, so that either end is within the limits
                low, high = (f(10.0 * math.degrees(v)) / 10.0 for f, v in zip((math.ceil, math.floor),
                                                                               scene.limits[name], strict=True))
                slider = server.gui.add_slider(name, min=low, max=high, step=0.1,
                                               initial_value=min(max(0.0, low), high), hint=f"{name} (deg)")
                slider.on_update(lambda event, joint=name: self._moved(event, joint))
                self.sliders[name] = slider
        self.save.on_click(self._save)
        self.sync.on_click(lambda _event: self.to_measured())

    def set_robot(self, urdf: str) -> None:
        """Check the sliders' values against the limits of this URDF (``robot_description``)."""
        self.targets = JointTargets(urdf)

    def _moved(self, event, joint: str) -> None:
        from humanoid_core.loop import CommandRejectedError, ErrorCode

        if event.client is None:  # set by the server (sliders to measured pose): not a command
            return
        value = self.sliders[joint].value
        try:
            if self.targets is None:
                raise CommandRejectedError(ErrorCode.INVALID_GOAL, "the robot's joint limits are not known yet")
            target = self.targets.radians(joint, value)
        except CommandRejectedError as error:
            self._tell(event, f"{joint} not moved: {error}")
            self._show(joint, self.source.measured().get(joint, math.nan))  # the refused value off the slider
            return
        try:
            self.source.command(joint, target)
        except RobotClientError as error:
            self._tell(event, f"{joint} not moved: {error}")
            self._show(joint, self.source.measured().get(joint, math.nan))

    def to_measured(self) -> None:
        measured = self.source.measured()
        self.synced = self.synced or bool(measured)
        for name, value in measured.items():
            self._show(name, value)

    def _show(self, joint: str, position: float) -> None:
        """Set a joint's slider to a measured position (rad; an unknown one leaves it)."""
        if joint in self.sliders and math.isfinite(position):
            low, high = self.scene.limits[joint]
            self.sliders[joint].value = round(math.degrees(min(max(position, low), high)), 1)

    def _save(self, event) -> None:
        from humanoid_core.motion import MotionError, append_keyframe

        measured = self.source.measured()
        unknown = [n for n in self.scene.joint_names if not math.isfinite(measured.get(n, math.nan))]
        try:
            path = self.folder.file(self.file.value)
        except ValueError as error:
            self._tell(event, f"not saved: {error}")
            return
        if not measured or unknown:
            text = self._target_error(path) or (
                f"not saved: joint readings unknown ({', '.join(unknown[:5]) or 'no joint_states yet'})")
        else:
            try:
                motion = append_keyframe(path, self.scene.robot_name or "", measured, str(self.label.value))
                text = f"saved keyframe {motion.keyframe_count - 1} (t = {motion.times[-1]:g} s) to {path}"
            except (MotionError, OSError, KeyError, ValueError) as error:
                text = f"not saved: {error}"
        self._tell(event, text)

    def _target_error(self, path) -> str | None:
        """What is wrong with the file the page chose, when the save cannot go on anyway: a file
        that is not this robot's keyframe file is said first (the user's choice, which the
        readings' state must not hide); None when it is fine or missing. The file is read
        here only then: a save that goes on reads it once, in append_keyframe."""
        from humanoid_core.motion import MotionError, read_keyframes

        if not path.exists():
            return None
        try:
            read_keyframes(path, self.scene.robot_name or "")
        except (MotionError, OSError, KeyError, ValueError) as error:
            return f"not saved: {error}"
        return None

    def _tell(self, event, text: str) -> None:
        """Say ``text`` (what became of the page's request) in the page and in the log."""
        self.message.content = text
        if event.client is not None:
            event.client.add_notification("humanoid view", text, auto_close_seconds=5.0)
        print(f"humanoid view: {text}", file=sys.stderr, flush=True)
