"""Self-collision model and the generated SRDFs."""

import xml.etree.ElementTree as ET

import numpy as np
import pytest

from humanoid_description.collision import CollisionModel
from humanoid_description.model import load_model
from humanoid_description.robots import ROBOTS, robot_files
from humanoid_description.srdf_generator import adjacent_pairs, render, sample_pairs


def disabled_pairs(robot):
    root = ET.fromstring(robot_files(robot).srdf.read_text())
    return {tuple(sorted((e.get("link1"), e.get("link2")))): e.get("reason")
            for e in root.iter("disable_collisions")}


@pytest.mark.parametrize("robot", ROBOTS)
def test_srdf_disables_every_adjacent_pair_and_names_real_links(robot):
    model = load_model(robot)
    checker = CollisionModel(model)
    disabled = disabled_pairs(robot)
    links = set(checker.links)
    assert all(a in links and b in links for a, b in disabled)
    for pair in adjacent_pairs(model, links):
        assert disabled.get(pair) == "Adjacent", pair
    # what is left to check is exactly what the SRDF does not disable
    everything = len(links) * (len(links) - 1) // 2
    assert len(checker.pairs) == everything - len(disabled)
    assert all(tuple(sorted(p)) not in disabled for p in checker.pairs)


@pytest.mark.parametrize("robot", ROBOTS)
@pytest.mark.parametrize("pose", ["home", "zero"])
def test_named_poses_are_collision_free(robot, pose):
    model = load_model(robot)
    report = CollisionModel(model).check(model.pose_positions(pose))
    assert not report.in_collision, report.colliding
    assert report.closest.distance > 0


def test_crossed_legs_collide():
    model = load_model("hoap2")
    crossed = model.joints.to_array({"rleg_joint2": np.radians(21), "lleg_joint2": np.radians(-21)})
    report = CollisionModel(model).check(crossed)
    assert report.in_collision
    legs = {tuple(sorted((p.link_a[:4], p.link_b[:4]))) for p in report.colliding}
    assert legs == {("lleg", "rleg")}, report.colliding
    assert report.colliding[0] == report.closest and report.closest.distance <= 0


def test_generator_classifies_pairs_reproducibly():
    model = load_model("bioloid")
    first = sample_pairs(model, samples=150, seed=3)
    second = sample_pairs(model, samples=150, seed=3)
    assert first == second
    assert len(first.adjacent) == len(model.joints)  # a tree: one adjacent pair per joint
    assert not set(first.adjacent) & set(first.never)
    root = ET.fromstring(render("bioloid", first))
    assert len(list(root.iter("disable_collisions"))) == len(first.adjacent) + len(first.never)
