"""Serving a node graph in the foreground for ``humanoid sim`` and ``humanoid real``."""

from __future__ import annotations

import argparse
import signal
import sys
from pathlib import Path

from humanoid_core import UsageError, new_folder
from humanoid_core.processes import Graph, NodeSpec


def serve(graph: Graph) -> int:
    """Run a node graph in the foreground until its driver exits (at the end of --duration,
    or failing) or SIGINT/SIGTERM/SIGHUP arrives; then stop them all. Any other node that
    dies is reported and restarted (the recorder: its bag made readable) while the driver
    keeps holding the robot (``Graph.serve``). Killed outright, the launcher still takes its
    nodes with it (parent-death signal)."""

    def terminate(_signum, _frame):
        raise KeyboardInterrupt

    stop_signals = (signal.SIGTERM, signal.SIGHUP)
    previous = {number: signal.signal(number, terminate) for number in stop_signals}
    codes: dict[str, int] = {}  # an exception out of serve (not an interrupt) still stops the graph below
    try:
        graph.start()
        codes = graph.serve(on_death=_finish_dead_recording)
    except KeyboardInterrupt:
        codes = {}
    finally:
        codes = {**graph.given_up, **codes, **graph.stop()}
        for number, handler in previous.items():
            signal.signal(number, handler)
    failed = {name: code for name, code in codes.items() if code not in (0, -2, 130)}
    for name, code in failed.items():
        print(f"humanoid: node {name} exited with status {code}", file=sys.stderr)
    for name, count in graph.restarts.items():
        if count:
            print(f"humanoid: node {name} was restarted {count} time{'s' if count > 1 else ''}", file=sys.stderr)
    return 1 if failed else 0


def _finish_dead_recording(spec: NodeSpec, _code: int) -> None:
    """A recorder that died left its bag without its index: make it readable at once (what
    ``humanoid record --reindex`` does, through the registered recorder's ``recover``); the
    robot goes on, unrecorded."""
    from humanoid_bringup.graphs import RECORDER_NODE, RecorderMissingError, recorder_entry

    output = spec.parameters.get("output") if spec.name == RECORDER_NODE else \
        spec.parameters.get(f"{RECORDER_NODE}.output")  # a container hosting the recorder
    if output is None:
        return
    try:
        recorder = recorder_entry().load()
    except (RecorderMissingError, ModuleNotFoundError):  # no recorder could have run without it
        return

    bag = Path(str(output))
    try:
        recorder.recover(bag)
    except (ValueError, OSError) as error:
        print(f"humanoid: the bag {bag} of the recorder that died could not be made readable: {error}",
              file=sys.stderr)
        return
    print(f"humanoid: the bag {bag} holds what was recorded until the recorder died (reindexed); "
          "the graph goes on without recording", file=sys.stderr)


def with_recorder(nodes: list[NodeSpec], bag: Path | None, lockstep: bool = False) -> list[NodeSpec]:
    """The graph plus, with ``--record DIR``, the recorder: hosted in the graph's container when
    there is one (built before its other nodes; it takes the robot's state from the container's
    feed and the container's nodes' topics without leaving the process), else in a process of
    its own started first (so that it is listening when the robot's first messages go out;
    ``lockstep``: a participant the graph must name, :data:`~humanoid_bringup.graphs.RECORDER_NODE`). The recorder is
    the one an installed package registers (:func:`~humanoid_bringup.graphs.recorder_entry`:
    the workstation tools do): said plainly when there is none."""
    if bag is None:
        return nodes
    from humanoid_bringup.graphs import RecorderMissingError, recorder_entry, recorder_node
    from humanoid_control.nodes import CONTAINER_MODULE, host_in

    try:
        recorder_class = recorder_entry().load()
    except RecorderMissingError as error:
        raise UsageError(f"--record needs a recorder, and {error}; record from a workstation with "
                         "humanoid record instead") from None
    except ModuleNotFoundError as error:
        raise UsageError(f"--record needs the recorder, which needs {error.name}, not installed here; "
                         "record from a workstation with humanoid record instead") from None
    try:
        recorder_class.prepare(bag.expanduser())
    except ValueError as error:
        raise UsageError(str(error)) from None
    recorder = recorder_node(bag.expanduser(), lockstep, nodes[0].namespace if nodes else "/")
    hosting = [k for k, spec in enumerate(nodes) if spec.module == CONTAINER_MODULE]
    if hosting:
        nodes = list(nodes)
        nodes[hosting[0]] = host_in(nodes[hosting[0]], recorder, first=True)
        return nodes
    return [recorder, *nodes]


#: s the graph is watched for a robot already in the namespace asked for, on another machine
#: (this machine's robots claim their namespace: humanoid_control.ros.namespace_claim). DDS
#: discovery has no end to wait for: the watch ends sooner only when it finds one; a free
#: namespace costs its start this long (humanoid_control.ros.robot_publishers).
NAMESPACE_PROBE = 3.0


def free_namespace(namespace: str) -> str:
    """The namespace to start a robot in (``--namespace``, absolute); a namespace where a robot
    already runs is a :class:`UsageError`, before anything starts: one this machine's robot
    claimed (its loop holds the claim: certain), or one where the graph shows a ``joint_states``
    publisher within :data:`NAMESPACE_PROBE` (a robot elsewhere: as far as discovery got). The
    root namespace is neither claimed nor probed (every graph started without the option would
    pay the wait)."""
    if namespace == "/":
        return namespace
    from humanoid_control.ros import namespace_holder, robot_publishers

    holder = namespace_holder(namespace)
    if holder is not None:
        raise UsageError(f"a robot already runs in namespace {namespace} ({holder}, on this machine): "
                         "give another --namespace")
    found = robot_publishers(namespace, NAMESPACE_PROBE)
    if found:
        raise UsageError(f"a robot already runs in namespace {namespace} ({', '.join(found)} publishes "
                         f"{namespace}/joint_states): give another --namespace")
    return namespace


#: What ``--namespace`` means to a command that starts a robot's graph of its own (``sim``, ``real``,
#: the experiments, the benchmarks that run a graph): :func:`add_own_robot_namespace`.
OWN_ROBOT_HELP = ("run the robot this command starts under NAME: its nodes, topics, services and actions "
                  "(/NAME/joint_states, /NAME/clock; TF frames NAME/base_link), and the command's own client if it "
                  "has one: several robots on one DDS domain. Refused when a robot already runs there")


def add_own_robot_namespace(parser: argparse.ArgumentParser, help_text: str = OWN_ROBOT_HELP) -> None:
    """``--namespace NAME`` of a command that starts a robot of its own: the one option (validated,
    absolute, ``/`` when not given: ``humanoid_control.ros.add_namespace_option``) every such
    command shares; its ``run`` hands it to :func:`free_namespace` before starting anything."""
    from humanoid_control.ros import add_namespace_option

    add_namespace_option(parser, help_text)


def add_refused_namespace(parser: argparse.ArgumentParser, reason: str) -> None:
    """``--namespace`` of a command that cannot honour it: refused in one line with ``reason``
    (instead of argparse's "unrecognized arguments"), whatever the name given; not in the help."""

    class Refused(argparse.Action):
        def __call__(self, parser, _namespace, _values, option_string=None):
            parser.error(f"{option_string}: {reason}")

    parser.add_argument("--namespace", action=Refused, metavar="NAME", help=argparse.SUPPRESS)


def add_graph_switches(parser: argparse.ArgumentParser) -> None:
    """The options both graphs share: namespace, recording and the nodes that may be left out."""
    add_own_robot_namespace(parser)
    parser.add_argument("--record", type=new_folder, default=None, metavar="DIR",
                        help="also record the default topics into a new bag DIR (as humanoid record)")
    parser.add_argument("--no-balance-monitor", dest="balance_monitor", action="store_false",
                        help="do not start the balance monitor (balance_state, fall_state, balance_markers)")
    parser.add_argument("--no-energy-monitor", dest="energy_monitor", action="store_false",
                        help="do not start the energy monitor (energy_state: current, power, energy)")
    parser.add_argument("--no-self-collision-checker", dest="self_collision_checker", action="store_false",
                        help="do not start the self-collision checker (self_collision_state, markers, services)")
    parser.add_argument("--no-gait-controller", dest="gait_controller", action="store_false",
                        help="do not start the gait controller (play_gait; robots with gaits)")
    parser.add_argument("--no-fall-manager", dest="fall_manager", action="store_false",
                        help="do not start the fall manager (fall_manager_state, protective action, get-up)")
    parser.add_argument("--no-odometry", dest="odometry", action="store_false",
                        help="do not start the odometry (odom, /tf; in simulation the ground truth's "
                             "ground_truth/odom and world frame)")
    parser.add_argument("--auto-getup", action=argparse.BooleanOptionalAction, default=None,
                        help="the fall manager gets the robot up by itself once it lies still (default: on in "
                             "simulation, off on the robot)")
    parser.add_argument("--process-per-node", dest="shared_process", action="store_false",
                        help="run each control node in a process of its own instead of one container for all "
                             "(isolation for debugging; costs a process and its memory per node: docs/graph_cost.md)")
    parser.add_argument("--no-self-collision-veto", dest="self_collision_veto", action="store_false",
                        help="let commands that bring two links within the safety distance through "
                             "(the robot interface's self_collision_veto parameter)")
