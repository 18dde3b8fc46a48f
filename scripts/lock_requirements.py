"""Print the pinned requirements of the running environment, one ``name==version`` per line.

Only distributions pip installed are listed: the ROS 2 wheels also carry the egg-info
of the packages they were built from (``action_msgs``, ``rclpy`` ...), which ``pip
freeze`` would list although no index has them under those names.
"""

from __future__ import annotations

import importlib.metadata


def pinned() -> list[str]:
    lines = set()
    for dist in importlib.metadata.distributions():
        if dist.read_text("INSTALLER") is None:  # shipped inside another wheel
            continue
        name = dist.metadata["Name"]
        if name in ("pip", "setuptools", "wheel"):
            continue
        lines.add(f"{name}=={dist.version}")
    return sorted(lines, key=str.lower)


if __name__ == "__main__":
    print("\n".join(pinned()))
