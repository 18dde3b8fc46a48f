"""``humanoid ARGS`` run through the command's entry point in the test's own process (no
interpreter start, no imports paid again per run), for tests whose property is the
command's output, not its process: its exit status and what it wrote to the standard
output and error, captured at the file descriptors (what a library prints from C too)."""

from __future__ import annotations

import contextlib
import gc
import os
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path


@contextlib.contextmanager
def one_collection() -> Iterator[None]:
    """Runs of the entry point in a row, each collecting only what the runs before it left:
    the objects alive at the start are collected once, then frozen (``gc.freeze``) until the
    end. A full collection of a test worker's heap costs about 0.1 s; the bad-input table
    (168 cases) paid it each time."""
    gc.collect()
    gc.freeze()
    try:
        yield
    finally:
        gc.unfreeze()


def entry_point(*args: str | Path, input: str = "") -> subprocess.CompletedProcess:
    """``humanoid ARGS`` in this process, as a ``CompletedProcess`` (the status ``main`` returned);
    ``input`` is its standard input (``subprocess.run``'s ``input``), at the descriptor and as
    ``sys.stdin``."""
    from humanoid_bringup import main

    words = [str(a) for a in args]
    # what earlier tests left for the garbage collector prints before the command's output is
    # captured (rclpy prints a future's exception nobody retrieved when the future is collected)
    gc.collect()  # inside ``one_collection``: only what was made since it began
    with tempfile.TemporaryFile("w+") as out, tempfile.TemporaryFile("w+") as err, \
            tempfile.TemporaryFile("w+") as stdin:
        stdin.write(input)
        stdin.seek(0)
        saved = [os.dup(fd) for fd in (0, 1, 2)]
        saved_stdin = sys.stdin
        sys.stdout.flush()
        sys.stderr.flush()
        try:
            for source, fd in ((stdin, 0), (out, 1), (err, 2)):
                os.dup2(source.fileno(), fd)
            sys.stdin = stdin
            with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
                code = main(words)
        finally:
            sys.stdin = saved_stdin
            sys.stdout.flush()
            sys.stderr.flush()
            for fd, copy in zip((0, 1, 2), saved, strict=True):
                os.dup2(copy, fd)
                os.close(copy)
        out.seek(0)
        err.seek(0)
        return subprocess.CompletedProcess(["humanoid", *words], code, out.read(), err.read())
