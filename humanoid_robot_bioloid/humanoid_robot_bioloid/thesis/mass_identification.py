"""Identify the Bioloid's structure masses from the thesis' balanced poses.

The link CoM positions are fixed by the kinematics (the thesis puts a frame at each
CoM); only the masses are unknown. Each balanced pose gives the whole-body CoM, so
``sum_l m_l r_l(P) = M c(P)`` constrains the masses. To stay physical and honest:

- servo masses are known (0.055 kg each) and not fitted; only the structure mass of
  each link is, and mirror-image links share one value (10 unknowns);
- every structure mass stays within [0.4, 2.5] x its prior estimate, and the total
  is held at the robot's 1.7 kg;
- the fit is pulled towards the prior with weight ``lambda`` and uses a robust loss
  (soft L1, 5 mm scale) so that a few inconsistent poses cannot dominate;
- ``lambda`` is chosen by leave-one-pose-out cross-validation, and the report gives
  the held-out error of the prior and of the fit side by side. The fit is kept only
  if it predicts held-out poses better than the prior.

Run ``humanoid identify-masses --robot bioloid [--write]``.
"""

from __future__ import annotations

import argparse
import datetime
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import yaml
from scipy.optimize import least_squares

from humanoid_description import RobotModel, robot_files
from humanoid_robot_bioloid.thesis import equations as thesis
from humanoid_robot_bioloid.thesis.pose_analysis import ThesisFrame

LAMBDAS = (0.1, 1.0, 10.0, 100.0, 1000.0)
BOUNDS = (0.4, 2.5)
LOSS_SCALE_MM = 5.0


@dataclass(frozen=True)
class PoseData:
    """Link CoMs (thesis frame, mm) and the thesis' whole-body CoM for each pose."""

    names: list[str]
    link_positions: np.ndarray  # poses x links x 3
    com: np.ndarray  # poses x 3


@dataclass(frozen=True)
class Identification:
    """Outcome: chosen structure masses and the evidence for them."""

    links: list[str]
    structure: np.ndarray  # kg per link
    prior: np.ndarray
    lam: float
    prior_errors: np.ndarray  # mm per pose, prior masses (never fitted: held out by nature)
    fit_errors: np.ndarray  # mm per pose, fitted on all poses
    fit_loo: np.ndarray  # mm per pose, each predicted by a fit that did not see it
    accepted: bool


class MassModel:
    """The mass model file: servo counts and structure masses per link."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.data = yaml.safe_load(path.read_text())
        self.links = list(self.data["links"])
        self.servo_mass = float(self.data["servo_mass"])
        self.servos = np.array([self.data["links"][k]["servos"] * self.servo_mass for k in self.links])
        self.prior = np.array([self.data["links"][k].get("prior", self.data["links"][k]["structure"])
                               for k in self.links], dtype=float)
        groups: dict[str, list[int]] = {}
        for i, link in enumerate(self.links):
            groups.setdefault(link[2:] if link[:2] in ("r_", "l_") else link, []).append(i)
        self.group_matrix = np.zeros((len(self.links), len(groups)))
        for column, members in enumerate(groups.values()):
            self.group_matrix[members, column] = 1.0
        self.group_prior = np.array([self.prior[m[0]] for m in groups.values()])

    @property
    def total(self) -> float:
        return float(self.servos.sum() + self.prior.sum())


def pose_data(model: RobotModel, poses: dict[str, dict], links: list[str]) -> PoseData:
    frame = ThesisFrame(model)
    by_urdf = {urdf: name for name, urdf in thesis.URDF_LINK.items()}
    positions, coms = [], []
    for spec in poses.values():
        analysis = frame.analyse(spec["angles"])
        positions.append([analysis.links_mm[by_urdf[link]] for link in links])
        coms.append(spec["com_mm"])
    return PoseData(list(poses), np.array(positions), np.array(coms, dtype=float))


def _com(masses: np.ndarray, positions: np.ndarray) -> np.ndarray:
    return np.einsum("l,plk->pk", masses, positions) / masses.sum()


def _errors(mm: MassModel, structure: np.ndarray, data: PoseData) -> np.ndarray:
    return np.linalg.norm(_com(mm.servos + structure, data.link_positions) - data.com, axis=1)


def fit(mm: MassModel, data: PoseData, poses: list[int], lam: float) -> np.ndarray:
    """Structure masses (kg per link) fitted on the given pose indices."""
    total = mm.total
    positions, targets = data.link_positions[poses], data.com[poses]

    def residuals(groups: np.ndarray) -> np.ndarray:
        masses = mm.servos + mm.group_matrix @ groups
        com_error = (_com(masses, positions) - targets).ravel()
        prior_pull = np.sqrt(lam) * (groups - mm.group_prior) / mm.group_prior
        total_error = np.array([1000.0 * (masses.sum() - total)])
        return np.concatenate([com_error, prior_pull, total_error])

    lower, upper = BOUNDS[0] * mm.group_prior, BOUNDS[1] * mm.group_prior
    result = least_squares(residuals, mm.group_prior, bounds=(lower, upper),
                           loss="soft_l1", f_scale=LOSS_SCALE_MM)
    return mm.group_matrix @ result.x


def identify(model: RobotModel, mm: MassModel, poses: dict[str, dict]) -> Identification:
    data = pose_data(model, poses, mm.links)
    everything = list(range(len(data.names)))

    def loo(lam: float) -> np.ndarray:
        errors = []
        for held_out in everything:
            structure = fit(mm, data, [i for i in everything if i != held_out], lam)
            errors.append(_errors(mm, structure, data)[held_out])
        return np.array(errors)

    scores = {lam: loo(lam) for lam in LAMBDAS}
    best = min(scores, key=lambda lam: float(np.mean(scores[lam])))
    structure = fit(mm, data, everything, best)
    prior_errors = _errors(mm, mm.prior, data)
    accepted = float(np.mean(scores[best])) < float(np.mean(prior_errors))
    return Identification(
        links=mm.links, structure=structure if accepted else mm.prior, prior=mm.prior, lam=best,
        prior_errors=prior_errors, fit_errors=_errors(mm, structure, data),
        fit_loo=scores[best], accepted=accepted)


def report(result: Identification, names: list[str]) -> str:
    lines = ["pose   prior(mm)  fit-all(mm)  fit-held-out(mm)"]
    for i, name in enumerate(names):
        lines.append(f"{name:5s} {result.prior_errors[i]:10.1f} {result.fit_errors[i]:12.1f} "
                     f"{result.fit_loo[i]:17.1f}")
    lines.append(f"mean  {np.mean(result.prior_errors):10.1f} {np.mean(result.fit_errors):12.1f} "
                 f"{np.mean(result.fit_loo):17.1f}")
    lines.append(f"median{np.median(result.prior_errors):10.1f} {np.median(result.fit_errors):12.1f} "
                 f"{np.median(result.fit_loo):17.1f}")
    verdict = "accepted" if result.accepted else "rejected (held-out error not better than the prior)"
    lines.append(f"lambda = {result.lam:g} (leave-one-pose-out); fit {verdict}")
    lines.append("link            prior(kg)  identified(kg)")
    for link, p, s in zip(result.links, result.prior, result.structure, strict=True):
        lines.append(f"{link:15s} {p:9.3f} {s:15.3f}")
    return "\n".join(lines)


def write(mm: MassModel, result: Identification, names: list[str]) -> None:
    """Rewrite the mass model: identified structure masses, prior kept beside them."""
    text = mm.path.read_text()
    header = text[: text.index("servo_mass:")]
    links = {}
    for link, prior, structure in zip(result.links, result.prior, result.structure, strict=True):
        links[link] = {"servos": mm.data["links"][link]["servos"],
                       "structure": round(float(structure), 4), "prior": round(float(prior), 4)}
    body = {
        "servo_mass": mm.servo_mass,
        "identification": {
            "date": datetime.date.today().isoformat(),
            "poses": names, "lambda": result.lam, "accepted": result.accepted,
            "mean_error_mm": {"prior": round(float(np.mean(result.prior_errors)), 2),
                              "held_out_fit": round(float(np.mean(result.fit_loo)), 2)},
            "median_error_mm": {"prior": round(float(np.median(result.prior_errors)), 2),
                                "held_out_fit": round(float(np.median(result.fit_loo)), 2)},
        },
        "links": links,
    }
    mm.path.write_text(header + yaml.safe_dump(body, sort_keys=False, default_flow_style=None, width=100))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="humanoid identify-masses", description=__doc__.split("\n\n")[0])
    parser.add_argument("--robot", default="bioloid", choices=["bioloid"])
    parser.add_argument("--write", action="store_true",
                        help="rewrite robots/<robot>/mass_model.yaml with the result")
    args = parser.parse_args(argv)
    files = robot_files(args.robot)
    model = RobotModel(args.robot)
    mm = MassModel(files.config_file("mass_model.yaml"))
    poses = yaml.safe_load(files.config_file("balanced_poses.yaml").read_text())["poses"]
    result = identify(model, mm, poses)
    print(report(result, list(poses)))
    if args.write:
        write(mm, result, list(poses))
        print(f"written: {mm.path}")
    return 0
