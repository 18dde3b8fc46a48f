"""The quadruped's joint limits are the mechanism's: each servo's range, narrowed only where the
collision model proves the joint cannot go (humanoid_description.joint_ranges). At each narrowed
end a configuration of the joint's chain is free, one degree beyond none is; at each other end
(the servo's) a configuration is free."""

import math

import numpy as np
import pytest

from humanoid_description import CollisionModel, configurations, free_at, load_model

#: The AX-12's range around its neutral 513: 510 units of 0.2932 deg (joint_map.yaml).
SERVO_RANGE = math.radians(510 * 0.2932)
STEP = math.radians(1.0)


@pytest.fixture(scope="module")
def model():
    return load_model("bioloid_quadruped")


@pytest.fixture(scope="module")
def collision(model):
    return CollisionModel(model, use_srdf=False)


@pytest.mark.parametrize("joint", ["fl_hip_roll", "bl_hip_roll", "neck_pitch", "fl_knee", "spine_pitch"])
def test_each_limit_is_the_servos_end_or_a_proven_narrowing(model, collision, joint):
    servo = np.full(len(model.joints), SERVO_RANGE)
    rows = configurations(model, joint, -servo, servo, samples=400, seed=0)
    limits = model.joints[joint].limits
    for end, sign in ((limits.lower, -1.0), (limits.upper, 1.0)):
        assert free_at(collision, joint, end, rows)[0], f"{joint} at {math.degrees(end):.1f} deg"
        if abs(end) < SERVO_RANGE - 1e-3:  # narrowed: a degree beyond, every configuration collides
            free, pairs = free_at(collision, joint, end + sign * STEP, rows)
            assert not free and pairs
        else:
            assert abs(end) == pytest.approx(SERVO_RANGE, abs=1e-4)


def test_the_narrowings_are_the_hip_rolls_inward_and_the_neck(model):
    narrowed = {j.name for j in model.joints if min(abs(j.limits.lower), abs(j.limits.upper)) < SERVO_RANGE - 1e-3}
    assert narrowed == {"fl_hip_roll", "fr_hip_roll", "bl_hip_roll", "br_hip_roll", "neck_pitch"}
    for side in ("f", "b"):  # the right legs mirror the left
        left, right = model.joints[f"{side}l_hip_roll"].limits, model.joints[f"{side}r_hip_roll"].limits
        assert (right.lower, right.upper) == (-left.upper, -left.lower)
