"""A self-contained HTML page of the report: tables and the PNG figures, in one directory.

The page is static (no scripts, no external assets) so it can be attached to a ticket or served
from any file share; every value is escaped because task ids and error strings come from traces.
"""

from __future__ import annotations

from html import escape
from pathlib import Path

from agentchaos_otel import published as P
from agentchaos_otel.campaign import plots
from agentchaos_otel.campaign import report as R
from agentchaos_otel.campaign.measures import StudyMeasures

_CSS = """
body { font-family: sans-serif; margin: 2em; max-width: 1100px; }
table { border-collapse: collapse; margin: 1em 0; font-size: 0.9em; }
th, td { border: 1px solid #ccc; padding: 0.3em 0.6em; text-align: right; }
th:first-child, td:first-child { text-align: left; }
caption, .caption { font-weight: bold; text-align: left; padding: 0.3em 0; }
.sim { background: #b00020; color: white; padding: 0.5em 1em; font-weight: bold; }
.note { color: #8a5a00; }
img { max-width: 100%; border: 1px solid #eee; }
"""

_DEFINITIONS = (
    "Paired Δ: faulted minus clean success on the same agent, task and seed, 95% bootstrap interval "
    "over pairs. 'Δ triggered only' drops faulted episodes whose faults changed nothing.",
    "Contribution: logistic regression of success on per-type fault counts plus the number of moves "
    "(model calls); each coefficient read as the change in success probability for one more fault at "
    "the mean. Tool-result, LLM-response (prefixed llm/) and MCP-protocol (prefixed mcp/) faults are fitted "
    "separately.",
    "Retry: the identical tool call (same name and argument digest) reappears within the next 3 moves; "
    "calls later in the same move do not count.",
    "Abandonment: single-fault episodes that failed and made no tool call after the faulted step, ending "
    "on text. The clean reference is the clean episode of the same task and seed stopping at the same "
    "tool-call position.",
    "Episodes whose faults never changed what the agent saw are 'no-op faults' and are left out of the "
    "per-type measures.",
)

# Why a figure is missing, in words (a figure is left out when its measure has no value).
_FIGURE_EMPTY = {
    "success_by_condition": "No episode has a recorded outcome, so there is no success rate to draw.",
    "paired_differences": "No paired difference: it needs the clean condition and a faulted condition run on "
                          "the same tasks and seeds, with outcomes.",
    "contributions": "No per-type contribution: no fault of a known type changed what an agent saw in "
                     "episodes with an outcome.",
    "retry_abandonment": "No retry or abandonment rate: no faulted tool step and no single-fault episode to "
                         "measure.",
}

_FIGURE_CAPTIONS = {
    "success_by_condition": "Success by condition with 95% bootstrap intervals",
    "paired_differences": "Paired difference (faulted − clean, same task and seed)",
    "contributions": "Per-type contribution (forest plot)",
    "retry_abandonment": "Retry and abandonment",
}


def _table(caption: str, header: list[str], rows: list[list[str]], *, empty: str = "No rows.") -> str:
    """A captioned table, or its caption and ``empty`` in words when there are no rows."""
    if not rows:
        return f"<p class='caption'>{escape(caption)}</p><p class='note'>{escape(empty)}</p>"
    head = "".join(f"<th>{escape(h)}</th>" for h in header)
    body = "".join("<tr>" + "".join(f"<td>{escape(c)}</td>" for c in r) + "</tr>" for r in rows)
    return f"<table><caption>{escape(caption)}</caption><tr>{head}</tr>{body}</table>"


def _tables(m: StudyMeasures) -> list[str]:
    out = []
    rows = []
    for cond, s in m.conditions.items():
        d, dt = m.paired.get(cond), m.paired_triggered.get(cond)
        rows.append([cond, str(s.episodes), R.interval(s.success),
                     R.interval(d.difference, points=True) if d else "—", str(d.pairs) if d else "—",
                     R.interval(dt.difference, points=True) if dt else "—",
                     R.pub(P.SUCCESS_BY_CONDITION.get(cond)), R.pub(P.PAIRED_DIFFERENCE.get(cond),
                                                                    points=True),
                     str(s.triggered), str(s.fired_not_changed), str(s.errors), str(s.crashes)])
    out.append(_table(R.title("Success by condition", m),
                      ["condition", "episodes", "success [95% CI]", "paired Δ pts [95% CI]", "pairs",
                       "Δ triggered only", "published success", "published Δ", "triggered", "no-op faults",
                       "errors", "crashes"], rows))
    types = sorted(set(m.contributions.types) | {k for k in m.single_fault if k != "clean"})
    rows = []
    for t in types:
        e, sf = m.contributions.effects.get(t), m.single_fault.get(t)
        rows.append([t, R.interval(e, points=True) if e else "—", R.pub(P.TYPE_CONTRIBUTION.get(t),
                                                                        points=True),
                     R.interval(sf) if sf else "—", str(sf.n) if sf else "0",
                     R.pub(P.SINGLE_FAULT_SUCCESS.get(t)), R.rate(m.retry.get(t)), R.pub(P.RETRY_RATE.get(t)),
                     R.rate(m.abandonment.get(t)), R.pub(P.ABANDONMENT.get(t))])
    rows.append(["(unfaulted / clean)", "", "",
                 R.interval(m.single_fault["clean"]) if "clean" in m.single_fault
                 else "—", str(m.single_fault["clean"].n) if "clean" in m.single_fault else "0",
                 R.pub(P.SUCCESS_BY_CONDITION["none"]), R.rate(m.retry.get("unfaulted")),
                 R.pub(P.RETRY_RATE["unfaulted"]), R.rate(m.abandonment.get("clean")),
                 R.pub(P.ABANDONMENT["clean"])])
    out.append(_table(R.title("Per fault type", m),
                      ["fault type", "contribution pts [95% CI]", "published", "single-fault success", "n",
                       "published", "retry", "published", "abandonment", "published"], rows))
    if m.retry_success:
        out.append(_table(R.title("Success of faulted episodes with and without a retry", m),
                          ["episodes", "success", "published"],
                          [[k.replace("_", " "), R.rate(r), R.pub(P.RETRY_EPISODE_SUCCESS.get(k))]
                           for k, r in m.retry_success.items()]))
    rows = [[c, str(b.runs), "—" if b.mean is None else f"{b.mean:.2f}", str(b.longest), R.pct(b.rate),
             "" if c not in P.BURST_RUN_LENGTH else f"{P.BURST_RUN_LENGTH[c].value:.2f}"]
            for c, b in m.bursts.items()]
    out.append(_table(R.title("Burst structure", m),
                      ["condition", "runs", "mean run length", "longest", "per-step rate",
                       "published mean"], rows, empty="No condition faulted consecutive steps."))
    if m.turn_abandonment:
        out.append(_table(R.title("Abandonment at turn level (next reply is text, no tool call)", m),
                          ["fault type", "abandonment (turn)"],
                          [[k, R.rate(r)] for k, r in m.turn_abandonment.items()]))
    if m.guards is not None:
        g = m.guards
        rows = [[label, str(p.pairs), R.rate(p.success_unguarded), R.rate(p.success_guarded),
                 R.interval(p.delta, points=True), R.rate(p.double_unguarded), R.rate(p.double_guarded)]
                for label, p in [*g.by_condition.items(), *((f"type: {k}", v) for k, v in g.by_fault_type.items())]]
        out.append(_table(R.title("Guards: guarded − unguarded on the same task and seed", m),
                          ["condition / fault type", "pairs", "unguarded success", "guarded success",
                           "Δ pts [95% CI]", "double applied, unguarded", "double applied, guarded"], rows))
        out.append(_table(R.title("Guards: retry and double application, without and with", m),
                          ["arm", "retry within 3 moves", "episodes with a double application"],
                          [["unguarded", R.rate(g.unguarded.retry), R.rate(g.unguarded.double_applied)],
                           ["guarded", R.rate(g.guarded.retry), R.rate(g.guarded.double_applied)]]))
    out.append(_table("Step units", ["measure", "unit"], [[k, v] for k, v in m.units.items()],
                      empty="No step units recorded."))
    rows = [[str(c.task_id), c.condition, str(c.seed), c.error[:300]] for c in m.crashes[:50]]
    out.append(_table(R.title(f"Crashes: {len(m.crashes)} (published study: 0)", m),
                      ["task", "condition", "seed", "error"], rows, empty="No episode crashed."))
    return out


def write_html(m: StudyMeasures, out_dir: str | Path) -> Path:
    """Write ``index.html`` and its PNG figures into ``out_dir`` and return the page's path."""
    out = Path(out_dir)
    if out.exists() and not out.is_dir():
        raise R.ReportError(f"{out} exists and is not a directory")
    out.mkdir(parents=True, exist_ok=True)
    figures = plots.write_all(m, out) if m.episodes else {}
    parts = [f"<!doctype html><html><head><meta charset='utf-8'>"
             f"<title>{escape(R.title('Robustness report', m))}"
             f"</title><style>{_CSS}</style></head><body>"]
    if m.simulated:
        parts.append(f"<p class='sim'>{escape(R.SIMULATED_BANNER)}</p>")
    parts.append(f"<h1>{escape(R.title('Robustness report', m))}</h1>")
    parts.append(f"<p>{m.episodes} episodes; clean condition '{escape(m.clean)}'; {m.resamples} bootstrap "
                 f"resamples; seed {m.seed}. Measured values sit next to the published figures of the "
                 f"{escape(P.TOOL_STUDY_SOURCE)}.</p>")
    for w in m.warnings:
        parts.append(f"<p class='note'>note: {escape(w)}</p>")
    if m.episodes:
        parts.extend(_tables(m))
        for name, path in figures.items():
            caption = R.title(_FIGURE_CAPTIONS[name], m)
            if path is None:
                parts.append(f"<h2 id='{name}'>{escape(caption)}</h2><p class='note'>{escape(_FIGURE_EMPTY[name])}</p>")
            else:
                parts.append(f"<h2 id='{name}'>{escape(caption)}</h2>"
                             f"<img src='{escape(path.name)}' alt='{escape(caption)}'>")
    parts.append("<h2>Definitions</h2><ul>" + "".join(f"<li>{escape(d)}</li>" for d in _DEFINITIONS)
                 + "</ul>")
    parts.append("</body></html>")
    page = out / "index.html"
    page.write_text("\n".join(parts), encoding="utf-8")
    return page
