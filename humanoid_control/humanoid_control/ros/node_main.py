"""The ``main()`` of a control-layer node: one node in its own process, spun until a signal.

Every control-layer node (balance monitor, self-collision checker, trajectory generator,
...) starts and stops the same way, so that `humanoid sim`, `humanoid real` and the launch
files can rely on it: exit 1 with one fatal log line when its parameters or robot are
wrong, exit 0 on SIGINT/SIGTERM (and SIGHUP, made a SIGTERM), including when the signal shuts the context down while
the node is still starting or under a spinning executor (rclpy then raises from inside
the executor, which is not a failure).
"""

from __future__ import annotations

import threading
from collections.abc import Callable

import rclpy
from rclpy.executors import Executor, ExternalShutdownException
from rclpy.node import Node

from humanoid_control.processes.process_lifetime import hang_up_like_terminate
from humanoid_description.robots import UnknownRobotError


def run_node(name: str, build: Callable[[Node], object], make_executor: Callable[[], Executor],
             args: list[str] | None = None) -> int:
    """Create node ``name``, let ``build`` give it its behaviour, spin it; the exit code."""
    rclpy.init(args=args)
    hang_up_like_terminate()
    node = Node(name)
    stopping = threading.Event()
    node.context.on_shutdown(stopping.set)
    try:
        build(node)
        executor = make_executor()
        executor.add_node(node)
        while rclpy.ok():  # not executor.spin(): rclpy's EventsExecutor does not return at shutdown
            executor.spin_once(timeout_sec=0.1)
        return 0
    except (ValueError, UnknownRobotError) as error:
        node.get_logger().fatal(f"cannot start: {error}")
        return 1
    except (KeyboardInterrupt, ExternalShutdownException):
        return 0
    except Exception:
        if stopping.wait(1.0) or not rclpy.ok():  # a signal shut the context down under the node
            return 0
        raise
    finally:
        node.destroy_node()
        rclpy.try_shutdown()
