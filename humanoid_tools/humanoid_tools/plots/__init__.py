"""``humanoid plot``: PNG figures of an experiment from its bag alone (matplotlib, Agg)."""
