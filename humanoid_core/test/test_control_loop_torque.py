"""Torque off and on again through the ROS-free control loop (the fall manager's ``protect:
limp``), on the ideal driver: released, the loop writes no set-point; the next command takes the
joints again from where they were measured, its set-points written before the torque is on."""

import numpy as np
import pytest

from humanoid_core.loop import (
    ControlLoop,
    ErrorCode,
    IdealDriver,
    InterfaceParameters,
    PointData,
    RunState,
    TorqueUnsupportedError,
    TrajectoryRequest,
)
from humanoid_description import RobotModel

ARM = "rarm_joint1"


@pytest.fixture(scope="module")
def joints():
    return RobotModel("hoap2").joints


class OrderedDriver(IdealDriver):
    """Remembers, at each torque switch, the set-point written last (None: none yet)."""

    def __init__(self, joints) -> None:
        super().__init__(joints)
        self.switches: list[tuple[bool, np.ndarray | None]] = []

    def set_torque(self, enabled: bool) -> None:
        self.switches.append((enabled, self.written[-1].position.copy() if self.written else None))
        super().set_torque(enabled)


def make_loop(joints):
    driver = OrderedDriver(joints)
    loop = ControlLoop(driver, joints, InterfaceParameters(control_rate=100.0))
    loop.start()
    return loop, driver


def released(loop, driver):
    """Torque off, carried out by the next cycle."""
    request = loop.request_torque(False)
    assert not request.done.is_set()  # the control thread's job
    loop.cycle()
    assert request.done.is_set() and request.error is None
    assert request.message == "torque off: every joint released" and request.stamp == loop.state.stamp
    assert loop.limp and not driver.torque and loop.status().limp  # (the diagnostics say it)
    return request


def test_released_joints_get_no_setpoint_and_the_running_trajectory_ends(joints):
    loop, driver = make_loop(joints)
    arm = joints.index(ARM)
    run = loop.accept_trajectory(TrajectoryRequest([ARM], [PointData(1.0, [0.6])]))
    for _ in range(20):
        loop.cycle()
    released(loop, driver)
    assert run.done.is_set() and run.state is RunState.PREEMPTED and run.code is ErrorCode.PREEMPTED
    assert "released" in run.message
    writes = len(driver.written)
    for _ in range(30):
        state = loop.cycle()
        assert loop.written is None
    assert len(driver.written) == writes  # nothing written while limp
    assert state.position[arm] == driver.position[arm]  # still read
    again = loop.request_torque(False)
    loop.cycle()
    assert again.done.is_set() and again.message.startswith("torque already off")
    assert [enabled for enabled, _ in driver.switches] == [False]


def test_the_next_trajectory_takes_the_joints_from_where_they_are_measured(joints):
    loop, driver = make_loop(joints)
    arm = joints.index(ARM)
    loop.accept_trajectory(TrajectoryRequest([ARM], [PointData(0.5, [0.3])]))
    for _ in range(80):
        loop.cycle()
    assert driver.written[-1].position[arm] == pytest.approx(0.3)
    released(loop, driver)
    collapsed = driver.position.copy()
    collapsed[arm] = -0.7  # the arm fell while limp
    driver.position = collapsed
    loop.cycle()
    run = loop.accept_trajectory(TrajectoryRequest([ARM], [PointData(1.0, [-0.2])]))
    assert loop.limp  # taken at the next cycle
    loop.cycle()
    assert not loop.limp and driver.torque and not loop.status().limp
    enabled, before = driver.switches[-1]
    assert enabled and before is not None
    # the set-points written just before the torque came on: from the measured positions, not 0.3
    assert before[arm] == pytest.approx(-0.7, abs=0.01)
    others = np.arange(len(joints)) != arm
    assert np.allclose(before[others], collapsed[others])
    for _ in range(200):
        if run.done.is_set():
            break
        loop.cycle()
    assert run.state is RunState.SUCCEEDED
    assert driver.position[arm] == pytest.approx(-0.2, abs=loop.params.goal_position_tolerance)


def test_streaming_setpoints_and_torque_on_take_the_joints_again(joints):
    loop, driver = make_loop(joints)
    arm, other = joints.index(ARM), joints.index("larm_joint1")
    released(loop, driver)
    driver.position = driver.position + 0.1
    loop.cycle()
    loop.stream([ARM], [0.25])
    loop.cycle()
    assert driver.torque and not loop.limp
    written = driver.written[-1].position
    assert written[arm] == pytest.approx(0.25)
    assert written[other] == pytest.approx(0.1)  # a joint the command does not name holds where it is
    released(loop, driver)
    driver.position = driver.position - 0.05
    loop.cycle()
    request = loop.request_torque(True)
    loop.cycle()
    assert request.done.is_set() and request.message.startswith("torque on: every joint holds where it was")
    assert driver.torque and np.allclose(driver.written[-1].position, driver.position)


def test_a_driver_with_no_torque_off_command_is_refused_with_one_clear_line(joints):
    class Stiff(IdealDriver):
        releases_torque = False

    loop = ControlLoop(Stiff(joints), joints, InterfaceParameters(control_rate=100.0))
    loop.start()
    with pytest.raises(TorqueUnsupportedError) as refused:
        loop.request_torque(False)
    assert str(refused.value) == "Stiff has no torque-off command: its joints cannot be released while it runs"
    loop.cycle()
    assert not loop.limp
