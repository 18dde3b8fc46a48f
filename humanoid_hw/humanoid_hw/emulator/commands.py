"""Fault commands for a running emulator: one line in, one line out.

``humanoid emulate`` reads these on its standard input, so that a controller can be
tried against a silent servo, noise, error bits or an unplugged adapter without
writing Python. Each command is applied before its answer is printed: once a script
has read ``ok ...``, the fault is in force.
"""

from __future__ import annotations

import shlex
from collections.abc import Callable

from humanoid_hw.emulator.chain import BusEmulator, LinkTakenError

#: The command summary printed by ``help`` and by ``humanoid emulate --help``.
COMMANDS_HELP = """\
fault commands (one per line on standard input; each answers one line, "ok ..." or "error ..."):
  silence ID              servo ID stops answering (unplugged, dead)
  answer ID               servo ID answers again
  corrupt COUNT [ID]      the next COUNT status packets (of servo ID, or of any) get a bad checksum/CRC
  error ID NAME...        servo ID reports these errors on every answer, e.g. overload, overheating,
                          input_voltage (AX servos switch their torque off on overload/overheating)
  clear ID                servo ID's errors are gone (an AX servo that shut down stays limp until
                          its Torque Limit is written again, as the real one does)
  delay ID SECONDS        servo ID answers SECONDS late (0: on time)
  place ID RAW            move servo ID's horn by hand to register position RAW
  get ID ITEM             print a register, e.g. get 3 torque_enable
  vanish                  the USB adapter is unplugged: the port disappears
  reappear                plugged back in (the --link path follows the new pseudo-terminal)
  faults                  print the faults in force
  help                    print this summary
End of input leaves the faults as they are; the emulator serves until interrupted."""


class CommandError(ValueError):
    """A command that cannot be applied; the message says why."""


class FaultCommands:
    """Parses and applies fault commands to one emulator."""

    def __init__(self, emulator: BusEmulator) -> None:
        self.emulator = emulator
        self._handlers: dict[str, Callable[[list[str]], str]] = {
            "silence": self._silence, "answer": self._answer, "corrupt": self._corrupt, "error": self._error,
            "clear": self._clear, "delay": self._delay, "place": self._place, "get": self._get,
            "vanish": self._vanish, "reappear": self._reappear, "faults": self._faults,
            "help": lambda _args: COMMANDS_HELP}

    def execute(self, line: str) -> str | None:
        """The answer to one line ("ok ..." / "error ..."); None for a blank line or a comment."""
        try:
            words = shlex.split(line, comments=True)
        except ValueError as error:
            return f"error: {error}"
        if not words:
            return None
        name, args = words[0].lower(), words[1:]
        handler = self._handlers.get(name)
        if handler is None:
            return f"error: unknown command {name!r} (commands: {', '.join(self._handlers)})"
        try:
            return handler(args)
        except CommandError as error:
            return f"error: {line.strip()!r}: {error}"

    # -- arguments ---------------------------------------------------------------------
    def _servo(self, word: str) -> int:
        ids = self.emulator.servo_ids
        try:
            servo_id = int(word)
        except ValueError:
            raise CommandError(f"servo ID must be a number, not {word!r}") from None
        if servo_id not in ids:
            raise CommandError(f"no servo {servo_id} on this bus (IDs {min(ids)}..{max(ids)})")
        return servo_id

    @staticmethod
    def _count(args: list[str], low: int, high: int, usage: str) -> None:
        if not low <= len(args) <= high:
            raise CommandError(f"usage: {usage}")

    @staticmethod
    def _number(word: str, kind: type, what: str) -> float:
        try:
            return kind(word)
        except ValueError:
            raise CommandError(f"{what} must be a number, not {word!r}") from None

    # -- commands ----------------------------------------------------------------------
    def _silence(self, args: list[str]) -> str:
        self._count(args, 1, 1, "silence ID")
        servo_id = self._servo(args[0])
        self.emulator.silence(servo_id)
        return f"ok: servo {servo_id} silent"

    def _answer(self, args: list[str]) -> str:
        self._count(args, 1, 1, "answer ID")
        servo_id = self._servo(args[0])
        self.emulator.silence(servo_id, False)
        return f"ok: servo {servo_id} answers"

    def _corrupt(self, args: list[str]) -> str:
        self._count(args, 1, 2, "corrupt COUNT [ID]")
        count = int(self._number(args[0], int, "COUNT"))
        if count < 1:
            raise CommandError(f"COUNT must be at least 1, not {count}")
        servo_id = self._servo(args[1]) if len(args) == 2 else None
        self.emulator.corrupt_replies(count, servo_id)
        whose = f"of servo {servo_id}" if servo_id is not None else "of any servo"
        return f"ok: the next {count} status packet(s) {whose} corrupted"

    def _error(self, args: list[str]) -> str:
        if len(args) < 2:
            raise CommandError("usage: error ID NAME...")
        servo_id = self._servo(args[0])
        names = [name.replace("_", " ").replace("-", " ").lower() for name in args[1:]]
        try:
            self.emulator.inject_errors(servo_id, *names)
        except ValueError as error:
            raise CommandError(str(error)) from None
        return f"ok: servo {servo_id} reports {', '.join(names)}"

    def _clear(self, args: list[str]) -> str:
        self._count(args, 1, 1, "clear ID")
        servo_id = self._servo(args[0])
        self.emulator.clear_errors(servo_id)
        return f"ok: servo {servo_id} errors cleared"

    def _delay(self, args: list[str]) -> str:
        self._count(args, 2, 2, "delay ID SECONDS")
        servo_id = self._servo(args[0])
        seconds = self._number(args[1], float, "SECONDS")
        try:
            self.emulator.delay_replies(servo_id, seconds)
        except ValueError as error:
            raise CommandError(str(error)) from None
        return f"ok: servo {servo_id} answers {seconds:g} s late"

    def _place(self, args: list[str]) -> str:
        self._count(args, 2, 2, "place ID RAW")
        servo_id = self._servo(args[0])
        raw = int(self._number(args[1], int, "RAW"))
        scale = self.emulator.table_of(servo_id).position_scale
        if not scale.raw_min <= raw <= scale.raw_max:
            raise CommandError(f"RAW must be within {scale.raw_min}..{scale.raw_max}, not {raw}")
        self.emulator.place(servo_id, raw)
        return f"ok: servo {servo_id} placed at {raw}"

    def _get(self, args: list[str]) -> str:
        self._count(args, 2, 2, "get ID ITEM")
        servo_id = self._servo(args[0])
        table = self.emulator.table_of(servo_id)
        if args[1] not in table.items:
            raise CommandError(f"{table.name} has no item {args[1]!r} (items: {', '.join(table.items)})")
        return f"ok: servo {servo_id} {args[1]} = {self.emulator.register(servo_id, args[1])}"

    def _vanish(self, args: list[str]) -> str:
        self._count(args, 0, 0, "vanish")
        self.emulator.vanish()
        return f"ok: {self.emulator.port} vanished"

    def _reappear(self, args: list[str]) -> str:
        self._count(args, 0, 0, "reappear")
        try:
            self.emulator.reappear()
        except LinkTakenError as error:
            raise CommandError(f"not plugged back: {error}") from None
        return f"ok: {self.emulator.port} is back (pseudo-terminal {self.emulator.pts_name})"

    def _faults(self, args: list[str]) -> str:
        self._count(args, 0, 0, "faults")
        faults = self.emulator.faults()
        return "ok: " + "; ".join(f"{key}: {value}" for key, value in faults.items())
