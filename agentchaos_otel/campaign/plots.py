"""PNG figures of the report: each measured figure and the published study's on one axis.

A measured value and the published one it is compared with are drawn in the same axes (grouped
bars, or two markers per row of a forest plot), so they share the scale and the row order by
construction: a reader never compares a 0-80 axis with a 0-25 one. Rows are the measured ones in
the report's order, then the study's rows the campaign did not measure; a row without a measured
(or published) value simply has no mark of that colour. Sample sizes sit in the row labels, not
on the bars, so they cannot collide with error bars.

Every string that comes from the traces (condition names, fault types) is escaped before it
reaches matplotlib: a ``$`` in a condition name is a dollar sign, never mathtext.

Figures are built on ``matplotlib.figure.Figure`` with the Agg canvas directly rather than through
``pyplot``: no global figure state, no GUI backend, and safe to call from a worker thread.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
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
PUBLISHED_LABEL = "published: tool-response study (BFCL, 3,200 episodes)"

# (value, low, high) in percent or points; None where there is nothing to draw.
Point = tuple[float, float | None, float | None]


def plain(text: object) -> str:
    """Text from data as matplotlib draws it literally (``$`` would start mathtext)."""
    return str(text).replace("$", r"\$")


def _measured_label(m: StudyMeasures) -> str:
    return "measured: SIMULATED model" if m.simulated else "measured"


def _finish(fig: Figure, suptitle: str, m: StudyMeasures) -> Figure:
    fig.suptitle(f"SIMULATED — {suptitle}" if m.simulated else suptitle, fontsize=11)
    FigureCanvasAgg(fig)
    return fig


def save(fig: Figure, path: Path) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=110, format="png")
    return path


def rows(measured: Iterable[str], published: Iterable[str], *, last: str | None = None) -> list[str]:
    """One row order for both sources: measured rows as given, then published-only rows, ``last`` at the end."""
    out = list(dict.fromkeys(k for k in [*measured, *published] if k != last))
    return out + ([last] if last is not None and (last in measured or last in published) else [])


def _row_label(key: str, n: int | None) -> str:
    if n is None:
        return f"{plain(key)}\n(published only)"
    return f"{plain(key)}\nn={n}" + (", small" if stats.is_small(n) else "")


def _estimate(e: Estimate | None, scale: float = 100.0) -> Point | None:
    if e is None or e.value is None:
        return None
    return (scale * e.value, None if e.low is None else scale * e.low, None if e.high is None else scale * e.high)


def _rate(r: Rate | None) -> Point | None:
    if r is None or not r.total or r.value is None:
        return None
    lo, hi = r.interval
    return (100 * r.value, None if lo is None else 100 * lo, None if hi is None else 100 * hi)


def _published(v: P.PublishedValue | None) -> Point | None:
    return None if v is None else (v.value, v.low, v.high)


def _yerr(points: Sequence[Point]) -> list[list[float]]:
    return [[p[0] - p[1] if p[1] is not None else 0.0 for p in points],
            [p[2] - p[0] if p[2] is not None else 0.0 for p in points]]


def _grouped_bars(ax: Axes, keys: list[str], measured: Mapping[str, Point], published: Mapping[str, Point],
                  ns: Mapping[str, int], m: StudyMeasures, ylabel: str) -> None:
    width = 0.4
    for offset, source, color, label in ((-width / 2, measured, MEASURED_COLOR, _measured_label(m)),
                                         (width / 2, published, PUBLISHED_COLOR, PUBLISHED_LABEL)):
        xs = [i + offset for i, k in enumerate(keys) if k in source]
        points = [source[k] for k in keys if k in source]
        if points:
            ax.bar(xs, [p[0] for p in points], width=width, color=color, label=label,
                   yerr=_yerr(points) if any(p[1] is not None for p in points) else None, capsize=3)
    labels = [_row_label(k, ns.get(k) if k in measured else None) for k in keys]
    rotation = 0 if len(keys) <= 6 else 90
    ax.set_xticks(range(len(keys)), labels, rotation=rotation, fontsize=7,
                  ha="center" if rotation == 0 else "right", rotation_mode="anchor" if rotation else "default")
    ax.set_xlim(-0.6, len(keys) - 0.4)
    ax.set_ylabel(ylabel)
    ax.set_ylim(bottom=0)
    ax.legend(fontsize=7, loc="upper left", bbox_to_anchor=(1.0, 1.0))


def _forest(ax: Axes, keys: list[str], measured: Mapping[str, Point], published: Mapping[str, Point],
            ns: Mapping[str, int], m: StudyMeasures, xlabel: str) -> None:
    ys = {k: float(len(keys) - 1 - i) for i, k in enumerate(keys)}  # first row on top
    for offset, source, color, marker, label in ((0.15, measured, MEASURED_COLOR, "o", _measured_label(m)),
                                                 (-0.15, published, PUBLISHED_COLOR, "s", PUBLISHED_LABEL)):
        first = True
        for k in keys:
            if k not in source:
                continue
            v, lo, hi = source[k]
            y = ys[k] + offset
            if lo is not None and hi is not None:
                ax.plot([lo, hi], [y, y], color=color, lw=2)
            ax.plot([v], [y], marker, color=color, label=label if first else None)
            first = False
    ax.axvline(0, color="black", lw=0.8, ls="--")
    ax.set_yticks([ys[k] for k in keys], [_row_label(k, ns.get(k) if k in measured else None) for k in keys],
                  fontsize=7)
    ax.set_ylim(-0.7, len(keys) - 0.3)
    ax.set_xlabel(xlabel)
    ax.legend(fontsize=7, loc="upper left", bbox_to_anchor=(1.0, 1.0))


def _bar_figure(n_rows: int, panels: int = 1) -> tuple[Figure, list[Axes]]:
    width = max(9.0, 3.5 + 0.45 * n_rows)
    height = (3.2 + (1.4 if n_rows > 6 else 0.0)) * panels + 0.6
    fig = Figure(figsize=(width, height), layout="constrained")
    return fig, list(fig.subplots(panels, 1, squeeze=False)[:, 0])


def _forest_figure(n_rows: int) -> tuple[Figure, Axes]:
    fig = Figure(figsize=(10, max(3.2, 1.4 + 0.5 * n_rows)), layout="constrained")
    return fig, fig.subplots()


def success_by_condition(m: StudyMeasures) -> Figure | None:
    measured = {c: p for c, s in m.conditions.items() if (p := _estimate(s.success)) is not None}
    if not measured:
        return None
    published = {c: p for c, v in P.SUCCESS_BY_CONDITION.items() if (p := _published(v)) is not None}
    keys = rows(measured, published)
    fig, (ax,) = _bar_figure(len(keys))
    _grouped_bars(ax, keys, measured, published, {c: s.success.n for c, s in m.conditions.items()}, m,
                  "success (%)")
    ax.set_title("Success by condition; measured with 95% bootstrap CI", fontsize=9)
    return _finish(fig, "Success by condition", m)


def paired_differences(m: StudyMeasures) -> Figure | None:
    measured = {c: p for c, d in m.paired.items() if (p := _estimate(d.difference)) is not None}
    if not measured:
        return None
    published = {c: p for c, v in P.PAIRED_DIFFERENCE.items() if (p := _published(v)) is not None}
    keys = rows(measured, published)
    fig, ax = _forest_figure(len(keys))
    _forest(ax, keys, measured, published, {c: d.difference.n for c, d in m.paired.items()}, m,
            "faulted − clean, same task and seed (points)")
    ax.set_title("Paired difference; measured with 95% bootstrap CI", fontsize=9)
    return _finish(fig, "Paired success difference", m)


def contributions(m: StudyMeasures) -> Figure | None:
    effects = m.contributions.effects
    measured = {t: p for t, e in effects.items() if (p := _estimate(e)) is not None}
    if not measured:
        return None
    published = {t: p for t, v in P.TYPE_CONTRIBUTION.items() if (p := _published(v)) is not None}
    keys = rows([t for t in P.TYPE_CONTRIBUTION if t in measured] + sorted(measured), published)
    fig, ax = _forest_figure(len(keys))
    _forest(ax, keys, measured, published, {t: e.n for t, e in effects.items()}, m,
            "change in success per fault (points)")
    ax.set_title("Per-type contribution (logistic regression at the mean); measured with 95% bootstrap CI",
                 fontsize=9)
    return _finish(fig, "Per-type contribution", m)


def retry_and_abandonment(m: StudyMeasures) -> Figure | None:
    if not any(r.total for r in m.retry.values()) and not any(r.total for r in m.abandonment.values()):
        return None
    # One fault-type order for both panels: the study's, then types only measured; references last.
    types = rows([t for t in P.RETRY_RATE if t != "unfaulted"],
                 sorted({*m.retry, *m.abandonment} - {"unfaulted", "clean"}))
    specs: list[tuple[str, dict[str, Rate], dict[str, P.PublishedValue], str, str]] = [
        ("unfaulted", m.retry, P.RETRY_RATE, "retry within 3 moves (%)", "Retry after a faulted step"),
        ("clean", m.abandonment, P.ABANDONMENT, "ends with text, no tool call (%)",
         "Abandonment, single-fault episodes"),
    ]
    keys_by_panel = []
    for reference, rates, pubs, _, _ in specs:
        present = [t for t in types if (t in rates and rates[t].total) or t in pubs]
        keys_by_panel.append(present + ([reference] if reference in rates or reference in pubs else []))
    fig, axes = _bar_figure(max(len(k) for k in keys_by_panel), panels=2)
    for ax, keys, (_, rates, pubs, ylabel, title) in zip(axes, keys_by_panel, specs, strict=True):
        measured = {k: p for k in keys if (p := _rate(rates.get(k))) is not None}
        published = {k: p for k in keys if (p := _published(pubs.get(k))) is not None}
        _grouped_bars(ax, keys, measured, published, {k: r.total for k, r in rates.items()}, m, ylabel)
        ax.set_title(f"{title}; measured with 95% Wilson CI", fontsize=9)
    return _finish(fig, "Retry and abandonment", m)


FIGURES: dict[str, Callable[[StudyMeasures], Figure | None]] = {
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
