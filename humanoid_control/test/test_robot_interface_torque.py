"""The robot interface's ``torque`` service in-process over real DDS (its loop in a thread), on
the ideal driver: torque off answered once the loop released the joints, with the ROS time of
that cycle, and the loop's diagnostics saying so until torque is on again; a driver with no
torque-off command refused with its reason, in one line."""


from diagnostic_msgs.msg import DiagnosticArray, DiagnosticStatus
from paced_driver import PATIENCE, PacedIdealDriver, interface_running
from std_srvs.srv import SetBool

from humanoid_control.ros import RobotClient, clock_seconds, poll_until
from humanoid_description import RobotModel

#: The control loop's entry in the diagnostics (the in-process loop's node is named "robot").
LOOP_ENTRY = "robot: control loop"


class StiffDriver(PacedIdealDriver):
    releases_torque = False


def call(client, data: bool) -> SetBool.Response:
    return RobotClient.wait_future(client.call_async(SetBool.Request(data=data)), PATIENCE, "torque answer")


def ask(driver_type, data: bool) -> tuple[SetBool.Response, object, float]:
    """Start the interface on a ``driver_type``, call ``torque`` with ``data``; the answer, the
    driver, and the ROS time the call was made at."""
    model = RobotModel("bioloid")
    driver = driver_type(model.joints)
    with interface_running(driver, model, peers=("caller",)) as running:
        caller = running.peers["caller"]
        client = caller.create_client(SetBool, "torque")
        assert client.wait_for_service(timeout_sec=PATIENCE)
        asked = clock_seconds(caller)
        return call(client, data), driver, asked


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


def test_the_loop_s_diagnostics_say_torque_off_until_it_is_on_again():
    model = RobotModel("bioloid")
    with interface_running(PacedIdealDriver(model.joints), model, peers=("caller",)) as running:
        caller = running.peers["caller"]
        entries: list = []
        caller.create_subscription(DiagnosticArray, "diagnostics",
                                   lambda msg: entries.extend(s for s in msg.status if s.name == LOOP_ENTRY), 100)
        client = caller.create_client(SetBool, "torque")
        assert client.wait_for_service(timeout_sec=PATIENCE)

        def latest_says(torque: str, level: bytes):
            def found():
                last = entries[-1] if entries else None
                return last if last is not None and dict((v.key, v.value) for v in last.values)["torque"] == torque \
                    and last.level == level else None
            return poll_until(found, f"the control loop's diagnostics saying torque {torque}", PATIENCE)

        latest_says("on", DiagnosticStatus.OK)
        assert call(client, False).success
        off = latest_says("off", DiagnosticStatus.WARN)
        assert off.message.startswith("torque off: every joint released (limp)"), off.message
        assert call(client, True).success
        assert latest_says("on", DiagnosticStatus.OK).message == "running"
