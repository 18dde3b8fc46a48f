"""The figures of ``humanoid plot``: one PNG each, made with matplotlib's object API (no
pyplot state, Agg canvas: no display needed).

- ``summary.png``: one page: what the bag holds, tracking error per joint, balance and
  self-collision at a glance, falls, stale readings;
- ``joints_<group>.png``: per joint, commanded vs measured position and the tracking error;
- ``balance.png``: CoM and ZMP paths over the support polygon, and the margins over time;
- ``energy.png``: the energy monitor's supply current, electrical and mechanical power, and
  the energy consumed (where it ran), with the fall estimate's and the simulator's falls;
- ``rates.png``: loop and bus rates from diagnostics, bytes per bus cycle, fault counters,
  and the interval between joint_states.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from pathlib import Path
from typing import Protocol, TypeVar

import numpy as np
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure

from humanoid_tools.plots.series import Experiment, JointTracking

DPI = 110
JOINTS_PER_PAGE = 6
MIN_POSITION_SPAN = 2.0  # deg
MIN_ERROR_SPAN = 0.2  # deg
GAP_FACTOR = 10.0
POLYGON_SNAPSHOTS = 6
MEASURED, COMMANDED, ERROR = "tab:blue", "tab:orange", "tab:red"


class _Named(Protocol):
    name: str


Joint = TypeVar("Joint", bound=_Named)


def save(figure: Figure, path: Path) -> Path:
    FigureCanvasAgg(figure)
    figure.savefig(path, dpi=DPI)
    return path


def all_figures(experiment: Experiment, out: Path) -> tuple[list[Path], list[str]]:
    """Write every figure the bag has data for; returns the files and notes on what is missing."""
    out.mkdir(parents=True, exist_ok=True)
    files, notes = [save(summary(experiment), out / "summary.png")], []
    if experiment.joints:
        for group, joints in joint_groups(experiment.joints):
            files.append(save(joint_page(experiment, group, joints), out / f"joints_{group}.png"))
    else:
        notes.append("no joint_states in the bag: no joint figures")
    if experiment.joints and not any(len(j.commanded) for j in experiment.joints):
        notes.append("no commands in the bag (action feedback, joint_commands): measured positions only")
    if experiment.energy is not None and len(experiment.energy.t):
        files.append(save(energy(experiment), out / "energy.png"))
    else:
        notes.append("no energy_state in the bag (the energy monitor was not running): no energy figure")
    if experiment.balance is not None and len(experiment.balance.t):
        files.append(save(balance(experiment), out / "balance.png"))
    else:
        notes.append("no balance_state in the bag (the balance monitor was not running): no CoM/ZMP figure")
    if experiment.rates or experiment.bus_bytes or experiment.joint_state_interval is not None:
        files.append(save(rates(experiment), out / "rates.png"))
    else:
        notes.append("no diagnostics and no joint_states in the bag: no rate figure")
    return files, notes


# -- joints ----------------------------------------------------------------------------------
def joint_groups(joints: Sequence[Joint]) -> list[tuple[str, list[Joint]]]:
    """Joints (anything with a ``name``) grouped by name prefix (``rleg``, ``larm``, ``r`` ...) in
    order of appearance; groups larger than a page are split, small neighbouring ones merged."""
    groups: dict[str, list[Joint]] = {}
    for joint in joints:
        groups.setdefault(joint.name.split("_")[0] if "_" in joint.name else "joints", []).append(joint)
    pages: list[tuple[str, list[Joint]]] = []
    for prefix, members in groups.items():
        chunks = [members[i:i + JOINTS_PER_PAGE] for i in range(0, len(members), JOINTS_PER_PAGE)]
        for index, chunk in enumerate(chunks):
            name = prefix if len(chunks) == 1 else f"{prefix}{index + 1}"
            if pages and len(pages[-1][1]) + len(chunk) <= JOINTS_PER_PAGE and len(chunks) == 1 \
                    and len(pages[-1][1]) < JOINTS_PER_PAGE // 2:
                pages[-1] = (f"{pages[-1][0]}_{name}", pages[-1][1] + chunk)
            else:
                pages.append((name, list(chunk)))
    return pages


def joint_page_layout(rows: int, title: str) -> tuple[Figure, np.ndarray]:
    """A page of ``rows`` joints, each a wide position plot beside a narrower one (its error or
    difference), sharing the time axis: the plot's and the comparison's joint pages."""
    height = 2.3 * rows + 1.2
    figure = Figure(figsize=(13, height))
    figure.subplots_adjust(left=0.07, right=0.98, top=1.0 - 0.75 / height, bottom=0.55 / height, hspace=0.45,
                           wspace=0.22)
    axes = figure.subplots(rows, 2, squeeze=False, sharex=True, width_ratios=(2.2, 1))
    figure.suptitle(title, fontsize=12)
    return figure, axes


def joint_page(experiment: Experiment, group: str, joints: Sequence[JointTracking]) -> Figure:
    figure, axes = joint_page_layout(len(joints), f"{_title(experiment)} — joints {group.replace('_', ', ')}: "
                                                  "commanded vs measured position and tracking error")
    for row, joint in enumerate(joints):
        position, error = axes[row]
        position.plot(joint.measured.t, np.degrees(joint.measured.v), color=MEASURED, lw=1.2, label="measured")
        if len(joint.commanded):
            t, v = with_gaps(joint.commanded.t, np.degrees(joint.commanded.v))
            position.plot(t, v, color=COMMANDED, lw=1.0, ls="--", label="commanded")
        if len(joint.waypoints):
            position.plot(joint.waypoints.t, np.degrees(joint.waypoints.v), "o", ms=3, color="tab:green",
                          label="trajectory points")
        stale = f"  ({joint.stale_samples} stale readings: gaps)" if joint.stale_samples else ""
        position.set_title(f"{joint.name}{stale}", fontsize=10, loc="left")
        position.set_ylabel("position (deg)")
        widen(position, MIN_POSITION_SPAN)
        position.grid(alpha=0.3)
        position.legend(loc="upper right", fontsize=8)
        if len(joint.commanded):
            err = joint.error
            rms, worst = joint.error_stats()
            error.plot(*with_gaps(err.t, np.degrees(err.v)), color=ERROR, lw=1.0)
            error.axhline(0.0, color="0.5", lw=0.8)
            widen(error, MIN_ERROR_SPAN)
            error.set_title(f"error RMS {math.degrees(rms):.3f} deg, max {math.degrees(worst):.3f} deg"
                            if math.isfinite(rms) else "error: no known reading at the commanded times",
                            fontsize=9, loc="left")
        else:
            error.text(0.5, 0.5, "not commanded", ha="center", va="center", transform=error.transAxes, color="0.4")
        error.set_ylabel("commanded − measured (deg)")
        error.grid(alpha=0.3)
    for ax in axes[-1]:
        ax.set_xlabel("robot time (s)")
    return figure


def with_gaps(t: np.ndarray, v: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Break a line where samples pause (between two commanded trajectories): a NaN is put
    where the interval exceeds ``GAP_FACTOR`` times the median one."""
    if len(t) < 3:
        return t, v
    dt = np.diff(t)
    median = float(np.median(dt))
    breaks = np.nonzero(dt > GAP_FACTOR * max(median, 1e-6))[0] + 1
    return np.insert(t, breaks, np.nan), np.insert(v, breaks, np.nan)


def widen(ax, span: float) -> None:
    """At least ``span`` on the y axis, so that a joint at rest shows flat, not its noise."""
    low, high = ax.get_ylim()
    if high - low < span:
        centre = 0.5 * (low + high)
        ax.set_ylim(centre - span / 2, centre + span / 2)


# -- energy ----------------------------------------------------------------------------------
def energy(experiment: Experiment) -> Figure:
    data = experiment.energy
    assert data is not None
    figure = Figure(figsize=(11, 7))
    figure.suptitle(f"{_title(experiment)} — estimated supply current, power and energy (energy_state)", fontsize=11)
    current, power, consumed = figure.subplots(3, 1, sharex=True)
    current.plot(data.t, data.current, lw=1.0)
    current.set_ylabel("current (A)")
    power.plot(data.t, data.power, lw=1.0, label="electrical (I V)")
    power.plot(data.t, data.mechanical_power, lw=1.0, label="mechanical (sum |T w|)")
    power.set_ylabel("power (W)")
    power.legend(fontsize=8)
    consumed.plot(data.t, data.energy - data.energy[0], lw=1.0)
    consumed.set_ylabel("energy (J)")
    consumed.set_xlabel("robot time (s)")
    for ax in (current, power, consumed):
        ax.grid(alpha=0.3)
        if experiment.fell_at is not None:
            ax.axvline(experiment.fell_at, color="red", lw=1.0, ls="--")
        if experiment.fall_estimated_at is not None:
            ax.axvline(experiment.fall_estimated_at, color="orange", lw=1.0, ls=":")
    consumed.set_title(f"{data.consumed:.1f} J over the recording"
                       + ("; red: the simulator's fall" if experiment.fell_at is not None else "")
                       + ("; orange: the fall estimate" if experiment.fall_estimated_at is not None else ""),
                       fontsize=9, loc="left")
    return figure


# -- balance ---------------------------------------------------------------------------------
def balance(experiment: Experiment) -> Figure:
    data = experiment.balance
    assert data is not None
    figure = Figure(figsize=(13, 6.2), layout="constrained")
    plane, margins = figure.subplots(1, 2, width_ratios=(1, 1.3))
    figure.suptitle(f"{_title(experiment)} — balance: CoM and ZMP over the support polygon, and margins",
                    fontsize=12)
    mm = 1000.0
    known = [i for i, p in enumerate(data.polygons) if len(p) >= 3]
    if known:
        # a few snapshots over time (light to dark), and the one at the smallest margin
        picks = sorted({known[round(k)] for k in np.linspace(0, len(known) - 1, POLYGON_SNAPSHOTS)})
        for order, index in enumerate(picks):
            closed = np.vstack([data.polygons[index], data.polygons[index][:1]]) * mm
            shade = 0.75 - 0.45 * order / max(len(picks) - 1, 1)
            plane.plot(closed[:, 0], closed[:, 1], color=str(shade), lw=0.9,
                       label="support polygon (light: early, dark: late)" if order == 0 else None)
        margins_known = np.where(np.isfinite(data.margin), data.margin, np.inf)
        worst = int(np.argmin(margins_known)) if np.isfinite(margins_known).any() else known[0]
        if len(data.polygons[worst]) >= 3:
            closed = np.vstack([data.polygons[worst], data.polygons[worst][:1]]) * mm
            plane.fill(closed[:, 0], closed[:, 1], color="tab:red", alpha=0.08)
            plane.plot(closed[:, 0], closed[:, 1], color="tab:red", lw=1.0,
                       label=f"support polygon at the smallest margin (t = {data.t[worst]:.2f} s)")
            plane.plot(data.com[worst, 0] * mm, data.com[worst, 1] * mm, "x", color="tab:red", ms=8,
                       label="CoM at the smallest margin")
    plane.plot(data.com[:, 0] * mm, data.com[:, 1] * mm, color="tab:blue", lw=1.5, zorder=3,
               label="CoM (ground projection)")
    plane.plot(data.com[:1, 0] * mm, data.com[:1, 1] * mm, "o", color="tab:blue", ms=5, label="start")
    if np.isfinite(data.zmp_model).any():
        plane.plot(data.zmp_model[:, 0] * mm, data.zmp_model[:, 1] * mm, color="tab:orange", lw=1.0,
                   label="ZMP (cart-table model)")
    if np.isfinite(data.zmp_measured).any():
        plane.plot(data.zmp_measured[:, 0] * mm, data.zmp_measured[:, 1] * mm, color="tab:green", lw=1.0,
                   label="ZMP (measured forces)")
    plane.set_aspect("equal", adjustable="datalim")
    plane.set_xlabel("x (mm)")
    plane.set_ylabel("y (mm)")
    plane.set_title("ground plane (balance_state frame)", fontsize=10, loc="left")
    plane.grid(alpha=0.3)
    plane.legend(fontsize=8, loc="upper center", bbox_to_anchor=(0.5, -0.1), ncol=2)

    margins.plot(data.t, data.margin * mm, color="tab:blue", lw=1.3, label="CoM stability margin")
    if np.isfinite(data.zmp_margin).any():
        margins.plot(data.t, data.zmp_margin * mm, color="tab:green", lw=1.0, label="measured-ZMP margin")
    margins.axhline(0.0, color="tab:red", lw=1.0, ls="--", label="polygon edge")
    unstable = ~data.stable
    if unstable.any():
        low, high = margins.get_ylim()
        margins.fill_between(data.t, low, high, where=unstable, color="tab:red", alpha=0.12, step="mid",
                             label="not stable (below the minimum margin)")
        margins.set_ylim(low, high)
    no_support = ~np.isfinite(data.margin)
    if no_support.any():
        margins.plot(data.t[no_support], np.zeros(no_support.sum()), "x", color="k", ms=4, label="no support")
    margins.set_xlabel("robot time (s)")
    margins.set_ylabel("margin (mm, positive inside)")
    margins.set_title("distance to the nearest support polygon edge", fontsize=10, loc="left")
    margins.grid(alpha=0.3)
    margins.legend(fontsize=8, loc="best")
    return figure


# -- rates -----------------------------------------------------------------------------------
def rates(experiment: Experiment) -> Figure:
    panels = [name for name, present in (("rates", experiment.rates), ("bus", experiment.bus_bytes),
                                         ("faults", experiment.fault_counts),
                                         ("interval", experiment.joint_state_interval is not None)) if present]
    figure = Figure(figsize=(13, 2.8 * len(panels) + 1.0), layout="constrained")
    axes = figure.subplots(len(panels), 1, squeeze=False, sharex=True)[:, 0]
    figure.suptitle(f"{_title(experiment)} — loop and bus rates (diagnostics)", fontsize=12)
    for ax, panel in zip(axes, panels, strict=True):
        if panel == "rates":
            for label, signal in experiment.rates.items():
                ax.plot(signal.t, signal.v, marker=".", ms=3, lw=1.0, label=label)
            ax.set_ylabel("rate (Hz)")
            ax.set_title("loop rates in diagnostics (*_hz: as each node reports it, per wall-clock second; "
                         "per robot second: from its cycle counter)", fontsize=10, loc="left")
        elif panel == "bus":
            for label, signal in experiment.bus_bytes.items():
                ax.plot(signal.t, signal.v, marker=".", ms=3, lw=1.0, label=label)
            ax.set_ylabel("bytes")
            ax.set_title("bus traffic per control cycle", fontsize=10, loc="left")
        elif panel == "faults":
            for label, signal in experiment.fault_counts.items():
                ax.step(signal.t, signal.v, where="post", lw=1.2, label=label)
            ax.set_ylabel("count (cumulative)")
            ax.set_title("fault counters that became non-zero", fontsize=10, loc="left")
        else:
            interval = experiment.joint_state_interval
            assert interval is not None
            ax.plot(interval.t, interval.v, lw=0.8, color="tab:purple", label="joint_states interval")
            ax.ticklabel_format(axis="y", useOffset=False)
            if len(interval.v):
                median = float(np.median(interval.v))
                ax.axhline(median, color="0.4", lw=0.8, ls="--", label=f"median {median:.1f} ms "
                                                                        f"({1000.0 / median:.0f} Hz)"
                           if median > 0 else "median")
                ax.set_ylim(0.0, max(2.0 * median, float(np.max(interval.v)) * 1.1))
            ax.set_ylabel("interval (ms)")
            ax.set_title("time between consecutive joint_states (robot time; a gap is a missed reading)",
                         fontsize=10, loc="left")
        ax.grid(alpha=0.3)
        ax.legend(fontsize=8, loc="best")
    axes[-1].set_xlabel("robot time (s)")
    return figure


# -- summary -----------------------------------------------------------------------------------
def summary(experiment: Experiment) -> Figure:
    figure = Figure(figsize=(13, 9.5), layout="constrained")
    grid = figure.add_gridspec(2, 2, height_ratios=(1.0, 1.1))
    text_ax = figure.add_subplot(grid[0, 0])
    figure.suptitle(f"{_title(experiment)} — summary of {experiment.path.name}", fontsize=13)
    text_ax.axis("off")
    text_ax.text(0.0, 1.0, "\n".join(summary_lines(experiment)), va="top", ha="left", family="monospace",
                 fontsize=8.5, transform=text_ax.transAxes)

    bars = figure.add_subplot(grid[1, :])
    tracked = [j for j in experiment.joints if len(j.commanded)]
    if tracked:
        stats = np.degrees([j.error_stats() for j in tracked])
        x = np.arange(len(tracked))
        bars.bar(x - 0.2, stats[:, 0], width=0.4, color="tab:orange", label="RMS")
        bars.bar(x + 0.2, stats[:, 1], width=0.4, color="tab:red", label="max |error|")
        bars.set_xticks(x, [j.name for j in tracked], rotation=60, ha="right", fontsize=8)
        bars.set_ylabel("tracking error (deg)")
        bars.set_title("tracking error per commanded joint (commanded − measured)", fontsize=10, loc="left")
        bars.legend(fontsize=8)
        bars.grid(axis="y", alpha=0.3)
    else:
        bars.axis("off")
        bars.text(0.5, 0.5, "no commanded joints in this bag: no tracking error", ha="center", va="center",
                  color="0.4", transform=bars.transAxes)

    side = figure.add_subplot(grid[0, 1])
    data = experiment.balance
    if data is not None and len(data.t):
        side.plot(data.t, data.margin * 1000.0, color="tab:blue", lw=1.2, label="CoM stability margin")
        side.axhline(0.0, color="tab:red", lw=1.0, ls="--")
        side.set_ylabel("margin (mm)")
        side.set_title("balance", fontsize=10, loc="left")
    elif experiment.collisions is not None and len(experiment.collisions.t):
        collisions = experiment.collisions
        side.plot(collisions.t, collisions.closest * 1000.0, color="tab:purple", lw=1.2, label="closest pair")
        side.set_ylabel("distance (mm)")
        side.set_title("self-collision: closest link pair", fontsize=10, loc="left")
    elif experiment.joint_state_interval is not None:
        interval = experiment.joint_state_interval
        side.plot(interval.t, interval.v, color="tab:purple", lw=0.8, label="joint_states interval")
        side.set_ylabel("interval (ms)")
        side.set_title("joint_states timing (no balance_state in the bag)", fontsize=10, loc="left")
    side.set_xlabel("robot time (s)")
    side.grid(alpha=0.3)
    if side.lines:
        side.legend(fontsize=8)
    return figure


def summary_lines(experiment: Experiment) -> list[str]:
    lines = [f"robot: {experiment.robot_name or 'unknown (no robot_description)'}",
             f"joint_states: {experiment.topics.get('/joint_states', 0)} messages over "
             f"{experiment.duration:.2f} s of robot time",
             f"fell: {f'yes, at {experiment.fell_at:.2f} s' if experiment.fell_at is not None else 'no'}"
             if "/fallen" in experiment.topics else "fell: unknown (no /fallen topic)"]
    if "/fall_state" in experiment.topics:
        lines.append(f"fall estimate: fallen at {experiment.fall_estimated_at:.2f} s ({experiment.fall_posture})"
                     if experiment.fall_estimated_at is not None else "fall estimate: never fallen")
    if experiment.energy is not None and len(experiment.energy.t):
        data = experiment.energy
        lines.append(f"energy: {data.consumed:.1f} J, current mean {np.mean(data.current):.2f} A, "
                     f"max {np.max(data.current):.2f} A")
    stale = {j.name: j.stale_samples for j in experiment.joints if j.stale_samples}
    lines.append("stale readings: " + (", ".join(f"{n} {c}" for n, c in stale.items()) if stale else "none"))
    tracked = [j for j in experiment.joints if len(j.commanded)]
    if tracked:
        worst = max(tracked, key=lambda j: np.nan_to_num(j.error_stats()[1], nan=-1.0))
        lines.append(f"largest tracking error: {worst.name} {math.degrees(worst.error_stats()[1]):.3f} deg")
    data = experiment.balance
    if data is not None and len(data.t):
        finite = data.margin[np.isfinite(data.margin)]
        lowest = f"{1000.0 * finite.min():.1f} mm" if len(finite) else "none known"
        lines.append(f"balance: smallest CoM margin {lowest}; not stable in {np.count_nonzero(~data.stable)} of "
                     f"{len(data.t)} samples")
    else:
        lines.append("balance: no balance_state in the bag (balance monitor not running)")
    collisions = experiment.collisions
    if collisions is not None and len(collisions.t):
        closest = int(np.argmin(collisions.closest))
        lines.append(f"self-collision: in collision in {np.count_nonzero(collisions.in_collision)} of "
                     f"{len(collisions.t)} samples; closest {1000.0 * collisions.closest[closest]:.1f} mm "
                     f"({collisions.closest_pair[closest]})")
        if collisions.colliding_pairs:
            lines.append("  colliding pairs: " + ", ".join(sorted(collisions.colliding_pairs)[:4]))
    else:
        lines.append("self-collision: no self_collision_state in the bag (checker not running)")
    if experiment.damage:
        lines.append(f"DAMAGED BAG: {len(experiment.damage)} problems (humanoid plot lists them); "
                     "the figures show only what was read")
    lines.append("")
    lines.append(f"{'topic':34} {'read':>7} {'in bag':>7} {'received':>9}")
    for topic, indexed in sorted(experiment.indexed.items()):
        received = experiment.received.get(topic)
        lines.append(f"{_short(topic, 34):34} {experiment.topics.get(topic, 0):7d} {indexed:7d} "
                     f"{'' if received is None else received:>9}")
    return lines


def _short(text: str, width: int) -> str:
    return text if len(text) <= width else "…" + text[-(width - 1):]


def _title(experiment: Experiment) -> str:
    return experiment.robot_name or "robot"
