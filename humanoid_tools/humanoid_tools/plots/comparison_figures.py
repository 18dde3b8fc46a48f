"""The figures of ``humanoid compare``, in the style of ``humanoid plot`` (its helpers, one PNG
each), on aligned time (0 = the start of the experiment in both recordings):

- ``compare_summary.png``: both sides and the alignment in words, the difference and each
  side's tracking error per joint;
- ``compare_joints_<group>.png``: per joint, both measured positions overlaid and their difference;
- ``compare_balance.png``: CoM and cart-table ZMP paths of both (where the balance monitor ran);
- ``compare_rates.png``: joint_states interval and delay, loop rates and latencies of both.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from pathlib import Path

import numpy as np
from matplotlib.figure import Figure

from humanoid_tools.plots.comparison import Comparison, JointDifference, summary_lines
from humanoid_tools.plots.figures import (
    ERROR,
    MIN_ERROR_SPAN,
    MIN_POSITION_SPAN,
    joint_groups,
    joint_page_layout,
    save,
    widen,
)
from humanoid_tools.plots.series import Experiment

SIDE_A, SIDE_B = "tab:blue", "tab:orange"


def labels(comparison: Comparison) -> tuple[str, str]:
    """The two sides' names: their bags' folder names (A and B when equal)."""
    a, b = comparison.a.path.name, comparison.b.path.name
    return (f"A: {a}", f"B: {b}") if a != b else ("A", "B")


def all_figures(comparison: Comparison, out: Path) -> list[Path]:
    """Write every figure both bags have data for; returns the files."""
    out.mkdir(parents=True, exist_ok=True)
    files = [save(summary(comparison), out / "compare_summary.png")]
    for group, joints in joint_groups(comparison.joints):
        files.append(save(joint_page(comparison, group, joints), out / f"compare_joints_{group}.png"))
    if comparison.balance is not None:
        files.append(save(balance(comparison), out / "compare_balance.png"))
    files.append(save(rates(comparison), out / "compare_rates.png"))
    return files


# -- joints ----------------------------------------------------------------------------------
def joint_page(comparison: Comparison, group: str, joints: Sequence[JointDifference]) -> Figure:
    label_a, label_b = labels(comparison)
    figure, axes = joint_page_layout(len(joints), f"{_title(comparison)} — joints {group.replace('_', ', ')}: "
                                                  "measured positions of both recordings and their difference")
    t = comparison.times
    for row, joint in enumerate(joints):
        position, difference = axes[row]
        position.plot(t, np.degrees(joint.a), color=SIDE_A, lw=1.2, label=label_a)
        position.plot(t, np.degrees(joint.b), color=SIDE_B, lw=1.0, ls="--", label=label_b)
        gaps = len(joint.difference) - int(joint.known.sum())
        note = f"  ({gaps} samples unknown on one side: gaps)" if gaps else ""
        position.set_title(f"{joint.name}{note}", fontsize=10, loc="left")
        position.set_ylabel("position (deg)")
        widen(position, MIN_POSITION_SPAN)
        position.grid(alpha=0.3)
        position.legend(loc="upper right", fontsize=8)
        stats = joint.stats(t)
        difference.plot(t, np.degrees(joint.difference), color=ERROR, lw=1.0)
        difference.axhline(0.0, color="0.5", lw=0.8)
        widen(difference, MIN_ERROR_SPAN)
        difference.set_title(_difference_title(stats), fontsize=9, loc="left")
        difference.set_ylabel("B − A (deg)")
        difference.grid(alpha=0.3)
    for ax in axes[-1]:
        ax.set_xlabel("time from the start of the experiment (s)")
    return figure


def _difference_title(stats: dict) -> str:
    if stats["rms_difference_rad"] is None:
        return "difference: no sample known on both sides"
    return (f"RMS {math.degrees(stats['rms_difference_rad']):.2f}, max "
            f"{math.degrees(stats['max_difference_rad']):.2f}, end {math.degrees(stats['end_difference_rad']):.2f} deg")


# -- balance ---------------------------------------------------------------------------------
def balance(comparison: Comparison) -> Figure:
    data = comparison.balance
    assert data is not None
    label_a, label_b = labels(comparison)
    figure = Figure(figsize=(13, 6.2), layout="constrained")
    plane, over_time = figure.subplots(1, 2, width_ratios=(1, 1.3))
    where = ("each from its position at the start: the ground frames differ "
             f"({data.frames[0]} / {data.frames[1]})" if data.relative else f"frame {data.frames[0]}")
    figure.suptitle(f"{_title(comparison)} — balance: CoM and cart-table ZMP of both recordings ({where})",
                    fontsize=12)
    mm = 1000.0
    for path, color, style, label in ((data.com_a, SIDE_A, "-", f"CoM {label_a}"),
                                      (data.com_b, SIDE_B, "-", f"CoM {label_b}"),
                                      (data.zmp_a, SIDE_A, ":", f"ZMP {label_a}"),
                                      (data.zmp_b, SIDE_B, ":", f"ZMP {label_b}")):
        if np.isfinite(path).any():
            plane.plot(path[:, 0] * mm, path[:, 1] * mm, color=color, ls=style, lw=1.3, label=label)
    plane.set_aspect("equal", adjustable="datalim")
    plane.set_xlabel("x (mm)")
    plane.set_ylabel("y (mm)")
    plane.set_title("ground plane", fontsize=10, loc="left")
    plane.grid(alpha=0.3)
    plane.legend(fontsize=8, loc="best")
    t = comparison.times
    stats = data.stats()
    for axis, name in enumerate("xy"):
        over_time.plot(t, data.com_a[:, axis] * mm, color=SIDE_A, lw=1.2, ls="-" if axis == 0 else "--",
                       label=f"CoM {name} {label_a}")
        over_time.plot(t, data.com_b[:, axis] * mm, color=SIDE_B, lw=1.2, ls="-" if axis == 0 else "--",
                       label=f"CoM {name} {label_b}")
    over_time.plot(t, np.linalg.norm(data.com_b - data.com_a, axis=1) * mm, color=ERROR, lw=1.0,
                   label="|CoM B − CoM A|")
    rms = stats["com_rms_difference_m"]
    over_time.set_title("CoM over time" + (f": difference RMS {rms * mm:.1f} mm, max "
                                           f"{stats['com_max_difference_m'] * mm:.1f} mm" if rms is not None else ""),
                        fontsize=10, loc="left")
    over_time.set_xlabel("time from the start of the experiment (s)")
    over_time.set_ylabel("mm")
    over_time.grid(alpha=0.3)
    over_time.legend(fontsize=8, loc="best")
    return figure


# -- rates -----------------------------------------------------------------------------------
def rates(comparison: Comparison) -> Figure:
    sides = ((comparison.a, comparison.start_a.time, SIDE_A, labels(comparison)[0]),
             (comparison.b, comparison.start_b.time, SIDE_B, labels(comparison)[1]))
    panels = ["interval"]
    if any(e.joint_state_delay is not None for e, *_ in sides):
        panels.append("delay")
    if any(e.rates for e, *_ in sides):
        panels.append("rates")
    if any(e.latencies for e, *_ in sides):
        panels.append("latencies")
    figure = Figure(figsize=(13, 2.8 * len(panels) + 1.0), layout="constrained")
    axes = figure.subplots(len(panels), 1, squeeze=False, sharex=True)[:, 0]
    figure.suptitle(f"{_title(comparison)} — timing of both recordings: joint_states, loop rates, latencies",
                    fontsize=12)
    for ax, panel in zip(axes, panels, strict=True):
        for experiment, start, color, label in sides:
            _timing_panel(ax, panel, experiment, start, color, label)
        ax.grid(alpha=0.3)
        if ax.lines:
            ax.legend(fontsize=7, loc="best")
    axes[-1].set_xlabel("time from the start of the experiment (s)")
    return figure


def _timing_panel(ax, panel: str, experiment: Experiment, start: float, color: str, label: str) -> None:
    if panel == "interval" and experiment.joint_state_interval is not None:
        interval = experiment.joint_state_interval
        median = float(np.median(interval.v)) if len(interval.v) else math.nan
        ax.plot(interval.t - start, interval.v, lw=0.8, color=color, label=f"{label} (median {median:.1f} ms)")
        ax.set_ylabel("interval (ms)")
        ax.set_title("time between consecutive joint_states (each bag's stamps)", fontsize=10, loc="left")
    elif panel == "delay":
        delay = experiment.joint_state_delay
        if delay is not None:
            ax.plot(delay.t - start, delay.v, lw=0.8, color=color, label=label)
        ax.set_ylabel("delay (ms)")
        ax.set_title("joint_states stamp to its arrival at the recorder (only where the stamps are on the "
                     "recorder's clock: not in simulation)", fontsize=10, loc="left")
    else:
        series = experiment.rates if panel == "rates" else experiment.latencies
        styles = ("-", "--", ":", "-.")
        for index, (name, signal) in enumerate(series.items()):
            ax.plot(signal.t - start, signal.v, marker=".", ms=3, lw=1.0, color=color, ls=styles[index % 4],
                    label=f"{label} {name}")
        ax.set_yscale("log")  # rates and latencies of several nodes span decades
        ax.set_ylabel("rate (Hz)" if panel == "rates" else "ms")
        ax.set_title("loop rates in diagnostics (log scale)" if panel == "rates"
                     else "latencies in diagnostics (*_ms values, log scale)", fontsize=10, loc="left")


# -- summary -----------------------------------------------------------------------------------
def summary(comparison: Comparison) -> Figure:
    figure = Figure(figsize=(13, 9.5), layout="constrained")
    grid = figure.add_gridspec(2, 1, height_ratios=(0.6, 1.1))
    text_ax = figure.add_subplot(grid[0])
    label_a, label_b = labels(comparison)
    figure.suptitle(f"{_title(comparison)} — {label_a} vs {label_b}", fontsize=13)
    text_ax.axis("off")
    text_ax.text(0.0, 1.0, "\n".join(summary_lines(comparison)), va="top", ha="left", family="monospace",
                 fontsize=8.5, transform=text_ax.transAxes)
    bars = figure.add_subplot(grid[1])
    stats = [j.stats(comparison.times) for j in comparison.joints]
    x = np.arange(len(stats))

    def degrees(key: str) -> np.ndarray:
        return np.degrees([s[key] if s[key] is not None else math.nan for s in stats])

    bars.bar(x - 0.2, degrees("rms_difference_rad"), width=0.4, color="tab:orange", label="RMS difference B − A")
    bars.bar(x + 0.2, degrees("max_difference_rad"), width=0.4, color=ERROR, label="max |difference|")
    bars.plot(x, degrees("tracking_rms_rad_a"), "o", color=SIDE_A, ms=4, label=f"tracking error RMS {label_a}")
    bars.plot(x, degrees("tracking_rms_rad_b"), "s", color="tab:green", ms=4, label=f"tracking error RMS {label_b}")
    bars.set_xticks(x, [j.name for j in comparison.joints], rotation=60, ha="right", fontsize=8)
    bars.set_ylabel("deg")
    bars.set_title("per joint: difference between the recordings, and each one's tracking error "
                   "(commanded − measured)", fontsize=10, loc="left")
    bars.legend(fontsize=8)
    bars.grid(axis="y", alpha=0.3)
    return figure


def _title(comparison: Comparison) -> str:
    return comparison.robot or "robot"
