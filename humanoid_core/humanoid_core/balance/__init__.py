"""Balance of a standing or moving humanoid: CoM, ZMP, support polygon and margin.

Computations, one module per idea, used by the ``balance_monitor`` node
(:mod:`humanoid_control.nodes.balance_monitor`), the tests and the benchmark; the RViz
markers are the ROS layer's (:mod:`humanoid_control.ros.balance_markers`).
"""

import lazy_loader

# The room's public face: what other rooms use, imported on first use (lazy_loader).
__getattr__, __dir__, __all__ = lazy_loader.attach(__name__, submod_attrs={
    "alarm": ["AlarmChange", "AlarmEvent", "MarginAlarm", "describe_margin"],
    "com_filter": ["CoMFilter"],
    "estimator": ["BalanceEstimate", "BalanceEstimator", "BalanceInputs", "BasePose", "BaseSource", "ContactSource"],
    "fall": ["FallDetector", "FallEstimate", "FallSource", "Posture"],
    "fall_manager": [
        "Action",
        "ActionKind",
        "Decision",
        "FallManager",
        "FallManagerParameters",
        "FeetReading",
        "Protect",
        "Side",
        "State",
        "SupportReading",
        "TrunkReading",
        "side_of",
        "tilt_rate",
    ],
    "foot_pressure": ["FootWrench", "centre_of_pressure"],
    "parameters": ["BalanceParameters"],
    "readings": ["RecentReadings"],
    "sensor_wait": ["SensorWait"],
})
