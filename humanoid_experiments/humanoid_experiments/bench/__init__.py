"""Benchmarks (``humanoid bench TARGET``): each module has ``add_arguments``, ``run`` and a
docstring whose first paragraph is the target's description, and prints its figure next
to a baseline measured in the same run (ratios: the machines are shared and noisy)."""

import lazy_loader

# The room's public face: what other rooms use, imported on first use (lazy_loader).
__getattr__, __dir__, __all__ = lazy_loader.attach(__name__, submod_attrs={
    "cpu_time": ["load_average", "own_cpu_seconds", "process_cpu_seconds"],
    "graph": ["log_tails_on_failure"],
    "lockstep": ["cpu_bound", "falls_text", "spread", "spread_text"],
    "physics": ["parse_values"],
    "record": [],
    "sim": ["raw_world"],
    "world": ["world_text"],
})
