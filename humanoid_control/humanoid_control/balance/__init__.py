"""Balance of a standing or moving humanoid: CoM, ZMP, support polygon and margin.

ROS-free computations (one module per idea) used by the ``balance_monitor`` node
(:mod:`humanoid_control.nodes.balance_monitor`), the tests and the benchmark.
"""
