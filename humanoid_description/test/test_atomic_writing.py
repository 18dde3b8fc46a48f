"""Files are written all or nothing (:func:`humanoid_description.data_file.write_text_atomically`):
a disk that fills up leaves the file as it was, with no half-written file beside it. The
full disk is a file size limit on a child process (its writes fail with EFBIG, as a full
disk's fail with ENOSPC)."""

from __future__ import annotations

import os
import resource
import subprocess
import sys

from humanoid_description import write_text_atomically

LIMIT = 1024  # bytes a child process may write to one file

_WRITE = """
import sys
from humanoid_description import write_text_atomically
try:
    write_text_atomically(sys.argv[1], "new " * 1000)
except OSError as error:
    print(error.errno)
"""


def limited() -> None:
    resource.setrlimit(resource.RLIMIT_FSIZE, (LIMIT, LIMIT))


def test_a_full_disk_leaves_the_file_as_it_was(tmp_path):
    target = tmp_path / "poses.csv"
    target.write_text("old\n")
    result = subprocess.run([sys.executable, "-c", _WRITE, str(target)], capture_output=True, text=True,
                            timeout=60, preexec_fn=limited)
    assert (result.returncode, result.stdout.strip()) == (0, "27"), result.stderr  # EFBIG
    assert target.read_text() == "old\n"
    assert [p.name for p in tmp_path.iterdir()] == ["poses.csv"]


def test_the_file_keeps_its_permissions_and_a_link_stays_a_link(tmp_path):
    target, link = tmp_path / "poses.csv", tmp_path / "latest.csv"
    target.write_text("old\n")
    target.chmod(0o640)
    link.symlink_to(target.name)
    write_text_atomically(link, "new\n")
    assert link.is_symlink() and target.read_text() == "new\n"
    assert target.stat().st_mode & 0o777 == 0o640
    write_text_atomically(tmp_path / "fresh.csv", "x\n")  # a new file: the umask's permissions, as open() gives
    assert (tmp_path / "fresh.csv").stat().st_mode & 0o777 == 0o666 & ~_umask()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["fresh.csv", "latest.csv", "poses.csv"]


def _umask() -> int:
    current = os.umask(0)
    os.umask(current)
    return current


def test_generate_srdf_on_a_full_disk_is_one_line_and_keeps_the_srdf(tmp_path):
    srdf = tmp_path / "robot.srdf"
    srdf.write_text("<robot/>\n")
    result = subprocess.run([sys.executable, "-m", "humanoid_description.srdf_generator", "--robot", "hoap2",
                             "--samples", "5", "--output", str(srdf)], capture_output=True, text=True, timeout=300,
                            preexec_fn=limited)
    assert result.returncode == 2, result.stderr
    assert result.stderr.splitlines() == [f"generate_srdf: error: cannot write {srdf}: File too large"]
    assert srdf.read_text() == "<robot/>\n"
    assert [p.name for p in tmp_path.iterdir()] == ["robot.srdf"]
