"""Value types for the ``humanoid`` command's options: a bad value is a one-line usage
error (exit 2) at parse time, before anything starts, never a traceback or a graph
that runs forever.

Each function is an ``argparse`` ``type=``: it takes the option's text and returns the
value, or raises ``argparse.ArgumentTypeError`` saying what is expected.
"""

from __future__ import annotations

import argparse
import math
import os
from collections.abc import Callable
from pathlib import Path


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


def _number(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"must be a number, got {text!r}") from None
    if not math.isfinite(value):
        raise argparse.ArgumentTypeError(f"must be a finite number, got {text!r}")
    return value
