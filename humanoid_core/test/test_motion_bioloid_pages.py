"""Bioloid motion pages (text form): round trips, step timing from Moving Speed, line checks."""

import math
from dataclasses import replace

import numpy as np
import pytest

from humanoid_core.loop import Law
from humanoid_core.motion import (
    BioloidPages,
    Motion,
    MotionError,
    Page,
    PageStep,
    motion_to_pages,
    pages_text,
    pages_to_motion,
    read_motion_file,
    read_pages,
    write_pages,
)
from humanoid_description import AX12, AX12_SPEED, load_config

HOME = {1: 206, 2: 818, 3: 252, 4: 772, 5: 512, 6: 512}
UP = {**HOME, 3: 512, 5: 300}

VALID = """\
format: bioloid_pages
robot: bioloid
name: arms
pages:
  - name: up
    steps:
      - {positions: {1: 206, 2: 818, 3: 252, 4: 772, 5: 512, 6: 512}}
      - {speed: 120, pause: 0.5, positions: {1: 206, 2: 818, 3: 512, 4: 772, 5: 300, 6: 512}}
  - name: down
    steps:
      - {speed: 0, positions: {1: 206, 2: 818, 3: 252, 4: 772, 5: 512, 6: 512}}
"""


def write(tmp_path, text):
    path = tmp_path / "arms.yaml"
    path.write_text(text)
    return path


def test_document_round_trip(tmp_path):
    pages = BioloidPages(robot="bioloid", name="arms", description='two "pages"', pages=(
        Page("up", (PageStep(HOME, None), PageStep(UP, 120, 0.5))),
        Page("down", (PageStep(HOME, 0, 1.25),))))
    path = tmp_path / "arms.yaml"
    write_pages(pages, path)
    assert read_pages(path) == pages
    assert pages_text(read_pages(path)) == path.read_text()


def test_step_lasts_its_largest_move_at_its_moving_speed(tmp_path):
    motion = read_motion_file(write(tmp_path, VALID), "bioloid")
    assert motion.law is Law.LINEAR and motion.joint_names[:3] == ("r_shoulder_pitch", "l_shoulder_pitch",
                                                                   "r_shoulder_roll")
    largest = 260 * AX12.radians_per_unit  # motor 3: 252 -> 512
    first = largest / AX12_SPEED.raw_to_rad_s(120)
    back = largest / load_config("bioloid").actuators.max_velocity  # speed 0 = the servo's maximum
    np.testing.assert_allclose(motion.times, [0.0, first, first + 0.5 + back])
    np.testing.assert_allclose(motion.holds, [0.0, 0.5, 0.0])
    assert motion.labels == ("up/1", "up/2", "down/1")
    # motor 5 (r_elbow) arrives together with motor 3 (r_shoulder_roll): velocities in the ratio of
    # their moves (both servos are mounted with direction -1, which cancels)
    _, velocity, _ = motion.spline().sample(first / 2)
    assert velocity[4] / velocity[2] == pytest.approx((UP[5] - HOME[5]) / (UP[3] - HOME[3]))


def test_motion_to_pages_and_back_keeps_positions_and_timing(tmp_path):
    original = read_motion_file(write(tmp_path, VALID), "bioloid")
    again = pages_to_motion(motion_to_pages(original))
    np.testing.assert_allclose(again.positions, original.positions, atol=AX12.radians_per_unit / 2)
    np.testing.assert_allclose(again.times, original.times, rtol=0.01)  # whole Moving Speed units
    np.testing.assert_allclose(again.holds, original.holds)


def test_long_motions_fill_pages_of_seven_steps_and_still_poses_become_pauses():
    times = np.arange(10) * 1.0
    positions = np.array([[0.05 * i, 0.0] for i in range(10)])
    positions[5] = positions[4]  # no move between keyframes 4 and 5: a longer pause
    motion = Motion(name="swing", robot="bioloid", joint_names=("r_elbow", "l_elbow"), times=times,
                    positions=positions, law=Law.LINEAR)
    pages = motion_to_pages(motion)
    assert [len(p.steps) for p in pages.pages] == [7, 2]
    assert pages.steps[4].pause == pytest.approx(1.0)
    with pytest.raises(MotionError, match="pages play linearly"):
        motion_to_pages(replace(motion, law=Law.CUBIC))


@pytest.mark.parametrize(("old", "new", "line", "problem"), [
    ("robot: bioloid", "robot: hoap2", 2, "robot 'hoap2' has no Dynamixel joint map"),
    ("{speed: 120, pause: 0.5,", "{pause: 0.5,", 8, "page 0 step 1: missing speed"),
    ("speed: 120", "speed: 2000", 8, "page 0 step 1: speed must be 0..1023 (Moving Speed units), got 2000"),
    ("speed: 120", "speed: 1.5", 8, "page 0 step 1 speed must be an integer, got '1.5'"),
    ("pause: 0.5", "pause: -1", 8, "page 0 step 1: pause must be >= 0"),
    ("3: 512, 4: 772, 5: 300", "3: 512, 4: 772, 5: 1100", 8, "motor 5 (r_elbow) = 1100 is outside the register range"),
    ("3: 512, 4: 772, 5: 300", "3: 512, 4: 772, 55: 300", 8, "page 0 step 1: '55' is not a motor ID"),
    ("3: 512, 4: 772, 5: 300, 6: 512}}", "3: 512, 4: 772, 5: 300}}", 8, "motors [1, 2, 3, 4, 5] differ"),
    ("3: 512, 4: 772, 5: 300", "3: 252, 4: 772, 5: 512", 8, "same pose as the previous step"),
    ("  - name: down", "  - nmae: down", 9, "page 1: unknown key 'nmae'"),
])
def test_malformed_pages_name_file_line_and_problem(tmp_path, old, new, line, problem):
    assert old in VALID
    path = write(tmp_path, VALID.replace(old, new, 1))
    with pytest.raises(MotionError) as error:
        read_pages(path)
    assert str(error.value).startswith(f"{path}:{line}: "), str(error.value)
    assert problem in str(error.value)


def test_page_and_step_counts_follow_the_makers_limits(tmp_path):
    step = "      - {speed: 100, positions: {5: %d}}\n"
    eight = "".join(step % (300 + 10 * i) for i in range(8))
    text = f"format: bioloid_pages\nrobot: bioloid\npages:\n  - steps:\n{eight}"
    with pytest.raises(MotionError, match=r"arms.yaml:5: page 0: expected 1..7 steps, got 8"):
        read_pages(write(tmp_path, text))
    assert math.isclose(read_pages(write(tmp_path, text.replace(step % 370, ""))).steps[1].positions[5], 310)
