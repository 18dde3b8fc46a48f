"""The driver seam and the ROS-free control loop.

- :mod:`~humanoid_core.loop.driver`: what a back end implements (the simulator, the
  Dynamixel bus, :mod:`~humanoid_core.loop.ideal_driver` for in-process runs);
- :mod:`~humanoid_core.loop.control_loop`: the cycle (sync, read, executor, guard, write);
- :mod:`~humanoid_core.loop.validation`, :mod:`~humanoid_core.loop.trajectory_executor`,
  :mod:`~humanoid_core.loop.interpolation`: commands checked once, planned and sampled;
- :mod:`~humanoid_core.loop.command_guard`: the guard interface the loop calls;
- :mod:`~humanoid_core.loop.decimation`, :mod:`~humanoid_core.loop.interface_parameters`.

Nothing here imports ROS.
"""

import lazy_loader

# The room's public face: what other rooms use, imported on first use (lazy_loader).
__getattr__, __dir__, __all__ = lazy_loader.attach(__name__, submod_attrs={
    "command_guard": ["CheckInterruptedError", "CommandGuard", "Veto"],
    "control_loop": [
        "ControlLoop",
        "GilTurns",
        "ToleranceSpec",
        "TrajectoryRequest",
        "known_positions",
        "start_positions",
        "trajectory_tolerances",
    ],
    "decimation": ["Decimator"],
    "driver": [
        "DriverError",
        "FootReading",
        "ImuReading",
        "JointCommand",
        "JointState",
        "Level",
        "RobotDriver",
        "SensorReadings",
        "StatusEntry",
        "TorqueUnsupportedError",
    ],
    "ideal_driver": ["IdealDriver"],
    "interface_parameters": ["InterfaceParameters"],
    "interpolation": ["Law", "Spline", "cubic", "quintic", "two_segment", "two_segment_mid_velocity"],
    "lockstep": ["ANSWER_TIMES_KEPT", "LockstepGate", "RESEND_PERIOD", "STAMP_TOLERANCE"],
    "remote": ["TORQUE", "Finished", "LoopClient", "LoopServer", "RemoteError", "RunHandle", "StartFailed"],
    "setpoint_window": ["FOLLOW_TOLERANCE", "FOLLOW_WINDOW", "MAX_RESUMES", "Batch", "Setpoint", "SetpointBatcher",
                        "TRAJECTORY_DELAY", "VELOCITY_MARGIN", "farthest_joint", "handled_at"],
    "trajectory_executor": [
        "PlanOutdatedError",
        "PlannedTrajectory",
        "RunState",
        "Tolerances",
        "TrajectoryExecutor",
        "TrajectoryRun",
        "run_spline",
    ],
    "validation": [
        "CommandRejectedError",
        "CommandValidator",
        "ErrorCode",
        "PointData",
        "ValidatedSetpoint",
        "ValidatedTrajectory",
        "points_still_ahead",
    ],
})
