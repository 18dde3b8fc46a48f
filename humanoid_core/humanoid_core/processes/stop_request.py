"""A stop requested by a signal, waited for by the main thread.

A ``threading.Event`` is the obvious tool and deadlocks here: a signal handler runs in
the main thread between two bytecodes, and if the main thread is at that moment inside
``Event.wait`` with the event's lock held (it takes it on entry, before it waits), the
handler's ``Event.set`` waits for that lock for ever. The bus emulator hung like that
after a SIGTERM in CI (three threads asleep, the main one on the lock). A
:class:`StopRequest` is set by assigning a flag and writing a byte to a pipe, which
takes no lock; :meth:`StopRequest.wait` sleeps in ``select`` on that pipe.

The pipe's byte can still come late: CPython runs a Python signal handler between two
bytecodes, so a signal that arrives after the last check before ``select`` and before the
system call itself starts waiting interrupts nothing, and its handler (which writes the
byte) runs only once ``select`` returns, and a waiter with no other wake-up sleeps for
ever. A clean-clone run saw the bus emulator (its standard input closed) not exit within
60 s of a SIGTERM, which this explains (not shown to be it: not reproduced in 80 runs of the
test beside three busy processes). Waits therefore look again every :data:`RECHECK`
seconds, when the handler has had its chance.
"""

from __future__ import annotations

import contextlib
import os
import select
import signal
import time
from collections.abc import Iterator

#: s: longest a wait sleeps before it looks again (a signal's handler may have been held back).
RECHECK = 1.0


class StopRequest:
    """A flag a signal handler sets and the main thread waits for."""

    def __init__(self) -> None:
        self._requested = False
        self._read, self._write = os.pipe()
        os.set_blocking(self._write, False)

    def set(self, *_signal_args: object) -> None:
        """Request the stop (usable as a signal handler); after :meth:`close`, only the flag."""
        self._requested = True
        if self._write < 0:  # closed: its descriptor number may belong to another file by now
            return
        with contextlib.suppress(OSError):  # the pipe is full: a wake-up is pending anyway
            os.write(self._write, b"\0")

    def is_set(self) -> bool:
        return self._requested

    def fileno(self) -> int:
        """Readable once the stop is requested: ``select`` on it beside other descriptors."""
        return self._read

    def wait(self, timeout: float | None) -> bool:
        """Sleep until the stop is requested or ``timeout`` seconds pass (None: no limit);
        whether it was."""
        deadline = None if timeout is None else time.monotonic() + timeout
        while not self._requested:
            left = RECHECK if deadline is None else min(RECHECK, deadline - time.monotonic())
            if left <= 0.0:
                break
            select.select([self._read], [], [], left)
        return self._requested

    def close(self) -> None:
        descriptors, self._read, self._write = (self._read, self._write), -1, -1
        for fd in descriptors:
            with contextlib.suppress(OSError):
                os.close(fd)


@contextlib.contextmanager
def stop_on_signals(*signals: int) -> Iterator[StopRequest]:
    """A :class:`StopRequest` set by ``signals`` while the block runs (default: SIGINT and
    SIGTERM); the previous handlers come back afterwards. Outside the main thread, where
    Python installs no handlers, the request is only set by calling it."""
    request = StopRequest()
    previous = {}
    for number in signals or (signal.SIGINT, signal.SIGTERM):
        with contextlib.suppress(ValueError):  # not the main thread
            previous[number] = signal.signal(number, request.set)
    try:
        yield request
    finally:
        for number, handler in previous.items():
            signal.signal(number, handler)
        request.close()
