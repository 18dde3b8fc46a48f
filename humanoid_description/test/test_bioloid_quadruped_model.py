"""The Bioloid quadruped model against what its reference keeps (EPFL report, 2007:
docs/reference/bioloid_quadruped.md): 16 AX-12 servos, the link masses (total 1760 g), the
datasheet torque and speed, feet colliding as a box plus a sphere, servo IDs 1-19 with the
neutral raw value 513; and that its home pose stands on its four feet."""

import math
import xml.etree.ElementTree as ET

import numpy as np
import pytest

from humanoid_description import convex_hull, load_model, signed_margin

ROBOT = "bioloid_quadruped"

#: Link masses of the reference (g), by the URDF link that carries each.
REFERENCE_MASSES_G = {
    "base_link": 692, "pelvis": 146, "neck_bracket": 10, "neck": 118, "head": 110,
    **{f"{leg}_hip": 12 for leg in ("fl", "fr", "bl", "br")},
    **{f"{leg}_thigh": 126 for leg in ("fl", "fr", "bl", "br")},
    "fl_shank": 32, "fr_shank": 32, "bl_shank": 34, "br_shank": 34,
}


@pytest.fixture(scope="module")
def model():
    return load_model(ROBOT)


def test_sixteen_servos_with_the_reference_masses(model):
    assert len(model.joints) == 16
    # each link of the reference is the only body on its joint (the fixed frames carry no mass)
    for link, grams in REFERENCE_MASSES_G.items():
        joint = model.model.frames[model.model.getFrameId(link)].parentJoint
        assert model.model.inertias[joint].mass == pytest.approx(grams / 1000.0, abs=1e-9), link
    assert sum(REFERENCE_MASSES_G.values()) == 1760
    assert model.total_mass == pytest.approx(1.760, abs=1e-9)


def test_every_servo_has_the_ax12_datasheet_limits(model):
    root = ET.fromstring(model.urdf)
    revolute = [j for j in root.iter("joint") if j.get("type") == "revolute"]
    assert len(revolute) == 16
    for joint in revolute:
        limit = joint.find("limit")
        assert float(limit.get("effort")) == pytest.approx(1.6181)  # 16.5 kgf cm
        assert float(limit.get("velocity")) == pytest.approx(math.radians(60) / 0.196, rel=1e-3)
    # and within the AX-12's 300 deg travel around the neutral value
    assert np.all(model.joints.lower >= math.radians(-150.5)) and np.all(model.joints.upper <= math.radians(150.5))


def test_feet_collide_as_a_box_plus_a_sphere(model):
    root = ET.fromstring(model.urdf)
    for side, foot in model.config.feet.items():
        link = next(x for x in root.iter("link") if x.get("name") == foot.link)
        shapes = sorted(g[0].tag for g in (c.find("geometry") for c in link.findall("collision")))
        assert shapes == ["box", "sphere"], side
        sphere = next(g[0] for g in (c.find("geometry") for c in link.findall("collision")) if g[0].tag == "sphere")
        assert float(sphere.get("radius")) == pytest.approx(foot.radius)


def test_servo_ids_and_neutral_value(model):
    servos = model.config.joint_map
    ids = [servos[name].servo_id for name in model.joints.names]
    assert len(set(ids)) == 16 and all(1 <= i <= 19 for i in ids)
    for name in model.joints.names:
        assert servos[name].raw_to_radians(513) == pytest.approx(0.0, abs=1e-12)


def test_home_pose_stands_on_four_feet_with_the_com_inside(model):
    q = model.home_positions()
    assert model.supporting_feet(q) == tuple(model.config.feet)
    base = model.standing_base(q)
    points = np.vstack([model.sole_corners(side, q, base) for side in model.config.feet])
    assert points.shape == (4, 3) and np.all(np.abs(points[:, 2]) <= 1e-6)
    margin = signed_margin(model.com(q, base)[:2], convex_hull(points[:, :2]))
    assert margin > 0.02  # well inside the rectangle of the four feet
    # the back right leg shortened by 22 mm: like a table with a short leg the body rests on the
    # other diagonal and one foot of the shortened leg's diagonal (the CoM, 114 mm high, is
    # over both triangles: it rests on the one with the larger margin)
    lifted = q.copy()
    lifted[model.joints.index("br_knee")] -= math.radians(30)
    lifted[model.joints.index("br_hip_pitch")] += math.radians(15)
    resting = model.supporting_feet(lifted)
    assert len(resting) == 3 and {"front_right", "back_left"} <= set(resting)
    base = model.standing_base(lifted)
    points = np.vstack([model.sole_corners(side, lifted, base) for side in resting])
    assert np.all(np.abs(points[:, 2]) <= 1e-6)
    others = [model.sole_corners(side, lifted, base)[0, 2] for side in model.config.feet if side not in resting]
    assert others[0] > 0.01  # the fourth foot in the air
    assert signed_margin(model.com(lifted, base)[:2], convex_hull(points[:, :2])) > 0.0
