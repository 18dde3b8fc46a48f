"""The postures protocol in-process is the graph's protocol, command for command (issue 38
item 5): the in-process runs ``humanoid identify --postures`` fits are what ``humanoid
postures`` runs through the node graph in lockstep.

What users rely on: a model fitted in-process is fitted to the limits the graph finds. So
both ways the same tests give the same limits, read as the same tilt of the feet at the same
look, and the robot is given the same set-points at the same robot times (the simulation
node's ``joint_setpoints`` against the in-process control loop's, stamp by stamp): the same
resets, trajectories started at the same state, the feet looked at at the same states. The
HOAP-2's tests 3 and 5 ended a whole step apart before; test 3 alone is run here (each
timing difference the fix mended showed in its set-points, stamp by stamp). Coarse, quick
steps keep it short.

Left out of the set-point comparison: the hold after each test's event, from the event to
the next reset. The graph stops the canceled move when the robot interface next looks at the
cancel (a wall-clock poll), the in-process robot at the state it was canceled at; the limit
is settled by then.
"""

from __future__ import annotations

import io

import numpy as np
import pytest
import yaml

from humanoid_control.ros import poll_until

pytestmark = pytest.mark.system

ROBOT = "hoap2"
TESTS = [3]
#: test_postures_sim.py's coarse steps (6 deg, then 2 deg from the last 6 deg step that stood),
#: each move in half the protocol's step_time: the limits are not the property here (a faster move
#: tips the robot a step early or late), their being the same both ways is; half the robot time.
COARSE = {"step": 2.0, "coarse_step": 6.0, "step_time": 0.5, "start_settle_time": 0.5, "settle_time": 0.5}
#: Set-points equal to float noise (they are computed by the same code from the same numbers).
NOISE = 1e-9


def _protocol(tmp_path):
    from humanoid_description import load_model
    from humanoid_experiments.postures import load_protocol, protocol_path

    text = yaml.safe_load(protocol_path(ROBOT).read_text())
    text["parameters"].update(COARSE)
    path = tmp_path / "coarse.yaml"
    path.write_text(yaml.safe_dump(text))
    model = load_model(ROBOT)
    return model, load_protocol(model, path)


def _in_process(model, protocol):
    """The tests in-process: results, set-points by stamp, and the robot times of the events."""
    from humanoid_experiments.postures import PosturesRunner, SimulatedPostureRobot, protocol_simulation
    from humanoid_sim import REFERENCE, SimulatedRobot

    events: list[float] = []

    class Noting(SimulatedPostureRobot):  # the held time of each event
        def move(self, target, duration, event=None):
            found = super().move(target, duration, event)
            if found is not None:
                events.append(self.now())
            return found

        def run_until(self, time, event=None):
            found = super().run_until(time, event)
            if found is not None:
                events.append(self.now())
            return found

    setpoints: dict[float, np.ndarray] = {}
    with SimulatedRobot(ROBOT, REFERENCE, protocol_simulation(protocol, model, None), model=model) as robot:
        def note(reading):  # what the node publishes on joint_setpoints with this state
            if robot.loop.written is not None:
                setpoints[round(reading.state.stamp, 6)] = np.array(robot.loop.written.position)

        robot.listen(note)
        runner = PosturesRunner(Noting(robot, protocol), model, protocol, out=io.StringIO())
        results = [runner.run(test) for test in protocol.select(TESTS)]
    return results, setpoints, events


def _graph(model, protocol, tmp_path):
    """The tests through the simulation node in lockstep, as ``humanoid postures`` starts it and
    drives it: results and the node's joint_setpoints by stamp."""
    from sensor_msgs.msg import JointState

    from humanoid_control.ros import RobotClient, seconds, topics
    from humanoid_core.processes import Graph
    from humanoid_experiments.postures import CLIENT, PosturesRunner, protocol_simulation
    from humanoid_sim.sim_node_spec import sim_node_spec

    node = sim_node_spec(ROBOT, {"real_time_factor": 0.0, **protocol_simulation(protocol, model, None),
                                 "lockstep": True, "lockstep_participants": CLIENT})
    setpoints: dict[float, np.ndarray] = {}
    with Graph([node], log_dir=tmp_path / "logs"), RobotClient(CLIENT, lockstep=True) as client:
        client.node.create_subscription(
            JointState, topics.JOINT_SETPOINTS,
            lambda msg: setpoints.__setitem__(round(seconds(msg.header.stamp), 6), np.array(msg.position)), 1000)
        client.wait_for_joint_states(60.0)
        runner = PosturesRunner(client, model, protocol, out=io.StringIO())
        results = [runner.run(test) for test in protocol.select(TESTS)]
        held = runner.robot.now()
        poll_until(lambda: max(setpoints, default=-1.0) >= round(held, 6), "the held state's set-points", 60.0)
    return results, setpoints


def test_in_process_runs_are_the_graphs_runs_limit_for_limit_and_setpoint_for_setpoint(tmp_path):
    model, protocol = _protocol(tmp_path)
    ours, ours_setpoints, events = _in_process(model, protocol)
    graph, graph_setpoints = _graph(model, protocol, tmp_path)

    assert [r.test.number for r in ours] == [r.test.number for r in graph] == TESTS
    for mine, theirs in zip(ours, graph, strict=True):
        assert mine.limit is not None and mine.limit == theirs.limit, (mine, theirs)
        assert mine.steps == theirs.steps, (mine, theirs)
        assert mine.tipped == theirs.tipped, (mine, theirs)
        # not the feet's tilt read at the event: the graph stops a cancelled move at a wall-clock
        # poll, so the hold after the coarse event, and the contacts the fine pass starts from,
        # differ from run to run (16.3 against 19.0 deg once in a full suite run)

    settle = protocol.parameters.settle_time
    assert len(events) >= 2 * len(TESTS)  # a coarse and a fine event per test

    def after_an_event(stamp: float) -> bool:  # up to the next reset (a look past the hold)
        return any(at < stamp <= at + settle + 0.05 + 1e-6 for at in events)

    common = sorted(set(ours_setpoints) & set(graph_setpoints))
    compared = [stamp for stamp in common if not after_an_event(stamp)]
    # the graph's from its first state to its last held one: every published state of the run, but
    # for the holds after events, whose length is the graph's wall-clock poll (11 of 828 stamps
    # there were the graph's alone once in CI)
    timed = [stamp for stamp in graph_setpoints if not after_an_event(stamp)]
    assert len(compared) >= 0.99 * len(timed) and len(compared) >= 0.8 * len(common)
    differences = {s: float(np.max(np.abs(ours_setpoints[s] - graph_setpoints[s]))) for s in compared}
    worst = max(compared, key=differences.__getitem__)
    difference = differences[worst]
    differing = [s for s in compared if differences[s] > NOISE]
    assert difference <= NOISE, (f"set-points differ by {difference:g} rad at t = {worst:.3f} s; they differ at "
                                 f"{len(differing)} stamps from {differing[:1]} to {differing[-1:]}; the "
                                 f"in-process events at {[round(at, 3) for at in events]} s")
    # and the robot was moved: the tests' joints went past their limits' steps
    travel = max(float(np.max(np.abs(ours_setpoints[s] - ours_setpoints[compared[0]]))) for s in compared)
    assert travel > np.radians(20.0)
