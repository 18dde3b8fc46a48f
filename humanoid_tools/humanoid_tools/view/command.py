"""``humanoid view [--bag BAG] [--host 127.0.0.1] [--port N] [--keyframes-dir DIR]``: the
robot in a browser page.

Prints the page's address (with this run's token, see :mod:`~humanoid_tools.view.access`)
as its first line, then serves until Ctrl-C / SIGTERM. Bound to the loopback interface
unless ``--host`` says otherwise (the page can move the robot)."""

from __future__ import annotations

import argparse
import sys
import threading
from pathlib import Path

from humanoid_control.ros import add_namespace_option
from humanoid_core import UsageError, existing_folder
from humanoid_core.processes import StopRequest, stop_on_signals
from humanoid_tools.recording import check_bag, read_bag

RENDER_PERIOD = 1.0 / 30.0  # s: the page is updated at most 30 times a second


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--bag", type=Path, default=None,
                        help="replay this bag (time slider) instead of showing the running robot")
    parser.add_argument("--host", default="127.0.0.1",
                        help="address to serve the page on (default 127.0.0.1: this computer only; 0.0.0.0: every "
                             "network interface, which lets whoever can reach this computer and has the printed "
                             "address move the robot)")
    parser.add_argument("--port", type=int, default=8080, help="port (default 8080; the next free one if taken; "
                                                               "0: any free port)")
    add_namespace_option(parser)
    parser.add_argument("--keyframes-dir", type=existing_folder, default=Path("."), metavar="DIR",
                        help="the only folder the page's 'save' writes keyframe files into (default: the current "
                             "folder)")
    parser.add_argument("--keyframes", default="poses.yaml", metavar="NAME",
                        help="name of the keyframe file in --keyframes-dir the 'save' button appends to (default "
                             "poses.yaml; changeable in the page, within the folder)")


def run(args: argparse.Namespace) -> int:
    from humanoid_tools.view.access import listen_problem
    from humanoid_tools.view.page_input import KeyframeFolder

    if args.bag is not None:
        check_bag(args.bag)
    if not 0 <= args.port <= 65535:
        raise UsageError(f"--port must be 0..65535, got {args.port}")
    problem = listen_problem(args.host)
    if problem is not None:
        raise UsageError(f"--host: {problem}")
    try:
        KeyframeFolder.at(args.keyframes_dir).file(args.keyframes)
    except ValueError as error:
        raise UsageError(f"--keyframes: {error}") from None
    with stop_on_signals() as stop:
        if args.bag is not None:
            return _replay(args, stop)
        return _live(args, stop)


def _server(args: argparse.Namespace, exposes: str):
    """The page's server, after printing where it is: its address (with the token) first.
    ``exposes``: what the page lets its users do, for the warning of a network-wide ``--host``."""
    from humanoid_tools.view.access import WILDCARD_HOSTS, PageAccess, host_and_port, is_loopback, start_server

    access = PageAccess.for_host(args.host)
    server, bound = start_server(args.host, args.port, access, "humanoid view")
    urls = access.urls()
    print(urls[0], flush=True)
    listening = ", ".join(host_and_port(host, port) for host, port in bound)
    if args.host in WILDCARD_HOSTS:
        print(f"listening on every network interface ({listening}); the page is also at:", flush=True)
        for url in urls[1:]:
            print(url, flush=True)
    else:
        print(f"humanoid view: listening on {listening}", file=sys.stderr, flush=True)
    if not is_loopback(args.host):
        print(f"humanoid view: warning: --host {args.host} is reachable from the network: whoever can reach this "
              f"computer and has the address printed above can {exposes}", file=sys.stderr, flush=True)
    return server


def _replay(args: argparse.Namespace, stop: StopRequest) -> int:
    from humanoid_tools.view.access import stop_server
    from humanoid_tools.view.replay import BagReplay, ReplayPanel
    from humanoid_tools.view.scene import RobotScene

    try:
        replay = read_bag(args.bag, BagReplay)
    except ValueError as error:
        raise UsageError(str(error)) from None
    server = _server(args, "see the recording")
    try:
        scene = RobotScene(server)
        if replay.description is None:
            print("humanoid view: the bag has no robot_description: no robot model to show", file=sys.stderr)
        else:
            scene.load_robot(replay.description)
            print(f"robot loaded: {scene.robot_name} ({len(scene.joint_names)} joints)", flush=True)
        scene.set_margin_history(*replay.margins())
        panel = ReplayPanel(server, replay)
        server.on_client_connect(lambda client: scene.frame_camera({client.client_id: client}))
        shown = None
        while not stop.wait(RENDER_PERIOD):
            t = panel.tick()
            if t != shown:
                scene.show(replay.frame(t))
                shown = t
    finally:
        stop_server(server)
    return 0


def _live(args: argparse.Namespace, stop: StopRequest) -> int:
    from humanoid_tools.view.access import stop_server

    # The page's address first (viser only), then the ROS node; the robot model's libraries
    # (yourdfpy, trimesh, scipy: most of the start-up) load with the first robot_description.
    server = _server(args, "move the robot")
    try:
        import rclpy
        from rclpy.executors import SingleThreadedExecutor
        from rclpy.node import Node
        from rclpy.signals import SignalHandlerOptions

        from humanoid_tools.view.live import LiveSource, PosingPanel
        from humanoid_tools.view.page_input import KeyframeFolder
        from humanoid_tools.view.scene import RobotScene

        context = rclpy.Context()
        rclpy.init(context=context, signal_handler_options=SignalHandlerOptions.NO)
        try:
            scene = RobotScene(server)
            descriptions: list[str] = []
            node = Node("humanoid_view", context=context, namespace=args.namespace, start_parameter_services=False)
            source = LiveSource(node, descriptions.append)
            executor = SingleThreadedExecutor(context=context)
            executor.add_node(node)
            spinner = threading.Thread(target=lambda: _spin(executor, stop), name="ros", daemon=True)
            spinner.start()
            server.on_client_connect(lambda client: scene.frame_camera({client.client_id: client}))
            panel = None
            shown = -1
            while not stop.wait(RENDER_PERIOD):
                if descriptions:
                    description = descriptions.pop()
                    descriptions.clear()
                    scene.load_robot(description)
                    if panel is None:
                        panel = PosingPanel(server, scene, source, KeyframeFolder.at(args.keyframes_dir),
                                            args.keyframes)
                    panel.set_robot(description)
                    print(f"robot loaded: {scene.robot_name} ({len(scene.joint_names)} joints)", flush=True)
                if source.version != shown and scene.robot is not None:
                    shown = source.version
                    frame = source.frame()
                    if frame is not None:
                        scene.show(frame)
                        if panel is not None and not panel.synced:
                            panel.to_measured()
            spinner.join(2.0)
            executor.shutdown()
            node.destroy_node()
        finally:
            rclpy.try_shutdown(context=context)
    finally:
        stop_server(server)
    return 0


def _spin(executor, stop: StopRequest) -> None:
    while not stop.is_set():
        executor.spin_once(timeout_sec=0.1)
