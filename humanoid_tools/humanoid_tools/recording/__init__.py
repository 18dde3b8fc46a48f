"""Recording experiments as rosbag2 bags (MCAP storage) without ``ros2 bag``, and reading
them back: the recorder node, the bag writer, message definitions from the ament index,
repair of an interrupted bag, and the recording benchmark."""
