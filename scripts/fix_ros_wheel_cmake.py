"""Point the CMake exports of the ROS 2 wheels at this machine's Python headers.

The message wheels on PyPI were built in a manylinux container; their exported
CMake targets name include directories of that container
(``/opt/python/cp311-cp311/...``). CMake refuses to configure a package that uses
them (our interface package) until those paths exist. Rewriting them inside the
virtualenv touches nothing outside the project. Running it twice changes nothing.
"""

from __future__ import annotations

import sys
import sysconfig
from pathlib import Path

BUILD_PYTHON = "/opt/python/cp311-cp311"
BUILD_PYTHON_INCLUDE = f"{BUILD_PYTHON}/include/python3.11"
BUILD_NUMPY_INCLUDE = f"{BUILD_PYTHON}/lib/python3.11/site-packages/numpy/_core/include"


def replacements() -> dict[str, str]:
    """Map each foreign path to the matching path of this interpreter."""
    import numpy

    return {
        BUILD_NUMPY_INCLUDE: numpy.get_include(),
        BUILD_PYTHON_INCLUDE: sysconfig.get_paths()["include"],
    }


def patch_tree(share: Path, mapping: dict[str, str]) -> int:
    """Rewrite every ``*.cmake`` file under ``share``; return how many changed."""
    changed = 0
    for path in share.glob("*/cmake/*.cmake"):
        text = path.read_text()
        if BUILD_PYTHON not in text:
            continue
        for old, new in mapping.items():
            text = text.replace(old, new)
        path.write_text(text)
        changed += 1
    return changed


def main(argv: list[str]) -> int:
    venv = Path(argv[1] if len(argv) > 1 else sys.prefix)
    changed = patch_tree(venv / "share", replacements())
    if changed:
        print(f"[setup] patched the build-machine include paths in {changed} CMake files")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
