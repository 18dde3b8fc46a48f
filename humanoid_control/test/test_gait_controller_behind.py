"""The gait controller node in this process, over real DDS, behind its robot's readings.

A hardware node stamps its readings with the system clock; a controller starved of CPU on a
loaded machine handles them seconds after they were taken (a queue of them). Its gait then
starts late, from its first set-point: skipping every set-point that fell due while it waited,
a 2-s gait on the emulated bus was "played" as its return to the stance alone.
Here the robot's readings are stamped 2 s before the controller's clock: the first trajectory
the robot gets begins with the gait's first set-point, and none of its points is past.
"""

from __future__ import annotations

import numpy as np
import rclpy
from gait_stand_in import StandInRobot
from rclpy.parameter import Parameter

from humanoid_control.nodes import GaitControllerNode, gait_controller
from humanoid_control.ros import OwnProcess, poll_until, seconds
from humanoid_core.quadruped_gaits import NODE_NAME, GaitControllerParameters, GaitRun, load_gait
from humanoid_interfaces.action import PlayGait

ROBOT = "bioloid_quadruped"
GAIT, FREQUENCY, DURATION = "trot", 1.0, 1.0
#: s the readings are stamped before the controller's clock.
BEHIND = 2.0


def test_a_controller_behind_its_readings_starts_the_gait_late_from_its_first_set_point(monkeypatch):
    # the stand-in publishes its readings from this thread's spin loop, which a loaded machine
    # may hold for a second (clean-clone run 172: the controller's watchdog abandoned the gait);
    # the watchdog is not what this test is about
    monkeypatch.setattr(gait_controller, "STATE_TIMEOUT", 60.0)
    rclpy.init()
    robot = None
    try:
        node = rclpy.create_node(NODE_NAME, namespace="gait_behind_test",
                                 parameter_overrides=[Parameter("robot", value=ROBOT)])
        GaitControllerNode(node, OwnProcess())
        params = GaitControllerParameters.for_robot(ROBOT)
        robot = StandInRobot(node, ROBOT, "gait_behind_test", behind=BEHIND)
        model, stance, received, gaits, tick = robot.model, robot.stance, robot.received, robot.gaits, robot.tick

        poll_until(lambda: tick() or gaits.server_is_ready(), "the play_gait server", timeout=30.0)
        goal = gaits.send_goal_async(PlayGait.Goal(gait=GAIT, frequency=FREQUENCY, duration=DURATION))
        poll_until(lambda: tick() or bool(received), "the gait's first trajectory", timeout=60.0)
        first, got_at = received[0], robot.now()
        poll_until(lambda: tick() or goal.done(), "the goal's acceptance", timeout=60.0)
        result = goal.result().get_result_async()
        poll_until(lambda: tick() or result.done(), "the gait's result", timeout=60.0)  # it ends before rclpy
        assert result.result().result.error_code == PlayGait.Result.SUCCESSFUL, result.result().result.error_string
        assert seconds(first.header.stamp) >= got_at - 1.0, "the trajectory begins in the past of the robot's clock"
        # the run the controller plays from the stance, step by step: which is the first sent?
        columns = [list(model.joints.names).index(name) for name in first.joint_names]
        run = GaitRun(load_gait(model, GAIT, params.period, FREQUENCY), stance, stance, DURATION, params.timing)
        steps = [run.setpoint(k).positions[columns] for k in range(run.gait_end + 1)]
        sent = np.array(first.points[0].positions)
        at = [k for k, positions in enumerate(steps) if np.array_equal(positions, sent)]
        assert at and at[0] <= 1, f"the first set-point sent is the run's step {at or 'none'} of {run.gait_end}"
    finally:
        if robot is not None:
            robot.close()
        rclpy.try_shutdown()
