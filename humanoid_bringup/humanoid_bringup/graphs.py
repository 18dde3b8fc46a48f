"""The node graphs of the stack, shared by the CLI (and mirrored by the launch files).

``launch/sim.launch.py`` and ``launch/real.launch.py`` start the same nodes with the
same parameter files on a real ROS 2 install; these functions describe them for
:class:`~humanoid_bringup.graph.Graph`, which runs them without ``ros2 launch``.
"""

from __future__ import annotations

from pathlib import Path

from humanoid_bringup.graph import NodeSpec
from humanoid_description.package_share import package_share_directory


def package_config(package: str, filename: str) -> Path:
    """A file of a package's config folder."""
    return package_share_directory(package) / "config" / filename


def sim_nodes(robot: str, gui: bool = False, real_time_factor: float | None = None,
              control_rate: float | None = None, publish_rate: float | None = None,
              duration: float | None = None) -> list[NodeSpec]:
    """The simulation graph: the PyBullet robot node (plus the nodes that build on it)."""
    overrides: dict[str, object] = {"robot": robot, "gui": gui}
    for name, value in (("real_time_factor", real_time_factor), ("control_rate", control_rate),
                        ("publish_rate", publish_rate), ("duration", duration)):
        if value is not None:
            overrides[name] = float(value)
    return [NodeSpec("humanoid_sim", "humanoid_sim.sim_node", overrides,
                     (package_config("humanoid_sim", f"{robot}.yaml"),)),
            *control_nodes(robot, use_sim_time=True)]


def real_nodes(robot: str, port: str | None = None, baud: int | None = None,
               control_rate: float | None = None, publish_rate: float | None = None,
               duration: float | None = None) -> list[NodeSpec]:
    """The real-robot graph: the Dynamixel hardware node (plus the nodes that build on it)."""
    overrides: dict[str, object] = {"robot": robot}
    for name, value in (("port", port), ("baud", baud), ("control_rate", control_rate),
                        ("publish_rate", publish_rate), ("duration", duration)):
        if value is not None:
            overrides[name] = value
    return [NodeSpec("humanoid_hw", "humanoid_hw.hw_node", overrides,
                     (package_config("humanoid_hw", f"{robot}.yaml"),)),
            *control_nodes(robot, use_sim_time=False)]


def control_nodes(robot: str, use_sim_time: bool) -> list[NodeSpec]:
    """The nodes that drive the robot through its interface, the same for sim and real."""
    return [NodeSpec("trajectory_generator", "humanoid_control.trajectory_generator_node",
                     {"robot": robot, "use_sim_time": use_sim_time})]
