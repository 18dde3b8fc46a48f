"""While the fall manager says the robot is falling, lying or getting up, the robot interface
refuses a controller's ``joint_commands`` (in process over real DDS, on the paced ideal driver):
a stream going on would undo the protective action (limp included: a set-point takes the joints
again) and fight the get-up. Each refusal is in the log with the manager's state and cause; once
the manager says controllable the stream is taken again. The manager's states are published
as the manager publishes them (``fall_manager_state``, transient local); the interface's log is
read from ``/rosout`` (test/rosout_log.py: reading the console's capture loses lines)."""

from __future__ import annotations

import threading

import numpy as np
import pytest
from builtin_interfaces.msg import Time
from paced_driver import PATIENCE, PacedIdealDriver, interface_running
from rosout_log import RosoutLog
from sensor_msgs.msg import JointState
from std_msgs.msg import Header

from humanoid_control.ros import FALL_STATE_QOS, poll_until
from humanoid_description import RobotModel
from humanoid_interfaces.msg import FallManagerState

JOINT = "r_shoulder_pitch"
#: rad from where the joint stands: the refused set-point, and the one taken afterwards.
REFUSED, TAKEN = 0.3, 0.2


def manager_state(state: int, name: str) -> FallManagerState:
    return FallManagerState(state=state, state_name=name, cause=f"{name} (the test's manager)",
                            header=Header(stamp=Time(sec=1)))


@pytest.mark.parametrize(("state", "name"), [(FallManagerState.FALLING, "falling"),
                                             (FallManagerState.FALLEN, "fallen"),
                                             (FallManagerState.GETTING_UP, "getting_up")])
def test_joint_commands_are_refused_while_the_robot_is_down_and_taken_again_once_controllable(state, name):
    model = RobotModel("bioloid")
    driver = PacedIdealDriver(model.joints)  # keeps every command written to it
    index = model.joints.index(JOINT)
    with interface_running(driver, model, peers=("controller",)) as running:
        controller = running.peers["controller"]
        logs = RosoutLog(controller, running.node.get_logger().name)
        states = controller.create_publisher(FallManagerState, "fall_manager_state", FALL_STATE_QOS)
        commands = controller.create_publisher(JointState, "joint_commands", 10)
        poll_until(lambda: commands.get_subscription_count() >= 1 and states.get_subscription_count() >= 1,
                   "the interface subscribed to joint_commands and fall_manager_state", PATIENCE)
        standing = float(driver.position[index])

        def rejected() -> int:
            return running.loop.host.loop.status().commands_rejected

        def refused_until(command: JointState, done, what: str) -> None:
            """``command`` on joint_commands, one at a time, each once the loop has counted the one
            before it as refused (none is left in the subscription's queue), until ``done()``."""
            pause = threading.Event()

            def one() -> bool:
                before = rejected()
                commands.publish(command)
                poll_until(lambda: rejected() > before, "a command counted as refused", PATIENCE)
                return bool(done()) or pause.wait(0.02)

            poll_until(one, what, PATIENCE)

        states.publish(manager_state(state, name))
        poll_until(lambda: logs.find(f"joint_commands refused while the fall manager: {name}"),
                   f"the interface heard the manager say {name}", PATIENCE)
        refused_until(JointState(name=[JOINT], position=[standing + REFUSED]),
                      lambda: logs.find("joint_commands refused: the fall manager: "), "a refusal logged")
        refusal = logs.find("joint_commands refused: the fall manager: ")
        assert f"{name} at t = 1.000 s ({name} (the test's manager))" in refusal, refusal
        assert "taken again once the fall manager says controllable" in refusal, refusal

        states.publish(manager_state(FallManagerState.CONTROLLABLE, "controllable"))
        poll_until(lambda: logs.find("joint_commands taken again: the fall manager: controllable"),
                   "the interface heard the manager say controllable", PATIENCE)
        taken = JointState(name=[JOINT], position=[standing + TAKEN])
        poll_until(lambda: commands.publish(taken) or threading.Event().wait(0.02)
                   or abs(driver.goal[index] - (standing + TAKEN)) < 1e-9,
                   "the set-point sent once controllable reached the robot", PATIENCE)
        goals = np.array([command.position[index] for command in driver.written.copy()])
        assert not np.any(np.abs(goals - (standing + REFUSED)) < 1e-6), "a refused set-point reached the robot"
