"""``humanoid sim``: the simulated robot's graph (:func:`humanoid_sim.graphs.sim_nodes`, as
sim.launch.py) until interrupted or --duration, served as ``humanoid real`` serves the real
robot's (:mod:`humanoid_bringup.serving`)."""

from __future__ import annotations

import argparse

from humanoid_core import UsageError, non_negative_number, positive_number, robot_name
from humanoid_sim import params_file, physics_profiles


def add_arguments(parser: argparse.ArgumentParser) -> None:
    from humanoid_bringup import add_graph_switches

    parser.add_argument("--robot", required=True, type=robot_name, help="the robot to simulate")
    parser.add_argument("--duration", type=positive_number, default=None,
                        help="stop after this many seconds of simulated time (default: run until interrupted)")
    parser.add_argument("--gui", action="store_true", help="show the PyBullet window (needs a display)")
    parser.add_argument("--real-time-factor", type=non_negative_number, default=None,
                        help="1 = real time (the default without --lockstep), 2 = twice as fast, 0 = as fast as "
                        "possible (the default with --lockstep)")
    parser.add_argument("--lockstep", action="store_true",
                        help="advance the simulation one control period only when every lockstep participant "
                        "(the graph's controllers, the recorder, and any node that answers on lockstep/ready: "
                        "README, Lockstep) has answered the last state: as fast as they go, the same run twice")
    parser.add_argument("--lockstep-participant", action="append", default=[], metavar="NODE",
                        help="with --lockstep: a node the simulation waits for from its first state on (a node "
                        "not named joins with its first answer); repeatable")
    parser.add_argument("--count", type=robot_count, default=1, metavar="N",
                        help="N robots in one physics world, each with its graph in a namespace of its own "
                        "(/ROBOT_1 ... /ROBOT_N, or NAME_1 ... with --namespace NAME); they can touch each other, "
                        f"and the world steps when every robot has (default 1; at most {MAX_COUNT})")
    parser.add_argument("--spacing", type=positive_number, default=None, metavar="M",
                        help="with --count: metres between neighbouring robots along the world's y axis "
                        "(default 0.5)")
    parser.add_argument("--control-rate", type=positive_number, default=None, help="control loop rate, Hz")
    parser.add_argument("--publish-rate", type=positive_number, default=None, help="joint_states rate, Hz")
    physics_profiles.add_argument(parser)
    params_file.add_argument(parser)
    add_graph_switches(parser)


#: Robots one world may hold (a choice): each brings its graph, a control container of about
#: 0.15-0.2 GB resident, and 1.1-1.3 CPU-s per simulated second while it trots (humanoid bench
#: world): eight fill 1.5 GB and run at about a fifth of real time on 2 cores.
MAX_COUNT = 8


def robot_count(text: str) -> int:
    """``--count``: a whole number from 1 to :data:`MAX_COUNT`."""
    try:
        count = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a whole number") from None
    if not 1 <= count <= MAX_COUNT:
        raise argparse.ArgumentTypeError(f"{count} robots: a world holds 1 to {MAX_COUNT}")
    return count


def run(args: argparse.Namespace) -> int:
    from humanoid_bringup import RECORDER_NODE, free_namespace, serve, with_recorder
    from humanoid_core.processes import Graph
    from humanoid_description import resolve_robot
    from humanoid_sim.graphs import sim_nodes

    if args.lockstep_participant and not args.lockstep:
        raise UsageError("--lockstep-participant needs --lockstep")
    robot = resolve_robot(args.robot)  # once: the checks and the graph below ask this object
    physics = physics_profiles.chosen(robot, args.physics)
    params = params_file.chosen(robot, args.params)
    recording = args.lockstep and args.record is not None
    if args.spacing is not None and args.count == 1:
        raise UsageError("--spacing needs --count above 1")
    if args.count > 1 and args.record is not None:
        raise UsageError("--record records one robot: record each robot of a world with humanoid record "
                         "--namespace NAME")
    if args.count == 1:
        namespace = free_namespace(args.namespace)
    else:
        from humanoid_sim import world_namespaces

        namespace = args.namespace
        for each in world_namespaces(robot.name, namespace, args.count):
            free_namespace(each)
    nodes = sim_nodes(robot, gui=args.gui, real_time_factor=args.real_time_factor,
                      control_rate=args.control_rate, publish_rate=args.publish_rate, duration=args.duration,
                      balance_monitor=args.balance_monitor, energy_monitor=args.energy_monitor,
                      self_collision_checker=args.self_collision_checker,
                      self_collision_veto=args.self_collision_veto, gait_controller=args.gait_controller,
                      physics_profile=physics, params_file=params, lockstep=args.lockstep,
                      shared_process=args.shared_process, fall_manager=args.fall_manager,
                      auto_getup=args.auto_getup, odometry=args.odometry, namespace=namespace,
                      count=args.count, spacing=args.spacing,
                      participants=(*args.lockstep_participant,
                                    *((RECORDER_NODE,) if recording and not args.shared_process else ())))
    return serve(Graph(with_recorder(nodes, args.record, lockstep=args.lockstep), echo=True))
