"""The gait controller's feedback tells every stage of a gait, however little wall time each
lasted: a lockstep simulation runs as fast as it can, and `humanoid play-gait` once printed
"starting" and then "stopping", the whole trot played between two feedback periods (clean-clone
run 308). Here the feedback period (20 s) is longer than the whole gait: the controller node in
this process, over real DDS, a stand-in robot (its readings in the stance; what it is sent, taken and dropped)."""

from __future__ import annotations

import rclpy
from gait_stand_in import StandInRobot
from rclpy.parameter import Parameter

from humanoid_control.nodes import GaitControllerNode
from humanoid_control.ros import OwnProcess, poll_until
from humanoid_core.quadruped_gaits import NODE_NAME
from humanoid_interfaces.action import PlayGait

ROBOT = "bioloid_quadruped"
GAIT, FREQUENCY, DURATION = "trot", 1.0, 1.0
#: Hz: one feedback every 20 s, the gait (1 s and its lead-in and return) over long before.
FEEDBACK_RATE = 0.05


def test_every_stage_is_told_once_in_order_when_the_gait_is_shorter_than_a_feedback_period():
    rclpy.init()
    robot = None
    try:
        node = rclpy.create_node(NODE_NAME, namespace="gait_feedback_test",
                                 parameter_overrides=[Parameter("robot", value=ROBOT),
                                                      Parameter("feedback_rate", value=FEEDBACK_RATE)])
        GaitControllerNode(node, OwnProcess())
        robot = StandInRobot(node, ROBOT, "gait_feedback_test")
        gaits, tick = robot.gaits, robot.tick

        poll_until(lambda: tick() or gaits.server_is_ready(), "the play_gait server", timeout=30.0)
        told: list[str] = []
        goal = gaits.send_goal_async(PlayGait.Goal(gait=GAIT, frequency=FREQUENCY, duration=DURATION),
                                     feedback_callback=lambda message: told.append(message.feedback.stage))
        poll_until(lambda: tick() or goal.done(), "the goal's acceptance", timeout=60.0)
        result = goal.result().get_result_async()
        poll_until(lambda: tick() or result.done(), "the gait's result", timeout=60.0)
        assert result.result().result.error_code == PlayGait.Result.SUCCESSFUL, result.result().result.error_string
        poll_until(lambda: tick() or "stopping" in told, f"the feedback of the return to the stance (told: {told})",
                   timeout=10.0)
        assert told[:3] == ["starting", "playing", "stopping"], told
    finally:
        if robot is not None:
            robot.close()
        rclpy.try_shutdown()
