"""``humanoid bench service-answers``: how many service calls lose their answer when a graph
is starting on a busy machine, with the project's Fast DDS profile and without it.

A server answers only once it has discovered the client's response reader; rmw_fastrtps
waits for that at most the response writer's ``max_blocking_time`` and drops the answer
after it ("failed to send response (timeout)"), and the client waits for nothing. The
project's profile (``FASTDDS_DEFAULT_PROFILES_FILE``, which scripts/env.sh sets to
``humanoid_bringup/config/dds/fastdds_loopback.xml``) gives service writers 5 s; the
baseline is the same profile without its ``service`` writer section (Fast DDS's 100 ms).

Two servers, one per profile, run side by side. Each round starts ``--parallel`` fresh
client processes for each server at the same moment (many participants discovering each
other, as when a graph starts), beside ``--hogs`` processes spinning on the CPU, and each
client calls its server once: ``answered``, ``lost`` (no answer within ``--patience``) or
``unavailable`` (the service was never discovered). Both servers' clients start under the
same load, so the two counts compare.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import xml.etree.ElementTree as ElementTree
from contextlib import ExitStack
from dataclasses import asdict, dataclass
from pathlib import Path

from humanoid_core.processes import tethered_child

PEER = "humanoid_experiments.bench.service_peer"
PROFILE_VARIABLE = "FASTDDS_DEFAULT_PROFILES_FILE"
FAST_DDS_NAMESPACE = "http://www.eprosima.com"


@dataclass(frozen=True)
class Outcomes:
    """What the clients of one server saw."""

    clients: int
    answered: int
    lost: int
    unavailable: int
    median_answer_s: float | None
    slowest_answer_s: float | None


@dataclass(frozen=True)
class ServiceAnswersBenchmark:
    """The JSON output."""

    profile: str
    hogs: int
    load_before: float  # 1-minute load average when the run started
    with_profile: Outcomes
    baseline: Outcomes  # the same profile without its "service" writer section


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--rounds", type=int, default=15, help="rounds of clients (15)")
    parser.add_argument("--parallel", type=int, default=6, help="clients started at once per server and round (6)")
    parser.add_argument("--hogs", type=int, default=2, help="processes spinning on the CPU meanwhile (2)")
    parser.add_argument("--patience", type=float, default=20.0, help="s a client waits for the service and for "
                                                                      "its answer (20)")
    parser.add_argument("--profile", type=Path, default=None,
                        help=f"the Fast DDS profile to measure (default: ${PROFILE_VARIABLE}, which scripts/env.sh "
                             "and scripts/run.sh set to humanoid_bringup/config/dds/fastdds_loopback.xml)")
    parser.add_argument("--json", action="store_true", help="print one JSON object")


def without_service_writer(profile: Path, output: Path) -> Path:
    """``profile`` written to ``output`` without its ``service`` data writer profile."""
    ElementTree.register_namespace("", FAST_DDS_NAMESPACE)
    tree = ElementTree.parse(profile)
    profiles = tree.getroot().find(f"{{{FAST_DDS_NAMESPACE}}}profiles")
    sections = [] if profiles is None else [
        w for w in profiles.findall(f"{{{FAST_DDS_NAMESPACE}}}data_writer") if w.get("profile_name") == "service"]
    if not sections:
        raise ValueError(f"{profile} has no 'service' data_writer profile to compare against")
    for section in sections:
        profiles.remove(section)
    tree.write(output, xml_declaration=True, encoding="UTF-8")
    return output


def start(stack: ExitStack, arguments: list[str], profile: Path | None = None, **popen) -> subprocess.Popen:
    command, env = tethered_child(PEER, arguments)
    if profile is not None:
        env[PROFILE_VARIABLE] = str(profile)
    process = subprocess.Popen(command, env=env, text=True, **popen)
    stack.callback(_stop, process)
    return process


def _stop(process: subprocess.Popen) -> None:
    if process.poll() is None:
        process.terminate()
        try:
            process.wait(10.0)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


def serve(stack: ExitStack, service: str, profile: Path) -> None:
    server = start(stack, ["server", "--service", service], profile, stdout=subprocess.PIPE)
    if server.stdout.readline().strip() != "serving":
        raise RuntimeError(f"the {service} server did not start (exit {server.poll()})")


def outcomes(lines: list[str]) -> Outcomes:
    answers = [float(line.split()[1]) for line in lines if line.startswith("answered")]
    return Outcomes(clients=len(lines), answered=len(answers), lost=lines.count("lost"),
                    unavailable=lines.count("unavailable"),
                    median_answer_s=statistics.median(answers) if answers else None,
                    slowest_answer_s=max(answers) if answers else None)


def run(args: argparse.Namespace) -> int:
    if args.rounds < 1 or args.parallel < 1 or args.hogs < 0 or args.patience <= 0:
        print("humanoid bench service-answers: --rounds and --parallel must be at least 1, --hogs at least 0, "
              "--patience positive", file=sys.stderr)
        return 2
    profile = args.profile or (Path(os.environ[PROFILE_VARIABLE]) if os.environ.get(PROFILE_VARIABLE) else None)
    if profile is None:
        print(f"humanoid bench service-answers: no profile to measure: give --profile or set {PROFILE_VARIABLE} "
              "(scripts/env.sh and scripts/run.sh do)", file=sys.stderr)
        return 2
    load_before = os.getloadavg()[0]
    services = {"with_profile": "/bench/ping_profile", "baseline": "/bench/ping_baseline"}
    seen: dict[str, list[str]] = {condition: [] for condition in services}
    with tempfile.TemporaryDirectory(prefix="humanoid_bench_service_") as folder, ExitStack() as stack:
        try:
            baseline_profile = without_service_writer(profile, Path(folder) / "baseline.xml")
        except (OSError, ValueError, ElementTree.ParseError) as error:
            print(f"humanoid bench service-answers: {error}", file=sys.stderr)
            return 2
        serve(stack, services["with_profile"], profile)
        serve(stack, services["baseline"], baseline_profile)
        for _ in range(args.hogs):
            start(stack, ["hog"], stdout=subprocess.DEVNULL)
        for round_number in range(args.rounds):
            clients = [(condition, start(stack, ["client", "--service", service, "--patience", str(args.patience)],
                                         stdout=subprocess.PIPE))
                       for condition, service in services.items() for _ in range(args.parallel)]
            for condition, client in clients:
                seen[condition].append(client.communicate()[0].strip() or f"exit {client.returncode}")
            if not args.json:
                print(f"round {round_number + 1}/{args.rounds}: "
                      + ", ".join(f"{c} lost {seen[c].count('lost')}" for c in services), flush=True)
    result = ServiceAnswersBenchmark(profile=str(profile), hogs=args.hogs, load_before=round(load_before, 2),
                                     with_profile=outcomes(seen["with_profile"]), baseline=outcomes(seen["baseline"]))
    if args.json:
        print(json.dumps(asdict(result)))
    else:
        for name, o in (("project profile", result.with_profile), ("baseline (100 ms)", result.baseline)):
            print(f"{name:18s}: {o.lost} lost, {o.unavailable} unavailable, {o.answered} answered of {o.clients}"
                  + (f" (median {o.median_answer_s:.3f} s, slowest {o.slowest_answer_s:.3f} s)" if o.answered else ""))
        print(f"beside {args.hogs} CPU hogs, load {load_before:.2f} before the run")
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="humanoid bench service-answers", description=__doc__.split("\n\n")[0])
    add_arguments(parser)
    return run(parser.parse_args(argv))


if __name__ == "__main__":
    sys.exit(main())
