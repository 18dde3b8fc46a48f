"""Biped walking without ROS (the HOAP-2 and the Bioloid humanoid): Kajita's preview
control of the cart-table model (:mod:`~humanoid_core.biped_walking.preview_control`),
footsteps within the robot's step limits (:mod:`~humanoid_core.biped_walking.footsteps`),
the pattern through them (:mod:`~humanoid_core.biped_walking.pattern`), swing-foot paths
(:mod:`~humanoid_core.biped_walking.swing`), the trunk-tilt stabilizer
(:mod:`~humanoid_core.biped_walking.stabilizer`) and the controller that turns commands
into joint set-points (:mod:`~humanoid_core.biped_walking.controller`), served by the
``walk_controller`` node (:mod:`humanoid_control.nodes.walk_controller`). The quadruped's
gaits are :mod:`humanoid_core.quadruped_gaits`.
"""

import lazy_loader

# The room's public face: what other rooms use, imported on first use (lazy_loader).
__getattr__, __dir__, __all__ = lazy_loader.attach(__name__, submod_attrs={
    "controller": [
        "GoalState",
        "LATE_WARNING",
        "Phase",
        "WalkController",
        "WalkGoal",
        "WalkRefusedError",
        "checked_walk_goal",
    ],
    "footsteps": ["Footstep", "Pose2", "StepLimits", "plan_step", "sole_polygon", "soles_gap", "wrap_angle"],
    "parameters": ["NODE_NAME", "WalkParameters", "walking_robot"],
    "pattern": ["Mode", "WalkPattern"],
    "preview_control": ["PreviewController", "preview_gains", "riccati"],
    "stabilizer": ["Sensors", "Stabilizer"],
    "streaming": ["WalkCycle", "walk_sensors"],
    "swing": ["SwingProfile", "rest_to_rest"],
})
