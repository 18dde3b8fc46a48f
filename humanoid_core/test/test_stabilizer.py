"""The walk's IMU feedback: a lasting lean of the trunk is given to the IK, a sway is not.

The walk controller computes its set-points ``command_lead`` ahead of the reading they
come from, so a correction reaches the robot at least that late. Fed back at the
sway's own frequency (about 1 Hz), a correction half a cycle late pushed the way the
robot was already going: the simulated HOAP-2's rocking grew until it fell within
0.5 m. The tilt is therefore low-passed well below the sway (``tilt_feedback_cutoff``).
"""

from __future__ import annotations

import math

import numpy as np
import pinocchio as pin

from humanoid_core.biped_walking import Sensors, Stabilizer, WalkParameters
from humanoid_description import load_model

PERIOD = 0.01  # s


def corrections(lean, seconds: float, **overrides) -> np.ndarray:
    """The trunk roll correction (rad) each period while the base rolls by ``lean(t)``."""
    model = load_model("hoap2")
    params = WalkParameters.for_robot("hoap2", tilt_feedback_gain=1.0, tilt_feedback_limit=0.2, **overrides)
    stabilizer = Stabilizer(model, params)
    posture = model.home_positions()
    imu_in_base = model.frame_placement(model.config.imu_frame, posture).rotation
    feet = {side: pin.SE3.Identity() for side in ("right", "left")}
    rolls = []
    for k in range(round(seconds / PERIOD)):
        base = pin.rpy.rpyToMatrix(lean(k * PERIOD), 0.0, 0.0)
        q = pin.Quaternion(base @ imu_in_base)
        sensors = Sensors(imu_orientation=(q.x, q.y, q.z, q.w))
        correction = stabilizer.update(k * PERIOD, np.zeros(3), posture, np.eye(3), feet, sensors)
        rolls.append(pin.rpy.matrixToRpy(correction.trunk)[0])
    return np.array(rolls)


def test_a_lasting_lean_is_corrected_in_full():
    lean = math.radians(3.0)
    rolls = corrections(lambda t: lean, 10.0)
    assert abs(rolls[-1] - lean) < 0.02 * lean


def test_a_sway_at_walking_frequency_is_mostly_not_fed_back():
    amplitude, frequency = math.radians(3.0), 0.8  # Hz: a 0.6 s step, one sway per two steps
    sway = corrections(lambda t: amplitude * math.sin(2 * math.pi * frequency * t), 10.0)
    assert np.max(np.abs(sway[-300:])) < 0.5 * amplitude
    # the filter is what does it: at its old 10 Hz the sway went through almost whole
    fast = corrections(lambda t: amplitude * math.sin(2 * math.pi * frequency * t), 10.0, tilt_feedback_cutoff=10.0)
    assert np.max(np.abs(fast[-300:])) > 0.9 * amplitude
