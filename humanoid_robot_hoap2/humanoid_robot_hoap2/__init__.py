"""The Fujitsu HOAP-2's own code, without ROS: its motion file format.

- :mod:`.csv_motion`: the maker's csv motion files (reader, writer, a pose appended as a line);
- :mod:`.motion_format`: that format registered by name (``hoap2_csv``) for the motion
  library (entry point ``humanoid.motion_formats`` in ``setup.py``); the robot's folder
  (``humanoid_description/robots/hoap2/robot.yaml``) declares it for its ``.csv`` files.
"""

import lazy_loader

# The room's public face: what other rooms use, imported on first use (lazy_loader).
__getattr__, __dir__, __all__ = lazy_loader.attach(__name__, submod_attrs={
    "csv_motion": ["CsvLayout", "hoap2_csv_text", "read_hoap2_csv", "write_hoap2_csv"],
})
