"""The control loop behind a pipe (humanoid_core.loop.remote), in-process on the ideal driver:
commands in and results out as with the loop itself, and a front that stops reading never
stalls the loop."""

import multiprocessing
import threading
import time

import numpy as np
import pytest

from humanoid_core.loop import (
    CommandGuard,
    CommandRejectedError,
    CommandValidator,
    ControlLoop,
    DriverError,
    ErrorCode,
    IdealDriver,
    InterfaceParameters,
    LoopClient,
    LoopServer,
    PointData,
    RemoteError,
    RunState,
    trajectory_tolerances,
)
from humanoid_description import RobotModel

ARM = "rarm_joint1"
PATIENCE = 30.0


@pytest.fixture(scope="module")
def joints():
    return RobotModel("hoap2").joints


class RefusingGuard(CommandGuard):
    """Refuses every trajectory that raises the arm above ``limit``."""

    def __init__(self, arm: int, limit: float) -> None:
        self.arm, self.limit = arm, limit

    def check_trajectory(self, plan, stop=lambda: False) -> None:
        if np.any(plan.configurations(np.linspace(plan.start, plan.end, 20))[:, self.arm] > self.limit):
            raise CommandRejectedError(ErrorCode.SELF_COLLISION, "the arm would hit the head")


class Served:
    """A loop served in a thread, its client, and a validator as the front has one."""

    def __init__(self, joints, driver=None, guard=None, read=True, **params) -> None:
        self.params = InterfaceParameters(control_rate=200.0, **params)
        self.driver = driver or IdealDriver(joints)
        self.loop = ControlLoop(self.driver, joints, self.params, guard)
        front, back = multiprocessing.Pipe()
        self.front = front
        self.server = LoopServer(self.loop, back)
        self.server.register("double", lambda x: 2 * x)
        self.finished = []
        self.thread = threading.Thread(target=lambda: self.finished.append(self.server.serve()), daemon=True)
        self.client = LoopClient(front, joints.names)
        self.validator = CommandValidator(joints)
        self.thread.start()
        if read:
            assert self.client.wait_started(PATIENCE) is not None

    def trajectory(self, *points):
        validated = self.validator.trajectory([ARM], [PointData(t, [p]) for t, p in points],
                                              self.loop.start_positions(), now=self.driver.now())
        return validated, trajectory_tolerances(self.params, validated.joint_names, (), (), 0.0)

    def stop(self):
        self.server.stop()
        self.thread.join(PATIENCE)


def test_a_trajectory_runs_in_the_loop_and_its_result_and_feedback_come_back(joints):
    served = Served(joints)
    try:
        run = served.client.start_trajectory(*served.trajectory((0.5, 0.3), (1.0, 0.6)), timeout=PATIENCE)
        assert run.done.wait(PATIENCE)
        assert run.state is RunState.SUCCEEDED and run.code is ErrorCode.SUCCESSFUL
        assert run.feedback is not None and run.feedback.desired_position[0] == pytest.approx(0.6)
        state = served.client.state
        deadline = time.monotonic() + PATIENCE
        while abs(state.position[joints.index(ARM)] - 0.6) > 1e-6:  # the state follows at publish_rate
            assert time.monotonic() < deadline
            time.sleep(0.01)
            state = served.client.state
    finally:
        served.stop()


def test_the_front_knows_which_joints_a_run_still_drives(joints):
    """What the front checks a new trajectory's speed from (the set-point of a driven joint,
    humanoid_core.loop.start_positions): the joints of the runs the loop has not reported done."""
    served = Served(joints)
    try:
        assert served.client.driven_joints() == set()
        run = served.client.start_trajectory(*served.trajectory((30.0, 0.3)), timeout=PATIENCE)
        assert served.client.driven_joints() == {ARM}  # 30 s long: still running
        served.client.stop(run)
        assert run.done.wait(PATIENCE) and run.state is RunState.CANCELED
        assert served.client.driven_joints() == set()
    finally:
        served.stop()


def test_a_refusal_in_the_loop_reaches_the_front_with_its_code(joints):
    served = Served(joints, guard=RefusingGuard(joints.index(ARM), 0.5))
    try:
        with pytest.raises(CommandRejectedError, match="hit the head") as refused:
            served.client.start_trajectory(*served.trajectory((1.0, 0.6)), timeout=PATIENCE)
        assert refused.value.code is ErrorCode.SELF_COLLISION
        served.client.count_rejection()
        deadline = time.monotonic() + PATIENCE
        while served.loop.status().commands_rejected < 2:  # the guard's and the front's
            assert time.monotonic() < deadline
            time.sleep(0.01)
    finally:
        served.stop()


def test_a_cancel_stops_the_run_where_it_is(joints):
    served = Served(joints)
    try:
        # the ideal driver's clock runs as fast as the loop cycles (1000 cycles: a fraction of a
        # second): a run long in robot time, so that the stop comes before its end however slow
        # this process is
        run = served.client.start_trajectory(*served.trajectory((500.0, 1.0)), timeout=PATIENCE)
        served.client.stop(run)
        assert run.done.wait(PATIENCE)
        assert run.state is RunState.CANCELED
        assert served.loop.trajectory_executor.active is None
    finally:
        served.stop()


def test_operations_answer_and_an_unknown_one_is_refused(joints):
    served = Served(joints)
    try:
        assert served.client.call("double", 21, timeout=PATIENCE) == 42
        with pytest.raises(RemoteError, match="no operation 'jump'"):
            served.client.call("jump", timeout=PATIENCE)
    finally:
        served.stop()


def test_a_front_that_stops_reading_never_stalls_the_loop(joints):
    """The pipe's buffer fills within a second at this rate when nobody reads; the loop's
    state is coalesced in its outbox, so the control thread goes on."""
    served = Served(joints, read=False, publish_rate=200.0)
    try:
        before = served.loop.status().cycles
        deadline = time.monotonic() + PATIENCE
        while served.loop.status().cycles < before + 5000:  # far more than the pipe holds unread
            assert time.monotonic() < deadline, "the loop stalled while nobody read its pipe"
            time.sleep(0.05)
        assert served.client.wait_started(PATIENCE) is not None  # then everything sent is read
        run = served.client.start_trajectory(*served.trajectory((0.2, 0.1)), timeout=PATIENCE)
        assert run.done.wait(PATIENCE) and run.state is RunState.SUCCEEDED
    finally:
        served.stop()


def test_a_robot_that_does_not_start_says_why(joints):
    class Broken(IdealDriver):
        def start(self):
            raise DriverError("no servo answers on /dev/ttyUSB0")

    served = Served(joints, driver=Broken(joints), read=False)
    with pytest.raises(RemoteError, match="no servo answers"):
        served.client.wait_started(PATIENCE)
    served.thread.join(PATIENCE)
    assert served.finished and served.finished[0].failed


def test_when_the_loop_ends_waiters_and_runs_learn_it(joints):
    served = Served(joints)
    run = served.client.start_trajectory(*served.trajectory((30.0, 1.0)), timeout=PATIENCE)
    ended = threading.Event()
    served.client.on_finished = lambda _finished: ended.set()
    served.stop()
    assert ended.wait(PATIENCE)
    assert run.done.wait(PATIENCE) and run.state is RunState.ABORTED
    with pytest.raises(RemoteError, match="has ended"):
        served.client.call("double", 1, timeout=PATIENCE)
