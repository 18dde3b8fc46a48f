"""``python -m humanoid_control.processes.run_tethered MODULE [ARGS...]``: run MODULE as ``__main__``
in a process that dies with its launcher and shuts down cleanly on SIGHUP.

How :class:`~humanoid_control.processes.node_graph.Graph` starts every node (see
:mod:`humanoid_control.processes.process_lifetime`): the launcher passes its process ID in
``HUMANOID_LAUNCHER_PID``; when the launcher is already gone, MODULE is not run at all.
"""

from __future__ import annotations

import os
import runpy
import sys

from humanoid_control.processes.process_lifetime import LAUNCHER_PID_VARIABLE, die_with_parent, hang_up_like_terminate


def main() -> int:
    if len(sys.argv) < 2:
        print("usage: python -m humanoid_control.processes.run_tethered MODULE [ARGS...]", file=sys.stderr)
        return 2
    module, arguments = sys.argv[1], sys.argv[2:]
    launcher = os.environ.get(LAUNCHER_PID_VARIABLE)
    if not die_with_parent(int(launcher) if launcher else None):
        print(f"{module}: its launcher (process {launcher}) is gone: not started", file=sys.stderr)
        return 1
    hang_up_like_terminate()
    sys.argv = [module, *arguments]
    runpy.run_module(module, run_name="__main__", alter_sys=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
