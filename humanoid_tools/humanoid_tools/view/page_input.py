"""What the page may ask of the server, checked on the server: whatever a page sends is
untrusted (a page's script can send any value, not only what its widgets allow).

- :class:`JointTargets`: a slider value becomes a joint command only when it is a finite
  number of degrees within the joint's limits, as the robot interface's validator judges
  it (one implementation); anything else is refused, never clamped: a value from outside
  the slider's range is not what the user pointed at.
- :class:`KeyframeFolder`: the page names a keyframe file only inside the one folder chosen
  on the command line (``--keyframes-dir``).
- :func:`report_page_errors`: an exception raised while viser reads a page's message (a
  value it cannot convert, a message it cannot decode) is one line in the log, not a
  traceback.
"""

from __future__ import annotations

import asyncio
import logging
import math
import sys
from dataclasses import dataclass
from pathlib import Path

KEYFRAME_SUFFIXES = (".yaml", ".yml")


class JointTargets:
    """Slider values (degrees) checked against the joint limits of the robot's URDF. (The
    validator's modules load here, once a robot is known: the page is served before.)"""

    def __init__(self, urdf: str) -> None:
        from humanoid_core.loop import CommandValidator
        from humanoid_description import urdf_joint_table

        self.validator = CommandValidator(urdf_joint_table(urdf))

    def radians(self, joint: str, degrees: object) -> float:
        """The target of ``joint`` in radians; :class:`CommandRejectedError` saying why not."""
        from humanoid_core.loop import CommandRejectedError, ErrorCode

        if isinstance(degrees, bool) or not isinstance(degrees, int | float):
            raise CommandRejectedError(ErrorCode.INVALID_GOAL, f"joint {joint}: {degrees!r} is not a number")
        setpoint = self.validator.setpoint([joint], [math.radians(degrees)], clamp=False)
        return float(setpoint.positions[0])


@dataclass(frozen=True)
class KeyframeFolder:
    """The folder the page's "save" writes keyframe files into, and nowhere else."""

    path: Path  # absolute, symbolic links resolved

    @classmethod
    def at(cls, folder: Path) -> KeyframeFolder:
        return cls(folder.expanduser().resolve())

    def file(self, name: object) -> Path:
        """The keyframe file called ``name`` in the folder; ValueError saying why not: a path
        rather than a name (absolute, with a folder, ``..``), not ``.yaml``/``.yml``, a
        symbolic link leading out of the folder, or something other than a regular file."""
        if not isinstance(name, str) or not name.strip():
            raise ValueError("give the keyframe file's name")
        if "/" in name or "\\" in name or "\0" in name or name in (".", ".."):
            raise ValueError(f"{name!r} is not a file name: give a name of a file in {self.path}, without a folder")
        if Path(name).suffix.lower() not in KEYFRAME_SUFFIXES:
            raise ValueError(f"{name!r} is not a keyframe file name ({' or '.join(KEYFRAME_SUFFIXES)})")
        target = (self.path / name).resolve()
        if target.parent != self.path:
            raise ValueError(f"{name!r} is a symbolic link leading out of {self.path}")
        if target.exists() and not target.is_file():
            raise ValueError(f"{name!r} is not a regular file")
        return target


def report_page_errors(loop: asyncio.AbstractEventLoop) -> None:
    """Make an exception of viser's handling of a page's message one line on stderr: one
    raised in a message's task on ``loop`` (the message is dropped, the server goes on), and
    one that ends a connection (a frame viser cannot decode: websockets closes it and logs
    it). Any other exception of ``loop`` keeps its traceback."""

    def handle(loop: asyncio.AbstractEventLoop, context: dict) -> None:
        task, error = context.get("future"), context.get("exception")
        coroutine = task.get_coro() if isinstance(task, asyncio.Task) else None
        if error is not None and "_handle_incoming_message" in getattr(coroutine, "__qualname__", ""):
            print(f"humanoid view: a message from the page was refused: {_describe(error)}", file=sys.stderr,
                  flush=True)
            return
        loop.default_exception_handler(context)

    loop.set_exception_handler(handle)
    logger = logging.getLogger("websockets.server")
    if not any(isinstance(f, _OneLine) for f in logger.filters):
        logger.addFilter(_OneLine())


class _OneLine(logging.Filter):
    """A websockets log record with an exception (a connection viser's handler ended on an
    undecodable message) as one line."""

    def filter(self, record: logging.LogRecord) -> bool:
        error = record.exc_info[1] if record.exc_info else None
        if error is not None:
            record.msg = "humanoid view: a message from the page was refused, connection closed: %s"
            record.args = (_describe(error),)
            record.exc_info, record.exc_text = None, None
        return True


def _describe(error: BaseException) -> str:
    return f"{type(error).__name__}: {error}" if str(error) else type(error).__name__
