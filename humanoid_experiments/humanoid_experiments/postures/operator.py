"""The operator of a postures run on the real robot, as on the reference's HOAP-2: ``ready``
before each test (the robot then moves to the test's start pose), and, on a robot without
foot sensors or IMU, ``stood`` or ``fell`` after each step; ``abort`` at any prompt stops the
run where the robot is. Answers are typed on standard input or scripted in a file
(``--answers``), one a line.

A script is checked whole before anything moves (every line one of :data:`ANSWERS`); an
answer that does not fit its question (``stood`` before a test, ``ready`` after a step, no
answer left) is an :class:`AnswerError` naming the file and line: the script is out of step
with the run, so the run stops there, the robot holding its last pose. At a terminal an
unknown word is asked again and the end of input aborts.
"""

from __future__ import annotations

import typing
from collections.abc import Iterator
from pathlib import Path
from typing import TextIO

from humanoid_description import DataFileError, text_lines

READY, STOOD, FELL, ABORT = "ready", "stood", "fell", "abort"
#: Every answer, in the order of a test.
ANSWERS = (READY, STOOD, FELL, ABORT)


class OperatorStopError(RuntimeError):
    """The operator stopped the protocol (real robot)."""


class AnswerError(OperatorStopError):
    """An answer that does not fit its question, or none left: the script is not this run's."""


def _one_of(words: typing.Sequence[str]) -> str:
    return ", ".join(words[:-1]) + f" or {words[-1]}" if len(words) > 1 else words[0]


def read_answers(path: Path) -> list[tuple[str, str]]:
    """A script's answers with where each is (``file:line``); DataFileError (a ValueError)
    for an unreadable file, a line that is not an answer, or no answer at all."""
    answers = []
    for number, line in text_lines(path):
        answer = line.strip().lower()
        if answer not in ANSWERS:
            raise DataFileError(path, f"{line.strip()!r} is not an answer ({_one_of(ANSWERS)}, one a line)"
                                if line.strip() else f"an empty line: one answer a line ({_one_of(ANSWERS)})",
                                number)
        answers.append((f"{path}:{number}", answer))
    if not answers:
        raise DataFileError(path, f"no answers ({_one_of(ANSWERS)}, one a line)")
    return answers


class AnswerSource(typing.Protocol):
    """Where the answers come from: ``next()`` the next one with where it is (None: none left)."""

    name: str
    interactive: bool  # a person at a terminal: an unknown word is asked again, the end of input aborts

    def next(self) -> tuple[str, str] | None: ...


class ScriptedAnswers:
    """The answers of a file, checked whole when read (:func:`read_answers`)."""

    interactive = False

    def __init__(self, path: Path) -> None:
        self.name = str(path)
        self._answers: Iterator[tuple[str, str]] = iter(read_answers(path))
        self.used = 0

    def next(self) -> tuple[str, str] | None:
        answer = next(self._answers, None)
        self.used += answer is not None
        return answer

    def left(self) -> int:
        """How many answers were not asked for (consumes them)."""
        return sum(1 for _ in self._answers)


class StreamAnswers:
    """Answers read a line at a time from a stream (standard input)."""

    def __init__(self, stream: TextIO, name: str = "standard input") -> None:
        self.stream, self.name = stream, name
        self.interactive = stream.isatty()
        self.line = 0

    def next(self) -> tuple[str, str] | None:
        text = self.stream.readline()
        if not text:
            return None
        self.line += 1
        return f"{self.name} line {self.line}", text.strip().lower()


class Operator:
    """Asks the operator on ``out`` and reads the answers from ``source``."""

    def __init__(self, source: AnswerSource, out: TextIO) -> None:
        self.source, self.out = source, out

    def ready(self, question: str, context: str) -> None:
        """Wait for ``ready``; OperatorStopError for ``abort``."""
        self._ask(question, context, (READY,))

    def fell(self, question: str, context: str) -> bool:
        """``fell`` (True) or ``stood`` (False); OperatorStopError for ``abort``."""
        return self._ask(question, context, (STOOD, FELL)) == FELL

    def _ask(self, question: str, context: str, expected: tuple[str, ...]) -> str:
        words = (*expected, ABORT)
        while True:
            print(f"{question} [{'/'.join(words)}] ", end="", file=self.out, flush=True)
            got = self.source.next()
            if got is None:
                if self.source.interactive:
                    print(file=self.out)
                    raise OperatorStopError(f"end of input {context}: stopped as if aborted")
                raise AnswerError(f"{self.source.name}: no answer left {context} ({_one_of(words)} expected)")
            where, answer = got
            if not self.source.interactive:
                print(answer, file=self.out, flush=True)  # the log reads as a dialogue
            if answer == ABORT:
                raise OperatorStopError(f"aborted by the operator ({where}) {context}")
            if answer in expected:
                return answer
            if not self.source.interactive:
                raise AnswerError(f"{where}: {answer!r} {context}, where {_one_of(words)} was expected")
            print(f"please answer {_one_of(words)}", file=self.out, flush=True)
