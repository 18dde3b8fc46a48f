"""The reference's static experiments run as it ran them (``humanoid postures --experiments
reference``): the Bioloid quadruped in each of the nine starting postures of the report's
Table 4, one servo stepped until the robot falls, that servo's raw value there (the
"equilibrium value") beside the real robot's and the report's Webots model's.

Which servo was stepped is lost. Each experiment's **candidates** are the servos the reference
hints at (postures.yaml ``candidates``, with the ``hint`` they rest on), else every servo; each
is stepped both ways (raw up and raw down) from the starting posture (when no hinted servo makes
the robot fall, the hint gave nothing and every other servo is tried), in steps of
``reference.step_deg`` (else the protocol's) at most ``reference.max_travel_deg``, until the body
tips ``tip_angle`` further than at the start, or the simulator sees a fall. The
candidate whose equilibrium lies closest to the real robot's is reported as the one stepped:
**inferred**, not known (with 32 candidates per experiment a close one is likely by chance;
docs/postures.md says what that means).

A starting posture beyond the model's joint limits (the mechanism's: the servos' range less
what the collision model proves) cannot be set: it is reported with the joints and why. A
posture that can be set but whose links overlap in the collision model is run (PyBullet does
not collide a robot with itself; the self-collision veto is off for it, as the real robot had
none) and reported with the overlapping links.

Each candidate is a task (:func:`run_candidate`: an in-process simulation of its own), on Ray
or in this process, so a run gives the same values whatever the number of workers.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from humanoid_description import RobotModel
from humanoid_experiments.postures.protocol import EquilibriumReference, PostureTest, Protocol, ReferenceExperiment

#: A candidate's name: the reference's servo and the way its raw value was stepped.
UP, DOWN = "+", "-"


@dataclass(frozen=True)
class Candidate:
    servo: str  # the reference's name (FL1, PELVIS, N2 ...)
    way: str  # UP: raw increasing, DOWN: decreasing

    @property
    def key(self) -> str:
        return f"{self.servo}{self.way}"


@dataclass(frozen=True)
class CandidateResult:
    """One candidate of one experiment: where the robot fell (raw), or why it did not."""

    candidate: Candidate
    raw: int | None  # the servo's raw value at the step the robot fell; None: no fall
    stopped_by: str
    steps: int

    def as_dict(self) -> dict:
        return {"raw": self.raw, "stopped_by": self.stopped_by, "steps": self.steps}


@dataclass
class ExperimentOutcome:
    """One experiment: whether its posture can be set, its candidates, the closest to the real value."""

    experiment: ReferenceExperiment
    reference: EquilibriumReference
    overlapping: tuple[tuple[str, str], ...]  # link pairs the starting posture overlaps in the collision model
    results: list[CandidateResult] = field(default_factory=list)
    fallback: bool = False  # the hinted servos gave no fall: every servo was tried

    @property
    def settable(self) -> bool:
        return not self.experiment.beyond_limits

    @property
    def best(self) -> CandidateResult | None:
        fell = [r for r in self.results if r.raw is not None]
        real = self.experiment.real
        return min(fell, key=lambda r: (abs(r.raw - real), r.candidate.key), default=None)

    @property
    def difference_deg(self) -> float | None:
        best = self.best
        if best is None or best.raw is None:
            return None
        scale = self.reference.scale
        return abs(scale.raw_to_degrees(best.raw) - scale.raw_to_degrees(self.experiment.real))

    @property
    def within(self) -> bool | None:
        difference = self.difference_deg
        return None if difference is None else difference < self.reference.accepted_deg

    def as_dict(self) -> dict:
        e, best = self.experiment, self.best
        return {"experiment": e.number, "real": e.real, "webots": e.simulated,
                "simulated": None if best is None else best.raw,
                "stepped": None if best is None else best.candidate.servo,
                "stepped_way": None if best is None else best.candidate.way, "inferred": True,
                "difference_deg": self.difference_deg, "within_tolerance": self.within,
                "settable": self.settable, "beyond_limits": list(e.beyond_limits),
                "overlapping_links": [list(pair) for pair in self.overlapping],
                "hint": e.hint, "every_servo_after_the_hint": self.fallback,
                "candidates": {r.candidate.key: r.raw for r in self.results},
                "candidate_runs": {r.candidate.key: r.as_dict() for r in self.results}}


def candidates(experiment: ReferenceExperiment, reference: EquilibriumReference,
               only: Sequence[str] | None = None, hinted: bool = True) -> list[Candidate]:
    """The hinted servos (else, or with ``hinted`` false, every servo), each stepped up and down;
    ``only`` narrows them (a servo's name for both ways, or with + or - for one)."""
    servos = (hinted and list(experiment.candidates)) or list(reference.servos)
    found = [Candidate(servo, way) for servo in servos for way in (UP, DOWN)]
    if only is None:
        return found
    return [c for c in found if c.servo in only or c.key in only]


def candidate_test(model: RobotModel, experiment: ReferenceExperiment, reference: EquilibriumReference,
                   candidate: Candidate) -> PostureTest:
    """The postures test of one candidate: its joint moved the candidate's way from the posture."""
    joint = reference.servos[candidate.servo]
    joint_map = model.config.joint_map
    assert joint_map is not None
    direction = joint_map[joint].direction * (1 if candidate.way == UP else -1)
    start = tuple(experiment.start[name] for name in model.joints.names)
    travel = None if reference.max_travel_deg is None else math.radians(reference.max_travel_deg)
    return PostureTest(experiment.number, f"E{experiment.number} {candidate.key}", (joint,), int(direction),
                       f"experiment {experiment.number}", "unknown", None, start, travel)


def overlapping_links(model: RobotModel, experiment: ReferenceExperiment) -> tuple[tuple[str, str], ...]:
    """The link pairs the posture puts into each other in the collision model (its SRDF's pairs)."""
    from humanoid_description import CollisionModel

    report = CollisionModel(model).check(model.joints.to_array(experiment.start))
    return tuple((pair.link_a, pair.link_b) for pair in report.colliding)


def run_candidate(robot: str, experiment_number: int, servo: str, way: str, profile: str,
                  params_file: str | None, overlapping: bool,
                  values: Mapping[str, Any] | None = None) -> CandidateResult:
    """One candidate in an in-process simulation of its own (a Ray task); ``values``: simulation
    parameters set one by one over the protocol's and the file's (``humanoid identify``'s point)."""
    import io

    from humanoid_control.ros import RobotClientError
    from humanoid_description import load_model
    from humanoid_experiments.postures.in_process import SimulatedPostureRobot, protocol_simulation
    from humanoid_experiments.postures.protocol import load_protocol
    from humanoid_experiments.postures.runner import PosturesRunner
    from humanoid_sim import SimulatedRobot

    model = load_model(robot)
    protocol = load_protocol(model)
    reference = protocol.reference
    assert reference is not None
    if reference.step_deg is not None:  # one step size, no refinement: what a candidate costs
        step = math.radians(reference.step_deg)
        protocol = replace(protocol, parameters=replace(protocol.parameters, step=step, coarse_step=step))
    experiment = next(e for e in reference.experiments if e.number == experiment_number)
    candidate = Candidate(servo, way)
    test = candidate_test(model, experiment, reference, candidate)
    overrides = protocol_simulation(protocol, model, params_file) | ({"self_collision_veto": False} if overlapping
                                                                     else {}) | dict(values or {})
    with SimulatedRobot(robot, profile, overrides, model=model, params_file=params_file) as simulated:
        runner = PosturesRunner(SimulatedPostureRobot(simulated, protocol), model, protocol, out=io.StringIO())
        try:
            result = runner.run(test)
        except RobotClientError as error:  # the veto refused a step: the mechanism stops the servo there
            return CandidateResult(candidate, None, f"stopped: {error}", 0)
    raw = None if result.limit_raw is None else result.limit_raw[0]
    return CandidateResult(candidate, raw, result.stopped_by, result.steps)


@dataclass(frozen=True)
class Task:
    experiment: int
    candidate: Candidate
    overlapping: bool


def run_experiments(model: RobotModel, protocol: Protocol, numbers: Sequence[int], only: Sequence[str] | None,
                    mapper: Callable[[list[Task]], list[CandidateResult]],
                    progress: Callable[[str], None] = lambda text: None) -> list[ExperimentOutcome]:
    """Every candidate of the chosen experiments (``mapper`` runs the tasks, in order); then, for
    an experiment whose hinted servos never made the robot fall, every other servo (the hint
    gave no equilibrium: it is as good as none)."""
    reference = protocol.reference
    assert reference is not None
    outcomes = []
    for experiment in (e for e in reference.experiments if e.number in numbers):
        outcome = ExperimentOutcome(experiment, reference, overlapping_links(model, experiment))
        outcomes.append(outcome)
        if not outcome.settable:
            progress(f"experiment {experiment.number}: the starting posture cannot be set: "
                     + "; ".join(experiment.beyond_limits))
    settable = [o for o in outcomes if o.settable]
    _run(settable, lambda o: candidates(o.experiment, reference, only), mapper, progress)
    unanswered = [o for o in settable if o.experiment.candidates and o.results and o.best is None]
    for o in unanswered:
        o.fallback = True
        progress(f"experiment {o.experiment.number}: no hinted servo ({', '.join(o.experiment.candidates)}) made "
                 "the robot fall: every other servo")
    _run(unanswered, lambda o: [c for c in candidates(o.experiment, reference, only, hinted=False)
                                if c.servo not in o.experiment.candidates], mapper, progress)
    return outcomes


def _run(outcomes: list[ExperimentOutcome], chosen: Callable[[ExperimentOutcome], list[Candidate]],
         mapper: Callable[[list[Task]], list[CandidateResult]], progress: Callable[[str], None]) -> None:
    tasks = [Task(o.experiment.number, c, bool(o.overlapping)) for o in outcomes for c in chosen(o)]
    if not tasks:
        return
    progress(f"{len(tasks)} candidate runs ({len(outcomes)} experiments)")
    by_number = {o.experiment.number: o for o in outcomes}
    for task, result in zip(tasks, mapper(tasks), strict=True):
        by_number[task.experiment].results.append(result)


def table(outcomes: Sequence[ExperimentOutcome], reference: EquilibriumReference) -> str:
    """Real, the report's Webots, ours (the closest candidate, inferred), their difference, within."""
    lines = [f"The reference's static experiments as it ran them ({reference.scale.name} raw values; the servo "
             f"stepped is lost: ours is the candidate closest to the real robot's, inferred)",
             f"{'exp':>3}  {'real':>4}  {'Webots':>6}  {'ours':>4}  {'stepped':>9}  {'diff (deg)':>10}  "
             f"{'<' + format(reference.accepted_deg, 'g') + ' deg':>7}  notes"]
    for o in outcomes:
        e, best = o.experiment, o.best
        webots = "-" if e.simulated is None else str(e.simulated)
        ours = "-" if best is None else str(best.raw)
        stepped = "-" if best is None else f"{best.candidate.key} (inf.)"
        difference = "-" if o.difference_deg is None else f"{o.difference_deg:.1f}"
        within = {None: "-", True: "yes", False: "no"}[o.within]
        notes = []
        if not o.settable:
            notes.append("cannot be set: " + "; ".join(e.beyond_limits))
        elif not o.results:
            notes.append("no candidate run")
        elif best is None:
            notes.append(f"no candidate fell ({len(o.results)} run)")
        if o.overlapping:
            notes.append("overlapping links: " + ", ".join(f"{a}/{b}" for a, b in o.overlapping))
        if e.hint:
            notes.append(f"candidates hinted: {', '.join(e.candidates)}"
                         + ("; none fell: every servo tried" if o.fallback else ""))
        lines.append(f"{e.number:>3}  {e.real:>4}  {webots:>6}  {ours:>4}  {stepped:>9}  {difference:>10}  "
                     f"{within:>7}  {'; '.join(notes)}")
    within = sum(bool(o.within) for o in outcomes)
    strict = sum(bool(o.within) for o in outcomes if not o.fallback)
    lines.append(f"within {reference.accepted_deg:g} deg of the real robot: {within} of {len(outcomes)}"
                 + (f" ({strict} with the hinted servos alone)" if strict != within else "")
                 + " (the report's Webots model: 4 of the 6 it could run)")
    lines.append("Candidates (raw at the fall; - no fall):")
    for o in outcomes:
        if o.results:
            lines.append(f"  {o.experiment.number}: " + ", ".join(
                f"{r.candidate.key} {'-' if r.raw is None else r.raw}" for r in o.results))
    return "\n".join(lines)


def in_process(tasks: list[Task], robot: str, profile: str, params_file: str | None,
               progress: Callable[[str], None]) -> list[CandidateResult]:
    results = []
    for i, task in enumerate(tasks, start=1):
        results.append(run_candidate(robot, task.experiment, task.candidate.servo, task.candidate.way, profile,
                                     params_file, task.overlapping))
        progress(f"[{i}/{len(tasks)}] experiment {task.experiment} {task.candidate.key}: "
                 f"{'no fall' if results[-1].raw is None else f'fell at raw {results[-1].raw}'}")
    return results


def on_ray(tasks: list[Task], robot: str, profile: str, params_file: str | None, workers: int | None,
           address: str | None, progress: Callable[[str], None]) -> list[CandidateResult]:
    """The tasks as Ray tasks (a local instance unless ``address``), queued at once."""
    from humanoid_experiments import local_ray

    connection = local_ray.RayConnection(workers, address)  # before `import ray` (local_ray.start)
    import ray

    try:
        remote = ray.remote(num_cpus=1)(run_candidate)
        references = [remote.remote(robot, t.experiment, t.candidate.servo, t.candidate.way, profile, params_file,
                                    t.overlapping) for t in tasks]
        index = {reference: i for i, reference in enumerate(references)}
        results: list[CandidateResult | None] = [None] * len(tasks)
        pending = list(references)
        while pending:
            done, pending = ray.wait(pending, num_returns=1)
            i = index[done[0]]
            results[i] = ray.get(done[0])
            result = results[i]
            assert result is not None
            progress(f"[{len(tasks) - len(pending)}/{len(tasks)}] experiment {tasks[i].experiment} "
                     f"{tasks[i].candidate.key}: {'no fall' if result.raw is None else f'fell at raw {result.raw}'}")
        return [r for r in results if r is not None]
    finally:
        connection.close()


def parse_experiments(text: str, reference: EquilibriumReference) -> list[int]:
    """``reference`` (all of them) or numbers ``5,7``."""
    known = [e.number for e in reference.experiments]
    if text == "reference":
        return known
    try:
        numbers = [int(part) for part in text.split(",")]
    except ValueError:
        raise ValueError(f"--experiments: {text!r} is not 'reference' nor experiment numbers like 5,7") from None
    unknown = [n for n in numbers if n not in known]
    if unknown:
        raise ValueError(f"--experiments: no experiment {', '.join(map(str, unknown))} (experiments: "
                         f"{', '.join(map(str, known))})")
    return numbers


def write_json(path: Path | None, outcomes: Sequence[ExperimentOutcome]) -> str:
    import json

    text = json.dumps({"experiments": [o.as_dict() for o in outcomes]}, indent=2)
    if path is not None:
        path.write_text(text + "\n")
    return text
