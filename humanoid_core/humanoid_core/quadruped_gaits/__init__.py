"""Quadruped gaits: planar leg inverse kinematics, foot paths and the gait patterns that
phase four legs (ROS-free; evaluated headless by :mod:`humanoid_sim.gait_evaluation`)."""

import lazy_loader

# The room's public face: what other rooms use, imported on first use (lazy_loader).
__getattr__, __dir__, __all__ = lazy_loader.attach(__name__, submod_attrs={
    "cpg": [
        "CPGGait",
        "CPGParameters",
        "OscillatorNetwork",
        "STRUCTURES",
        "coupling_matrix",
        "parameters_from_vector",
        "search_box",
    ],
    "cpg_models": ["Experiment", "NetworkGait", "cpg_path", "load_cpg"],
    "fitness": ["FitnessSettings", "path_fitness"],
    "foot_path": ["EllipticPath"],
    "gait_files": ["cpg_player", "ik_player", "load_gait"],
    "leg_ik": ["solve"],
    "parameters": ["GaitControllerParameters", "NODE_NAME", "gaited_robot"],
    "patterns": ["FREQUENCY_RANGE", "GaitError", "IKGait", "default_parameters", "gait_phases", "robot_legs"],
    "player": ["GaitPlayer", "GaitRun", "RunSetpoint", "RunTiming", "Stage"],
})
