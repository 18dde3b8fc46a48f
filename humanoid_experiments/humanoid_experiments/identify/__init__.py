"""The public face of humanoid_experiments.identify: the names other packages use from its modules."""

import lazy_loader

# The room's public face: what other rooms use, imported on first use (lazy_loader).
__getattr__, __dir__, __all__ = lazy_loader.attach(__name__, submod_attrs={
    "command": ["checked_request"],
    "motion": ["Motion", "plan_commands", "read_bag", "record", "replay", "rms"],
    "problem": [
        "DEFAULT_BOUNDS",
        "EquilibriumTarget",
        "FitError",
        "FitParameter",
        "PostureTarget",
        "Problem",
        "UNFIT_POSTURES_COST",
        "cost",
        "motion_terms",
        "motions_cost",
        "parse_fit",
        "postures_cost",
        "postures_run_order",
        "read_postures",
    ],
    "user_paths": ["PATHS", "PathReplay", "drive", "path_errors", "path_joints", "recorded_first", "replay_paths",
                   "stretch_rms", "wait_until_recorded"],
    "proof": ["FIT", "FIT_GAIN", "HELD_OUT_GAIN", "SENSED_ROBOT", "SENSED_TRUTH", "TOLERANCES", "TRUTH",
              "cost_profile", "record_squat"],
})
