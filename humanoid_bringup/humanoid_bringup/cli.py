"""The ``humanoid`` command: one entry point for the stack outside ``ros2 launch``.

Its verbs are those the installed packages register (entry point group ``humanoid.verbs``,
:data:`~humanoid_core.registrations.VERBS`), as ros2cli finds the commands and
verbs packages register: each package names a light module of its own listing its verbs
(:class:`~humanoid_core.command_line.Verb`: a module with ``add_arguments(parser)`` and
``run(args) -> int``). This package registers the bring-up's (``describe``, ``real``); the
simulation, the bus emulator, the tools and the experiments register theirs, so a verb
whose package is not installed (a robot's computer has neither the simulation, nor the
workstation tools, nor the experiments) is simply not listed. The registrations are read
once per process (:func:`humanoid_core.registrations.registered`), and only the chosen
verb's module is imported. Bad input is one line on stderr and
exit status 2 (:class:`~humanoid_core.command_line.UsageError`). SIGTERM and SIGHUP end a
verb as Ctrl-C does (what it started is stopped on the way out; exit status 130): rclpy's
own handler of SIGTERM only shuts its context down, which left a command waiting on a
robot's answer until its timeout (a process manager's stop, the parent-death signal).
"""

from __future__ import annotations

import argparse
import functools
import importlib
import signal
import sys
import threading
from collections.abc import Callable, Iterable, Sequence
from typing import NoReturn

from humanoid_core import VERBS, UsageError, Verb, registered


class _Parser(argparse.ArgumentParser):
    """argparse that reports errors on one line (exit code 2) instead of usage + error."""

    def error(self, message: str) -> NoReturn:
        raise UsageError(f"{message} (see {self.prog} --help)")


def verbs(entry_points: Iterable | None = None) -> tuple[Verb, ...]:
    """The verbs the installed packages register (``entry_points``: those of the group
    ``humanoid.verbs``, all installed ones by default), in help order: by section (bring-up
    first), then package, then as each package lists them. A verb name registered twice is
    refused (:class:`UsageError`, naming both); a registration that cannot be loaded is said
    on stderr and left out."""
    if entry_points is None:
        return _installed_verbs()
    found: dict[str, tuple[Verb, str]] = {}
    for entry in sorted(entry_points, key=lambda entry: entry.name):
        try:
            listed = tuple(entry.load())
        except Exception as error:  # a broken package must not take every other verb with it
            print(f"humanoid: warning: the verbs {entry.name} registers ({entry.value}) cannot be loaded, "
                  f"left out: {error}", file=sys.stderr)
            continue
        for verb in listed:
            if not isinstance(verb, Verb):
                print(f"humanoid: warning: {entry.value} lists {verb!r}, not a Verb: left out", file=sys.stderr)
                continue
            if verb.name in found:
                other, where = found[verb.name]
                raise UsageError(f"the verb {verb.name!r} is registered twice: by {where} ({other.module}) and by "
                                 f"{entry.value} ({verb.module}); uninstall one of them")
            found[verb.name] = (verb, entry.value)
    ordered = sorted(found.values(), key=lambda item: (item[0].section, item[1].split(":")[0]))
    return tuple(verb for verb, _ in ordered)


@functools.cache
def _installed_verbs() -> tuple[Verb, ...]:
    return verbs(registered(VERBS))


def _missing(command: Verb, error: ModuleNotFoundError) -> Callable[[argparse.Namespace], int]:
    """What a verb does when a library it needs (or its own package) is not installed."""
    what = (f"the {command.package} package" if error.name and error.name.split(".")[0] == command.package
            else f"{error.name} (used by {command.package})")

    def run(_args: argparse.Namespace) -> int:
        raise UsageError(f"humanoid {command.name} needs {what}, which is not installed here")

    return run


def build_parser(chosen: str | None = None) -> argparse.ArgumentParser:
    """The whole parser; with ``chosen``, only that subcommand's module is imported (the others
    are listed with their help but not loaded), so that a command starts, and a bad argument is
    refused, without importing every package of the stack (a second or more, once per process)."""
    parser = _Parser(prog="humanoid", description=__doc__.split("\n\n")[0])
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND", parser_class=_Parser)
    for command in verbs():
        p = sub.add_parser(command.name, help=command.help, description=command.help)
        if chosen is not None and command.name != chosen:
            p.add_argument("rest", nargs=argparse.REMAINDER, help=argparse.SUPPRESS)
            continue
        try:
            module = importlib.import_module(command.module)
        except ModuleNotFoundError as error:
            p.add_argument("rest", nargs=argparse.REMAINDER, help=argparse.SUPPRESS)
            p.set_defaults(func=_missing(command, error))
            continue
        getattr(module, command.add)(p)
        p.set_defaults(func=getattr(module, command.run))
    return parser


def _chosen(argv: Sequence[str]) -> str:
    """The subcommand ``argv`` names (its first word that is not an option; "" for none): the
    top-level parser has no option that takes a value."""
    return next((word for word in argv if not word.startswith("-")), "")


def _interrupt(_signum: int, _frame: object) -> NoReturn:
    raise KeyboardInterrupt


def main(argv: Sequence[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    previous = {}
    if threading.current_thread() is threading.main_thread():  # signals are handled there only
        # before rclpy's handlers, which call it after theirs
        previous = {number: signal.signal(number, _interrupt) for number in (signal.SIGTERM, signal.SIGHUP)}
    try:
        args = build_parser(_chosen(argv)).parse_args(argv)
        return int(args.func(args) or 0)
    except UsageError as error:
        print(f"humanoid: error: {error}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        return 130
    finally:  # main called in a process of the caller's (a test) leaves its handlers as they were
        for number, handler in previous.items():
            signal.signal(number, handler)


if __name__ == "__main__":
    sys.exit(main())
