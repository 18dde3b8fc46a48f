"""The joint table maps what a message names onto the robot's canonical joint order."""

import math

import numpy as np
import pytest

from humanoid_description import load_model


@pytest.fixture(scope="module")
def joints():
    return load_model("bioloid").joints


def test_a_message_s_joints_land_in_canonical_order_and_the_others_are_unknown(joints):
    last, first = joints.names[-1], joints.names[0]
    q = joints.from_named([last, "gripper", first], [0.25, 9.0, -0.5])
    assert q[-1] == 0.25 and q[0] == -0.5  # in the table's order, not the message's
    assert np.isnan(q[1:-1]).all()  # not named: unknown; "gripper" is no joint here: passed over
    assert len(q) == len(joints)


def test_joints_not_named_take_the_default_a_named_nan_stays_nan(joints):
    home = np.linspace(-1.0, 1.0, len(joints))
    q = joints.from_named([joints.names[2], joints.names[3]], [0.5, math.nan], home)
    assert q[2] == 0.5 and math.isnan(q[3])
    assert np.array_equal(np.delete(q, [2, 3]), np.delete(home, [2, 3]))
    assert home[2] != 0.5  # the default itself is not written to
    assert np.array_equal(joints.from_named([], [], 0.0), np.zeros(len(joints)))


def test_a_command_naming_an_unknown_joint_is_refused_by_to_array(joints):
    with pytest.raises(KeyError, match="unknown joint 'gripper'"):
        joints.to_array({"gripper": 1.0})
