"""The serialized joint_states: the same message as the message object gives, stale joints NaN.

(Bytes are compared after a round trip: the middleware leaves CDR's alignment padding
uninitialized, so two serializations of one message may differ there.)"""

import math

import numpy as np
import pytest
from rclpy.serialization import deserialize_message, serialize_message
from sensor_msgs.msg import JointState

from humanoid_control.joint_state_wire import JointStateWire
from humanoid_control.ros_time import to_time
from humanoid_description.model import load_model


def message(names, stamp, position, velocity, effort) -> JointState:
    msg = JointState(name=list(names))
    msg.header.stamp = to_time(stamp)
    msg.position, msg.velocity, msg.effort = position.tolist(), velocity.tolist(), effort.tolist()
    return msg


@pytest.mark.parametrize("robot", ["hoap2", "bioloid"])
def test_same_message_as_the_message_object(robot: str) -> None:
    names = load_model(robot).joints.names
    wire = JointStateWire(names)
    rng = np.random.default_rng(3)
    for stamp in (0.0, 12.345678901, 1_700_000_000.999999999):
        position, velocity, effort = rng.normal(size=(3, len(names)))
        expected = message(names, stamp, position, velocity, effort)
        sent = wire.serialize(stamp, position, velocity, effort)
        assert len(sent) == len(serialize_message(expected))
        assert deserialize_message(sent, JointState) == expected


def test_stale_joints_are_nan_and_the_next_message_is_whole_again() -> None:
    names = load_model("hoap2").joints.names
    wire = JointStateWire(names)
    values = np.linspace(0.1, 2.5, len(names))
    valid = np.ones(len(names), dtype=bool)
    valid[[0, 7]] = False
    stale = deserialize_message(wire.serialize(3.5, values, -values, 2 * values, valid), JointState)
    assert (stale.header.stamp.sec, stale.header.stamp.nanosec) == (3, 500_000_000)
    assert list(stale.name) == list(names)
    for got, scale in ((stale.position, 1), (stale.velocity, -1), (stale.effort, 2)):
        assert all(math.isnan(got[i]) for i in (0, 7))
        assert np.array_equal(np.asarray(got)[valid], scale * values[valid])
    whole = deserialize_message(wire.serialize(3.51, values, -values, 2 * values), JointState)
    assert np.array_equal(np.asarray(whole.position), values)


def test_wrong_length_is_refused() -> None:
    wire = JointStateWire(["a", "b", "c"])
    with pytest.raises(ValueError, match="2 values for 3 joints"):
        wire.serialize(0.0, np.zeros(2), np.zeros(3), np.zeros(3))
