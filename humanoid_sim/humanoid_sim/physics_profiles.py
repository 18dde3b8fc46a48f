"""Named physics profiles: sets of simulation settings traded between speed and fidelity.

A robot's simulation parameter file (``humanoid_description/robots/<robot>/sim.yaml``) holds the
reference values (the settings every measurement of the project was made with) and,
under ``physics_profiles:``, named profiles that override some of them::

    physics_profiles:
      fast: {physics_rate: 250.0, contact_erp: 0.28, servo: {position_gain: 0.59}}

The simulation node's ``physics_profile`` parameter (default ``reference``: the file's
own values) picks one; values given on the command line or by a launch file still win
over the profile's. A profile may set the world's engine settings
(:class:`~humanoid_sim.pybullet_driver.SimParameters`, except pacing, GUI and the
fall and contact thresholds, which are not physics) and the servo motors' gains, whose
meaning depends on the physics step, or the servo law (``servo.law``, its bus rate and
gains). Nothing here imports PyBullet or ROS: the
``humanoid`` command checks a profile's name before it starts anything.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import fields
from typing import TYPE_CHECKING, Any

from humanoid_core import node_parameters
from humanoid_description import SIM_NODE_PARAMETERS
from humanoid_sim.sim_node_spec import NODE_NAME

if TYPE_CHECKING:
    from humanoid_description import Robot
    from humanoid_sim.servo_profiles import ServoParameters
    from humanoid_sim.sim_parameters import SimParameters

#: The profile of the parameter file's own values.
REFERENCE = "reference"
#: Where the profiles sit in the parameter file (flattened keys: ``physics_profiles.<name>.<parameter>``).
SECTION = "physics_profiles"
#: Simulation parameters that are not physics, which no profile may change.
NOT_PHYSICS = frozenset({"real_time_factor", "pace_window", "pace_share", "gui", "fall_tilt",
                         "contact_force_threshold", "drop_height"})
#: Servo parameters a profile may set: the motors' gains (PyBullet's per-step shares) and the
#: servo law with its bus rate and gains (whose stable values depend on the physics step).
SERVO_GAINS = frozenset({"servo.position_gain", "servo.velocity_gain", "servo.law", "servo.bus_rate",
                         "servo.k_theta_legs", "servo.k_omega_legs", "servo.k_theta_others", "servo.k_omega_others"})


class UnknownProfileError(ValueError):
    """A profile name the robot's parameter file does not define."""


def allowed_parameters() -> frozenset[str]:
    """Names a profile may set."""
    from humanoid_sim.sim_parameters import SimParameters

    return frozenset(f.name for f in fields(SimParameters) if f.name not in NOT_PHYSICS) | SERVO_GAINS


def profiles(values: Mapping[str, Any]) -> dict[str, dict[str, Any]]:
    """The profiles of a flattened parameter file (``reference`` included, empty: the file's values)."""
    found: dict[str, dict[str, Any]] = {REFERENCE: {}}
    prefix = SECTION + "."
    for key, value in values.items():
        if key.startswith(prefix):
            name, _, parameter = key[len(prefix):].partition(".")
            found.setdefault(name, {})[parameter] = value
    return found


def robot_profiles(robot: Robot) -> dict[str, dict[str, Any]]:
    """The profiles in ``robot``'s simulation parameter file."""
    return profiles(node_parameters(robot.path(SIM_NODE_PARAMETERS), NODE_NAME))


def profile_names(robot: Robot) -> list[str]:
    return list(robot_profiles(robot))


def check_name(robot: Robot, name: str) -> str:
    """``name`` if ``robot`` has that profile, else UnknownProfileError naming the known ones."""
    known = profile_names(robot)
    if name not in known:
        raise UnknownProfileError(f"unknown physics profile {name!r} for {robot.name} (known: {', '.join(known)}; "
                                  f"humanoid_description/robots/{robot.name}/sim.yaml, {SECTION}:)")
    return name


def apply(values: Mapping[str, Any], name: str) -> dict[str, Any]:
    """The flattened parameter values ``values`` with profile ``name``'s settings in place of the
    reference ones; UnknownProfileError for a name the file lacks, ValueError for a profile that
    sets anything but physics."""
    found = profiles(values)
    if name not in found:
        raise UnknownProfileError(f"unknown physics profile {name!r} (known: {', '.join(found)})")
    settings = found[name]
    wrong = sorted(set(settings) - allowed_parameters())
    if wrong:
        raise ValueError(f"physics profile {name!r} sets {', '.join(wrong)}: a profile sets only "
                         f"{', '.join(sorted(allowed_parameters()))}")
    return {**values, **settings}


def values_in_force(sim: SimParameters, servo: ServoParameters) -> dict[str, Any]:
    """The values of every setting a physics profile may change (for the logs and benchmarks)."""
    values = {name: getattr(sim, name) for name in sorted(allowed_parameters()) if not name.startswith("servo.")}
    return values | {name: getattr(servo, name.removeprefix("servo.")) for name in sorted(SERVO_GAINS)}


def add_argument(parser: Any) -> None:
    """``--physics NAME`` on a command that starts the simulation (an argparse parser)."""
    parser.add_argument("--physics", default=None, metavar="PROFILE",
                        help=f"physics profile of the simulation (default: {REFERENCE}, the parameter file's values; "
                             f"fast: quicker, validated by `humanoid bench physics`); the robot's {SECTION} list them")


def chosen(robot: Robot, name: str | None) -> str | None:
    """``--physics``'s value checked for ``robot`` (resolved once by the command): None (the
    node's default) or a profile its parameter file names; a UsageError naming the known ones
    otherwise."""
    if name is None:
        return None
    from humanoid_core import UsageError

    try:
        return check_name(robot, name)
    except UnknownProfileError as error:
        raise UsageError(str(error)) from None
