"""The particle-swarm search of the quadruped's CPG gait parameters (``humanoid
optimize-gait``): :mod:`~humanoid_experiments.gait_search.search` (evaluations as Ray tasks,
seeded, resumable), :mod:`~humanoid_experiments.gait_search.command` (the command)."""
