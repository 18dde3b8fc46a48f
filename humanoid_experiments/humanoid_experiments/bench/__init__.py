"""Benchmarks (``humanoid bench TARGET``): each module has ``add_arguments``, ``run`` and a
docstring whose first paragraph is the target's description, and prints its figure next
to a baseline measured in the same run (ratios: the machines are shared and noisy)."""
