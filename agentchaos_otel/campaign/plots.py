"""PNG figures of the report, each measured panel placed next to the published study's panel.

Figures are built on ``matplotlib.figure.Figure`` with the Agg canvas directly rather than through
``pyplot``: no global figure state, no GUI backend, and safe to call from a worker thread.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from matplotlib.axes import Axes
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure

from agentchaos_otel import published as P
from agentchaos_otel import stats
from agentchaos_otel.campaign.measures import StudyMeasures
from agentchaos_otel.stats import Estimate, Rate

MEASURED_COLOR = "#3b6ea8"
PUBLISHED_COLOR = "#9a9a9a"


def _measured_title(text: str, m: StudyMeasures) -> str:
    return f"{text}\nSIMULATED (simulated model)" if m.simulated else f"{text}\nmeasured"


def _published_title(text: str) -> str:
    return f"{text}\npublished: tool-response study (BFCL, 3,200 episodes)"


def _finish(fig: Figure, suptitle: str, m: StudyMeasures) -> Figure:
    fig.suptitle(f"SIMULATED — {suptitle}" if m.simulated else suptitle, fontsize=11)
    FigureCanvasAgg(fig)
    fig.tight_layout()
    return fig


def save(fig: Figure, path: Path) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=110, format="png")
    return path


def _flagged(label: str, n: int) -> str:
    """Axis label with the small-n flag, so a thin group is visible in the figure too."""
    return f"{label} (n={n}, small)" if stats.is_small(n) else label


def _err(values: Sequence[Estimate]) -> list[list[float]]:
    lows, highs = [], []
    for e in values:
        v = e.value or 0.0
        lows.append(100 * (v - e.low) if e.low is not None else 0.0)
        highs.append(100 * (e.high - v) if e.high is not None else 0.0)
    return [lows, highs]


def _bars(ax: Axes, labels: list[str], values: list[float], *, color: str,
          err: list[list[float]] | None = None, ylabel: str = "") -> None:
    xs = list(range(len(labels)))
    ax.bar(xs, values, color=color, yerr=err, capsize=4 if err else 0)
    ax.set_xticks(xs, labels, rotation=30, ha="right", fontsize=8)
    ax.set_ylabel(ylabel)


def _forest(ax: Axes, labels: list[str], values: list[float], lows: list[float | None],
            highs: list[float | None], *, color: str, xlabel: str) -> None:
    ys = list(range(len(labels)))[::-1]
    for y, v, lo, hi in zip(ys, values, lows, highs, strict=True):
        if lo is not None and hi is not None:
            ax.plot([lo, hi], [y, y], color=color, lw=2)
        ax.plot([v], [y], "o", color=color)
    ax.axvline(0, color="black", lw=0.8, ls="--")
    ax.set_yticks(ys, labels, fontsize=8)
    ax.set_xlabel(xlabel)


def success_by_condition(m: StudyMeasures) -> Figure | None:
    conds = [c for c, s in m.conditions.items() if s.success.value is not None]
    if not conds:
        return None
    # A catalog campaign has 66 conditions: the measured panel widens with them.
    fig = Figure(figsize=(max(10.0, 6.0 + 0.3 * len(conds)), 4 + (1.5 if len(conds) > 8 else 0)))
    ratios = [max(1.0, len(conds) / 4), max(1.0, len(conds) / 16)]
    ax1, ax2 = fig.subplots(1, 2, sharey=True, width_ratios=ratios)
    est = [m.conditions[c].success for c in conds]
    _bars(ax1, [_flagged(c, e.n) for c, e in zip(conds, est, strict=True)], [100 * (e.value or 0) for e in est],
          color=MEASURED_COLOR, err=_err(est),
          ylabel="success (%)")
    ax1.set_title(_measured_title("success by condition, 95% bootstrap CI", m), fontsize=9)
    pubs = list(P.SUCCESS_BY_CONDITION)
    _bars(ax2, pubs, [P.SUCCESS_BY_CONDITION[c].value for c in pubs], color=PUBLISHED_COLOR)
    ax2.set_title(_published_title("success by condition"), fontsize=9)
    return _finish(fig, "Success by condition", m)


def paired_differences(m: StudyMeasures) -> Figure | None:
    conds = [c for c, d in m.paired.items() if d.difference.value is not None]
    if not conds:
        return None
    fig = Figure(figsize=(10, max(3.5, 1.5 + 0.28 * len(conds))))
    ax1, ax2 = fig.subplots(1, 2, sharex=True)
    ds = [m.paired[c].difference for c in conds]
    _forest(ax1, [_flagged(c, d.n) for c, d in zip(conds, ds, strict=True)], [100 * (d.value or 0) for d in ds],
            [None if d.low is None else 100 * d.low for d in ds],
            [None if d.high is None else 100 * d.high for d in ds],
            color=MEASURED_COLOR, xlabel="faulted − clean (points)")
    ax1.set_title(_measured_title("paired difference, same task and seed", m), fontsize=9)
    pubs = list(P.PAIRED_DIFFERENCE)
    _forest(ax2, pubs, [P.PAIRED_DIFFERENCE[c].value for c in pubs],
            [P.PAIRED_DIFFERENCE[c].low for c in pubs],
            [P.PAIRED_DIFFERENCE[c].high for c in pubs], color=PUBLISHED_COLOR, xlabel="points")
    ax2.set_title(_published_title("paired difference"), fontsize=9)
    return _finish(fig, "Paired success difference", m)


def contributions(m: StudyMeasures) -> Figure | None:
    c = m.contributions
    if not c.effects:
        return None
    types = sorted(c.effects, key=lambda t: c.effects[t].value or 0.0)
    fig = Figure(figsize=(10, max(3.0, 0.45 * max(len(types), 7) + 1.5)))
    ax1, ax2 = fig.subplots(1, 2)
    es = [c.effects[t] for t in types]
    _forest(ax1, [_flagged(t, e.n) for t, e in zip(types, es, strict=True)], [100 * (e.value or 0) for e in es],
            [None if e.low is None else 100 * e.low for e in es],
            [None if e.high is None else 100 * e.high for e in es], color=MEASURED_COLOR,
            xlabel="change in success per fault (points)")
    ax1.set_title(_measured_title("per-type contribution, 95% bootstrap CI", m), fontsize=9)
    pubs = sorted(P.TYPE_CONTRIBUTION, key=lambda t: P.TYPE_CONTRIBUTION[t].value)
    _forest(ax2, pubs, [P.TYPE_CONTRIBUTION[t].value for t in pubs],
            [P.TYPE_CONTRIBUTION[t].low for t in pubs],
            [P.TYPE_CONTRIBUTION[t].high for t in pubs], color=PUBLISHED_COLOR, xlabel="points per fault")
    ax2.set_title(_published_title("per-type contribution"), fontsize=9)
    return _finish(fig, "Per-type contribution (logistic regression)", m)


def _rate_values(rates: dict[str, Rate], reference: str, order: list[str]) -> tuple[list[str], list[float],
                                                                                  list[int]]:
    """Measured rates in the published figure's order (so the panels line up), reference last."""
    keys = [k for k in order if k != reference and k in rates and rates[k].total]
    keys += sorted(k for k in rates if k not in keys and k != reference and rates[k].total)
    keys += [reference] if reference in rates and rates[reference].total else []
    return keys, [100 * (rates[k].value or 0.0) for k in keys], [rates[k].total for k in keys]


def _label_n(ax: Axes, totals: list[int]) -> None:
    for x, n in enumerate(totals):
        small = stats.is_small(n)
        ax.annotate(f"n={n}" + (" small" if small else ""), (x, 0), xytext=(0, 2), textcoords="offset points",
                    ha="center", fontsize=7, color="#b00000" if small else "black")


def _wilson_err(rates: dict[str, Rate], keys: list[str]) -> list[list[float]]:
    lows, highs = [], []
    for k in keys:
        r = rates[k]
        lo, hi = r.interval
        v = r.value or 0.0
        lows.append(100 * (v - lo) if lo is not None else 0.0)
        highs.append(100 * (hi - v) if hi is not None else 0.0)
    return [lows, highs]


def retry_and_abandonment(m: StudyMeasures) -> Figure | None:
    if not any(r.total for r in m.retry.values()) and not any(r.total for r in m.abandonment.values()):
        return None
    fig = Figure(figsize=(10, 7))
    (r1, r2), (a1, a2) = fig.subplots(2, 2)
    keys, vals, totals = _rate_values(m.retry, "unfaulted", list(P.RETRY_RATE))
    _bars(r1, keys, vals, color=MEASURED_COLOR, ylabel="retry within 3 moves (%)", err=_wilson_err(m.retry, keys))
    _label_n(r1, totals)
    r1.set_title(_measured_title("retry after a faulted step, 95% Wilson CI", m), fontsize=9)
    _bars(r2, list(P.RETRY_RATE), [v.value for v in P.RETRY_RATE.values()], color=PUBLISHED_COLOR)
    r2.set_title(_published_title("retry within 3 steps"), fontsize=9)
    keys, vals, totals = _rate_values(m.abandonment, "clean", list(P.ABANDONMENT))
    _bars(a1, keys, vals, color=MEASURED_COLOR, ylabel="ends with text, no tool call (%)",
          err=_wilson_err(m.abandonment, keys))
    _label_n(a1, totals)
    a1.set_title(_measured_title("abandonment, single-fault episodes, 95% Wilson CI", m), fontsize=9)
    _bars(a2, list(P.ABANDONMENT), [v.value for v in P.ABANDONMENT.values()], color=PUBLISHED_COLOR)
    a2.set_title(_published_title("abandonment"), fontsize=9)
    return _finish(fig, "Retry and abandonment", m)


FIGURES = {
    "success_by_condition": success_by_condition,
    "paired_differences": paired_differences,
    "contributions": contributions,
    "retry_abandonment": retry_and_abandonment,
}


def write_all(m: StudyMeasures, out_dir: Path) -> dict[str, Path | None]:
    """Every figure as ``<name>.png`` in ``out_dir``; None for a figure the data cannot support."""
    out: dict[str, Path | None] = {}
    for name, build in FIGURES.items():
        fig = build(m)
        out[name] = None if fig is None else save(fig, out_dir / f"{name}.png")
    return out
