"""Value types and errors of the ``humanoid`` command's options: a bad value is a one-line
usage error (exit 2) at parse time, before anything starts, never a traceback or a graph
that runs forever.

Each value function is an ``argparse`` ``type=``: it takes the option's text and returns
the value, or raises ``argparse.ArgumentTypeError`` saying what is expected. A command that
finds bad input later (a file's content, options that exclude each other) raises
:class:`UsageError`, which the ``humanoid`` command prints as one line with exit status 2.
"""

from __future__ import annotations

import argparse
import math
import os
from collections.abc import Callable
from pathlib import Path


class UsageError(Exception):
    """Invalid input from the user: printed as one line on stderr, exit status 2."""


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
    """A file to write: its folder must exist and be writable, and it must not be a folder."""
    path = Path(text)
    folder = path.parent
    if not folder.is_dir():
        raise argparse.ArgumentTypeError(f"cannot write {text!r}: no folder {str(folder)!r}")
    if path.is_dir():
        raise argparse.ArgumentTypeError(f"cannot write {text!r}: it is a folder")
    if not os.access(folder, os.W_OK) or (path.exists() and not os.access(path, os.W_OK)):
        raise argparse.ArgumentTypeError(f"cannot write {text!r}: permission denied")
    return path


def new_folder(text: str) -> Path:
    """A folder to write into (made when missing): it must not be a file."""
    path = Path(text)
    if path.exists() and not path.is_dir():
        raise argparse.ArgumentTypeError(f"{text!r} is a file, not a folder")
    return path


def output_file(text: str) -> str:
    """``-`` (standard output) or a file that can be written (:func:`new_file`)."""
    return text if text == "-" else str(new_file(text))


def robot_name(text: str) -> str:
    """A robot the stack knows (a folder of ``humanoid_description/robots/``)."""
    from humanoid_description.robots import ROBOTS

    if text not in ROBOTS:
        raise argparse.ArgumentTypeError(f"unknown robot {text!r} (known robots: {', '.join(ROBOTS)})")
    return text


robot_name.__name__ = "robot"  # argparse names the type in its messages


def existing_file(text: str) -> Path:
    """A file to read: it must exist and be a file."""
    path = Path(text)
    if not path.is_file():
        raise argparse.ArgumentTypeError(f"no such file: {text!r}" if not path.exists()
                                         else f"not a file: {text!r}")
    return path


def _number(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"must be a number, got {text!r}") from None
    if not math.isfinite(value):
        raise argparse.ArgumentTypeError(f"must be a finite number, got {text!r}")
    return value
