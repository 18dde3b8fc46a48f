"""The fit: scipy's differential evolution over the parameters' bounds, its evaluations as Ray
tasks, every evaluation kept in a state file.

Differential evolution evaluates a whole population at a time (``workers``: a map over the
population, here Ray tasks, or this process), needs no gradient (a simulation has none worth
trusting) and, seeded, makes the same choices every run. That is also what makes a fit
resumable: the state file (JSON lines) keeps the settings and each evaluated point with its
cost; a resumed fit runs the same seeded optimisation again, taking each point it has already
evaluated from the file instead of simulating it, and goes on where the first run stopped.

At the optimum, the curvature of the cost along each parameter (central differences, also
Ray tasks) says how sharply the data pin it down: the report gives, per parameter, the change
that raises the fit error by 10 % (a parameter the data barely constrain has a wide one).
"""

from __future__ import annotations

import json
import math
import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from humanoid_experiments import local_ray
from humanoid_experiments.identify.problem import Data, FitParameter, Problem, cost, target_errors

#: Relative step of the curvature's central differences (of each parameter's bounds' span).
CURVATURE_STEP = 0.01
#: Size of the polish's first simplex, a share of each parameter's span.
SIMPLEX = 0.05
#: The fit error's rise the sensitivity figure is given for.
RISE = 0.10


class StateError(RuntimeError):
    """A state file that is not this fit's (one line)."""


@dataclass(frozen=True)
class Settings:
    """What makes two fits the same fit (a resumed one must match)."""

    problem: Problem
    sources: tuple[str, ...]  # the measurements' files
    seed: int
    population: int  # points per generation, per parameter (scipy's popsize)
    generations: int
    polish: int = 0  # evaluations of the local search (Nelder-Mead) from the evolution's best

    def as_dict(self) -> dict[str, Any]:
        data = asdict(self)
        data["problem"]["parameters"] = [asdict(p) for p in self.problem.parameters]
        return data

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Settings:
        problem = dict(data["problem"])
        problem["parameters"] = tuple(FitParameter(**p) for p in problem["parameters"])
        return cls(Problem(**problem), tuple(data["sources"]), data["seed"], data["population"], data["generations"],
                   data.get("polish", 0))


class Evaluations:
    """Costs of points: from the state file when known, else simulated (on Ray or here)."""

    def __init__(self, settings: Settings, data: Data, state: Path, workers: int | None = None,
                 address: str | None = None, progress: Callable[[str], None] = print) -> None:
        self.settings, self.data, self.state, self.progress = settings, data, state, progress
        self.known: dict[str, float] = {}
        self.evaluated = 0  # simulated by this run
        self.started = time.monotonic()
        self.best = math.inf
        self.batches = 0  # populations evaluated: the initial one, then one per generation
        self._where = (workers, address)
        self._ray: _RayPool | None = None
        self.workers = 1

    def _start(self) -> None:
        workers, address = self._where
        if workers != 0:
            self._ray = _RayPool(workers, address, self.data)
            self.workers = self._ray.workers

    @property
    def session_dir(self) -> str | None:
        """The local Ray instance's directory (its logs); None in this process or on a cluster."""
        return self._ray.session_dir if self._ray is not None else None

    # -- the state file ------------------------------------------------------------------
    def open(self, resume: bool, overwrite: bool) -> int:
        """Start the state file, or read it back (``resume``): the points it already holds; then
        the workers."""
        known = self._open_state(resume, overwrite)
        self._start()
        return known

    def _open_state(self, resume: bool, overwrite: bool) -> int:
        if resume:
            if not self.state.is_file():
                raise StateError(f"no fit to resume: {self.state} does not exist")
            lines = self.state.read_text().splitlines()
            saved = json.loads(lines[0]) if lines else {}
            if saved.get("settings") != json.loads(json.dumps(self.settings.as_dict())):
                raise StateError(f"{self.state} is another fit ({saved.get('settings')}): not resumed")
            for line in lines[1:]:
                try:
                    entry = json.loads(line)
                except ValueError:  # the last line of a fit killed while writing it
                    continue
                self.known[_key(entry["point"])] = entry["cost"]
            return len(self.known)
        if self.state.exists() and not overwrite:
            raise StateError(f"{self.state} exists: --resume the fit it holds, or --overwrite it")
        self.state.parent.mkdir(parents=True, exist_ok=True)
        self.state.write_text(json.dumps({"settings": self.settings.as_dict()}) + "\n")
        return 0

    def _save(self, point: Sequence[float], value: float) -> None:
        with self.state.open("a") as file:
            file.write(json.dumps({"point": [float(v) for v in point], "cost": value}) + "\n")

    # -- evaluating ------------------------------------------------------------------------
    def costs(self, points: Iterable[Sequence[float]]) -> list[float]:
        """The cost of each point, in order; the new ones simulated at once."""
        points = [np.asarray(p, dtype=float) for p in points]
        missing = [p for p in points if _key(p) not in self.known]
        problem = self.settings.problem
        values = [problem.values(p) for p in missing]
        results = self._ray.run(problem, values) if self._ray is not None else [
            cost(problem, self.data, v) for v in values]
        for point, value in zip(missing, results, strict=True):
            self.known[_key(point)] = value
            self._save(point, value)
        self.evaluated += len(missing)
        found = [self.known[_key(p)] for p in points]
        self.best = min([self.best, *found])
        return found

    def map(self, function: Callable, points: Iterable[Sequence[float]]) -> list[float]:
        """scipy's ``workers``: one generation's points (``function`` is the objective, which
        :meth:`costs` stands for)."""
        del function
        found = self.costs(points)
        what = "initial population" if self.batches == 0 else f"generation {self.batches}"
        self.batches += 1
        self.progress(f"{what}: best fit error {self.best:.6g}, its points {min(found):.6g}..{max(found):.6g}; "
                      f"{self.evaluated} simulated, {len(self.known)} known, {time.monotonic() - self.started:.0f} s")
        return found

    def other(self, values: list[dict[str, float] | None], data: Data) -> list[float]:
        """Costs on other data (held-out measurements), not kept in the state file; None: the base values."""
        problem = self.settings.problem
        if self._ray is not None:
            return self._ray.run(problem, values, data)
        return [cost(problem, data, v) for v in values]

    def per_target(self, values: list[dict[str, float] | None], data: Data) -> list[list[float]]:
        """Each postures test's or static experiment's error (deg) under each of ``values``, at once
        (not kept in the state file)."""
        problem = self.settings.problem
        if self._ray is not None:
            return self._ray.run(problem, values, data, target_errors)
        return [target_errors(problem, data, v) for v in values]

    def close(self) -> None:
        if self._ray is not None:
            self._ray.close()


class _RayPool:
    """Each evaluation a Ray task (one CPU): a local instance reaped with this process
    (:mod:`humanoid_experiments.local_ray`), or the cluster at ``address``."""

    def __init__(self, workers: int | None, address: str | None, data: Data) -> None:
        self._ray = local_ray.RayConnection(workers, address)  # before `import ray` (local_ray.start)
        import ray

        self.workers = self._ray.workers
        self.session_dir = self._ray.session_dir  # RayConnection's: None on a cluster
        self._task = ray.remote(num_cpus=1)(cost)
        self._errors = ray.remote(num_cpus=1)(target_errors)
        self._data = ray.put(data)

    def run(self, problem: Problem, values: list[dict[str, float] | None], data: Data | None = None,
            function: Callable | None = None) -> list[Any]:
        """``cost`` of each of ``values`` (or the per-target errors, ``function`` target_errors)."""
        import ray

        reference = self._data if data is None else ray.put(data)
        task = self._errors if function is target_errors else self._task
        found = ray.get([task.remote(problem, reference, v) for v in values])
        return found if function is target_errors else [float(v) for v in found]

    def close(self) -> None:
        self._ray.close()


def _key(point: Sequence[float]) -> str:
    return json.dumps([float(v) for v in point])


@dataclass
class Fit:
    """The outcome of a fit."""

    names: list[str]
    values: list[float]
    error: float  # the fit error at the fitted values
    base_error: float  # ... at the base values (the robot's, and the base parameter file's)
    curvature: list[float]  # d2 error / d value2 at the fitted values
    sensitivity: list[float]  # the change of each value that raises the error by RISE (inf: none seen)
    evaluations: int
    generations: int
    held_out: dict[str, float] = field(default_factory=dict)  # base and fitted error on --validate's data

    def as_dict(self) -> dict[str, Any]:
        return {"parameters": {n: {"value": v, "curvature": c, "change_for_10_percent_error": s}
                               for n, v, c, s in zip(self.names, self.values, self.curvature, self.sensitivity,
                                                     strict=True)},
                "fit_error": self.error, "base_error": self.base_error, "evaluations": self.evaluations,
                "generations": self.generations, "held_out": self.held_out}


def fit(settings: Settings, evaluations: Evaluations, sensitivity: bool = True) -> Fit:
    """Differential evolution (scipy) from the settings' seed, a local polish of its best
    (scipy's bounded Nelder-Mead: the fit error is a sum of absolute-like terms, no gradient to
    trust), then the curvature at the optimum (``sensitivity`` false: not, three evaluations per
    parameter saved; the report says nan)."""
    from scipy.optimize import differential_evolution

    problem = settings.problem
    if settings.generations > 0:
        result = differential_evolution(
            lambda _x: math.nan, problem.bounds, popsize=settings.population, maxiter=settings.generations,
            seed=settings.seed, polish=False, updating="deferred", workers=evaluations.map, init="sobol", tol=0.0)
        start = np.asarray(result.x, dtype=float)
    else:  # no evolution: the polish alone, from the bounds' centres
        start = np.array([(low + high) / 2.0 for low, high in problem.bounds], dtype=float)
    best = polish(problem, start, settings.polish, evaluations)
    error = evaluations.costs([best])[0]
    if sensitivity:
        curvature, change = curvatures(problem, best, error, evaluations)
    else:
        curvature, change = [math.nan] * len(problem.names), [math.nan] * len(problem.names)
    base_error = evaluations.other([None], evaluations.data)[0]
    return Fit(problem.names, best.tolist(), error, base_error, curvature, change, len(evaluations.known),
               max(evaluations.batches - 1, 0))


def polish(problem: Problem, start: np.ndarray, budget: int, evaluations: Evaluations) -> np.ndarray:
    """Nelder-Mead (scipy) from ``start`` for at most ``budget`` evaluations, in coordinates
    scaled to the bounds (one at a time: each step needs the last)."""
    if budget <= 0:
        return start
    from scipy.optimize import minimize

    low, high = (np.array(side, dtype=float) for side in zip(*problem.bounds, strict=True))
    span = high - low

    best = [evaluations.costs([start])[0], start]

    def objective(scaled: np.ndarray) -> float:
        point = low + np.clip(scaled, 0.0, 1.0) * span
        value = evaluations.costs([point])[0]
        if value < best[0]:
            best[:] = [value, point]
        return value

    before = best[0]
    origin = (start - low) / span
    # a first simplex of SIMPLEX of each span: scipy's default (5 % of each value) crawls on a wide bound
    simplex = np.vstack([origin, *(origin + np.where(np.arange(len(origin)) == i, _step(origin[i]), 0.0)
                                   for i in range(len(origin)))])
    result = minimize(objective, origin, method="Nelder-Mead", bounds=[(0.0, 1.0)] * len(start),
                      options={"maxfev": budget, "xatol": 1e-4, "fatol": 0.0, "initial_simplex": simplex})
    evaluations.progress(f"polish: {result.nfev} evaluations, best fit error {before:.6g} -> {best[0]:.6g}")
    return np.asarray(best[1], dtype=float)


def _step(coordinate: float) -> float:
    """A simplex step of :data:`SIMPLEX` towards the inside of the bounds."""
    return SIMPLEX if coordinate + SIMPLEX <= 1.0 else -SIMPLEX


def curvatures(problem: Problem, best: np.ndarray, error: float,
               evaluations: Evaluations) -> tuple[list[float], list[float]]:
    """Central second differences of the cost along each parameter at ``best`` (inside its bounds),
    and the change that raises the cost by :data:`RISE` on that parabola."""
    points, steps = [], []
    for i, (low, high) in enumerate(problem.bounds):
        step = CURVATURE_STEP * (high - low)
        centre = float(np.clip(best[i], low + step, high - step))
        for sign in (-1.0, 1.0):
            point = best.copy()
            point[i] = centre + sign * step
            points.append(point)
        middle = best.copy()
        middle[i] = centre
        points.append(middle)
        steps.append(step)
    values = evaluations.costs(points)
    curvature, sensitivity = [], []
    for i, step in enumerate(steps):
        below, above, middle = values[3 * i: 3 * i + 3]
        second = (below - 2.0 * middle + above) / step**2
        curvature.append(second)
        sensitivity.append(math.sqrt(2.0 * RISE * max(error, 1e-12) / second) if second > 0 else math.inf)
    return curvature, sensitivity
