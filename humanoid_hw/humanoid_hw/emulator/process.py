"""Running the bus emulator as a child process, the way a real bus sits outside the driver."""

from __future__ import annotations

import contextlib
import select
import signal
import subprocess
from collections.abc import Iterator

from humanoid_core.processes import tethered_child


@contextlib.contextmanager
def emulator_process(robot: str, protocol: int = 1, baud: int = 1_000_000, timing: bool = False,
                     start_timeout: float = 60.0) -> Iterator[str]:
    """``humanoid emulate`` in a child process (its own core, like a real bus) that dies with
    this one; yields the port path it prints first, and stops the emulator on exit. ``timing`` emulates the
    wire time of every byte at ``baud``. The emulator leads a session of its own: where the kernel
    schedules by session (autogroup), its raised priority is its session's (``--nice``), not
    shared with this process's work, and not given to it."""
    command, env = tethered_child("humanoid_hw.emulator", ["--robot", robot, "--protocol", str(protocol),
                                                            "--baud", str(baud), *(["--timing"] if timing else [])])
    process = subprocess.Popen(command, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                               text=True, env=env, start_new_session=True)
    try:
        assert process.stdout is not None
        ready, _, _ = select.select([process.stdout], [], [], start_timeout)
        port = process.stdout.readline().strip() if ready else ""
        if not port:
            raise RuntimeError(f"the emulator did not start: {' '.join(command)}")
        yield port
    finally:
        process.send_signal(signal.SIGTERM)
        try:
            process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
