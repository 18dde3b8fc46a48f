"""`humanoid optimize-gait`: a small particle-swarm search of quadruped CPG gaits, its
evaluations headless simulations on a local Ray instance, improves on its first best,
saves its history, is reproduced by its seed without Ray, resumes after an interruption
to the same result, and leaves no Ray process behind, even when killed. The bench prints
its figures from one short batch.

The search is small (4 particles x 2 iterations of 0.5 s): long enough for seed 0 to
improve on its first iteration (evaluations are deterministic, so a run that improves once
improves every time; the improvement, not the gait's length, is the property), far from the
reference's 50 x 240 x 32 s (`humanoid optimize-gait` with its defaults, a command, not a
test). Ray is real where the property is about Ray (the search on it, its processes after a
normal end and after a kill, the bench); what is about the search alone (reproduction by the
seed, resuming, an experiment's search) runs the command in this process, `--workers 0`.
"""

from __future__ import annotations

import json
import subprocess
import time
from pathlib import Path

import numpy as np
import pytest
from ray_leftovers import said_session_dir, wait_until_gone

from humanoid_bringup import main
from humanoid_experiments.gait_search import (
    InProcessEvaluation,
    SearchDirectory,
    SearchSettings,
    SwarmSettings,
    new_swarm,
    run_search,
)

pytestmark = pytest.mark.system

SEARCH = ["--particles", "4", "--iterations", "2", "--seconds", "0.5", "--seed", "0"]
SETTINGS = SearchSettings("bioloid_quadruped", "paired", 0.5, 0, SwarmSettings(particles=4, iterations=2))


def optimize(output: Path, *extra: str) -> tuple[subprocess.CompletedProcess, int]:
    """The real command; returns its outcome and its process ID (the owner of its Ray)."""
    process = subprocess.Popen(["humanoid", "optimize-gait", *SEARCH, "--output", str(output), "--json", *extra],
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    stdout, stderr = process.communicate(timeout=600)
    return subprocess.CompletedProcess(process.args, process.returncode, stdout, stderr), process.pid


def comparable(history: list[dict]) -> list[dict]:
    """A history without its wall-clock times."""
    return [{key: value for key, value in entry.items() if key != "wall_seconds"} for entry in history]


@pytest.fixture(scope="module")
def on_ray(tmp_path_factory) -> tuple[subprocess.CompletedProcess, SearchDirectory, int]:
    output = tmp_path_factory.mktemp("search") / "on_ray"
    done, pid = optimize(output, "--workers", "2")
    return done, SearchDirectory(output), pid


def test_a_small_search_on_ray_improves_on_its_first_best_and_saves_everything(on_ray):
    done, directory, _ = on_ray
    assert done.returncode == 0, done.stderr[-3000:]
    assert "2 worker(s) on a local Ray instance" in done.stdout
    assert "iteration 2/2" in done.stdout  # progress, per iteration
    history = directory.history()
    assert [entry["iteration"] for entry in history] == [1, 2]
    assert all(len(entry["fitness"]) == 4 for entry in history)
    bests = [entry["best_fitness"] for entry in history]
    assert bests == sorted(bests)
    assert bests[-1] > max(history[0]["fitness"]), "the search did not improve on its first iteration"
    result = json.loads(done.stdout.strip().splitlines()[-1])
    settings, swarm, best = directory.load()
    assert settings == SETTINGS and swarm.finished
    assert result["fitness"] == best.fitness == bests[-1] == swarm.global_best[1]
    assert best.parameters["structure"] == "paired" and 0.5 <= best.parameters["frequency"] <= 2.0


def test_no_ray_process_outlives_the_search(on_ray):
    done, _, pid = on_ray
    assert done.returncode == 0
    assert wait_until_gone(pid, [said_session_dir(done.stdout)]) == []


class Interrupted(InProcessEvaluation):
    """Evaluates the first iteration, then is interrupted as by Ctrl-C."""

    def __init__(self, settings: SearchSettings) -> None:
        super().__init__(settings)
        self.calls = 0

    def evaluate(self, points: np.ndarray):
        self.calls += 1
        if self.calls > 1:
            raise KeyboardInterrupt
        return super().evaluate(points)


def test_the_seed_reproduces_the_search_without_ray_and_an_interrupted_one_resumes_to_it(on_ray, tmp_path, capsys):
    """The seeded search again without Ray: its first iteration in this process, interrupted as by
    Ctrl-C after it, then resumed by the command (``--workers 0``, in this process) to its end; its
    history, every iteration computed without Ray, is the search's on Ray."""
    _, on_ray_directory, _ = on_ray
    directory = SearchDirectory(tmp_path / "interrupted")
    directory.create(overwrite=False)
    evaluation = Interrupted(SETTINGS)
    with pytest.raises(KeyboardInterrupt):
        run_search(SETTINGS, new_swarm(SETTINGS), None, evaluation, directory)
    evaluation.close()
    assert len(directory.history()) == 1
    capsys.readouterr()
    assert main(["optimize-gait", "--resume", "--output", str(directory.path), "--workers", "0"]) == 0, \
        capsys.readouterr().err[-3000:]
    out = capsys.readouterr().out
    assert "in this process" in out and "resumed at iteration 1" in out
    assert "iteration 2/2" in out
    assert comparable(directory.history()) == comparable(on_ray_directory.history())


def test_a_killed_search_leaves_no_ray_process_and_resumes(tmp_path):
    """Killed (SIGKILL) once its first iteration is saved: evaluations of 0.2 s suffice, what is
    checked is Ray's processes and the saved state, not the gaits."""
    output = tmp_path / "killed"
    log, said = tmp_path / "search.log", tmp_path / "search.out"
    with log.open("w") as stderr, said.open("w") as stdout:
        process = subprocess.Popen(["humanoid", "optimize-gait", "--particles", "2", "--iterations", "50",
                                    "--seconds", "0.2", "--workers", "1", "--output", str(output)],
                                   stdout=stdout, stderr=stderr)
    directory = SearchDirectory(output)
    deadline = time.monotonic() + 300
    while not directory.state_path.exists() and process.poll() is None and time.monotonic() < deadline:
        time.sleep(0.1)
    assert process.poll() is None, f"the search ended before it could be killed: {log.read_text()[-3000:]}"
    process.kill()
    process.wait(timeout=30)
    assert wait_until_gone(process.pid, [said_session_dir(said.read_text())]) == []
    _, swarm, _ = directory.load()  # the last saved iteration, whole
    assert 1 <= swarm.iteration < 50


def test_bench_gait_search_prints_its_figures_and_identical_outcomes():
    """Two evaluations of 0.1 s: the figures' arithmetic and the three runs' identical outcomes do
    not depend on the gaits' length (Ray's start-up is most of the test)."""
    done = subprocess.run(["humanoid", "bench", "gait-search", "--evaluations", "2", "--seconds", "0.1", "--json"],
                          capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr[-3000:]
    figures = json.loads(done.stdout.strip().splitlines()[-1])
    assert figures["outcomes_identical"] is True
    assert figures["speedup_2_workers"] == pytest.approx(figures["ray_1_worker_s"] / figures["ray_2_workers_s"])
    assert figures["evaluations_per_core_hour"] == pytest.approx(
        3600.0 / (figures["ray_1_worker_s"] / 2 * 32.0 / 0.1))
    assert figures["projected_full_search_h_50_cores"] > 0.0


def test_the_bench_starts_ray_once_for_its_one_and_two_worker_runs(monkeypatch, capsys):
    """One local instance of 2 CPUs serves both timed runs, one evaluation in flight at a time,
    then two, after a warm-up of both workers (a start-up per run cost users several seconds
    for nothing). Ray's evaluation is stood in for by one in this process that records how it
    is made and asked; the figures' arithmetic is checked on the real bench above."""
    import argparse

    from humanoid_experiments import gait_search
    from humanoid_experiments.bench import gait_search as bench

    made: list[tuple[int | None, list]] = []

    class Recorded(InProcessEvaluation):
        def __init__(self, settings: SearchSettings, workers: int | None = None, address: str | None = None) -> None:
            super().__init__(settings)
            made.append((workers, []))

        def evaluate(self, points: np.ndarray, at_once: int | None = None):
            made[-1][1].append((len(points), at_once))
            return super().evaluate(points)

    monkeypatch.setattr(gait_search, "RayEvaluation", Recorded)
    assert bench.run(argparse.Namespace(evaluations=2, seconds=0.1, structure="paired", seed=0, json=True)) == 0
    assert made == [(2, [(2, 2), (2, 1), (2, 2)])]  # one instance: the warm-up, 1 worker, 2 workers
    assert json.loads(capsys.readouterr().out)["outcomes_identical"] is True


def test_an_experiment_of_the_report_searches_its_free_parameters_scored_by_eq_17(tmp_path, capsys):
    """Experiment 5 (16 free parameters in [0, 1], the geometric swarm of cpg.yaml), 2 particles
    x 2 iterations of 2 s, the command in this process (``--workers 0``: no Ray, nothing about
    processes to check): the command's JSON names the parameters, the best's fitness is eq 17 on
    its saved samples, and the convergence plot is written. Two particles suffice: a best and
    its eq 17 are checked, not how good it is."""
    from humanoid_core.quadruped_gaits import path_fitness

    output = tmp_path / "experiment5"
    code = main(["optimize-gait", "--experiment", "5", "--particles", "2", "--iterations", "2", "--seconds", "2",
                 "--workers", "0", "--output", str(output), "--json"])
    done = capsys.readouterr()
    assert code == 0, done.err[-3000:]
    assert "pace:" in done.out and "on 50 cores" in done.out  # the full budget's projection
    result = json.loads(done.out.strip().splitlines()[-1])
    assert result["free_parameters"]["count"] == 16 == len(result["free_parameters"]["names"])
    assert result["settings"]["swarm"]["neighbourhood"] == "geometric"
    best = result["best"]
    assert all(0.0 <= u <= 1.0 for u in best["point"])
    samples = best["outcome"]["samples"]
    assert len(samples) == 3  # 0, 1 and 2 s
    assert best["fitness"] == pytest.approx(path_fitness(samples))
    assert (output / "convergence.png").read_bytes().startswith(b"\x89PNG")
    assert len(SearchDirectory(output).history()) == 2
