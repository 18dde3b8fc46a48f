"""``humanoid plot``: PNG figures of an experiment from its bag alone (matplotlib, Agg)."""

import lazy_loader

# The room's public face: what other rooms use, imported on first use (lazy_loader).
__getattr__, __dir__, __all__ = lazy_loader.attach(__name__, submod_attrs={
    "series": ["ROBOT_DESCRIPTION", "load", "robot_name"],
})
