"""The robustness report: stored traces in, tables and JSON out, published figures alongside.

Loading is kept apart from the measures so the same report can be produced from a DuckDB file
or from episodes already in memory; rendering is kept apart from both so the terminal, JSON and
HTML outputs cannot drift from each other (they all read one ``StudyMeasures``).
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.table import Table
from rich.text import Text

from agentchaos_otel import published as P
from agentchaos_otel import stats
from agentchaos_otel.campaign.measures import CLEAN, DEFAULT_RESAMPLES, STEP_KEYS, StudyMeasures, compute_all
from agentchaos_otel.errors import no_such_file
from agentchaos_otel.records import EpisodeTrace
from agentchaos_otel.stats import Estimate, Rate
from agentchaos_otel.terminal import printable

SIMULATED_LABEL = "SIMULATED"


class ReportError(ValueError):
    """A corpus that cannot be reported on; the message is one line for the user."""


def load_corpus(db: str | Path) -> list[EpisodeTrace]:
    """Every stored episode with its ground truth (the report is evaluation code).

    Steps carry only the attributes the measures read (``measures.STEP_KEYS``) and no events:
    the whole corpus is held at once, and full steps made a 100k-episode report need 8 GB.
    """
    path = Path(db)
    if not path.exists():
        raise ReportError(no_such_file(path))
    try:
        from agentchaos_otel.store.database.connect import StoreError
        from agentchaos_otel.store.read.episodes import load_episodes
    except ImportError as exc:  # the store is optional at import time only during development
        raise ReportError(f"the trace store is not available: {exc}") from None
    try:
        return list(load_episodes(str(path), blind=False, step_keys=STEP_KEYS))
    except (ReportError, StoreError) as exc:  # the store's own line, worded as every reader words it
        raise ReportError(str(exc)) from None
    except Exception as exc:  # duckdb raises its own exception tree for non-database files
        raise ReportError(f"cannot read episodes from {path}: {type(exc).__name__}: "
                          f"{str(exc).splitlines()[0] if str(exc) else ''}") from None


def build(episodes: Sequence[EpisodeTrace], *, seed: int = 0, resamples: int = DEFAULT_RESAMPLES,
          clean: str = CLEAN) -> StudyMeasures:
    if resamples < 1:
        raise ReportError(f"resamples must be at least 1, got {resamples}")
    return compute_all(episodes, clean=clean, seed=seed, resamples=resamples)


def title(text: str, measures: StudyMeasures) -> str:
    return f"{text} — {SIMULATED_LABEL}" if measures.simulated else text


SIMULATED_BANNER = ("SIMULATED: these episodes ran against the bundled simulated model; nothing here is "
                    "evidence about a real model.")


# --- Formatting --------------------------------------------------------------------------------

def pct(value: float | None, digits: int = 1) -> str:
    return "—" if value is None else f"{100 * value:.{digits}f}%"


def pts(value: float | None) -> str:
    return "—" if value is None else f"{100 * value:+.1f}"


def interval(e: Estimate, *, points: bool = False) -> str:
    """Value [low, high], marked when n is small and when a paired interval has zero width."""
    if e.value is None:
        return "—"
    fmt = pts if points else pct
    if e.low is None or e.high is None:
        return fmt(e.value) + stats.small_mark(e.n)
    flat = " (no variation)" if points and stats.zero_width(e.low, e.high, e.n) else ""
    return f"{fmt(e.value)} [{fmt(e.low)}, {fmt(e.high)}]{flat}{stats.small_mark(e.n)}"


def rate(r: Rate | None) -> str:
    """Share (hits/total) with its Wilson interval, marked when total is small."""
    if r is None or not r.total:
        return "—"
    low, high = r.interval
    return f"{pct(r.value)} [{pct(low)}, {pct(high)}] ({r.hits}/{r.total}){stats.small_mark(r.total)}"


def pub(v: P.PublishedValue | None, *, points: bool = False) -> str:
    if v is None:
        return ""
    main = f"{v.value:+.1f}" if points else f"{v.value:.1f}%"
    if v.low is not None and v.high is not None:
        return f"{main} [{v.low:+.1f}, {v.high:+.1f}]"
    return main


# --- Terminal ------------------------------------------------------------------------------------

def render_terminal(m: StudyMeasures, console: Console) -> None:
    """The report's tables; ``console`` should be a ``terminal.data_console``: condition names and
    warnings come from the traces and are printed as data, never as markup."""
    console.print(Text(printable(title('Robustness report', m)), style="bold"))
    if m.simulated:
        console.print(Text(SIMULATED_BANNER, style="bold red"))
    console.print(f"{m.episodes} episodes, clean condition '{m.clean}', {m.resamples} bootstrap resamples, "
                  f"seed {m.seed}")
    for w in m.warnings:
        console.print(Text.assemble(("note:", "yellow"), " ", printable(w)))
    if not m.episodes:
        return

    t = Table(title=title("Success by condition (paired: faulted − clean, same task and seed)", m))
    for col in ("condition", "episodes", "success [95% CI]", "paired Δ pts [95% CI]", "pairs",
                "Δ triggered only", "published success", "published Δ", "triggered", "no-op faults",
                "no fault", "errors", "crashes"):
        t.add_column(col, justify="left" if col == "condition" else "right")
    for cond, s in m.conditions.items():
        d = m.paired.get(cond)
        dt = m.paired_triggered.get(cond)
        t.add_row(cond, str(s.episodes), interval(s.success),
                  interval(d.difference, points=True) if d else "—", str(d.pairs) if d else "—",
                  interval(dt.difference, points=True) if dt else "—",
                  pub(P.SUCCESS_BY_CONDITION.get(cond)), pub(P.PAIRED_DIFFERENCE.get(cond), points=True),
                  str(s.triggered), str(s.fired_not_changed), str(s.no_fault), str(s.errors), str(s.crashes))
    console.print(t)

    c = m.contributions
    types = sorted(set(c.types) | {k for k in m.single_fault if k != "clean"})
    if types:
        t = Table(title=title("Per-type contribution (points per fault, logistic regression at the mean) "
                              "and single-fault success", m))
        for col in ("fault type", "episodes with type", "contribution [95% CI]", "fit n", "published",
                    "single-fault success [95% CI]", "n", "published single"):
            t.add_column(col, justify="left" if col == "fault type" else "right")
        for ft in types:
            e = c.effects.get(ft)
            sf = m.single_fault.get(ft)
            t.add_row(ft, str(c.with_type.get(ft, "—")), interval(e, points=True) if e else "—",
                      str(e.n) if e else "—",
                      pub(P.TYPE_CONTRIBUTION.get(ft), points=True), interval(sf) if sf else "—",
                      str(sf.n) if sf else "0", pub(P.SINGLE_FAULT_SUCCESS.get(ft)))
        if "clean" in m.single_fault:
            sf = m.single_fault["clean"]
            t.add_row("(clean)", "", "", "", "", interval(sf), str(sf.n), pub(P.SUCCESS_BY_CONDITION.get("none")))
        console.print(t)

    keys = sorted({k for k in m.retry if k != "unfaulted"} | {k for k in m.abandonment if k != "clean"})
    if keys or m.retry:
        t = Table(title=title("Retry within 3 moves; abandonment at episode level (single-fault, ends with text) "
                              "and at turn level (next reply is text); 95% Wilson intervals", m))
        for col in ("fault type", "retry", "published retry", "abandonment (episode)", "published abandonment",
                    "abandonment (turn)"):
            t.add_column(col, justify="left" if col == "fault type" else "right")
        for k in keys:
            t.add_row(k, rate(m.retry.get(k)), pub(P.RETRY_RATE.get(k)), rate(m.abandonment.get(k)),
                      pub(P.ABANDONMENT.get(k)), rate(m.turn_abandonment.get(k)))
        t.add_row("(unfaulted / clean)", rate(m.retry.get("unfaulted")), pub(P.RETRY_RATE["unfaulted"]),
                  rate(m.abandonment.get("clean")), pub(P.ABANDONMENT["clean"]), rate(m.turn_abandonment.get("clean")))
        console.print(t)
    if m.retry_success:
        parts = [f"{k.replace('_', ' ')} {rate(r)} (published {pub(P.RETRY_EPISODE_SUCCESS.get(k))})"
                 for k, r in m.retry_success.items()]
        console.print(title("Success of faulted episodes", m) + ": " + "; ".join(parts))

    t = Table(title=title("Measured burst structure (consecutive faulted steps) and episode shape", m))
    for col in ("condition", "runs", "mean run length", "longest", "faulted steps", "per-step rate",
                "published mean", "moves/ep", "tool calls/ep"):
        t.add_column(col, justify="left" if col == "condition" else "right")
    for cond, b in m.bursts.items():
        pb = P.BURST_RUN_LENGTH.get(cond)
        s = m.conditions.get(cond)
        t.add_row(cond, str(b.runs), "—" if b.mean is None else f"{b.mean:.2f}", str(b.longest),
                  f"{b.faulted_steps}/{b.eligible_steps}", pct(b.rate),
                  "" if pb is None else f"{pb.value:.2f}",
                  "" if s is None else f"{s.steps_per_episode:.1f}",
                  "" if s is None else f"{s.tool_calls_per_episode:.1f}")
    console.print(t if t.row_count else "Burst structure: no condition had steps to measure.")
    console.print(f"published study: {P.STUDY_TOTALS['steps_per_episode']} moves and "
                  f"{P.STUDY_TOTALS['tool_calls_per_episode']} tool calls per episode")

    if m.guards is not None:
        render_guards(m, console)

    console.print("Step units: " + "; ".join(f"{k}: {v}" for k, v in m.units.items()))

    if m.crashes:
        t = Table(title=title(f"Crashes ({len(m.crashes)}; published study: 0)", m))
        for col in ("task", "condition", "seed", "error"):
            t.add_column(col, overflow="fold")
        for cr in m.crashes[:20]:
            t.add_row(str(cr.task_id), cr.condition, str(cr.seed), cr.error[:200])
        console.print(t)
    else:
        console.print("Crashes: 0 (published study: 0)")


def render_guards(m: StudyMeasures, console: Console) -> None:
    """Guarded vs unguarded on the same (agent, task, seed): success, retry, double application, cost."""
    g = m.guards
    names = ", ".join(g.guards) or "guards"
    t = Table(title=title(f"Guards ({names}): paired success, guarded − unguarded, same task and seed", m))
    for col in ("condition / fault type", "pairs", "unguarded success", "guarded success", "Δ pts [95% CI]",
                "double applied, unguarded", "double applied, guarded"):
        t.add_column(col, justify="left" if col.startswith("condition") else "right")
    for label, p in [*g.by_condition.items(), *((f"type: {k}", v) for k, v in g.by_fault_type.items())]:
        t.add_row(label, str(p.pairs), rate(p.success_unguarded), rate(p.success_guarded),
                  interval(p.delta, points=True), rate(p.double_unguarded), rate(p.double_guarded))
    console.print(t)
    t = Table(title=title("Guards: retry after a faulted tool step and double application, without and with", m))
    for col in ("arm", "retry within 3 moves", "episodes with a double application", "double applications"):
        t.add_column(col, justify="left" if col == "arm" else "right")
    t.add_row("unguarded", rate(g.unguarded.retry), rate(g.unguarded.double_applied),
              str(g.unguarded.double_applications))
    t.add_row("guarded", rate(g.guarded.retry), rate(g.guarded.double_applied), str(g.guarded.double_applications))
    console.print(t)
    c = g.cost
    findings = ", ".join(f"{k} {v}" for k, v in c.findings.items()) or "none"
    console.print(title("Guards' cost", m) + f": extra LLM calls per episode {_num(c.extra_llm_calls)}; "
                  f"extra seconds per episode {_num(c.extra_seconds, 3)}; guard retries {c.guard_retries}, "
                  f"raises {c.guard_raises}, annotated {c.guard_annotated}, suppressed tool calls "
                  f"{c.suppressed_tool_calls}; findings: {findings}")


def _num(e: Estimate, digits: int = 2) -> str:
    if e.value is None:
        return "—"
    if e.low is None or e.high is None:
        return f"{e.value:+.{digits}f}{stats.small_mark(e.n)}"
    return f"{e.value:+.{digits}f} [{e.low:+.{digits}f}, {e.high:+.{digits}f}]{stats.small_mark(e.n)}"


# --- JSON ----------------------------------------------------------------------------------------

def to_json(m: StudyMeasures) -> dict[str, Any]:
    """The measures plus the published figures they are compared with (fractions vs percent)."""
    def pv(d: dict[str, P.PublishedValue]) -> dict[str, Any]:
        return {k: {"value": v.value, "low": v.low, "high": v.high} for k, v in d.items()}

    out = m.as_dict()
    out["label"] = SIMULATED_LABEL if m.simulated else "measured"
    out["units"] = "measured values are fractions; published values are percent or percentage points"
    out["published"] = {
        "source": P.TOOL_STUDY_SOURCE,
        "success_by_condition": pv(P.SUCCESS_BY_CONDITION),
        "paired_difference": pv(P.PAIRED_DIFFERENCE),
        "type_contribution": pv(P.TYPE_CONTRIBUTION),
        "single_fault_success": pv(P.SINGLE_FAULT_SUCCESS),
        "retry_rate": pv(P.RETRY_RATE),
        "retry_episode_success": pv(P.RETRY_EPISODE_SUCCESS),
        "abandonment": pv(P.ABANDONMENT),
        "burst_run_length": pv(P.BURST_RUN_LENGTH),
        "totals": P.STUDY_TOTALS,
        "agentchaos": {"source": P.AGENTCHAOS_SOURCE, **P.AGENTCHAOS_FIGURES},
    }
    return out
