"""The README's lockstep example (docs/examples/lockstep_node.py), run as users run it beside
``humanoid sim --lockstep``: the simulation waits for it from the start when it is named a
participant, runs while it answers, stands still while it is stopped (SIGSTOP: its answer
held), and goes on without it once it has left (Ctrl-C)."""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest
from sensor_msgs.msg import JointState

from humanoid_control.ros import RobotClient, poll_until, seconds
from humanoid_core.processes import is_running

pytestmark = pytest.mark.system

EXAMPLE = Path(__file__).resolve().parents[1] / "docs" / "examples" / "lockstep_node.py"
PATIENCE = 120.0
#: The simulation sends the state it waits at again every 0.25 s (wall): this many copies of
#: one stamp in a row, with nothing newer, show it standing still.
STILL = 4


@contextlib.contextmanager
def started(command: list[str]) -> Iterator[subprocess.Popen]:
    """A process (and its session) that is killed at the end if still there."""
    log = tempfile.TemporaryFile("w+")  # noqa: SIM115 - closed below
    process = subprocess.Popen(command, stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
    try:
        yield process
    except BaseException:
        log.seek(0)
        print(f"----- output of {' '.join(command)} -----\n{log.read()[-4000:]}")
        raise
    finally:
        if is_running(process.pid):
            os.killpg(process.pid, signal.SIGKILL)
        process.wait(PATIENCE)
        log.close()


class Stamps:
    """The stamps of the joint_states messages the simulation sends, as they come."""

    def __init__(self, client: RobotClient) -> None:
        self.seen: list[float] = []
        client.node.create_subscription(JointState, "joint_states",
                                        lambda msg: self.seen.append(seconds(msg.header.stamp)), 100)

    def standing_still(self) -> float:
        """Wait until the simulation has sent one state STILL times in a row, nothing newer: its stamp."""
        self.seen.clear()

        def still() -> float | None:
            last = self.seen[-STILL:]
            return last[-1] if len(last) == STILL and len(set(last)) == 1 else None

        return poll_until(still, "the simulation standing still (the same state sent again and again)", PATIENCE)


def test_the_readme_shows_the_example_whole():
    assert f"```python\n{EXAMPLE.read_text()}```" in (EXAMPLE.parents[2] / "README.md").read_text()


def test_the_readme_example_holds_the_simulation_while_it_holds_its_answer():
    sim = ["humanoid", "sim", "--robot", "bioloid", "--lockstep", "--lockstep-participant", "my_controller"]
    with started(sim), RobotClient("lockstep_example_observer") as client:
        stamps = Stamps(client)
        client.wait_for_joint_states(PATIENCE)
        first = stamps.standing_still()  # named up front: nothing runs before the example answers
        with started([sys.executable, str(EXAMPLE)]) as example:
            client.wait_until(first + 1.0, PATIENCE)  # it answers: the simulation runs with it

            example.send_signal(signal.SIGSTOP)  # its answer to the next state never comes
            held = stamps.standing_still()
            stamps.seen.clear()
            poll_until(lambda: len(stamps.seen) >= STILL, f"{STILL} more joint_states", PATIENCE)
            assert set(stamps.seen) == {held}  # robot time does not advance while it holds

            example.send_signal(signal.SIGCONT)
            client.wait_until(held + 1.0, PATIENCE)  # and runs on once it answers again

            example.send_signal(signal.SIGINT)  # Ctrl-C: it leaves, and exits
            assert example.wait(PATIENCE) == 0
            gone = client.now()
            client.wait_until(gone + 1.0, PATIENCE)  # the simulation goes on without it
