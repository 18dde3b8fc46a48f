"""The quadruped report's gait search: a particle swarm over CPG gait parameters, each
evaluation a headless simulation, run as tasks on Ray (a local instance by default, an
existing cluster by its address) or in this process.

Two kinds of search:

- one of the report's **experiments** (``cpg.yaml``, :mod:`humanoid_core.quadruped_gaits.cpg_models`):
  its free parameters encoded in [0, 1] (the swarm's box) and mapped to their ranges, each
  gait scored by eq 17 (:mod:`humanoid_core.quadruped_gaits.fitness`);
- one of our own coupling **structures** (:mod:`humanoid_core.quadruped_gaits.cpg`, the
  7 parameters of ``SEARCH_BOUNDS``), scored by our fitness (distance plus path, times the
  share of the time the robot stood).

Every iteration's outcome is saved in the search directory as it ends:

- ``search.json``: the settings, the whole swarm (positions, velocities, bests, random
  generator) and the best gait so far with its outcome; rewritten atomically, so an
  interrupted search resumes from the last iteration that ended;
- ``history.jsonl``: one line per iteration (every particle's fitness, the best so far).

Evaluations are deterministic (a fresh reset of the same physics each) and the swarm is
seeded, so a search is reproduced exactly by its seed, whatever the number of workers.
"""

from __future__ import annotations

import json
import math
import os
import socket
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING, Protocol

import numpy as np

from humanoid_core.quadruped_gaits import (
    STRUCTURES,
    Experiment,
    FitnessSettings,
    load_cpg,
    parameters_from_vector,
    search_box,
)
from humanoid_experiments import local_ray
from humanoid_experiments.gait_search.particle_swarm import ParticleSwarm, SwarmSettings

if TYPE_CHECKING:  # the simulation (PyBullet, which prints on import) is loaded only to evaluate
    from humanoid_sim import GaitOutcome

#: The search directory's files.
STATE_FILE, HISTORY_FILE = "search.json", "history.jsonl"
#: Seconds a Ray cluster's address has to accept a connection.
CONNECT_TIMEOUT = 5.0


class SearchError(RuntimeError):
    """A search that cannot start or resume (a directory in the way, settings that differ ...)."""


@dataclass(frozen=True)
class SearchSettings:
    """What defines a search (and must match to resume one): a structure of ours, or an
    experiment of the report (``structure`` None) with its configuration file and eq 17."""

    robot: str
    structure: str | None
    seconds: float  # simulated seconds per evaluation
    seed: int
    swarm: SwarmSettings
    experiment: str | None = None  # the report's experiment (cpg.yaml)
    config: str | None = None  # its CPG configuration file (None: the robot's)
    fitness: FitnessSettings | None = None  # eq 17 (experiments); None: our fitness (structures)

    def as_dict(self) -> dict:
        return asdict(self)

    @property
    def name(self) -> str:
        return f"experiment {self.experiment}" if self.experiment is not None else f"{self.structure} CPG gaits"

    @classmethod
    def from_dict(cls, data: dict) -> SearchSettings:
        """The settings :meth:`as_dict` saved; ValueError (or KeyError, TypeError) if ``data``
        is not such settings."""
        fitness = None if data.get("fitness") is None else FitnessSettings(**data["fitness"])
        settings = cls(**{**data, "swarm": SwarmSettings(**data["swarm"]), "fitness": fitness})
        if not isinstance(settings.robot, str) or (settings.structure not in STRUCTURES) == (
                settings.experiment is None) or (settings.experiment is not None and fitness is None):
            raise ValueError(f"robot {settings.robot!r}, structure {settings.structure!r} and experiment "
                             f"{settings.experiment!r} are not a robot's name and either one of "
                             f"{', '.join(STRUCTURES)} or an experiment with its fitness")
        if not (isinstance(settings.seconds, int | float) and math.isfinite(settings.seconds)
                and settings.seconds > 0 and isinstance(settings.seed, int) and settings.seed >= 0):
            raise ValueError(f"seconds {settings.seconds!r} and seed {settings.seed!r} are not a duration > 0 and "
                             f"an integer >= 0")
        return settings


class SearchSpace:
    """What a search's points are: the box the swarm moves in, the gait parameters at a point,
    and a gait's fitness."""

    def __init__(self, settings: SearchSettings) -> None:
        self.settings = settings
        self.experiment: Experiment | None = None
        if settings.experiment is not None:
            from humanoid_description import load_model

            configuration = load_cpg(load_model(settings.robot), None if settings.config is None else Path(
                settings.config))
            if settings.experiment not in {str(k) for k in configuration.experiments}:
                raise SearchError(f"{configuration.source} has no experiment {settings.experiment}")
            self.experiment = configuration.experiments[int(settings.experiment)]

    def box(self) -> tuple[np.ndarray, np.ndarray]:
        if self.experiment is None:
            return search_box()
        dimensions = len(self.experiment.parameters)
        return np.zeros(dimensions), np.ones(dimensions)

    def parameters(self, point: np.ndarray) -> dict:
        if self.experiment is None:
            assert self.settings.structure is not None
            return asdict(parameters_from_vector(point, self.settings.structure))
        return {"experiment": self.experiment.name, **self.experiment.decode(point)}

    def fitness(self, outcome: GaitOutcome) -> float:
        fitness = self.settings.fitness
        if fitness is None:
            return outcome.fitness
        return outcome.path_fitness(fitness.alpha, fitness.beta)


class Evaluation(Protocol):
    """Somewhere gaits are evaluated: the outcomes of ``points`` in their order."""

    workers: int

    def evaluate(self, points: np.ndarray) -> list[GaitOutcome]: ...

    def close(self) -> None: ...


class InProcessEvaluation:
    """One simulation in this process, the points one after the other (the bare baseline)."""

    workers = 1

    def __init__(self, settings: SearchSettings) -> None:
        from humanoid_sim import CPGEvaluator, NetworkEvaluator

        space = SearchSpace(settings)
        if space.experiment is None:
            assert settings.structure is not None
            self.evaluator: CPGEvaluator | NetworkEvaluator = CPGEvaluator(settings.robot, settings.structure,
                                                                           settings.seconds)
        else:
            assert settings.fitness is not None
            fitness = replace(settings.fitness, seconds=settings.seconds)
            self.evaluator = NetworkEvaluator(settings.robot, space.experiment, fitness)

    def evaluate(self, points: np.ndarray) -> list[GaitOutcome]:
        return [self.evaluator.evaluate(point.tolist()) for point in points]

    def close(self) -> None:
        self.evaluator.close()


def check_reachable(address: str) -> None:
    """SearchError unless something accepts a connection at the cluster's HOST:PORT: Ray
    itself retries an address nobody answers for minutes, printing warnings."""
    host, _, port = address.split("://")[-1].rpartition(":")
    try:
        socket.create_connection((host.strip("[]"), int(port)), timeout=CONNECT_TIMEOUT).close()
    except OSError as error:
        raise SearchError(f"no Ray cluster answers at {address}: {error.strerror or error}") from None


class RayEvaluation:
    """Every point a Ray task (one CPU each, a simulation of its own), queued at once: Ray
    hands them to its workers as they become free, so gaits that fall early (short
    evaluations) leave no worker idle.

    Without ``address``, a local Ray instance of ``workers`` CPUs (default: this machine's)
    is started (:mod:`humanoid_experiments.local_ray`: on 127.0.0.1, dying with this process)
    and stopped by :meth:`close`; with it, the search joins that cluster (whose machines
    must have this project installed) and uses ``workers`` of its CPUs at once (default: all)."""

    def __init__(self, settings: SearchSettings, workers: int | None = None, address: str | None = None) -> None:
        from humanoid_sim import evaluate_cpg, evaluate_network

        self.settings = settings
        space = SearchSpace(settings)
        self._ray = local_ray.RayConnection(workers, address)  # before `import ray` (local_ray.start)
        import ray

        self.workers = self._ray.workers
        #: The local instance's directory (Ray's logs), None on a cluster.
        self.session_dir = self._ray.session_dir
        if space.experiment is None:
            self._task = ray.remote(num_cpus=1)(evaluate_cpg)
            self._arguments: tuple = (settings.robot, settings.structure, settings.seconds)
        else:
            assert settings.fitness is not None
            self._task = ray.remote(num_cpus=1)(evaluate_network)
            self._arguments = (settings.robot, space.experiment, replace(settings.fitness, seconds=settings.seconds))

    def evaluate(self, points: np.ndarray, at_once: int | None = None) -> list[GaitOutcome]:
        """The points' outcomes; at most ``at_once`` evaluations in flight when given."""
        import ray

        # a local instance runs as many at once as it has CPUs: queue them all; on a cluster,
        # keep ``workers`` in flight
        window = at_once or (len(points) if self._ray.local else self.workers)
        queue, running, outcomes = list(enumerate(points)), {}, {}
        while queue or running:
            while queue and len(running) < window:
                index, point = queue.pop(0)
                running[self._task.remote(*self._arguments, point.tolist())] = index
            done, _ = ray.wait(list(running), num_returns=1)
            for reference in done:
                outcomes[running.pop(reference)] = ray.get(reference)
        return [outcomes[index] for index in range(len(points))]

    def close(self) -> None:
        self._ray.close()


@dataclass
class Best:
    """The best gait so far: its point, parameters and outcome."""

    point: list[float]
    parameters: dict
    outcome: dict
    fitness: float


class SearchDirectory:
    """The files of one search (see the module's docstring)."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.state_path, self.history_path = path / STATE_FILE, path / HISTORY_FILE

    def create(self, overwrite: bool) -> None:
        if self.path.exists() and any(self.path.iterdir()) and not overwrite:
            raise SearchError(f"{self.path} exists and is not empty: --resume it, --overwrite it or give another "
                              "--output")
        self.path.mkdir(parents=True, exist_ok=True)
        for file in (self.state_path, self.history_path):
            file.unlink(missing_ok=True)

    def save(self, settings: SearchSettings, swarm: ParticleSwarm, best: Best | None) -> None:
        data = {"settings": settings.as_dict(), "swarm": swarm.state(),
                "best": None if best is None else asdict(best)}
        partial = self.state_path.with_suffix(".json.partial")
        partial.write_text(json.dumps(data, indent=1))
        os.replace(partial, self.state_path)  # all or nothing: an interruption keeps the previous one

    def load(self) -> tuple[SearchSettings, ParticleSwarm, Best | None]:
        try:
            data = json.loads(self.state_path.read_text())
        except (OSError, ValueError) as error:
            raise SearchError(f"cannot resume from {self.state_path}: {error}") from None
        try:
            return _saved_search(data)
        except KeyError as error:
            problem = f"no {error.args[0]!r}"
        except (TypeError, ValueError) as error:  # SwarmError is a ValueError
            problem = str(error)
        raise SearchError(f"cannot resume from {self.state_path}: not a saved search ({problem})")

    def append(self, entry: dict) -> None:
        with self.history_path.open("a") as history:
            history.write(json.dumps(entry) + "\n")

    def history(self) -> list[dict]:
        if not self.history_path.exists():
            return []
        return [json.loads(line) for line in self.history_path.read_text().splitlines() if line.strip()]

    def keep_history(self, iterations: int) -> None:
        """Drop the lines of iterations the saved state does not include (cut off mid-save)."""
        self.history_path.write_text("".join(json.dumps(entry) + "\n" for entry in self.history()[:iterations]))


def _saved_search(data: dict) -> tuple[SearchSettings, ParticleSwarm, Best | None]:
    """The search ``search.json`` holds, checked against the search box (KeyError, TypeError or
    ValueError when it does not fit)."""
    settings = SearchSettings.from_dict(data["settings"])
    swarm = ParticleSwarm.from_state(data["swarm"])
    lower, _upper = SearchSpace(settings).box()
    if swarm.lower.shape != lower.shape or swarm.settings != settings.swarm:
        raise ValueError(f"its swarm has {swarm.lower.size} dimensions and the settings {swarm.settings}, "
                         f"not the search's {lower.size} and {settings.swarm}")
    best = None if data["best"] is None else Best(**data["best"])
    if best is not None and len(best.point) != lower.size:
        raise ValueError(f"its best point has {len(best.point)} dimensions, not {lower.size}")
    return settings, swarm, best


def new_swarm(settings: SearchSettings) -> ParticleSwarm:
    return ParticleSwarm(*SearchSpace(settings).box(), settings.swarm, settings.seed)


def run_search(settings: SearchSettings, swarm: ParticleSwarm, best: Best | None, evaluation: Evaluation,
               directory: SearchDirectory, report: Callable[[dict, Best], None] = lambda entry, best: None) -> Best:
    """Iterate the swarm to its end, saving after every iteration; returns the best gait."""
    space = SearchSpace(settings)
    while not swarm.finished:
        started = time.monotonic()
        points = swarm.ask()
        outcomes = evaluation.evaluate(points)
        fitness = np.array([space.fitness(outcome) for outcome in outcomes])
        swarm.tell(fitness)
        leader = int(np.argmax(fitness))
        if best is None or fitness[leader] > best.fitness:
            point = points[leader].tolist()
            best = Best(point, space.parameters(points[leader]), _outcome_record(outcomes[leader]),
                        float(fitness[leader]))
        entry = {"iteration": swarm.iteration, "fitness": fitness.tolist(),
                 "fell": [outcome.fell for outcome in outcomes], "best_fitness": best.fitness,
                 "wall_seconds": time.monotonic() - started}
        directory.append(entry)
        directory.save(settings, swarm, best)
        report(entry, best)
    assert best is not None
    return best


def _outcome_record(outcome: GaitOutcome) -> dict:
    """An outcome as saved with the best gait (its samples too: eq 17 can be checked from them)."""
    record = outcome.as_dict()
    record["samples"] = [list(sample) for sample in outcome.samples]
    return record
