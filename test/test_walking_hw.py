"""The walk controller on the hardware node: the same cmd_vel drives the Bioloid's
servos on the emulated Dynamixel bus (``humanoid emulate``, the maker's SDK on a pseudo
serial port).

The emulated bus has no physics (the robot walks in the air): what is checked is that
the controller's set-points reach the servos through the hardware node without a bus
error, that the legs move, and that the robot stands again when the commands stop.

One default graph (``humanoid real``'s) on one emulated bus for the cmd_vel walk and then the
walk from one foot: the second puts the robot on one foot by a trajectory from wherever the
first left it standing, so sharing the graph changes nothing either checks, and saves a graph
and an emulator start. The refusing robot needs a hardware node of its own
(``max_trajectory_duration``) and a bus of its own: it must start away from the walk's final
stance (on the shared bus, the servos still crouched where the walks left them, a walk that
never moved ended SUCCESSFUL at its stance, as it should).
"""

from __future__ import annotations

import itertools
import math
import os
from collections.abc import Callable

import numpy as np
import pytest
from diagnostic_msgs.msg import DiagnosticArray, DiagnosticStatus
from geometry_msgs.msg import Twist
from system_support import on_emulated_bus, running
from trajectory_msgs.msg import JointTrajectory

from humanoid_bringup import real_nodes
from humanoid_control.ros import STATE_TIMEOUT, poll_until, seconds

#: cmd_vel of the walks here: 0.04 m/s forward.
FORWARD = Twist()
FORWARD.linear.x = 0.04

pytestmark = pytest.mark.system

#: s each stop of the control nodes' process lasts in the starved walk, in turn: a short one,
#: and one beyond the controllers' state timeout (the robot publishes all along).
STOPS = (0.6, STATE_TIMEOUT + 0.5)


def level(status: DiagnosticStatus) -> int:
    return status.level[0] if isinstance(status.level, bytes) else int(status.level)


def walk_phase(statuses: list[DiagnosticStatus]) -> str | None:
    """The walk controller's phase in the latest of ``statuses`` that gives it."""
    phases = [v.value for s in statuses if s.name.endswith(": walking") for v in s.values if v.key == "phase"]
    return phases[-1] if phases else None


def diagnostics(client) -> list[DiagnosticStatus]:
    """Every diagnostic status the graph publishes from now on (the walk controller's phase, the
    warnings a failure is understood by)."""
    statuses: list[DiagnosticStatus] = []
    client.node.create_subscription(DiagnosticArray, "diagnostics", lambda msg: statuses.extend(msg.status), 100)
    return statuses


def wait_until_standing(statuses: list[DiagnosticStatus], last: Callable[[], JointTrajectory], timeout: float,
                        since: int = 0) -> None:
    """Until the walk controller says it stands (in ``statuses`` from ``since`` on) and its
    ``last`` trajectory ends at rest (the final set-point, zero velocities): both come from the
    same cycle, on two topics (a crouch also ends at rest: the phase tells them apart)."""
    poll_until(lambda: walk_phase(statuses[since:]) == "idle" and not any(last().points[-1].velocities),
               "the walk controller to say it stands, its final set-point sent", timeout=timeout)


def warnings_by_name(statuses: list[DiagnosticStatus]) -> dict[str, list[str]]:
    """Each reporter's distinct warnings and errors, first seen first (a failure's context)."""
    seen: dict[str, list[str]] = {}
    for status in statuses:
        if level(status) > DiagnosticStatus.OK[0] and status.message not in seen.setdefault(status.name, []):
            seen[status.name].append(status.message)
    return {name: messages[:5] for name, messages in seen.items() if messages}


def stands_at_last_setpoint(client, last: Callable[[], JointTrajectory]) -> dict[str, float]:
    """How far (rad) each joint is from the final set-point of the walk's last trajectory
    (``last()``, read again while waiting), settled: 0.5 s after that set-point is due, or if
    the robot is not within 0.05 rad of it by then, once it is or the time a refused one takes
    to be made good has passed (the walk's settle time, the set-point sent again from where
    the robot is: a lead-in of at least 0.4 s, and its settle time). A later trajectory (a
    walk its controller began again on cmd_vel queued while it had no CPU) moves that time."""

    def errors() -> dict[str, float]:
        trajectory, state = last(), client.wait_for_joint_states()
        final = dict(zip(trajectory.joint_names, trajectory.points[-1].positions, strict=True))
        measured = dict(zip(state.name, state.position, strict=True))
        return {joint: round(measured[joint] - final[joint], 3) for joint in final}

    def due(trajectory: JointTrajectory) -> float:
        return seconds(trajectory.header.stamp) + seconds(trajectory.points[-1].time_from_start)

    give_up = client.now() + 60.0  # a walk going on moves the deadline, up to this
    while True:
        trajectory = last()
        client.wait_until(min(due(trajectory) + 0.5, give_up), timeout=60.0)
        found = errors()
        if (max(map(abs, found.values())) < 0.05 and last() is trajectory) or \
                client.now() >= min(due(last()) + 3.0, give_up):
            return found
        client.wait_until(client.now() + 0.1, timeout=60.0)


@pytest.fixture(scope="class")
def default_graph(tmp_path_factory):
    """The default hardware graph on an emulated bus of its own, for one class's tests; stopped
    when the class ends (before the next graph starts: they share the domain)."""
    from humanoid_hw.emulator import emulator_process

    with emulator_process("bioloid", 1, 1_000_000, timing=False) as port, \
            running(on_emulated_bus(real_nodes("bioloid", port=port)), tmp_path_factory.mktemp("walk_hw")) as client:
        yield client


class TestTheDefaultGraph:
    """The cmd_vel walk, then the walk from one foot, on one default graph (in this order)."""

    def test_the_same_cmd_vel_drives_the_hardware_node_on_the_emulated_bus(self, default_graph):
        client = default_graph
        sent: list[tuple[float, JointTrajectory]] = []
        statuses = diagnostics(client)
        client.node.create_subscription(JointTrajectory, "joint_trajectory",
                                        lambda msg: sent.append((client.now(), msg)), 100)
        knee = "r_knee"
        start = client.current_positions()[knee]
        publisher = client.node.create_publisher(Twist, "cmd_vel", 10)
        # the walk lasts 3 s of robot time from here: not spent waiting for discovery
        poll_until(lambda: publisher.get_subscription_count() > 0, "the walk controller subscribed to cmd_vel",
                   timeout=60.0)
        knees = []

        def walk_on() -> None:
            publisher.publish(FORWARD)
            client.wait_until(client.now() + 0.1, timeout=60.0)
            knees.append(client.positions()[knee])

        # the walk's 3 s of robot time count from its first set-points: on a loaded machine the
        # controller may get its first readings (and take commands) some seconds after it subscribed
        asked = client.now()
        while not sent:
            assert client.now() - asked < 60.0, "the walk controller sent nothing in 60 s of cmd_vel"
            walk_on()
        end = sent[0][0] + 3.0
        while client.now() < end:
            walk_on()
        stopped = len(statuses)
        publisher.publish(Twist())  # stop
        wait_until_standing(statuses, lambda: sent[-1][1], 120.0, since=stopped)
        assert len(sent) >= 10, f"{len(sent)} trajectories sent"  # a stream of them, not one
        assert max(abs(k - start) for k in knees) > 0.1  # the servos followed: the knees bent and moved
        assert all(math.isfinite(v) for v in client.wait_for_joint_states().position)  # every servo answers
        # standing at the last set-point (one the robot refused, as late on a loaded machine, is
        # sent again from where the robot is once it is due)
        errors = stands_at_last_setpoint(client, lambda: sent[-1][1])
        assert max(abs(error) for error in errors.values()) < 0.05, (errors, warnings_by_name(statuses))
        rest = np.array([m.position for m in client.record(0.5)])
        assert np.ptp(rest, axis=0).max() < 0.01
        assert len(statuses) > 0  # the hardware node reported while the robot walked
        # no bus error, from any node, and no node that lost the robot's states (stale: the
        # graph's nodes start before the robot is up, and say so until its first state)
        errors = [(s.name, s.message) for s in statuses if level(s) >= DiagnosticStatus.ERROR[0]
                  and not (level(s) == DiagnosticStatus.STALE[0] and s.message == "no joint_states received yet")]
        assert not errors

    def test_a_walk_from_one_foot_puts_the_raised_foot_down_first_then_walks(self, default_graph):
        """The recovery path after a fault mid-walk (the walk abandoned with a foot raised, the
        servos holding): the next walk goal first puts the raised foot down beneath where it is,
        then walks, and ends on both soles. The robot is put on one foot here by a trajectory,
        from where the cmd_vel walk left it standing (the class's graph)."""
        from humanoid_control.ros import make_trajectory
        from humanoid_description import load_model
        from humanoid_interfaces.action import Walk

        model = load_model("bioloid")

        def support(client) -> str:
            return model.support_side(model.joints.to_array(client.positions()))

        one_foot = model.home_positions()  # the left foot 11 mm up, level: hip, knee and ankle pitch bent
        for joint, change in (("l_hip_pitch", -0.4), ("l_knee", 0.8), ("l_ankle_pitch", -0.4)):
            one_foot[model.joints.index(joint)] += change
        client = default_graph
        outcome = client.follow(make_trajectory(model.joints.names, [2.0], [one_foot.tolist()]))
        assert outcome.succeeded, outcome.error_string
        assert support(client) == "right"
        walk = client.action_client(Walk, "walk")
        assert walk.wait_for_server(timeout_sec=60.0)
        goal = client.wait_future(walk.send_goal_async(Walk.Goal(distance=0.1)), 60.0, "walk goal response")
        result = client.wait_future(goal.get_result_async(), 120.0, "the walk's result").result
        assert result.error_code == Walk.Result.SUCCESSFUL, result.error_string
        assert result.steps >= 2
        client.wait_until(client.now() + 0.5, timeout=60.0)
        assert support(client) == "both"


def teleoperated(client) -> tuple[list[JointTrajectory], object]:
    """The walk controller's joint_trajectory, recorded, and a cmd_vel publisher it hears."""
    sent: list[JointTrajectory] = []
    client.node.create_subscription(JointTrajectory, "joint_trajectory", sent.append, 100)
    publisher = client.node.create_publisher(Twist, "cmd_vel", 10)
    poll_until(lambda: publisher.get_subscription_count() > 0, "the walk controller subscribed to cmd_vel",
               timeout=60.0)
    return sent, publisher


def test_a_walk_whose_set_points_the_robot_refuses_ends_stopped_naming_the_joint(robot_graph):
    """The walk controller streams open loop: a robot that refuses every trajectory it sends
    (here the hardware node takes none ending more than 0.05 s after its receipt; each the
    controller sends begins 0.1 s after the reading it answers) does
    not move, and the walk goal must not end SUCCESSFUL as if it had walked; a cmd_vel walk,
    which no goal reports, has its last set-point sent again."""
    from humanoid_control.nodes import with_node_parameters
    from humanoid_hw import NODE_NAME as HW_NODE
    from humanoid_hw.emulator import emulator_process
    from humanoid_interfaces.action import Walk

    with emulator_process("bioloid", 1, 1_000_000, timing=False) as port:
        nodes = with_node_parameters(on_emulated_bus(real_nodes("bioloid", port=port)), HW_NODE,
                                     {"max_trajectory_duration": 0.05})
        _, client = robot_graph(nodes)
        standing = client.current_positions()
        action = client.action_client(Walk, "walk")
        assert action.wait_for_server(timeout_sec=60.0)
        handle = client.wait_future(action.send_goal_async(Walk.Goal(distance=0.05)), 60.0, "walk goal response")
        assert handle.accepted
        result = client.wait_result(handle, 120.0, "walk result").result
        assert result.error_code == Walk.Result.STOPPED, result.error_string
        assert "did not reach the last set-point sent" in result.error_string
        assert any(name in result.error_string for name in standing), result.error_string  # the joint named
        now = client.current_positions()
        assert max(abs(now[name] - standing[name]) for name in standing) < 0.05  # it never moved

        # The same robot walked on cmd_vel, a walk no goal reports: once the stop's last set-point is
        # due and the robot is not there, the controller sends it again, from where the robot is.
        sent, publisher = teleoperated(client)
        while not sent:
            publisher.publish(FORWARD)
            client.wait_until(client.now() + 0.1, timeout=60.0)
        publisher.publish(Twist())  # stop

        def sent_again() -> bool:
            """A trajectory of one point at rest, where the trajectory before it ended at rest."""
            return any(len(after.points) == 1 and not any(after.points[0].velocities)
                       and not any(before.points[-1].velocities)
                       and list(after.points[0].positions) == list(before.points[-1].positions)
                       for before, after in itertools.pairwise(list(sent)))

        poll_until(sent_again, "the stop's last set-point sent again", timeout=60.0)


def test_a_walk_whose_controller_gets_no_cpu_for_a_while_resumes_and_stands_where_it_said(robot_graph):
    """The control nodes' process stopped again and again during a cmd_vel walk from the robot's
    start-up pose, 0.4 s running between stops of 0.6 s and of longer than the controllers'
    state timeout (SIGSTOP and SIGCONT: a machine too busy to run it, as CI's was when a walk on
    the bus froze with the shoulders halfway through the crouch). Each time, the robot runs out
    of set-points and holds the last one; the walk must resume from there, not head for where
    its plan is by then (a jump the hardware node refuses, and every later trajectory with it:
    the robot stayed halfway for good), must not take its own stall for the robot's silence (the
    robot published all along: the walk was abandoned, the robot left crouched), and must end
    standing where its last trajectory says (a last trajectory refused as the walk stopped is
    sent again from where the robot is)."""
    import signal
    import threading

    from humanoid_hw.emulator import emulator_process

    with emulator_process("bioloid", 1, 1_000_000, timing=False) as port:
        graph, client = robot_graph(on_emulated_bus(real_nodes("bioloid", port=port)))
        container = graph.processes["control_container"].pid
        sent, publisher = teleoperated(client)
        statuses = diagnostics(client)
        done = threading.Event()

        def starve() -> None:
            for stop in itertools.cycle(STOPS):
                if done.wait(0.4):
                    return
                os.kill(container, signal.SIGSTOP)
                try:
                    done.wait(stop)
                finally:
                    os.kill(container, signal.SIGCONT)

        def walk_for(seconds_: float) -> None:
            end = client.now() + seconds_
            while client.now() < end:
                publisher.publish(FORWARD)
                client.wait_until(client.now() + 0.1, timeout=60.0)

        asked = client.now()
        while not sent:  # the crouch begins: starve it from here
            assert client.now() - asked < 60.0, "the walk controller sent nothing in 60 s of cmd_vel"
            walk_for(0.1)
        starver = threading.Thread(target=starve, daemon=True)
        starver.start()
        try:
            walk_for(4.0)
            publisher.publish(Twist())  # stop
            client.wait_until(client.now() + 2.0, timeout=60.0)
        finally:
            done.set()
            starver.join()
            os.kill(container, signal.SIGCONT)
        # a walk the controller stopped itself while starved began again on the cmd_vel queued
        # meanwhile, and crouched before the stop reached it
        wait_until_standing(statuses, lambda: sent[-1], 60.0)

        errors = stands_at_last_setpoint(client, lambda: sent[-1])
        assert max(abs(error) for error in errors.values()) < 0.05, (errors, warnings_by_name(statuses))
