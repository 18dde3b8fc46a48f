"""``python -m humanoid_core.processes.run_tethered MODULE [ARGS...]``: run MODULE as ``__main__``
in a process that dies with its launcher and shuts down cleanly on SIGHUP.

``python -m humanoid_core.processes.run_tethered --exec PROGRAM [ARGS...]``: the same tether for
any program (robot_state_publisher, RViz, ``ros2 bag``): the process asks for the
parent-death signal, then replaces itself with PROGRAM, which keeps it (Linux keeps it
across ``execve``; a program's SIGHUP handling is its own). ``--exec-node`` does the same
for a node of this stack (its console script). The launch files start every process
through it (``launch_ros``'s ``prefix``).

A node of this stack (MODULE, ``--exec-node``) ignores SIGINT until it installs its own
stop handling (:func:`humanoid_control.ros.node_main.run_node`, the driver's rclpy, the
recorder's): a Ctrl-C that reaches it while its modules load (a ``ros2 launch`` sends it
to every process) would otherwise raise KeyboardInterrupt there and print a traceback.
Such a node is stopped by SIGTERM, which the launchers send next. SIGUSR1 makes a MODULE's
process print every thread's stack (Python's ``faulthandler``) and go on.

How :class:`~humanoid_core.processes.node_graph.Graph` starts every node (see
:mod:`humanoid_core.processes.process_lifetime`): the launcher passes its process ID in
``HUMANOID_LAUNCHER_PID``; when the launcher is already gone, MODULE is not run at all.
"""

from __future__ import annotations

import signal

signal.signal(signal.SIGINT, signal.SIG_IGN)  # first: the imports below take time (see above)

import faulthandler  # noqa: E402

# SIGUSR1 prints where every thread of the process is (Graph.thread_stacks: a test whose graph
# stopped answering says where each node was). An --exec program loses the handler at exec.
faulthandler.register(signal.SIGUSR1, all_threads=True)

import os  # noqa: E402
import runpy  # noqa: E402
import sys  # noqa: E402

# Before anything imports numpy: one BLAS thread per process. The nodes multiply small
# matrices, where OpenBLAS's worker threads gain nothing, and a worker spins for a while
# after each call it shared: in a lockstep walk the simulation's loop process burned a core
# that way (docs/ros_and_dds.md, "One BLAS thread"). A value the user set wins; --exec
# programs and the processes a node starts inherit it.
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

from humanoid_core.processes.process_lifetime import (  # noqa: E402
    LAUNCHER_PID_VARIABLE,
    die_with_parent,
    hang_up_like_terminate,
)

USAGE = ("usage: python -m humanoid_core.processes.run_tethered MODULE [ARGS...] | --exec PROGRAM [ARGS...] "
         "| --exec-node PROGRAM [ARGS...]")


def main() -> int:
    mode = sys.argv[1] if len(sys.argv) > 1 and sys.argv[1] in ("--exec", "--exec-node") else None
    execute = mode is not None
    if mode == "--exec":  # another program: Ctrl-C as it expects
        signal.signal(signal.SIGINT, signal.SIG_DFL)
    target, arguments = (sys.argv[2:3], sys.argv[3:]) if execute else (sys.argv[1:2], sys.argv[2:])
    if not target:
        print(USAGE, file=sys.stderr)
        return 2
    (target,) = target
    launcher = os.environ.get(LAUNCHER_PID_VARIABLE)
    if not die_with_parent(int(launcher) if launcher else None):
        print(f"{target}: its launcher (process {launcher}) is gone: not started", file=sys.stderr)
        return 1
    if execute:
        try:
            os.execvp(target, [target, *arguments])
        except OSError as error:
            print(f"{target}: cannot run it: {error.strerror}", file=sys.stderr)
            return 127
    hang_up_like_terminate()
    sys.argv = [target, *arguments]
    runpy.run_module(target, run_name="__main__", alter_sys=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
