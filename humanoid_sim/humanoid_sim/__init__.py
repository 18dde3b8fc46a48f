"""The public face of humanoid_sim: the names other packages use from its modules."""

import lazy_loader

# The room's public face: what other rooms use, imported on first use (lazy_loader).
__getattr__, __dir__, __all__ = lazy_loader.attach(__name__, submod_attrs={
    "gait_evaluation": [
        "CPGEvaluator",
        "GaitOutcome",
        "HeadlessSimulation",
        "NetworkEvaluator",
        "evaluate_cpg",
        "evaluate_network",
    ],
    "graphs": ["sim_nodes", "world_namespaces"],
    "headless": ["make_driver", "simulation_settings"],
    "in_process": ["RUN_LIMIT", "Reading", "SimulatedRobot"],
    "pace_watch": ["PaceWatch"],
    "params_file": ["LINK_PREFIX", "ParamsFileError", "check_values", "link_names", "load"],
    "physics_profiles": ["REFERENCE", "allowed_parameters", "values_in_force"],
    "pybullet_driver": ["PyBulletDriver"],
    "sensor_noise": ["SensorNoise"],
    "servo_profiles": ["BusReference", "PD_GAINS", "ServoBank", "ServoParameters", "stable_gains"],
    "shared_world": ["DEFAULT_SPACING", "SharedWorld", "WorldSeat"],
    "sim_command": ["MAX_COUNT", "robot_count"],
    "sim_node": ["SimDriverConfig", "build_driver", "declare_driver"],
    "sim_node_spec": ["NODE_NAME", "control_period"],
    "sim_parameters": ["NoiseParameters", "PushParameters", "SimParameters", "parameter_names"],
    "transmission": ["TransmissionParameters", "Transmissions"],
    "world_node": [],
})
