"""The robot interface's ``torque`` service in-process over real DDS (its loop in a thread), on
the ideal driver: torque off answered once the loop released the joints, with the ROS time of
that cycle; a driver with no torque-off command refused with its reason, in one line."""

import threading

import rclpy
from paced_driver import PacedIdealDriver
from rclpy.executors import MultiThreadedExecutor
from std_srvs.srv import SetBool

from humanoid_control.ros import LoopThread, RobotInterface
from humanoid_core.loop import InterfaceParameters
from humanoid_description import RobotModel

PATIENCE = 30.0


class StiffDriver(PacedIdealDriver):
    releases_torque = False


def ask(driver_type, data: bool) -> tuple[SetBool.Response, object, float]:
    """Start the interface on a ``driver_type``, call ``torque`` with ``data``; the answer, the
    driver, and the ROS time the call was made at."""
    model = RobotModel("bioloid")
    rclpy.init()
    node = rclpy.create_node("robot_interface_under_test")
    caller = rclpy.create_node("caller")
    driver = driver_type(model.joints)
    params = InterfaceParameters(control_rate=100.0, publish_rate=50.0)
    loop = LoopThread(node, driver, model, params)
    interface = RobotInterface(node, loop.client, model, params, clock_is_ros_time=False)
    executor = MultiThreadedExecutor()
    executor.add_node(node)
    executor.add_node(caller)
    spinner = threading.Thread(target=executor.spin, daemon=True)
    loop.start()
    try:
        assert interface.start(timeout=PATIENCE) is not None
        spinner.start()
        client = caller.create_client(SetBool, "torque")
        assert client.wait_for_service(timeout_sec=PATIENCE)
        asked = caller.get_clock().now().nanoseconds * 1e-9
        done = threading.Event()
        future = client.call_async(SetBool.Request(data=data))
        future.add_done_callback(lambda _f: done.set())
        assert done.wait(PATIENCE), "no answer from the torque service"
        return future.result(), driver, asked
    finally:
        interface.stop()
        loop.stop()
        executor.shutdown()
        node.destroy_node()
        caller.destroy_node()
        rclpy.try_shutdown()
        spinner.join(timeout=10.0)


def test_torque_off_is_answered_once_the_loop_released_the_joints_at_ros_time():
    answer, driver, asked = ask(PacedIdealDriver, False)
    assert answer.success, answer.message
    assert answer.message.startswith("torque off: every joint released at t = "), answer.message
    released = float(answer.message.rsplit("t = ", 1)[1].split()[0])
    assert asked <= released < asked + 5.0  # ROS time, not the driver's monotonic clock
    assert not driver.torque


def test_a_driver_with_no_torque_off_command_is_refused_with_its_reason():
    answer, driver, _ = ask(StiffDriver, False)
    assert not answer.success
    assert answer.message == ("torque off refused: StiffDriver has no torque-off command: its joints cannot be "
                              "released while it runs")
    assert driver.torque
