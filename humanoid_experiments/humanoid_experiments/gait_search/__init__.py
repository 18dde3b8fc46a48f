"""The particle-swarm search of the quadruped's CPG gait parameters (``humanoid
optimize-gait``): :mod:`~humanoid_experiments.gait_search.search` (evaluations as Ray tasks,
seeded, resumable), :mod:`~humanoid_experiments.gait_search.command` (the command)."""

import lazy_loader

# The room's public face: what other rooms use, imported on first use (lazy_loader).
__getattr__, __dir__, __all__ = lazy_loader.attach(__name__, submod_attrs={
    "particle_swarm": ["ParticleSwarm", "SwarmError", "SwarmSettings"],
    "search": ["InProcessEvaluation", "RayEvaluation", "SearchDirectory", "SearchSettings", "new_swarm", "run_search"],
})
