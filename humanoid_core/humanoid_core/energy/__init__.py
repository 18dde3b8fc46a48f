"""Supply current, power and energy of the robot estimated from its joint readings (no ROS)."""

import lazy_loader

# The room's public face: what other rooms use, imported on first use (lazy_loader).
__getattr__, __dir__, __all__ = lazy_loader.attach(__name__, submod_attrs={
    "current_fit": ["CurrentFit", "CurrentFitError", "fit_current", "servo_idle_share"],
    "model": ["CurrentModel", "EnergyIntegral"],
    "parameters": ["EnergyParameters", "NODE_NAME"],
})
