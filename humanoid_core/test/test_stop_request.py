"""A stop requested by a signal wakes the main thread's wait at once, and never deadlocks
(a threading.Event set by a signal handler can: see stop_request's docstring)."""

from __future__ import annotations

import os
import select
import signal
import threading
import time

import pytest

from humanoid_core.processes import StopRequest, stop_on_signals


def test_a_signal_ends_the_main_threads_wait_at_once():
    with stop_on_signals(signal.SIGUSR1) as stop:
        threading.Timer(0.2, os.kill, (os.getpid(), signal.SIGUSR1)).start()
        start = time.monotonic()
        assert stop.wait(30.0)
        assert time.monotonic() - start < 10.0
    assert signal.getsignal(signal.SIGUSR1) is signal.SIG_DFL  # the previous handler is back


def test_many_signals_during_short_waits_all_return():
    """The main thread waiting in short slices while signals keep coming (the emulator's
    and the view's loops): every wait returns; none hangs on a lock."""
    with stop_on_signals(signal.SIGUSR1) as stop:
        sender = threading.Thread(target=lambda: [os.kill(os.getpid(), signal.SIGUSR1) or time.sleep(0.001)
                                                  for _ in range(200)])
        sender.start()
        waits = 0
        while sender.is_alive() or waits < 10:
            stop.wait(0.001)
            waits += 1
        sender.join()
        assert stop.is_set()


def test_without_a_signal_the_wait_times_out():
    request = StopRequest()
    try:
        start = time.monotonic()
        assert not request.wait(0.05)
        assert time.monotonic() - start >= 0.04
        request.set()
        assert request.wait(0.0) and request.is_set()
    finally:
        request.close()


def test_the_request_wakes_a_select_beside_other_descriptors():
    """A loop waiting on its own input and the request together (the emulator's fault
    commands) wakes when the stop comes, though its input stays silent."""
    silent_read, silent_write = os.pipe()
    request = StopRequest()
    try:
        assert select.select([silent_read, request], [], [], 0.0)[0] == []
        threading.Timer(0.1, request.set).start()
        ready, _, _ = select.select([silent_read, request], [], [], 30.0)
        assert ready == [request] and request.is_set()
    finally:
        request.close()
        os.close(silent_read)
        os.close(silent_write)


def test_a_stop_set_after_close_writes_to_no_descriptor():
    """A closed request's descriptor numbers go to the next file opened: a late set() (a
    reader thread that saw its pipe close) must not write a byte into someone else's stream."""
    request = StopRequest()
    request.close()
    read, write = os.pipe()  # takes the numbers just freed
    try:
        request.set()
        assert request.is_set()
        os.set_blocking(read, False)
        with pytest.raises(BlockingIOError):
            os.read(read, 1)
    finally:
        os.close(read)
        os.close(write)


def test_a_wait_notices_a_request_whose_wake_up_came_late():
    """A signal that arrives just before ``select`` starts waiting runs its handler only once
    ``select`` returns: the request is then known but nothing woke the wait. Stood in for by a
    request flagged without its pipe's byte: ``wait(None)`` still returns, within RECHECK."""
    from humanoid_core.processes import RECHECK

    request = StopRequest()
    try:
        threading.Timer(0.1, setattr, (request, "_requested", True)).start()
        start = time.monotonic()
        assert request.wait(None)
        assert time.monotonic() - start < RECHECK + 5.0
    finally:
        request.close()
