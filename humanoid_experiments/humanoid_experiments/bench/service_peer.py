"""The two sides of ``humanoid bench service-answers``, each run as its own process:

- ``server``: one node answering ``std_srvs/Trigger`` on ``--service`` until SIGTERM;
- ``client``: a fresh node that waits for ``--service``, calls it once, and prints one line:
  ``answered SECONDS``, ``lost`` (no answer within the patience) or ``unavailable`` (the
  service was not discovered within the patience);
- ``hog``: spins on the CPU until killed (the load beside which the clients start).
"""

from __future__ import annotations

import argparse
import os
import signal
import sys
import threading
import time


def serve(service: str) -> int:
    import rclpy
    from rclpy.node import Node
    from std_srvs.srv import Trigger

    def answer(_request: Trigger.Request, response: Trigger.Response) -> Trigger.Response:
        response.success = True
        return response

    rclpy.init(signal_handler_options=rclpy.signals.SignalHandlerOptions.NO)
    stop = threading.Event()
    signal.signal(signal.SIGTERM, lambda *_: stop.set())
    node = Node("bench_service_server")
    node.create_service(Trigger, service, answer)
    print("serving", flush=True)
    while not stop.is_set():
        rclpy.spin_once(node, timeout_sec=0.1)
    node.destroy_node()
    rclpy.try_shutdown()
    return 0


def call_once(service: str, patience: float) -> str:
    import rclpy
    from rclpy.executors import SingleThreadedExecutor
    from rclpy.node import Node
    from std_srvs.srv import Trigger

    rclpy.init()
    node = Node(f"bench_service_client_{os.getpid()}")
    client = node.create_client(Trigger, service)
    executor = SingleThreadedExecutor()
    executor.add_node(node)
    threading.Thread(target=executor.spin, daemon=True).start()
    if not client.wait_for_service(timeout_sec=patience):
        return "unavailable"
    answered = threading.Event()
    start = time.perf_counter()
    client.call_async(Trigger.Request()).add_done_callback(lambda _future: answered.set())
    if not answered.wait(patience):
        return "lost"
    return f"answered {time.perf_counter() - start:.4f}"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("role", choices=("server", "client", "hog"))
    parser.add_argument("--service", default="/bench/ping", help="the service's name (/bench/ping)")
    parser.add_argument("--patience", type=float, default=20.0, help="client: s to wait for the service and for "
                                                                      "its answer (20)")
    args = parser.parse_args(argv)
    if args.role == "hog":
        while True:
            pass
    if args.role == "server":
        return serve(args.service)
    print(call_once(args.service, args.patience), flush=True)
    os._exit(0)  # the executor's thread is still spinning; the answer is out


if __name__ == "__main__":
    sys.exit(main())
