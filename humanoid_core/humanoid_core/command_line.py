"""Value types and errors of the ``humanoid`` command's options: a bad value is a one-line
usage error (exit 2) at parse time, before anything starts, never a traceback or a graph
that runs forever.

Each value function is an ``argparse`` ``type=``: it takes the option's text and returns
the value, or raises ``argparse.ArgumentTypeError`` saying what is expected. A command that
finds bad input later (a file's content, options that exclude each other) raises
:class:`UsageError`, which the ``humanoid`` command prints as one line with exit status 2.

The command's verbs are registered by the packages that implement them: each names a light
module of its own under the entry point group ``humanoid.verbs``
(:data:`humanoid_core.registrations.VERBS`), whose attribute is
a tuple of :class:`Verb` (nothing heavy imported: ``humanoid --help`` loads every one).
"""

from __future__ import annotations

import argparse
import math
import os
import re
import stat
import tempfile
from collections.abc import Callable
from dataclasses import dataclass
from enum import IntEnum
from pathlib import Path


class UsageError(Exception):
    """Invalid input from the user: printed as one line on stderr, exit status 2."""


class Section(IntEnum):
    """Where a verb is listed in ``humanoid --help`` (in this order)."""

    BRING_UP = 0  #: bring a robot (or its bus) up, or describe it: what a robot's computer runs
    TOOLS = 1  #: around a running robot or a recording: record, plot, view, pose ...
    EXPERIMENTS = 2  #: experiments and benchmarks
    MODEL = 3  #: authoring a robot's model files


@dataclass(frozen=True)
class Verb:
    """One ``humanoid`` verb: the module (and its functions) that implement it, named, not
    imported (only the verb run, or asked for help, is imported)."""

    name: str
    module: str
    help: str
    section: Section
    add: str = "add_arguments"  #: ``add(parser)`` adds the verb's options
    run: str = "run"  #: ``run(args) -> int`` does the work

    @property
    def package(self) -> str:
        return self.module.split(".")[0]


def positive_number(text: str) -> float:
    """A finite number > 0 (durations, rates, hold times)."""
    value = _number(text)
    if not value > 0.0:
        raise argparse.ArgumentTypeError(f"must be a finite number > 0, got {text!r}")
    return value


def finite_number(text: str) -> float:
    """A finite number of any sign (a distance forward or backward)."""
    return _number(text)


def non_negative_number(text: str) -> float:
    """A finite number >= 0 (a real-time factor, where 0 means as fast as possible)."""
    value = _number(text)
    if not value >= 0.0:
        raise argparse.ArgumentTypeError(f"must be a finite number >= 0, got {text!r}")
    return value


def integer_in(low: int, high: int | None = None) -> Callable[[str], int]:
    """An integer in [low, high] (no upper bound when ``high`` is None)."""

    def parse(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"must be an integer, got {text!r}") from None
        if value < low or (high is not None and value > high):
            bounds = f">= {low}" if high is None else f"from {low} to {high}"
            raise argparse.ArgumentTypeError(f"must be an integer {bounds}, got {text!r}")
        return value

    parse.__name__ = "integer"  # argparse names the type in its messages
    return parse


def new_file(text: str) -> Path:
    """A file to write: its folder must exist and take new files, and it must not be a folder."""
    path = Path(text)
    folder = path.parent
    if not folder.is_dir():
        raise argparse.ArgumentTypeError(f"cannot write {text!r}: no folder {str(folder)!r}")
    if path.is_dir():
        raise argparse.ArgumentTypeError(f"cannot write {text!r}: it is a folder")
    _check_writable(text, folder)
    if path.exists() and not os.access(path, os.W_OK):
        raise argparse.ArgumentTypeError(f"cannot write {text!r}: permission denied")
    return path


def file_or_stdout(text: str) -> str:
    """``-`` (standard output) or a file to write (:func:`new_file`)."""
    return text if text == "-" else str(new_file(text))


def new_folder(text: str) -> Path:
    """A folder to write into (made when missing): it must not be a file, and it (or, when
    missing, the nearest folder above it) must take new files."""
    path = Path(text)
    if path.exists() and not path.is_dir():
        raise argparse.ArgumentTypeError(f"{text!r} is a file, not a folder")
    existing = next(folder for folder in (path.absolute(), *path.absolute().parents) if folder.exists())
    _check_writable(text, existing)
    return path


def robot_name(text: str) -> str:
    """A robot the stack knows (a folder of ``humanoid_description/robots/``)."""
    from humanoid_description import ROBOTS

    if text not in ROBOTS:
        raise argparse.ArgumentTypeError(f"unknown robot {text!r} (known robots: {', '.join(ROBOTS)})")
    return text


robot_name.__name__ = "robot"  # argparse names the type in its messages


def new_link(replaceable: Callable[[Path], bool], what: str) -> Callable[[str], Path]:
    """A symbolic link to make: its folder must exist and take new files; a path that exists
    already is refused unless ``replaceable`` says it is a link of ours (``what`` names
    such links in the message), so that no file or link of anyone else is replaced."""

    def parse(text: str) -> Path:
        path = Path(text)
        if not path.parent.is_dir():
            raise argparse.ArgumentTypeError(f"cannot make {text!r}: no folder {str(path.parent)!r}")
        if os.path.lexists(path) and not replaceable(path):
            raise argparse.ArgumentTypeError(f"{text!r} exists and is not {what}: not replacing it")
        _check_writable(text, path.parent)
        return path

    parse.__name__ = "link"
    return parse


def serial_device(text: str) -> str:
    """A serial port: an existing character device (``/dev/ttyUSB0``, a pseudo-terminal, a
    link to one), never a regular file or a folder."""
    try:
        mode = os.stat(text).st_mode
    except FileNotFoundError:
        raise argparse.ArgumentTypeError(f"no such serial device: {text!r}") from None
    except OSError as error:
        raise argparse.ArgumentTypeError(f"cannot use {text!r}: {error.strerror}") from None
    if not stat.S_ISCHR(mode):
        kind = "a folder" if stat.S_ISDIR(mode) else "a regular file" if stat.S_ISREG(mode) else "not a device"
        raise argparse.ArgumentTypeError(f"{text!r} is not a serial device ({kind})")
    return text


def host_and_port(schemes: tuple[str, ...] = ()) -> Callable[[str], str]:
    """A network address ``HOST:PORT``, optionally after one of ``schemes`` (``ray://``)."""
    prefix = f"(?:(?:{'|'.join(map(re.escape, schemes))})://)?" if schemes else ""
    pattern = re.compile(prefix + r"(?P<host>[A-Za-z0-9._-]+|\[[0-9A-Fa-f:.]+\]):(?P<port>[0-9]{1,5})")
    forms = " or ".join([*(f"{scheme}://HOST:PORT" for scheme in schemes), "HOST:PORT"])

    def parse(text: str) -> str:
        match = pattern.fullmatch(text)
        if match is None or not 0 < int(match["port"]) < 65536:
            raise argparse.ArgumentTypeError(f"{text!r} is not an address ({forms}, port 1-65535)")
        return text

    parse.__name__ = "address"
    return parse


def existing_folder(text: str) -> Path:
    """A folder that exists and can be written into (where files are saved)."""
    path = Path(text)
    if not path.is_dir():
        raise argparse.ArgumentTypeError(f"no folder {text!r}" if not path.exists() else f"{text!r} is not a folder")
    if not os.access(path, os.W_OK | os.X_OK):
        raise argparse.ArgumentTypeError(f"cannot write into {text!r}: permission denied")
    return path


def existing_file(text: str) -> Path:
    """A file to read: it must exist and be a file."""
    path = Path(text)
    if not path.is_file():
        raise argparse.ArgumentTypeError(f"no such file: {text!r}" if not path.exists()
                                         else f"not a file: {text!r}")
    return path


def _check_writable(text: str, folder: Path) -> None:
    """Refuse ``text`` unless ``folder`` takes a new file. Only making one tells (permissions,
    a read-only or virtual file system such as /proc, root's rights): a hidden file is made
    there and removed at once."""
    try:
        with tempfile.NamedTemporaryFile(dir=folder, prefix=".humanoid-write-test-"):
            pass
    except OSError as error:
        raise argparse.ArgumentTypeError(f"cannot write {text!r}: the folder {str(folder)!r} takes no new file "
                                         f"({error.strerror or error})") from None


def _number(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"must be a number, got {text!r}") from None
    if not math.isfinite(value):
        raise argparse.ArgumentTypeError(f"must be a finite number, got {text!r}")
    return value
