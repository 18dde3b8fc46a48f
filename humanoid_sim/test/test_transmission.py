"""The gear-train model: links sag behind their motors by the play and the deflection under load."""

import math

import numpy as np
import pytest

from humanoid_sim import TransmissionParameters, Transmissions

JOINTS = ("hip", "knee", "ankle")
DT = 0.005


def settle(gears: Transmissions, torque, seconds: float = 2.0) -> None:
    for _ in range(round(seconds / DT)):
        gears.update(np.asarray(torque, dtype=float), DT)


def test_rigid_gears_never_sag():
    gears = Transmissions(TransmissionParameters(), JOINTS)
    assert not gears.params.active
    settle(gears, [3.0, -2.0, 1.0])
    assert np.all(gears.sag == 0.0)


def test_a_link_deflects_by_its_load_over_the_stiffness():
    gears = Transmissions(TransmissionParameters(stiffness=100.0), JOINTS)
    settle(gears, [2.0, -1.0, 0.0])
    # the motor pushes +2 N m: its load pushes the link the other way by 2 / 100 rad
    assert gears.sag == pytest.approx([-0.02, 0.01, 0.0], abs=1e-6)


def test_the_deflection_follows_the_load_with_the_filter_lag():
    gears = Transmissions(TransmissionParameters(stiffness=100.0, filter_time=0.05), JOINTS)
    settle(gears, [1.0, 0.0, 0.0], seconds=0.05)  # one time constant
    assert -gears.sag[0] == pytest.approx(0.01 * (1 - math.exp(-1)), rel=0.05)


def test_a_loaded_link_settles_at_the_end_of_its_play_and_crosses_when_the_load_reverses():
    params = TransmissionParameters(backlash=2.0, backlash_joints=("hip", "ankle"), crossing_speed=4.0,
                                    breakaway_torque=0.1)
    gears = Transmissions(params, JOINTS)
    half = math.radians(1.0)
    assert np.all(gears.sag == 0.0)  # put down: in the middle of the play
    settle(gears, [0.5, 0.5, -0.5])
    assert gears.sag == pytest.approx([-half, 0.0, half])  # the knee has no play
    # a load reversal smaller than the gears' friction leaves the links where they are
    settle(gears, [-0.05, -0.05, 0.05])
    assert gears.sag == pytest.approx([-half, 0.0, half])
    # a real reversal carries them across, at the crossing speed: 2 deg at 4 deg/s takes 0.5 s
    settle(gears, [-0.5, -0.5, 0.5], seconds=0.25)
    assert abs(gears.sag[0]) < 0.2 * half
    settle(gears, [-0.5, -0.5, 0.5], seconds=0.5)
    assert gears.sag == pytest.approx([half, 0.0, -half])


def test_a_joint_group_with_its_own_stiffness_deflects_by_it_and_the_others_by_the_common_one():
    params = TransmissionParameters(stiffness=100.0, hip_joints=("hip",), hip_stiffness=40.0,
                                    ankle_joints=("ankle",), ankle_stiffness=0.0)
    gears = Transmissions(params, JOINTS)
    settle(gears, [2.0, 2.0, 2.0])
    # the hip by its group's 40, the knee (no group) and the ankle (its group's 0) by the common 100
    assert gears.sag == pytest.approx([-2.0 / 40.0, -0.02, -0.02], abs=1e-6)
    assert params.describe_stiffness() == "stiffness hips 40 N m/rad, 100 N m/rad elsewhere"


def test_a_group_stiffness_alone_makes_only_its_joints_compliant():
    params = TransmissionParameters(knee_joints=("knee",), knee_stiffness=50.0)
    assert params.active
    gears = Transmissions(params, JOINTS)
    settle(gears, [1.0, 1.0, 1.0])
    assert gears.sag == pytest.approx([0.0, -0.02, 0.0], abs=1e-6)


def test_play_and_deflection_add_up():
    gears = Transmissions(TransmissionParameters(stiffness=50.0, backlash=2.0, backlash_joints=("ankle",)), JOINTS)
    settle(gears, [0.0, 0.0, 1.0])
    assert gears.sag[2] == pytest.approx(-math.radians(1.0) - 1.0 / 50.0, abs=1e-6)


def test_reset_puts_the_links_back_unloaded_in_the_middle_of_their_play():
    gears = Transmissions(TransmissionParameters(stiffness=50.0, backlash=2.0, backlash_joints=("hip",)), JOINTS)
    settle(gears, [1.0, 1.0, 1.0])
    gears.reset()
    assert np.all(gears.sag == 0.0) and np.all(gears.torque == 0.0)


def test_update_says_when_the_motors_need_new_targets():
    gears = Transmissions(TransmissionParameters(stiffness=100.0), JOINTS)
    assert gears.update(np.array([1.0, 0.0, 0.0]), DT)
    settle(gears, [1.0, 0.0, 0.0], seconds=3.0)
    assert not gears.update(np.array([1.0, 0.0, 0.0]), DT)  # converged: nothing to resend


@pytest.mark.parametrize(("kwargs", "message"), [
    ({"stiffness": -1.0}, "stiffness must be a finite number >= 0"),
    ({"backlash": math.nan}, "backlash must be a finite number >= 0"),
    ({"filter_time": 0.0}, "filter_time must be a finite number > 0"),
    ({"crossing_speed": -2.0}, "crossing_speed must be a finite number > 0"),
    ({"backlash": 2.0}, "backlash_joints names no joint"),
    ({"hip_stiffness": -5.0, "hip_joints": ("hip",)}, "hip_stiffness must be a finite number >= 0"),
    ({"ankle_stiffness": 80.0}, "ankle_stiffness is set but ankle_joints names no joint"),
    ({"hip_joints": ("hip",), "knee_joints": ("hip", "knee")}, "joint hip is in the hip and the knee groups"),
])
def test_bad_parameters_are_refused(kwargs, message):
    with pytest.raises(ValueError, match=message):
        TransmissionParameters(**kwargs)


def test_an_unknown_backlash_joint_is_named():
    with pytest.raises(ValueError, match=r"unknown joint.*elbow"):
        Transmissions(TransmissionParameters(backlash=2.0, backlash_joints=("hip", "elbow")), JOINTS)


def test_an_unknown_group_joint_is_named():
    with pytest.raises(ValueError, match=r"trunk_joints: unknown joint.*waist"):
        Transmissions(TransmissionParameters(trunk_joints=("waist",), trunk_stiffness=50.0), JOINTS)
