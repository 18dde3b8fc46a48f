"""The public face of humanoid_hw: the names other packages use from its modules."""

import lazy_loader

# The room's public face: what other rooms use, imported on first use (lazy_loader).
__getattr__, __dir__, __all__ = lazy_loader.attach(__name__, submod_attrs={
    "bus": ["DynamixelBus", "PortLostError", "Traffic"],
    "bus_layout": ["HardwareJoint", "hardware_joints"],
    "control_tables": [
        "CONTROL_TABLES",
        "block_decoder",
        "control_table",
        "decode_bits",
        "model_name_for_number",
        "stand_in_joint_map",
    ],
    "driver": ["DynamixelDriver"],
    "hardware_config": ["DynamixelConfig", "load_hardware_config"],
    "hw_node_spec": ["NODE_NAME"],
})
