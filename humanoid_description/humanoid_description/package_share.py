"""Finding a package's data files (config/, xacro/ ...) installed or in a source checkout.

Installed packages are found through the ament index (``share/<package>``); when the
package is not installed (a source checkout, tests before a build) the data files sit
in the package folder next to its Python package.
"""

from __future__ import annotations

import functools
from pathlib import Path


@functools.cache
def package_share_directory(package: str) -> Path:
    """``share/<package>`` of an installed package, else the package's source folder."""
    try:
        from ament_index_python.packages import PackageNotFoundError, get_package_share_directory

        try:
            return Path(get_package_share_directory(package))
        except (PackageNotFoundError, OSError):  # not installed, or no AMENT_PREFIX_PATH
            pass
    except ImportError:
        pass
    source = Path(__file__).resolve().parents[2] / package
    if (source / "package.xml").is_file():
        return source
    raise FileNotFoundError(f"cannot find the data files of package {package}: source the workspace "
                            "(install/setup.bash) or run from the source tree")
