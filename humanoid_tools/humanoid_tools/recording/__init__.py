"""Recording experiments as rosbag2 bags (MCAP storage) without ``ros2 bag``, and reading
them back: the recorder node, the bag writer, message definitions from the ament index,
repair of an interrupted bag, and the recording benchmark."""

import lazy_loader

# The room's public face: what other rooms use, imported on first use (lazy_loader).
__getattr__, __dir__, __all__ = lazy_loader.attach(__name__, submod_attrs={
    "bag_argument": ["check_bag", "read_bag"],
    "bag_writer": ["BagWriter"],
    "message_types": ["definition_text", "message_type", "type_hash"],
    "reading": ["Bag", "NAMESPACE_KEY", "custom_data", "recorded_namespace", "robot_interface_name"],
    "recorder": ["Recorder", "RecorderParameters"],
    "reindex": ["recoverable_counts"],
})
