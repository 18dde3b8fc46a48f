"""``humanoid view``: the robot in a browser page (viser: its web client ships in the wheel,
no internet needed), live from the ROS graph or replayed from a bag."""

import lazy_loader

# The room's public face: what other rooms use, imported on first use (lazy_loader).
__getattr__, __dir__, __all__ = lazy_loader.attach(__name__, submod_attrs={
    "access": ["PageAccess", "RefusalLog"],
    "live": ["MATCH_WAIT", "LiveSource"],
    "page_input": ["JointTargets", "KeyframeFolder"],
    "replay": ["BagReplay"],
})
