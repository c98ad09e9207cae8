"""PNG plots of a feature-set comparison: ROC curves and the lead-time histogram.

Uses matplotlib's Agg backend through an explicit Figure, so plotting works headless and never
touches pyplot's global state (safe inside servers and tests). A simulated corpus says so in the
title, because these figures are easy to mistake for results about a real model. Published figures
are drawn on the same axes as the measured ones when they are in the same unit (the published
detection at 5% false alarms is a point on the ROC plane); the published median lead counts BFCL
turns, not our LLM and tool spans, so it is stated in words beside the histogram rather than drawn
on its axis.
"""

from __future__ import annotations

from pathlib import Path

from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure

from agentchaos_otel import published
from predictors.evaluate import Comparison

# One colour per feature set in every plot, so the ROC and the histogram read together.
COLORS = {"external": "C0", "entropy": "C1", "both": "C2"}


def _title(cmp: Comparison, what: str) -> str:
    return f"{what} (SIMULATED corpus)" if cmp.simulated else what


def plot_roc(cmp: Comparison, path: str | Path) -> Path:
    fig = Figure(figsize=(5.5, 5))
    FigureCanvasAgg(fig)
    ax = fig.add_subplot()
    ax.plot([0, 1], [0, 1], color="0.7", linestyle=":", linewidth=1)
    for name, ev in cmp.evaluations.items():
        fpr, tpr = ev.roc
        if not fpr:
            continue
        auc = ev.metrics.auroc
        pub = published.PREDICTOR[name].auroc
        ax.step(fpr, tpr, where="post", color=COLORS.get(name),
                label=f"{name}: AUROC {auc:.3f} (published {pub:.3f})")
        pub_detection = published.PREDICTOR[name].detection
        if pub_detection is not None:
            ax.plot([published.FALSE_ALARM_RATE], [pub_detection], "s", color=COLORS.get(name),
                    markerfacecolor="white", label=f"{name}, published: detection {pub_detection:.2f} at "
                                                   f"{published.FALSE_ALARM_RATE:.0%} false alarms")
    ax.axvline(cmp.false_alarm_target, color="0.5", linestyle="--", linewidth=0.8,
               label=f"{cmp.false_alarm_target:.0%} false alarms")
    ax.set_xlabel("false alarm rate (successful episodes)")
    ax.set_ylabel("detection rate (failed episodes)")
    ax.set_title(_title(cmp, "Episode-level ROC by feature set"), fontsize=10)
    ax.legend(loc="lower right", fontsize=8)
    ax.set_xlim(0, 1)
    ax.set_ylim(0, 1.01)
    path = Path(path)
    fig.savefig(path, dpi=120, bbox_inches="tight")
    return path


def plot_lead_histogram(cmp: Comparison, path: str | Path) -> Path:
    fig = Figure(figsize=(6, 4))
    FigureCanvasAgg(fig)
    ax = fig.add_subplot()
    leads = {name: ev.leads for name, ev in cmp.evaluations.items() if ev.leads}
    if leads:
        top = max(max(v) for v in leads.values())
        bins = [b - 0.5 for b in range(top + 2)]
        ax.hist(list(leads.values()), bins=bins, color=[COLORS.get(k, "C7") for k in leads],
                label=[f"{k} (n={len(v)})" for k, v in leads.items()])
        ax.legend(fontsize=8)
    else:
        ax.text(0.5, 0.5, "no failed test episode raised an alarm", ha="center", va="center",
                transform=ax.transAxes)
    ax.set_xlabel("steps from first alarm to episode end (LLM and tool spans)")
    ax.set_ylabel("detected failed episodes")
    lead = published.PREDICTOR["external"].median_lead
    if lead is not None:
        fig.text(0.01, -0.02, f"published (external features): median lead {lead:g} BFCL turns, a different "
                              "unit from the steps above", fontsize=7, color="0.35", va="top")
    ax.set_title(_title(cmp, "Lead time at the validation threshold"), fontsize=10)
    path = Path(path)
    fig.savefig(path, dpi=120, bbox_inches="tight")
    return path
