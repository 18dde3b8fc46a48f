"""``humanoid view [--bag BAG] [--host 127.0.0.1] [--port N]``: the robot in a browser page.

Prints the page's URL as its first line, then serves until Ctrl-C / SIGTERM. Bound to the
loopback interface unless ``--host`` says otherwise (the page can move the robot)."""

from __future__ import annotations

import argparse
import sys
import threading
from pathlib import Path

from humanoid_control.command_line import UsageError
from humanoid_control.processes.stop_request import StopRequest, stop_on_signals

RENDER_PERIOD = 1.0 / 30.0  # s: the page is updated at most 30 times a second


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--bag", type=Path, default=None,
                        help="replay this bag (time slider) instead of showing the running robot")
    parser.add_argument("--host", default="127.0.0.1",
                        help="address to serve the page on (default 127.0.0.1: this computer only)")
    parser.add_argument("--port", type=int, default=8080, help="port (default 8080; the next free one if taken; "
                                                               "0: any free port)")
    parser.add_argument("--keyframes", type=Path, default=Path("poses.yaml"),
                        help="keyframe file the 'save' button appends to (default poses.yaml; changeable in the page)")


def run(args: argparse.Namespace) -> int:
    if args.bag is not None and not (args.bag / "metadata.yaml").is_file():
        raise UsageError(f"{args.bag} is not a bag (no metadata.yaml)")
    if not 0 <= args.port <= 65535:
        raise UsageError(f"--port must be 0..65535, got {args.port}")
    with stop_on_signals() as stop:
        if args.bag is not None:
            return _replay(args, stop)
        return _live(args, stop)


def _server(args: argparse.Namespace):
    import contextlib

    import viser

    with contextlib.redirect_stdout(sys.stderr):  # viser's banner: the URL must be the first line of stdout
        server = viser.ViserServer(host=args.host, port=args.port, label="humanoid view", verbose=False)
    host = "127.0.0.1" if args.host in ("0.0.0.0", "") else args.host
    print(f"http://{host}:{server.get_port()}/", flush=True)
    return server


def _replay(args: argparse.Namespace, stop: StopRequest) -> int:
    from humanoid_tools.view.replay import BagReplay, ReplayPanel
    from humanoid_tools.view.scene import RobotScene

    try:
        replay = BagReplay(args.bag)
    except ValueError as error:
        raise UsageError(str(error)) from None
    server = _server(args)
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
        server.stop()
    return 0


def _live(args: argparse.Namespace, stop: StopRequest) -> int:
    import rclpy
    from rclpy.executors import SingleThreadedExecutor
    from rclpy.node import Node
    from rclpy.signals import SignalHandlerOptions

    from humanoid_tools.view.live import LiveSource, PosingPanel
    from humanoid_tools.view.scene import RobotScene

    server = _server(args)
    context = rclpy.Context()
    rclpy.init(context=context, signal_handler_options=SignalHandlerOptions.NO)
    try:
        scene = RobotScene(server)
        descriptions: list[str] = []
        node = Node("humanoid_view", context=context, start_parameter_services=False)
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
                scene.load_robot(descriptions.pop())
                descriptions.clear()
                if panel is None:
                    panel = PosingPanel(server, scene, source, args.keyframes)
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
        server.stop()
    return 0


def _spin(executor, stop: StopRequest) -> None:
    while not stop.is_set():
        executor.spin_once(timeout_sec=0.1)
