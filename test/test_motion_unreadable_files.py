"""Every motion reader refuses a file that is not what it should be with a MotionError
naming the file and line: binary files, random bytes, text that is not UTF-8, NUL bytes,
files cut short. Nothing else escapes (a UnicodeDecodeError once made play_motion report
success on a binary file)."""

from __future__ import annotations

import random
import re
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path

import pytest

from humanoid_core.loop import Law
from humanoid_core.motion import (
    MotionError,
    keyframes_text,
    load_motion,
    motion_to_pages,
    pages_text,
    read_keyframes,
    read_motion_file,
    read_pages,
)
from humanoid_robot_bioloid import read_raw_poses, read_thesis_poses
from humanoid_robot_hoap2 import read_hoap2_csv

HOME_RAW = "206,818,252,772,512,512,512,512,512,512,463,560,440,585,554,470,509,510"


def valid_files() -> dict[str, tuple[str, Callable[[Path], object], str]]:
    """Reader name -> (file suffix, reader, a valid file's text), so that only the damage is wrong."""
    csv = "# the HOAP-2's csv: multiplier, ignored, 21 joints in pulses\n" + ("10,0" + ",0" * 21 + "\n") * 4
    wave = load_motion("bioloid", "wave")
    p3 = "P3," + ",".join(["0"] * 18)
    return {
        "hoap2 csv": (".csv", lambda p: read_hoap2_csv(p, "hoap2"), csv),
        "keyframes": (".yaml", lambda p: read_keyframes(p, "bioloid"), keyframes_text(wave, decimals=4)),
        "bioloid pages": (".yaml", lambda p: read_pages(p, "bioloid"),
                          pages_text(motion_to_pages(replace(wave, law=Law.LINEAR)))),
        "raw poses": (".csv", lambda p: read_raw_poses(p, "bioloid"),
                      "pose," + ",".join(map(str, range(1, 19))) + f"\nhome,{HOME_RAW}\nagain,{HOME_RAW}\n"),
        "thesis poses": (".csv", lambda p: read_thesis_poses(p, "bioloid"), f"# poses\n{p3}\n{p3}\n"),
        "any file (hoap2)": (".csv", lambda p: read_motion_file(p, "hoap2"), csv),
        "any file (bioloid)": (".yaml", lambda p: read_motion_file(p, "bioloid"), keyframes_text(wave, decimals=4)),
        "any pose file (bioloid)": (".csv", lambda p: read_motion_file(p, "bioloid"), f"{p3}\n"),
    }


READERS = list(valid_files())


def damaged(kind: str, valid: str) -> tuple[bytes, int | None]:
    """A damaged file's bytes and the line the error must name (None: any line)."""
    lines = valid.encode().splitlines(keepends=True)
    if kind == "binary":  # bytes 0..255 repeated: the first line holds a NUL byte
        return bytes(range(256)) * 16, 1
    if kind == "random bytes":
        return random.Random(0).randbytes(4096), None
    if kind == "not UTF-8 on line 2":
        return lines[0] + b"\xff\xfe\x00\x01 latin-1 \xe9\n" + b"".join(lines[1:]), 2
    if kind == "NUL byte on line 2":
        return lines[0] + b"1,\x002,3\n" + b"".join(lines[1:]), 2
    if kind == "cut inside a character":
        data = lines[0] + "# é\n".encode()[:-2]  # 'é' is two bytes: keep only its first
        return data, 2
    if kind == "one endless line":
        return b"1," * 200_000, 1

    raise AssertionError(kind)


@pytest.mark.parametrize("kind", ["binary", "random bytes", "not UTF-8 on line 2", "NUL byte on line 2",
                                  "cut inside a character", "one endless line"])
@pytest.mark.parametrize("reader", READERS)
def test_a_damaged_file_is_a_motion_error_naming_file_and_line(tmp_path, reader, kind):
    suffix, read, valid = valid_files()[reader]
    read(_write(tmp_path / f"valid{suffix}", valid.encode()))  # the undamaged file reads
    data, line = damaged(kind, valid)
    path = _write(tmp_path / f"damaged{suffix}", data)
    with pytest.raises(MotionError) as raised:
        read(path)
    match = re.match(rf"{re.escape(str(path))}:(\d+): \S", str(raised.value))
    assert match, str(raised.value)
    if line is not None:
        assert int(match.group(1)) == line, str(raised.value)


@pytest.mark.parametrize("reader", READERS)
def test_a_file_cut_short_is_a_motion_error_naming_the_file(tmp_path, reader):
    suffix, read, valid = valid_files()[reader]
    data = valid.encode()
    for size in (len(data) // 3, len(data) // 2, len(data) - 5):
        path = _write(tmp_path / f"cut{size}{suffix}", data[:size])
        try:
            read(path)  # cut at a line end, a shorter file may still be a valid one
        except MotionError as error:
            assert str(error).startswith(f"{path}:"), str(error)


@pytest.mark.parametrize("name", ["bad\0name.csv", "x" * 5000 + ".csv"])
def test_an_impossible_file_name_is_a_motion_error(name):
    with pytest.raises(MotionError, match="not a usable file name"):
        read_motion_file(Path(name), "hoap2")


def test_yaml_values_this_format_cannot_hold_are_motion_errors_with_their_line(tmp_path):
    path = _write(tmp_path / "tagged.yaml", b"robot: bioloid\nunits: !!python/name:os.system deg\n"
                                             b"joints: [r_elbow]\nkeyframes: []\n")
    with pytest.raises(MotionError, match=rf"^{re.escape(str(path))}:2: "):
        read_keyframes(path, "bioloid")
    deep = _write(tmp_path / "deep.yaml", b"[" * 100_000)
    with pytest.raises(MotionError, match=rf"^{re.escape(str(deep))}"):
        read_keyframes(deep, "bioloid")


def _write(path: Path, data: bytes) -> Path:
    path.write_bytes(data)
    return path


def test_numbers_beyond_any_float_are_motion_errors_with_their_line(tmp_path):
    huge = "9" * 400
    csv = _write(tmp_path / "huge.csv", f"10,0,{huge}{',0' * 20}\n".encode())
    with pytest.raises(MotionError, match=rf"^{re.escape(str(csv))}:1: field 2 \(rleg_joint1\) is not a pulse count"):
        read_hoap2_csv(csv, "hoap2")
    keyframes = _write(tmp_path / "huge.yaml", f"robot: bioloid\nunits: deg\njoints: [r_elbow]\nkeyframes:\n"
                                               f"  - time: 0.0\n    positions: [{huge}]\n".encode())
    with pytest.raises(MotionError, match=rf"^{re.escape(str(keyframes))}:6: .*must be a finite number"):
        read_keyframes(keyframes, "bioloid")
