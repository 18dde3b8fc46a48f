"""Balance of a standing or moving humanoid: CoM, ZMP, support polygon and margin.

Computations, one module per idea, used by the ``balance_monitor`` node
(:mod:`humanoid_control.nodes.balance_monitor`), the tests and the benchmark; the RViz
markers are the ROS layer's (:mod:`humanoid_control.ros.balance_markers`).
"""
