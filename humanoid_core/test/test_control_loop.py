"""The ROS-free control loop in-process, on the ideal driver's clock: commands in, set-points
out, the command guard's two hooks, rejections counted, driver errors survived, rate metered."""

import threading
import time

import numpy as np
import pytest

from humanoid_core.loop import (
    CheckInterruptedError,
    CommandGuard,
    CommandRejectedError,
    ControlLoop,
    DriverError,
    ErrorCode,
    GilTurns,
    IdealDriver,
    InterfaceParameters,
    JointCommand,
    LockstepGate,
    PointData,
    RunState,
    ToleranceSpec,
    TrajectoryRequest,
    Veto,
)
from humanoid_description import RobotModel

ARM = "rarm_joint1"


@pytest.fixture(scope="module")
def joints():
    return RobotModel("hoap2").joints


class FakeWallClock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


class RecordingGuard(CommandGuard):
    """Refuses trajectories reaching past ``limit`` on the arm, remembers what it saw, and
    replaces every set-point of the arm beyond ``ceiling`` by the ceiling."""

    def __init__(self, arm: int, limit: float = 10.0, ceiling: float = 10.0) -> None:
        self.arm, self.limit, self.ceiling = arm, limit, ceiling
        self.plans = []
        self.threads = set()

    def check_trajectory(self, plan, stop=lambda: False) -> None:
        self.plans.append(plan)
        self.threads.add(threading.current_thread().name)
        times = np.linspace(plan.start, plan.end, 50)
        if np.any(plan.configurations(times)[:, self.arm] > self.limit):
            raise CommandRejectedError(ErrorCode.INVALID_GOAL, "the arm would hit the head")

    def filter_setpoint(self, command, state):
        if command.position[self.arm] <= self.ceiling:
            return command
        position = command.position.copy()
        position[self.arm] = self.ceiling
        return JointCommand(position, command.velocity)


def make_loop(joints, guard=None, **params):
    driver = IdealDriver(joints)
    wall = FakeWallClock()
    loop = ControlLoop(driver, joints, InterfaceParameters(control_rate=100.0, **params), guard, wall_clock=wall)
    loop.start()
    return loop, driver, wall


def request(*points, **kwargs) -> TrajectoryRequest:
    return TrajectoryRequest([ARM], [PointData(t, [p]) for t, p in points], **kwargs)


def run_until(loop, condition, cycles=1000):
    for _ in range(cycles):
        if condition():
            return
        loop.cycle()
    raise AssertionError("condition not reached")


def test_a_trajectory_is_followed_and_succeeds(joints):
    loop, driver, _ = make_loop(joints)
    run = loop.accept_trajectory(request((0.5, 0.3), (1.0, 0.6)))
    run_until(loop, run.done.is_set)
    assert run.state is RunState.SUCCEEDED
    assert abs(driver.position[joints.index(ARM)] - 0.6) <= loop.params.goal_position_tolerance
    loop.cycle()
    assert driver.position[joints.index(ARM)] == pytest.approx(0.6)  # the last set-point, one cycle later
    assert loop.status().cycles >= 100  # 1 s at 100 Hz


def test_the_guard_checks_in_the_callers_thread_the_exact_path_the_loop_writes(joints):
    arm = joints.index(ARM)
    guard = RecordingGuard(arm)
    loop, driver, _ = make_loop(joints, guard)
    run = loop.accept_trajectory(request((0.5, 0.4), (1.0, 0.2)))
    plan = guard.plans[-1]
    assert guard.threads == {threading.current_thread().name}
    written, stamps = [], []
    while not run.done.is_set():
        stamps.append(loop.cycle().stamp)
        written.append(driver.written[-1].position.copy())
    np.testing.assert_allclose(np.array(written), plan.configurations(np.array(stamps)), atol=1e-12)


class SlowGuard(RecordingGuard):
    """Its trajectory check takes ``seconds`` of the robot's clock (a simulation running
    faster than real time, or a real robot, goes on while a self-collision check runs)."""

    def __init__(self, arm: int, driver: IdealDriver, seconds: float) -> None:
        super().__init__(arm)
        self.driver, self.seconds = driver, seconds

    def check_trajectory(self, plan, stop=lambda: False) -> None:
        super().check_trajectory(plan, stop)
        self.driver.time += self.seconds


def test_a_trajectory_from_rest_starts_when_its_check_ends_not_part_way(joints):
    arm = joints.index(ARM)
    loop, driver, _ = make_loop(joints)
    guard = SlowGuard(arm, driver, seconds=0.4)
    loop.guard = guard
    before = driver.now()
    run = loop.accept_trajectory(request((0.5, 0.4), (1.0, 0.2)))
    checked = guard.plans[-1]
    assert checked.start == pytest.approx(before)
    assert run.start == pytest.approx(before + 0.4)  # the clock ran on during the check
    written, stamps = [], []
    while not run.done.is_set():
        stamps.append(loop.cycle().stamp)
        written.append(driver.written[-1].position[arm])
    # the whole checked path, delayed: from the start position (0), up to 0.4 and back to 0.2
    np.testing.assert_allclose(written, checked.configurations(np.array(stamps) - 0.4)[:, arm], atol=1e-12)
    assert abs(written[0]) < 0.02 and max(written) == pytest.approx(0.4, abs=0.01)


def test_a_trajectory_taking_over_a_moving_one_starts_after_its_check_and_is_followed_whole(joints):
    arm = joints.index(ARM)
    loop, driver, _ = make_loop(joints)
    loop.accept_trajectory(request((1.0, 0.4)))
    loop.cycle()
    guard = SlowGuard(arm, driver, seconds=0.1)
    loop.guard = guard
    run = loop.accept_trajectory(request((1.0, 0.0)))
    checked = guard.plans[-1]
    # planned at "now", its start passed during the check: planned again, further ahead
    assert len(guard.plans) == 2
    assert run.start == checked.start >= driver.now()  # nothing of it skipped
    written, stamps = [], []
    while not run.done.is_set():
        stamps.append(loop.cycle().stamp)
        written.append(driver.written[-1].position[arm])
    stamps, written = np.array(stamps), np.array(written)
    after = stamps >= run.start
    assert after.any() and not after.all()  # the first trajectory led into it meanwhile
    np.testing.assert_allclose(written[after], checked.configurations(stamps[after])[:, arm], atol=1e-12)
    assert np.max(np.abs(np.diff(written))) < 0.03  # no jump where one hands over to the other


def test_a_trajectory_the_guard_refuses_never_starts_and_the_running_one_goes_on(joints):
    arm = joints.index(ARM)
    loop, _, _ = make_loop(joints, RecordingGuard(arm, limit=0.5))
    first = loop.accept_trajectory(request((1.0, 0.4)))
    loop.cycle()
    with pytest.raises(CommandRejectedError, match="hit the head"):
        loop.accept_trajectory(request((1.0, 0.9)))
    assert loop.trajectory_executor.active is first and first.state is RunState.RUNNING
    assert loop.status().commands_rejected == 1
    run_until(loop, first.done.is_set)
    assert first.state is RunState.SUCCEEDED


class GatedGuard(CommandGuard):
    """Its first check lasts until its ``stop()`` asks it to give up (then it does, as the
    self-collision guard does between chunks of samples); later checks pass at once."""

    def __init__(self) -> None:
        self.checking = threading.Event()
        self.checks = 0

    def check_trajectory(self, plan, stop=lambda: False) -> None:
        self.checks += 1
        if self.checks > 1:
            return
        self.checking.set()
        deadline = time.monotonic() + 30.0
        while not stop():
            assert time.monotonic() < deadline, "the check was never asked to stop"
            time.sleep(0.001)
        raise CheckInterruptedError("asked to stop")


def accept_in_thread(loop, trajectory, **kwargs) -> tuple[threading.Thread, dict]:
    outcome: dict = {}

    def accept() -> None:
        try:
            outcome["run"] = loop.accept_trajectory(trajectory, **kwargs)
        except CommandRejectedError as error:
            outcome["error"] = error

    thread = threading.Thread(target=accept)
    thread.start()
    return thread, outcome


def test_a_trajectory_being_checked_gives_way_to_a_newer_one_and_never_starts(joints):
    guard = GatedGuard()
    loop, _, _ = make_loop(joints, guard)
    thread, older = accept_in_thread(loop, request((1.0, 0.4)))
    assert guard.checking.wait(30.0)
    newer = loop.accept_trajectory(request((1.0, 0.2)))
    thread.join(30.0)
    error = older["error"]
    assert error.code is ErrorCode.PREEMPTED and "never started" in str(error)
    assert loop.trajectory_executor.active is newer and newer.state is RunState.RUNNING
    assert loop.status().commands_rejected == 0  # given way, not refused


def test_a_trajectory_canceled_while_being_checked_ends_canceled_and_never_starts(joints):
    guard = GatedGuard()
    loop, _, _ = make_loop(joints, guard)
    canceled = threading.Event()
    thread, outcome = accept_in_thread(loop, request((1.0, 0.4)), canceled=canceled.is_set)
    assert guard.checking.wait(30.0)
    canceled.set()
    thread.join(30.0)
    assert outcome["error"].code is ErrorCode.CANCELED and "never started" in str(outcome["error"])
    assert loop.trajectory_executor.active is None


def test_the_setpoint_filter_decides_what_the_driver_gets(joints):
    arm = joints.index(ARM)
    loop, driver, _ = make_loop(joints, RecordingGuard(arm, ceiling=0.2))
    loop.stream([ARM], [0.8])
    for _ in range(50):
        loop.cycle()
    assert driver.written[-1].position[arm] == 0.2
    assert driver.position[arm] == pytest.approx(0.2)


class VetoingGuard(CommandGuard):
    """Vetoes every set-point of the arm beyond ``ceiling``: holds the arm at the ceiling."""

    def __init__(self, arm: int, ceiling: float) -> None:
        self.arm, self.ceiling = arm, ceiling

    def filter_setpoint(self, command, state):
        if command.position[self.arm] <= self.ceiling:
            return command
        position = command.position.copy()
        position[self.arm] = self.ceiling
        return Veto(JointCommand(position, None), ErrorCode.SELF_COLLISION, "the arm would hit the head")


def test_a_veto_becomes_the_setpoint_and_ends_the_running_trajectory_with_its_reason(joints):
    arm = joints.index(ARM)
    loop, driver, _ = make_loop(joints, VetoingGuard(arm, ceiling=0.2))
    run = loop.accept_trajectory(request((1.0, 0.6)))
    run_until(loop, run.done.is_set)
    assert (run.state, run.code, run.message) == (RunState.ABORTED, ErrorCode.SELF_COLLISION,
                                                  "the arm would hit the head")
    assert loop.trajectory_executor.setpoint()[0][arm] == 0.2  # the executor holds the substitute
    for _ in range(50):
        loop.cycle()
    assert driver.position[arm] == pytest.approx(0.2)
    loop.stream([ARM], [0.1])  # a command the guard lets through is followed
    run_until(loop, lambda: driver.position[arm] == pytest.approx(0.1))


def test_malformed_commands_are_rejected_counted_and_change_nothing(joints):
    guard = RecordingGuard(joints.index(ARM))
    loop, driver, _ = make_loop(joints, guard, max_trajectory_points=10, max_trajectory_duration=60.0)
    loop.cycle()
    before = driver.written[-1]
    with pytest.raises(CommandRejectedError, match="unknown joint"):
        loop.stream(["nope"], [0.0])
    with pytest.raises(CommandRejectedError, match="max_trajectory_points = 10"):
        loop.accept_trajectory(request(*[(0.1 * (i + 1), 0.0) for i in range(11)]))
    with pytest.raises(CommandRejectedError, match=r"lasts 1e\+06 s .* max_trajectory_duration = 60 s"):
        loop.accept_trajectory(request((1.0, 0.0), (1e6, 0.0)))
    assert not guard.plans  # refused before any plan or check
    with pytest.raises(CommandRejectedError, match="acceleration tolerances are not supported"):
        loop.accept_trajectory(request((1.0, 0.1), goal_tolerance=[ToleranceSpec(ARM, acceleration=0.1)]))
    with pytest.raises(CommandRejectedError, match="not in the trajectory") as info:
        loop.accept_trajectory(request((1.0, 0.1), path_tolerance=[ToleranceSpec("lleg_joint1", 0.1)]))
    assert info.value.code is ErrorCode.INVALID_JOINTS
    loop.cycle()
    assert driver.written[-1] is before and loop.trajectory_executor.active is None
    assert loop.status().commands_rejected == 5


def test_tolerances_default_to_the_parameters_and_negative_means_unchecked(joints):
    loop, _, _ = make_loop(joints, goal_position_tolerance=0.02, path_position_tolerance=0.3)
    tolerances = loop.tolerances([ARM, "larm_joint1"], [ToleranceSpec(ARM, position=-1.0)],
                                 [ToleranceSpec("larm_joint1", position=0.5, velocity=0.1)], 0.0)
    assert list(tolerances.path) == [np.inf, 0.3]
    assert list(tolerances.goal) == [0.02, 0.5]
    assert list(tolerances.goal_velocity) == [np.inf, 0.1]
    assert tolerances.goal_time == loop.params.goal_time_tolerance


def test_a_stale_joint_is_validated_from_its_setpoint_not_its_frozen_reading(joints):
    arm = joints.index(ARM)
    loop, driver, _ = make_loop(joints)
    loop.stream([ARM], [0.5])
    run_until(loop, lambda: driver.position[arm] == pytest.approx(0.5))
    driver.silent[arm] = True
    driver.position[arm] = 0.0  # its last reading (0.5) is what the driver keeps reporting
    loop.cycle()
    # a point at time 0 must lie near the current position: the set-point stands in for the unknown reading
    loop.accept_trajectory(TrajectoryRequest([ARM], [PointData(0.0, [0.5]), PointData(1.0, [0.6])]))


class LaggingDriver(IdealDriver):
    """Servos that reach their set-points at a third of their velocity limits: a bus or a loop
    that cannot keep up (an overrunning loop on a slow computer, an emulator starved of CPU)."""

    def sync(self, period: float) -> None:
        step = np.clip(self.goal - self.position, -self.joints.velocity * period / 3,
                       self.joints.velocity * period / 3)
        self.position = self.position + step
        self.velocity = step / period
        self.time += period


def test_a_trajectory_continuing_a_running_one_is_checked_from_the_setpoint_not_the_lagging_servo(joints):
    """A walk streams trajectories that each continue the last where its set-point is; a servo
    lagging its set-point must not make the next look like a jump (the robot refused every
    later trajectory of a walk so, and the walk stood still mid-crouch). At rest a trajectory
    is still checked from where the servo is."""
    arm = joints.index(ARM)
    speed = 0.8 * joints.velocity[arm]
    driver = LaggingDriver(joints)
    loop = ControlLoop(driver, joints, InterfaceParameters(control_rate=100.0), wall_clock=FakeWallClock())
    loop.start()
    loop.accept_trajectory(request((0.4, 0.4 * speed)))
    for _ in range(20):
        loop.cycle()
    setpoint = loop.trajectory_executor.setpoint()[0][arm]
    # the same motion on, from its set-point: 0.8 of the limit from there, beyond it from the servo
    assert (setpoint + 0.1 * speed - driver.position[arm]) / 0.1 > 1.5 * joints.velocity[arm]
    run = loop.accept_trajectory(request((0.1, setpoint + 0.1 * speed), (0.3, setpoint + 0.3 * speed)))
    run_until(loop, run.done.is_set)
    assert run.state is RunState.SUCCEEDED
    run_until(loop, lambda: driver.position[arm] == pytest.approx(setpoint + 0.3 * speed))
    # at rest, from the servo: a point 0.1 s away that needs twice the limit is refused
    with pytest.raises(CommandRejectedError, match="from the current position to point 0"):
        loop.accept_trajectory(request((0.1, driver.position[arm] - 0.2 * joints.velocity[arm])))


def test_a_stamped_trajectory_is_led_in_from_its_stamp_within_the_speed_limits(joints):
    """Until its header stamp the robot holds (or follows the trajectory before), and from the
    stamp it heads for the first point: that lead-in must be within the velocity limits. A
    first point 0.1 s after a stamp 1 s ahead, 1 rad away, was accepted as a lead-in of 1.1 s,
    its set-points moving at about twice the joint's limit."""
    arm = joints.index(ARM)
    vmax = joints.velocity[arm]
    loop, driver, _ = make_loop(joints)
    stamp = driver.now() + 1.0
    far = 0.2 * vmax  # 0.1 s from the stamp: twice the limit
    with pytest.raises(CommandRejectedError, match=(
            r"joint rarm_joint1 would have to move at 9\.52 rad/s from its set-point at the trajectory's start "
            r"to the first point still due; its velocity limit is 4\.76 rad/s")):
        loop.accept_trajectory(request((0.1, far), start_time=stamp))
    assert loop.status().commands_rejected == 1 and loop.trajectory_executor.active is None
    # the same point 0.25 s from the stamp (0.8 of the limit): run, held until the stamp, then at
    # that speed, never faster
    run = loop.accept_trajectory(request((0.25, far), start_time=stamp))
    positions, times = [], []
    while not run.done.is_set():
        loop.cycle()
        positions.append(driver.position[arm])
        times.append(driver.now())
    assert run.state is RunState.SUCCEEDED
    times_, positions_ = np.array(times), np.array(positions)
    assert np.all(positions_[times_ <= stamp] == 0.0)
    assert np.max(np.abs(np.diff(positions_) / np.diff(times_))) <= vmax


def test_a_driver_error_is_counted_and_the_loop_goes_on(joints):
    loop, driver, _ = make_loop(joints)
    driver.fail_next = DriverError("bus gone for a cycle")
    loop.run_in_thread()
    try:
        cycles = threading.Semaphore(0)
        loop.add_cycle_hook(lambda _state: cycles.release())
        assert all(cycles.acquire(timeout=30.0) for _ in range(10))
        status = loop.status()
        assert status.driver_errors == 1 and status.error == ""  # later cycles went through
    finally:
        loop.stop()
    assert driver.closed


def test_the_loop_rate_is_metered_on_the_wall_clock_given(joints):
    loop, _, wall = make_loop(joints)
    for _ in range(301):
        loop.cycle()
        wall.now += 0.005  # 200 cycles per wall second, 0.01 s of robot time each
    status = loop.status()
    assert status.loop_rate_hz == pytest.approx(200.0)
    assert status.real_time_factor == pytest.approx(2.0)


def test_a_loop_running_flat_out_gives_turns_and_a_blocking_one_does_not():
    """GilTurns: a thread that keeps the CPU sleeps briefly once per period (so the node's
    other threads get the GIL: test_play_motion_sim's cancel at real-time factor 0 came
    seconds late without it); one that blocks between cycles is never slowed."""
    period = 0.005
    # a small share: on a loaded machine a thread running flat out gets a fraction of a core
    # (1/5 at load 10 on 2 cores); its CPU time, not the wall's, says how long it ran
    busy = GilTurns(period=period, busy_share=0.02)
    given = 0
    ran_until = time.thread_time() + 20 * period
    while time.thread_time() < ran_until:
        given += busy.give()
    assert given >= 5

    blocking = GilTurns(period=period)  # the loop's share (half the wall time on the CPU)
    for _ in range(10):
        time.sleep(2 * period)
        assert not blocking.give()


def test_in_lockstep_the_step_past_a_state_overlaps_its_answers_and_commands_keep_its_time(joints):
    """The driver steps towards the next state while the participants work on this one (the
    command it drives was written before they answer), and what they send meanwhile is taken
    at the time of the state they answer, never at the driver's: the same in every run."""
    loop, driver, _ = make_loop(joints)
    loop.gate = LockstepGate(expected=("controller",), timeout=30.0)
    published: list[float] = []

    def publish(state) -> None:
        published.append(state.stamp)
        loop.gate.published(state.stamp)

    loop.add_cycle_hook(publish)
    loop.run_in_thread()
    try:
        deadline = time.monotonic() + 30.0
        while not (published and driver.now() > published[-1]) and time.monotonic() < deadline:
            time.sleep(0.001)
        held = published[-1]
        assert driver.now() == pytest.approx(held + loop.period), "the driver did not step while the loop waited"
        assert loop.state.stamp == held and loop.command_time() == held
        run = loop.accept_trajectory(request((0.5, 0.4)))
        assert run.start == pytest.approx(held), "a command answering a state was taken at the driver's time"
        assert len(published) == 1, "the loop went on without the participant's answer"
        loop.gate.answer("controller", held)
        loop.gate.answer("controller", held, leaving=True)  # from here on the loop runs free
        while len(published) < 3 and time.monotonic() < deadline:
            time.sleep(0.001)
        assert published[1:3] == pytest.approx([held + loop.period, held + 2 * loop.period])
    finally:
        loop.stop()
