"""The trajectory generator node: plays motions through the robot's follow_joint_trajectory.

Action ``play_motion`` (humanoid_interfaces/action/PlayMotion): a motion by name from
the robot's motion library (``humanoid_description/robots/<robot>/motions/``) or by file
path (HOAP-2 csv, Bioloid poses or pages, keyframe YAML), with a speed factor. The
motion is checked, slowed to the joint limits when needed (the result's
``time_scale`` says by how much, and the node logs why), joined to the robot's
current pose by a smooth transition, sampled, and sent as one goal to
``follow_joint_trajectory``. Feedback relays progress and the keyframe reached;
canceling cancels the trajectory (the robot holds where it is).

The node drives the robot only through the shared interface, so the same call plays
the motion in simulation and on the hardware.

A fall during a motion (``fall_state``, the balance monitor's estimate, going from upright
to fallen, or the fall manager seeing one coming) cancels the trajectory on the robot (it
holds where it is) and ends the goal ``FELL``. A motion started on a robot that already lies
is played: getting up is a motion. While the fall manager sees a fall coming a goal is
refused ``FELL``; while it gets the robot up, a goal other than its own get-up motion is
refused ``GETTING_UP`` (:mod:`humanoid_control.ros.fall_watch`).

A robot whose ``follow_joint_trajectory`` server goes away during a motion (its driver's
process ended: in ``humanoid sim``/``real`` the graph then ends too, not in a user's own
composition) ends the goal ``EXECUTION_FAILED`` saying so, :data:`ROBOT_GONE_AFTER` after the
server was last seen, instead of waiting for a result that cannot come.
"""

from __future__ import annotations

import math
import sys
import threading
import traceback
from pathlib import Path

from action_msgs.msg import GoalStatus
from rclpy.action import CancelResponse, GoalResponse
from rclpy.callback_groups import ReentrantCallbackGroup
from rclpy.node import Node
from sensor_msgs.msg import JointState

from humanoid_control.ros import (
    CONNECT_TIMEOUT,
    ActionClient,
    FallWatch,
    NodeHost,
    Offload,
    ResultWaiter,
    action_server,
    declare,
    declare_robot,
    playback_trajectory,
    run_node,
    seconds,
    topics,
    wait_until_answering,
)
from humanoid_core.motion import MotionError, Playback, load_motion, plan_playback
from humanoid_interfaces.action import FollowJointTrajectory, PlayMotion

#: s (wall): a motion's goal ends once the robot's follow_joint_trajectory server has been
#: missing from the graph this long (a killed process leaves it listed until its DDS lease ends).
ROBOT_GONE_AFTER = 5.0


class TrajectoryGenerator:
    """The play_motion action server and its follow_joint_trajectory client."""

    def __init__(self, node: Node, host: NodeHost) -> None:
        self.node = node
        self.robot = declare_robot(node)
        self.sample_period = declare(node, "sample_period", 0.02)
        self.feedback_rate = declare(node, "feedback_rate", 10.0)
        if self.sample_period <= 0.0 or self.feedback_rate <= 0.0:
            raise ValueError("sample_period and feedback_rate must be > 0")
        self._joint_state: JointState | None = None
        self._joint_event = threading.Event()
        group = ReentrantCallbackGroup()
        host.subscribe_state(node, JointState, topics.JOINT_STATES, self._on_joint_state, 10, callback_group=group)
        self._robot = ActionClient(node, FollowJointTrajectory, topics.FOLLOW_JOINT_TRAJECTORY, callback_group=group)
        self._robot_answers = False  # its server answered this node once (before the first goal)
        self.lockstep = host.lockstep(node)
        self._held: set[int] = set()  # goals (id of the request) holding the lockstep simulation
        self.falls = FallWatch(node, callback_group=group)
        #: Each goal's body follows its motion on the robot: off the spinning thread.
        self.bodies = Offload(node, "motions", workers=4)
        self._server = action_server(node, PlayMotion, topics.PLAY_MOTION, execute_callback=self.bodies(self._execute),
                                     goal_callback=self._on_goal,
                                     cancel_callback=lambda _goal: CancelResponse.ACCEPT, callback_group=group)
        node.get_logger().info(f"play_motion ready for {self.robot}")

    def _on_joint_state(self, msg: JointState) -> None:
        self._joint_state = msg
        self._joint_event.set()
        if self.lockstep is not None:
            self.lockstep.answered(msg.header.stamp)

    def _on_goal(self, request) -> GoalResponse:
        """Every goal is accepted (a refusal is told in the result). In lockstep the simulation
        is held from here until the motion's trajectory is in force on the robot (or refused),
        so that it starts at the same state in every run."""
        if self.lockstep is not None:
            self.lockstep.take_hold()
            self._held.add(id(request))
        return GoalResponse.ACCEPT

    def _release(self, request) -> None:
        """End the goal's hold on a lockstep simulation (once)."""
        if self.lockstep is not None and id(request) in self._held:
            self._held.discard(id(request))
            self.lockstep.release()

    # -- the action -------------------------------------------------------------------
    def _execute(self, goal_handle) -> PlayMotion.Result:
        """The action's execution; whatever happens, the goal ends with a result whose code
        says what happened (rclpy would otherwise abort it with a default, successful code)."""
        try:
            return self._execute_goal(goal_handle)
        except Exception as error:  # a bug must still fail the goal, with its reason
            self.node.get_logger().error(f"play_motion failed: {traceback.format_exc()}")
            if goal_handle.is_active:
                goal_handle.abort()
            return PlayMotion.Result(error_code=PlayMotion.Result.EXECUTION_FAILED,
                                     error_string=f"internal error: {type(error).__name__}: {error}")
        finally:
            self._release(goal_handle.request)

    def _execute_goal(self, goal_handle) -> PlayMotion.Result:
        request = goal_handle.request
        log = self.node.get_logger()
        falls_before = self.falls.count  # a fall from here on (planning included) stops the goal
        getting_up = self.falls.getting_up_text(bytes(goal_handle.goal_id.uuid))
        falling = self.falls.falling_text()
        if getting_up is not None or falling is not None:
            code = PlayMotion.Result.GETTING_UP if getting_up is not None else PlayMotion.Result.FELL
            text = f"{getting_up or falling}: no motion now"
            log.error(f"play_motion refused: {text}")
            goal_handle.abort()
            return PlayMotion.Result(error_code=code, error_string=text)
        try:
            playback = self._plan(request)
        except MotionError as error:
            log.error(f"play_motion rejected: {error}")
            goal_handle.abort()
            return PlayMotion.Result(error_code=PlayMotion.Result.INVALID_MOTION, error_string=str(error))
        except TimeoutError as error:
            log.error(f"play_motion: {error}")
            goal_handle.abort()
            return PlayMotion.Result(error_code=PlayMotion.Result.EXECUTION_FAILED, error_string=str(error))
        scaling = playback.scaling
        # one call site per severity: rclpy refuses a call site whose severity changes between calls
        # (a slowed goal after a nominal one would fail with "Logger severity cannot be changed")
        if scaling.slowed:
            log.warning(scaling.describe())
        else:
            log.info(scaling.describe())
        log.info(f"playing {playback.motion.name!r}: {playback.duration:.2f} s "
                 f"({playback.transition_duration:.2f} s of transition from the current pose)")
        return self._play(goal_handle, playback, falls_before)

    def _plan(self, request) -> Playback:
        name = request.motion_name or request.motion_file
        if not name:
            raise MotionError("<goal>", "give a motion_name or a motion_file")
        speed = request.speed_factor if request.speed_factor != 0.0 else 1.0
        if not math.isfinite(speed) or speed <= 0.0:
            raise MotionError("<goal>", f"speed_factor must be a positive number, got {request.speed_factor}")
        source = request.motion_name if request.motion_name else Path(request.motion_file)
        motion = load_motion(self.robot, source)
        if self._joint_state is None and not self._joint_event.wait(CONNECT_TIMEOUT):
            raise TimeoutError(f"no joint_states from the robot within {CONNECT_TIMEOUT:g} s")
        state = self._joint_state
        current = dict(zip(state.name, state.position, strict=True))
        return plan_playback(motion, speed=speed, current=current, period=self.sample_period)

    def _play(self, goal_handle, playback: Playback, falls_before: int) -> PlayMotion.Result:
        """Play ``playback`` on the robot; stopped FELL by any fall after the goal was taken
        (``falls_before`` falls had been seen then), before the trajectory is sent too."""
        result = PlayMotion.Result(duration=playback.duration, time_scale=playback.scaling.stretch)
        problem = self._robot_problem()
        if problem is not None:
            goal_handle.abort()
            result.error_code = PlayMotion.Result.EXECUTION_FAILED
            result.error_string = problem
            self.node.get_logger().error(f"play_motion {playback.motion.name!r}: {problem}")
            return result
        if self.falls.count > falls_before:  # while the motion was planned: nothing sent
            goal_handle.abort()
            result.error_code = PlayMotion.Result.FELL
            result.error_string = f"{self.falls.reason or 'the robot fell'}: motion not started"
            self.node.get_logger().error(f"play_motion {playback.motion.name!r}: {result.error_string}")
            return result
        progress: list[float] = [0.0]

        def on_feedback(message) -> None:  # the first: the trajectory is in force on the robot
            progress[0] = seconds(message.feedback.desired.time_from_start)
            self._release(goal_handle.request)

        goal = FollowJointTrajectory.Goal(trajectory=playback_trajectory(playback))
        sent = self._robot.send_goal_async(goal, feedback_callback=on_feedback)
        robot_goal = self._wait(sent)
        if robot_goal is None or not robot_goal.accepted:
            self._release(goal_handle.request)
            goal_handle.abort()
            result.error_code = PlayMotion.Result.EXECUTION_FAILED
            result.error_string = ("the robot did not accept the trajectory" if robot_goal is not None else
                                   f"no answer to the trajectory from the robot within {CONNECT_TIMEOUT:g} s")
            self.node.get_logger().error(f"play_motion {playback.motion.name!r}: {result.error_string}")
            return result
        # asks again if the robot's answer is lost; ends when the robot's server went away
        finished = ResultWaiter(robot_goal, server=self._robot, gone_after=ROBOT_GONE_AFTER)
        fell = gone = None
        while not finished.wait(1.0 / self.feedback_rate):
            if finished.server_gone:
                gone = (f"its {topics.FOLLOW_JOINT_TRAJECTORY} server went away during the motion "
                        f"(missing for {ROBOT_GONE_AFTER:g} s)")
                break
            if goal_handle.is_cancel_requested:
                robot_goal.cancel_goal_async()
                finished.wait(CONNECT_TIMEOUT)
                break
            if self.falls.count > falls_before:  # it fell during the motion
                fell = self.falls.reason or "the robot fell"
                robot_goal.cancel_goal_async()
                finished.wait(CONNECT_TIMEOUT)
                break
            elapsed = min(progress[0], playback.duration)
            goal_handle.publish_feedback(PlayMotion.Feedback(
                progress=elapsed / playback.duration if playback.duration > 0 else 1.0, elapsed=elapsed,
                keyframe=playback.keyframe_reached(elapsed)))
        outcome = finished.response
        status = outcome.status if outcome is not None else GoalStatus.STATUS_UNKNOWN
        if fell is None and status != GoalStatus.STATUS_SUCCEEDED and self.falls.count > falls_before:
            fell = self.falls.reason or "the robot fell"  # the robot stopped the trajectory for the fall first
        if fell is not None:
            goal_handle.abort()
            result.error_code = PlayMotion.Result.FELL
            result.error_string = f"{fell}: motion stopped (the robot holds where it is)"
            self.node.get_logger().error(f"play_motion {playback.motion.name!r}: {result.error_string}")
        elif goal_handle.is_cancel_requested:
            goal_handle.canceled()
            result.error_code, result.error_string = PlayMotion.Result.CANCELED, "canceled by the client"
        elif status == GoalStatus.STATUS_SUCCEEDED:
            # the loop above samples the robot's progress: tell the client it reached the end
            goal_handle.publish_feedback(PlayMotion.Feedback(
                progress=1.0, elapsed=playback.duration, keyframe=playback.keyframe_reached(playback.duration)))
            goal_handle.succeed()
            result.error_code = PlayMotion.Result.SUCCESSFUL
        else:
            goal_handle.abort()
            result.error_code = PlayMotion.Result.EXECUTION_FAILED
            reason = outcome.result.error_string if outcome is not None else gone or "no result from the robot"
            result.error_string = f"the robot did not complete the trajectory: {reason}"
            self.node.get_logger().error(f"play_motion {playback.motion.name!r}: {result.error_string}")
        return result

    def _robot_problem(self) -> str | None:
        """Why no goal can be sent to the robot now (None: it can): its server is not up, or,
        before the first goal, has not answered this node yet (a goal's answer would be lost:
        see action_result)."""
        if not self._robot.wait_for_server(timeout_sec=CONNECT_TIMEOUT):
            return f"no follow_joint_trajectory server within {CONNECT_TIMEOUT:g} s"
        if not self._robot_answers:
            if not wait_until_answering(self._robot, CONNECT_TIMEOUT):
                return f"the follow_joint_trajectory server does not answer within {CONNECT_TIMEOUT:g} s"
            self._robot_answers = True
        return None

    @staticmethod
    def _wait(future, timeout: float = CONNECT_TIMEOUT):
        done = threading.Event()
        future.add_done_callback(lambda _f: done.set())
        return future.result() if done.wait(timeout) else None


def main(args: list[str] | None = None) -> int:
    return run_node("trajectory_generator", TrajectoryGenerator, args)


if __name__ == "__main__":
    sys.exit(main())
