"""The robot-side processes load only what they use (a robot's small computer holds them all;
``humanoid bench graph --robot bioloid --real --emulate`` prints their memory).

- The graph's command (``humanoid real``) lives as long as the graph and supervises it: it
  parses, resolves the robot and builds the node specs without rclpy, the kinematics
  (Pinocchio, Coal) or the physics: 35 MB resident where it took 103 MB when a namespace
  default loaded rclpy and a node name loaded the gait player.
- The simulation's command (``humanoid sim``) does the same for the simulated graph: it checks
  the physics profile and the parameter file and builds the node specs without rclpy or the
  physics (a parameter module imported the driver node's for a list of names: 0.35-0.39 CPU-s
  per start instead of 0.20-0.25).
- The hardware node's front validates and maps joint values: the joint table is all it needs
  of the model, and the self-collision veto runs in its loop's process, so it loads neither
  Pinocchio nor Coal, even after logging (rclpy's logger looks up every loaded module's file,
  which loads a lazy module): 87 MB resident where it took 134 MB. The simulation node's front
  likewise: the PyBullet driver and its ground truth's pose conversion are loaded in the loop's
  process only (the HOAP-2's front 92 MB resident where it took 140 MB)."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap

import pytest

HEAVY = ("rclpy", "pinocchio", "coal", "pybullet", "scipy")
KINEMATICS = ("pinocchio", "coal")


def loaded_by(script: str) -> dict:
    """What ``script`` (run in a fresh interpreter) prints as JSON."""
    done = subprocess.run([sys.executable, "-c", textwrap.dedent(script)], capture_output=True, text=True,
                          timeout=120)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout.splitlines()[-1])


def test_the_real_command_supervises_its_graph_without_ros_or_the_kinematics():
    report = loaded_by("""
        import json, sys
        from humanoid_bringup import cli
        from humanoid_bringup.graphs import real_nodes
        from humanoid_description import resolve_robot

        args = cli.build_parser("real").parse_args(["real", "--robot", "bioloid_quadruped", "--emulate"])
        nodes = real_nodes(resolve_robot(args.robot), port="/dev/null", namespace=args.namespace)
        print(json.dumps({"nodes": [node.name for node in nodes],
                          "loaded": sorted({name.split(".")[0] for name in sys.modules})}))
    """)
    assert report["nodes"], "no node specs were built"
    assert not set(HEAVY) & set(report["loaded"]), f"the command loaded {set(HEAVY) & set(report['loaded'])}"


def test_the_sim_command_checks_and_builds_its_graph_without_ros_or_the_physics():
    report = loaded_by("""
        import json, sys
        from humanoid_bringup import cli
        from humanoid_description import resolve_robot
        from humanoid_sim import params_file, physics_profiles
        from humanoid_sim.graphs import sim_nodes

        args = cli.build_parser("sim").parse_args(["sim", "--robot", "hoap2", "--physics", "fast"])
        robot = resolve_robot(args.robot)
        physics = physics_profiles.chosen(robot, args.physics)
        nodes = sim_nodes(robot, physics_profile=physics, params_file=params_file.chosen(robot, args.params))
        print(json.dumps({"nodes": [node.name for node in nodes],
                          "loaded": sorted({name.split(".")[0] for name in sys.modules})}))
    """)
    assert "humanoid_sim" in report["nodes"], report["nodes"]
    assert not set(HEAVY) & set(report["loaded"]), f"the command loaded {set(HEAVY) & set(report['loaded'])}"


@pytest.mark.parametrize(("front", "robot"), [("humanoid_hw.hw_node", "bioloid"), ("humanoid_sim.sim_node", "hoap2")])
def test_a_driver_front_uses_the_joint_table_without_the_kinematics(front, robot):
    """The hardware node's front and the simulation node's (whose driver runs in the loop's process)."""
    report = loaded_by(f"""
        import importlib, json, sys
        import rclpy
        from humanoid_control.ros import RobotInterface, driver_node
        from humanoid_description import RobotModel

        importlib.import_module("{front}")
        model = RobotModel("{robot}")
        model.joints.to_array(model.home_positions()), model.urdf
        rclpy.logging.get_logger("front").info(f"{{len(model.joints)}} joints")
        print(json.dumps({{"loaded": sorted({{name.split(".")[0] for name in sys.modules}})}}))
    """)
    assert not set(KINEMATICS) & set(report["loaded"]), f"the front loaded {set(KINEMATICS) & set(report['loaded'])}"
