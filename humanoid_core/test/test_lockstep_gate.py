"""The lockstep gate on its own (no ROS): who it waits for, what it reports, and each
participant's answer time in its diagnostics."""

from __future__ import annotations

import threading

import pytest

from humanoid_core.loop import ANSWER_TIMES_KEPT, LockstepGate


class FakeClock:
    """Wall time the test sets."""

    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def answered_in_a_thread(gate: LockstepGate, answers: list[tuple[str, float]]) -> threading.Thread:
    thread = threading.Thread(target=lambda: [gate.answer(name, stamp) for name, stamp in answers])
    thread.start()
    return thread


def test_the_gate_returns_once_every_participant_answered_the_state_published_last():
    gate = LockstepGate(expected=("walk_controller", "balance_monitor"), timeout=5.0)
    gate.published(0.01)
    gate.answer("walk_controller", 0.01)
    waiting = threading.Thread(target=gate.wait, args=(lambda: False,))
    waiting.start()
    waiting.join(0.3)
    assert waiting.is_alive(), "the gate went on without the balance monitor's answer"
    assert gate.status().participants == ("balance_monitor", "walk_controller")
    gate.answer("balance_monitor", 0.01)
    waiting.join(10.0)
    assert not waiting.is_alive()
    assert gate.status().waits == 1


def test_a_silent_participant_is_reported_by_name_and_a_leaving_one_is_not_waited_for():
    clock, reports, reported = FakeClock(), [], threading.Event()
    gate = LockstepGate(expected=("walk_controller", "recorder"), timeout=2.0, clock=clock,
                        report=lambda text: (reports.append(text), reported.set()))
    gate.published(0.5)
    gate.answer("recorder", 0.5)

    def stopping() -> bool:  # each look at the loop moves the wall clock on by 1 s, until the report
        clock.now += 0.0 if reported.is_set() else 1.0
        return False

    leaves = threading.Thread(target=lambda: reported.wait(30.0) and gate.answer("walk_controller", 0.0, leaving=True))
    leaves.start()
    gate.wait(stopping)
    leaves.join()
    assert len(reports) == 1 and "walk_controller" in reports[0] and "recorder" not in reports[0]
    assert gate.status().participants == ("recorder",)
    assert gate.status().reports == 1


def test_each_participants_answer_time_is_the_median_from_publication_to_answer():
    clock = FakeClock()
    gate = LockstepGate(expected=("fast", "slow"), clock=clock)
    for k, (fast_ms, slow_ms) in enumerate([(1.0, 4.0), (2.0, 6.0), (9.0, 5.0)]):
        stamp = 0.01 * (k + 1)
        gate.published(stamp)
        start = clock.now
        for name, ms in sorted([("fast", fast_ms), ("slow", slow_ms)], key=lambda item: item[1]):
            clock.now = start + ms / 1000
            gate.answer(name, stamp)
        gate.wait(lambda: False)
    status = gate.status()
    assert status.answer_times == pytest.approx({"fast": 0.002, "slow": 0.005})
    values = gate.status_entry("humanoid_sim").values
    assert values["answer_ms"] == "fast=2.00,slow=5.00"


def test_answer_times_count_the_first_answer_of_the_state_waited_for_only():
    clock = FakeClock()
    gate = LockstepGate(expected=("walk_controller",), clock=clock)
    gate.published(0.01)
    clock.now += 0.003
    gate.answer("walk_controller", 0.01)
    clock.now += 0.25  # the state sent again: the participant answers it once more
    gate.answer("walk_controller", 0.01)
    gate.answer("walk_controller", 0.005)  # an older state: no answer time
    assert gate.status().answer_times == pytest.approx({"walk_controller": 0.003})
    gate.answer("walk_controller", 0.0, leaving=True)
    assert gate.status().answer_times == {}
    assert "answer_ms" in gate.status_entry("humanoid_sim").values


def test_the_answer_time_is_taken_over_the_latest_answers():
    clock = FakeClock()
    gate = LockstepGate(expected=("walk_controller",), clock=clock)
    for k in range(ANSWER_TIMES_KEPT + 10):
        stamp = 0.01 * (k + 1)
        gate.published(stamp)
        clock.now += 0.050 if k < 10 else 0.002  # slow at first, then fast: the first ones age out
        gate.answer("walk_controller", stamp)
        gate.wait(lambda: False)
    assert gate.status().answer_times["walk_controller"] == pytest.approx(0.002)


def test_answers_from_another_thread_wake_the_waiting_loop():
    gate = LockstepGate(expected=("a", "b"), timeout=5.0)
    gate.published(1.0)
    thread = answered_in_a_thread(gate, [("a", 1.0), ("b", 1.0)])
    gate.wait(lambda: False)
    thread.join()
    assert set(gate.status().answer_times) == {"a", "b"}
