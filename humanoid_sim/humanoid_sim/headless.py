"""The simulation node's driver built in-process, from the same parameter file and profile.

Experiments that need no ROS (benchmarks, in-process walks and postures, gait searches)
simulate the robot exactly as the node would: the values of ``humanoid_description/robots/<robot>/sim.yaml``,
a physics profile (:mod:`humanoid_sim.physics_profiles`) in place of the reference values,
then any explicit overrides, converted to each field's type as the node's parameter
declaration converts them (:func:`humanoid_control.ros.parameters.declare`).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import Any, TypeVar

from humanoid_core import node_parameters
from humanoid_core.loop import InterfaceParameters
from humanoid_description import SIM_NODE_PARAMETERS, RobotModel
from humanoid_sim import params_file as params_files
from humanoid_sim import physics_profiles
from humanoid_sim.pybullet_driver import PyBulletDriver
from humanoid_sim.servo_profiles import ServoParameters
from humanoid_sim.sim_node_spec import NODE_NAME
from humanoid_sim.sim_parameters import SimParameters
from humanoid_sim.transmission import TransmissionParameters

T = TypeVar("T")


def typed(cls: type[T], values: Mapping[str, Any], prefix: str = "", builtin: T | None = None) -> T:
    """``cls`` from the keys ``prefix + field`` of ``values`` (the others: ``builtin``'s, else the
    class defaults), each converted to its default's type, as the node declares them."""
    base = builtin if builtin is not None else cls()  # type: ignore[call-arg]
    chosen = {}
    for f in fields(cls):  # type: ignore[arg-type]
        default = getattr(base, f.name)
        value = values.get(prefix + f.name, default)
        if isinstance(default, bool):
            if not isinstance(value, bool):
                raise ValueError(f"parameter {prefix + f.name} must be true or false, got {value!r}")
            chosen[f.name] = value
        else:
            chosen[f.name] = type(default)(value)
    return cls(**chosen)


@dataclass(frozen=True)
class SimulationSettings:
    """Everything the simulation node's driver is built from."""

    profile: str
    sim: SimParameters
    servo: ServoParameters
    transmission: TransmissionParameters
    interface: InterfaceParameters
    values: dict[str, Any]  # the flattened parameter values in force
    corrections: dict[str, params_files.LinkCorrection] = field(default_factory=dict)  # per link
    params_file: dict[str, Any] = field(default_factory=dict)  # what the parameter file set

    def describe_params_file(self, path: Path | str) -> str:
        """The start-up line of the parameter file (as the node logs it)."""
        return params_files.describe(path, self.params_file)


def simulation_settings(model: RobotModel, profile: str = physics_profiles.REFERENCE,
                        overrides: Mapping[str, Any] | None = None,
                        params_file: Path | str | None = None) -> SimulationSettings:
    """The node's settings for ``model``: its parameter file, ``profile``, a simulation parameter
    file (:mod:`humanoid_sim.params_file`), then ``overrides`` (flattened names, as ``--set
    NAME=VALUE``, model corrections included); headless and unpaced unless overridden."""
    file_values = node_parameters(SIM_NODE_PARAMETERS.path(model.name), NODE_NAME)
    chosen = {} if params_file is None else params_files.load(params_file, params_files.link_names(model.urdf))
    values = {**physics_profiles.apply(file_values, profile), "real_time_factor": 0.0, "gui": False,
              **chosen, **(overrides or {})}
    return SimulationSettings(
        profile=profile, sim=typed(SimParameters, values),
        servo=typed(ServoParameters, values, "servo.", ServoParameters.for_model(model)),
        transmission=typed(TransmissionParameters, values, "transmission."),
        interface=typed(InterfaceParameters, values), values=values,
        corrections=params_files.corrections(values), params_file=chosen)


def make_driver(model: RobotModel, settings: SimulationSettings) -> PyBulletDriver:
    """The node's driver for these settings (not started)."""
    return PyBulletDriver(model, settings.servo, settings.sim, settings.transmission, settings.corrections)
