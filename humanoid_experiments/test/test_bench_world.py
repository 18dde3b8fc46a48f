"""``humanoid bench world``'s ceiling: bare PyBullet stepping of as many robots as the world
holds, placed as the world seats them (the benchmark itself runs the graphs and is a command,
not a test)."""

import pybullet
import pytest

from humanoid_description import load_model
from humanoid_experiments.bench import raw_world, world_text
from humanoid_sim import DEFAULT_SPACING, REFERENCE, simulation_settings

ROBOT = "bioloid_quadruped"


def test_the_bare_world_holds_each_robot_standing_at_its_seat_touching_only_the_ground():
    """What the ceiling steps is the benchmark's world: three robots, each at its seat's place
    (y = index x spacing), standing on their feet after half a second, none touching another."""
    model = load_model(ROBOT)
    settings = simulation_settings(model, REFERENCE).sim
    with raw_world(ROBOT, settings, count=3) as client:
        for _ in range(round(0.5 * settings.physics_rate)):
            pybullet.stepSimulation(physicsClientId=client)
        bodies = [pybullet.getBodyUniqueId(i, physicsClientId=client)
                  for i in range(pybullet.getNumBodies(physicsClientId=client))]
        ground, robots = bodies[0], bodies[1:]
        assert len(robots) == 3
        (x0, y0, _), _ = pybullet.getBasePositionAndOrientation(robots[0], physicsClientId=client)
        for index, body in enumerate(robots):
            (x, y, z), _ = pybullet.getBasePositionAndOrientation(body, physicsClientId=client)
            assert (x - x0, y - y0) == pytest.approx((0.0, index * DEFAULT_SPACING), abs=0.01)
            touched = {contact[2] for contact in pybullet.getContactPoints(bodyA=body, physicsClientId=client)}
            assert touched == {ground}, f"robot {index} touches bodies {touched - {ground}}"
            assert z > 0.02  # on its feet, not lying


def test_the_text_puts_each_count_beside_its_bare_stepping():
    # a measured run's figures (2 cores, load 4.7 after: docs/simulation.md)
    report = {"robot": ROBOT, "gait": "trot_flat.yaml", "frequency_hz": 0.5, "seconds": 10.0,
              "physics": "reference", "world_on_one_cpu": True, "load_before": [0.36], "load_after": [4.7],
              "raw": [{"count": 1, "raw_rtf": 5.578, "raw_cpu_per_sim_s": 0.179},
                      {"count": 4, "raw_rtf": 1.345, "raw_cpu_per_sim_s": 0.744}],
              "runs": [{"count": 1, "mode": "real time", "rtf": 1.0, "robot_s": 10.0, "cpu_per_sim_s": 0.8,
                        "fell": 0, "failed": [], "vs_one": 1.0, "vs_raw": 0.179},
                       {"count": 4, "mode": "real time", "rtf": 0.423, "robot_s": 10.0, "cpu_per_sim_s": 3.65,
                        "fell": 0, "failed": [], "vs_one": 0.423, "vs_raw": 0.31}]}
    printed = world_text(report)
    assert "4 robot(s), bare PyBullet stepping: real-time factor 1.345, 0.74 CPU-s per simulated s" in printed
    assert "4 robot(s), real time: real-time factor 0.423 (0.42 of one robot's, 0.31 of bare stepping's)" in printed
    # a run without one robot of its mode: the bare stepping's share alone
    report["runs"] = [{**report["runs"][1], "vs_one": None}]
    assert "real-time factor 0.423 (0.31 of bare stepping's) over 10.0 s" in world_text(report)
