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
