"""``humanoid real``: the real robot's graph on its Dynamixel bus (as real.launch.py), or on the
bus emulator, until interrupted or --duration."""

from __future__ import annotations

import argparse
import contextlib
import sys

from humanoid_core import UsageError, integer_in, positive_number, robot_name, serial_device


def add_arguments(parser: argparse.ArgumentParser) -> None:
    from humanoid_bringup.serving import add_graph_switches

    parser.add_argument("--robot", required=True, type=robot_name,
                        help="a robot with a Dynamixel joint map (bioloid, bioloid_quadruped)")
    parser.add_argument("--port", type=serial_device, default=None,
                        help="serial device of the bus (a character device), e.g. /dev/ttyUSB0")
    parser.add_argument("--emulate", action="store_true", help="serve an emulated bus on a pseudo-terminal instead")
    parser.add_argument("--baud", type=integer_in(1), default=None,
                        help="bus speed (default from the robot's bus.yaml)")
    parser.add_argument("--duration", type=positive_number, default=None, help="stop after this many seconds")
    parser.add_argument("--control-rate", type=positive_number, default=None, help="control loop rate, Hz")
    parser.add_argument("--publish-rate", type=positive_number, default=None, help="joint_states rate, Hz")
    add_graph_switches(parser)


def run(args: argparse.Namespace) -> int:
    from humanoid_bringup.graphs import real_nodes
    from humanoid_bringup.serving import free_namespace, serve, with_recorder
    from humanoid_core.processes import Graph
    from humanoid_description import resolve_robot

    if args.emulate == (args.port is not None):
        raise UsageError("give either --port DEVICE (the real bus) or --emulate (the bus emulator)")
    robot = resolve_robot(args.robot)  # once: the graph below asks this object
    if not robot.on_dynamixel_bus:
        raise UsageError(f"robot {robot.name} has no Dynamixel joint map "
                         f"(humanoid_description/robots/{robot.name}/joint_map.yaml): it cannot run on a Dynamixel bus")
    namespace = free_namespace(args.namespace)
    with contextlib.ExitStack() as stack:
        port = args.port
        if args.emulate:
            from humanoid_hw.emulator import emulator_process

            port = stack.enter_context(emulator_process(robot.name, 1, args.baud or 1_000_000, timing=False))
            print(f"humanoid: emulated Dynamixel bus on {port}", file=sys.stderr)
        nodes = real_nodes(robot, port=port, baud=args.baud, control_rate=args.control_rate,
                           publish_rate=args.publish_rate, duration=args.duration,
                           balance_monitor=args.balance_monitor, energy_monitor=args.energy_monitor,
                           self_collision_checker=args.self_collision_checker,
                           self_collision_veto=args.self_collision_veto, gait_controller=args.gait_controller,
                           shared_process=args.shared_process, fall_manager=args.fall_manager,
                           auto_getup=args.auto_getup, odometry=args.odometry, namespace=namespace)
        return serve(Graph(with_recorder(nodes, args.record), echo=True))
