"""The local Ray instance is started again when Ray's own start-up wait runs out.

Ray gives its raylet 30 s (fixed in its code) to register with its GCS; on a machine busy
with other work a fit's start missed it ("The current node timed out during startup") and
the whole command failed. The start is tried again after what it left running is killed,
up to ``START_ATTEMPTS``, and said on stderr; any other error ends it at once. Ray itself
cannot be made to miss its wait on demand: the rule is checked here with stand-ins for
``ray.init`` and the cleaning, the instance's real start by test_local_ray.py."""

from __future__ import annotations

import pytest

from humanoid_experiments import START_ATTEMPTS, STARTUP_TIMEOUT_WORDS, started_again

#: Ray's words when its wait runs out (ray/_private/node.py).
RAY_TIMEOUT = Exception("The current node timed out during startup. This could happen because some of the raylet "
                        "failed to startup or the GCS has become overloaded.")


def failing(times: int, error: Exception) -> tuple[list[str], callable, callable]:
    calls: list[str] = []

    def init() -> None:
        calls.append("init")
        if calls.count("init") <= times:
            raise error

    return calls, init, lambda: calls.append("clean")


def test_a_start_that_missed_ray_s_wait_is_cleaned_and_tried_again(capsys):
    assert STARTUP_TIMEOUT_WORDS in str(RAY_TIMEOUT)
    calls, init, clean = failing(1, RAY_TIMEOUT)
    started_again(init, clean)
    assert calls == ["init", "clean", "init"]
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "did not start in time" in err and f"(2 of {START_ATTEMPTS})" in err


def test_the_last_attempt_s_error_is_raised():
    calls, init, clean = failing(START_ATTEMPTS, RAY_TIMEOUT)
    with pytest.raises(Exception, match=STARTUP_TIMEOUT_WORDS):
        started_again(init, clean)
    assert calls.count("init") == START_ATTEMPTS and calls.count("clean") == START_ATTEMPTS - 1


def test_another_error_is_raised_at_once():
    calls, init, clean = failing(1, ValueError("num_cpus must be positive"))
    with pytest.raises(ValueError, match="num_cpus"):
        started_again(init, clean)
    assert calls == ["init"]
