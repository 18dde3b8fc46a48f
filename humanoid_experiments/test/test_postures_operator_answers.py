"""The operator's answers at a terminal: an unknown word is asked again (a person mistyped),
the end of input (Ctrl-D) stops as an abort; piped or scripted, the same word is an error
naming its line (test/test_postures_operator.py runs scripts on the robot)."""

from __future__ import annotations

import io

import pytest

from humanoid_experiments.postures import AnswerError, Operator, OperatorStopError, StreamAnswers


class Terminal(io.StringIO):
    """Text typed at a terminal."""

    def isatty(self) -> bool:
        return True


def test_at_a_terminal_an_unknown_word_is_asked_again_and_the_end_of_input_stops():
    out = io.StringIO()
    operator = Operator(StreamAnswers(Terminal("y\n  Ready \nyes\nFELL\n")), out)
    operator.ready("test 1?", "before test 1")
    assert out.getvalue().count("test 1? [ready/abort]") == 2
    assert "please answer ready or abort" in out.getvalue()
    assert operator.fell("step 1?", "after step 1")
    with pytest.raises(OperatorStopError, match="end of input after step 2: stopped as if aborted"):
        operator.fell("step 2?", "after step 2")


def test_piped_an_unknown_word_is_an_error_naming_its_line():
    operator = Operator(StreamAnswers(io.StringIO("ready\ny\n")), io.StringIO())
    operator.ready("test 1?", "before test 1")
    with pytest.raises(AnswerError, match=r"standard input line 2: 'y' after step 1, where stood, fell or abort"):
        operator.fell("step 1?", "after step 1")
