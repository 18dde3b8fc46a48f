"""The graph's command stays light: ``humanoid real`` lives as long as the robot's graph
and supervises it, so on the robot's small computer it is one more resident process. It
parses, resolves the robot and builds the node specs without loading rclpy, the kinematics
(Pinocchio, Coal) or the physics: 35 MB resident where it took 103 MB when a namespace
default loaded rclpy and a node name loaded the gait player (``humanoid bench graph``)."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap

HEAVY = ("rclpy", "pinocchio", "coal", "pybullet", "scipy")


def test_the_real_command_supervises_its_graph_without_ros_or_the_kinematics():
    script = textwrap.dedent("""
        import json, sys
        from humanoid_bringup import cli
        from humanoid_bringup.graphs import real_nodes
        from humanoid_description import resolve_robot

        args = cli.build_parser("real").parse_args(["real", "--robot", "bioloid_quadruped", "--emulate"])
        nodes = real_nodes(resolve_robot(args.robot), port="/dev/null", namespace=args.namespace)
        print(json.dumps({"nodes": [node.name for node in nodes],
                          "loaded": sorted({name.split(".")[0] for name in sys.modules})}))
    """)
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout)
    assert report["nodes"], "no node specs were built"
    assert not set(HEAVY) & set(report["loaded"]), f"the command loaded {set(HEAVY) & set(report['loaded'])}"
