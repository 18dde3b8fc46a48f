"""Reading the project's text data files (poses, motions) so that every problem names its
line, and writing them all or nothing.

A file handed in by a user may be anything: a binary file, a file without line ends,
a huge file. Reading it with ``Path.read_text`` raises ``UnicodeDecodeError`` (naming
a byte offset nobody can find) or fills memory. Here every problem — unreadable,
not UTF-8, a NUL byte, a line or a file beyond a bound — is a :class:`DataFileError`
with the file and, where there is one, the line; lines are read one at a time.

A file is written (:func:`write_text_atomically`) into a new file beside it, then renamed
over it: a full disk, an unwritable folder or an interruption leaves the file as it was.
"""

from __future__ import annotations

import contextlib
import os
import secrets
import stat
from collections.abc import Iterator
from pathlib import Path

#: Longest line read (bytes): data lines are a few hundred bytes; a longer "line" is a
#: binary file or a file without line ends.
MAX_LINE_BYTES = 65536
#: Largest file read whole (bytes), for formats that need the whole text (YAML).
MAX_FILE_BYTES = 64 * 1024 * 1024


def load_package_yaml(text: str) -> object:
    """A YAML file of the project's own (robot configuration, joint maps), through libyaml
    when PyYAML has it: every node process reads these at start, and the pure-Python
    parser took 0.3 s of CPU for one robot's files. Users' files keep ``yaml.safe_load``
    and the messages its errors are known by."""
    import yaml

    return yaml.load(text, Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader))


class DataFileError(ValueError):
    """A data file that cannot be read, or is not what it should be; the message is
    ``file:line: problem`` (``file: problem`` for the file as a whole)."""

    def __init__(self, path: str | Path, problem: str, line: int | None = None) -> None:
        self.path = str(path)
        self.problem = problem
        self.line = line
        super().__init__(f"{self.path}:{line}: {problem}" if line is not None else f"{self.path}: {problem}")


def text_lines(path: Path, max_line_bytes: int = MAX_LINE_BYTES) -> Iterator[tuple[int, str]]:
    """``(line number, text)`` of each line of the file, without its line end, read one at a time."""
    try:
        handle = open(path, "rb")  # noqa: SIM115 - closed below; binary, so that errors can name the line
    except OSError as error:
        raise DataFileError(path, f"cannot read: {error.strerror or error}") from None
    with handle:
        number = 0
        while True:
            try:
                raw = handle.readline(max_line_bytes + 1)
            except OSError as error:
                raise DataFileError(path, f"cannot read: {error.strerror or error}", number + 1) from None
            if not raw:
                return
            number += 1
            if len(raw) > max_line_bytes and not raw.endswith(b"\n"):
                raise DataFileError(path, f"line longer than {max_line_bytes} bytes: not a data file?", number)
            yield number, decode_line(path, number, raw).rstrip("\r\n")


def read_text(path: Path, max_bytes: int = MAX_FILE_BYTES) -> str:
    """The whole text of a file (at most ``max_bytes``), checked as :func:`text_lines` checks it."""
    try:
        with open(path, "rb") as handle:
            data = handle.read(max_bytes + 1)
    except OSError as error:
        raise DataFileError(path, f"cannot read: {error.strerror or error}") from None
    if len(data) > max_bytes:
        raise DataFileError(path, f"larger than {max_bytes} bytes: not a data file of this project?")
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        text = ""
    if (not text and data) or "\0" in text:  # find the line to name (a sequence never spans a line end)
        for number, raw in enumerate(data.split(b"\n"), start=1):
            decode_line(path, number, raw)
    return text


def decode_line(path: Path, number: int, raw: bytes) -> str:
    """One line's bytes as text: UTF-8 without NUL bytes, or DataFileError naming the line."""
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as error:
        raise DataFileError(path, f"not UTF-8 text (byte {error.start + 1} of the line is "
                                  f"0x{raw[error.start]:02x}): a binary file?", number) from None
    if "\0" in text:
        raise DataFileError(path, f"NUL byte at column {text.index(chr(0)) + 1}: a binary file?", number)
    return text


def write_text_atomically(path: str | Path, text: str) -> None:
    """Replace the file's text all or nothing (OSError says why it could not be written).

    The new text goes to a hidden file in the same folder, is flushed to the disk, takes the
    old file's permissions and is renamed over it; a link is followed, so the file it names
    is replaced and the link stays."""
    target = Path(os.path.realpath(path))
    temporary = target.with_name(f".{target.name}.{secrets.token_hex(4)}.partial")
    descriptor = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666)  # umask applies, as to any file
    try:
        with os.fdopen(descriptor, "w", encoding="utf-8") as handle:
            handle.write(text)
            handle.flush()
            os.fsync(handle.fileno())
        with contextlib.suppress(FileNotFoundError):
            os.chmod(temporary, stat.S_IMODE(target.stat().st_mode))
        os.replace(temporary, target)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            temporary.unlink()
        raise
