"""``humanoid describe``: what a robot model contains, as text or JSON.

Reports every joint with its limits, the total mass, and, in the home pose with the
robot standing on flat ground, the whole-body CoM, each sole's position and the
static stability margin of the CoM over the support polygon of all its feet.
"""

from __future__ import annotations

import math

import numpy as np

from humanoid_description.model import RobotModel
from humanoid_description.support import convex_hull, signed_margin


def describe(model: RobotModel) -> dict:
    """The description as a JSON-ready dictionary (SI units, world frame on the ground)."""
    home = model.home_positions()
    base = model.standing_base(home)
    com = model.com(home, base)
    soles = {side: model.frame_placement(foot.sole, home, base).translation
             for side, foot in model.config.feet.items()}
    corners = np.vstack([model.sole_corners(side, home, base) for side in model.config.feet])
    margin = signed_margin(com[:2], convex_hull(corners[:, :2]))
    return {
        "robot": model.name,
        "joint_count": len(model.joints),
        "joints": [
            {"name": j.name, "lower_rad": j.limits.lower, "upper_rad": j.limits.upper,
             "lower_deg": math.degrees(j.limits.lower), "upper_deg": math.degrees(j.limits.upper),
             "velocity_rad_s": j.limits.velocity, "effort_nm": j.limits.effort,
             "home_rad": float(home[j.index])}
            for j in model.joints],
        "total_mass_kg": model.total_mass,
        "home_pose": model.config.home_pose,
        "com_home_m": [float(v) for v in com],
        "soles_home_m": {side: [float(v) for v in p] for side, p in soles.items()},
        "stability_margin_home_m": float(margin),
    }


def format_text(info: dict) -> str:
    lines = [f"robot {info['robot']}: {info['joint_count']} actuated joints, "
             f"total mass {info['total_mass_kg']:.4f} kg",
             f"{'joint':20s} {'lower':>9s} {'upper':>9s} {'home':>8s} {'vel':>7s} {'effort':>7s}",
             f"{'':20s} {'(deg)':>9s} {'(deg)':>9s} {'(deg)':>8s} {'(rad/s)':>7s} {'(N m)':>7s}"]
    for j in info["joints"]:
        lines.append(f"{j['name']:20s} {j['lower_deg']:9.2f} {j['upper_deg']:9.2f} "
                     f"{math.degrees(j['home_rad']):8.2f} {j['velocity_rad_s']:7.2f} {j['effort_nm']:7.2f}")
    com = info["com_home_m"]
    lines.append(f"home pose '{info['home_pose']}', standing on flat ground (world frame, m):")
    lines.append(f"  CoM            x {com[0]:+.4f}  y {com[1]:+.4f}  z {com[2]:+.4f}")
    for side, p in info["soles_home_m"].items():
        lines.append(f"  {side + ' sole':14s} x {p[0]:+.4f}  y {p[1]:+.4f}  z {p[2]:+.4f}")
    lines.append(f"  static margin of the CoM over all its feet: {info['stability_margin_home_m'] * 1000:.1f} mm")
    return "\n".join(lines)
