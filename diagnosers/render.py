"""Terminal and JSON views of diagnoses and scores.

The tables always carry a caption when the episodes are simulated, and published figures are
shown beside measured ones with their source, so a reader never mistakes one for the other.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from rich.console import Console
from rich.table import Table

from agentchaos_otel.published import DIAGNOSIS as PUBLISHED
from agentchaos_otel.published import DIAGNOSIS_SOURCE as SOURCE
from agentchaos_otel.published import TRUNCATION_FOUND
from diagnosers.base import Diagnosis
from diagnosers.evaluate import BLAME_CATEGORIES, Interval, Scores

SIMULATED_CAPTION = "episodes produced by a simulated model (not a real LLM)"


def diagnoses_json(diagnoses: Sequence[Diagnosis]) -> str:
    return json.dumps([d.to_dict() for d in diagnoses], indent=2, ensure_ascii=False)


def diagnoses_table(diagnoses: Sequence[Diagnosis], *, simulated: bool = False, title: str = "") -> Table:
    table = Table(title=title or None, caption=SIMULATED_CAPTION if simulated else None, expand=False)
    for col, kw in (("trace", {"no_wrap": True}), ("task", {}), ("fault type", {}), ("target", {}),
                    ("step", {"justify": "right"}), ("span", {"no_wrap": True}),
                    ("conf", {"justify": "right"}), ("evidence", {"overflow": "fold"})):
        table.add_column(col, **kw)  # type: ignore[arg-type]
    for d in diagnoses:
        table.add_row(d.trace_id[:12], d.task_id or "-", d.fault_type, d.target or "-",
                      "-" if d.step is None else str(d.step), (d.span_id or "-")[:16],
                      f"{d.confidence:.2f}", d.evidence)
    return table


def _pct(i: Interval) -> str:
    return f"{i.value:.1%} [{i.low:.1%}, {i.high:.1%}]"


def scores_table(scores: Sequence[Scores], *, simulated: bool = False) -> Table:
    caption = [f"published: {SOURCE}"]
    if simulated:
        caption.insert(0, SIMULATED_CAPTION)
    table = Table(title="Diagnosis accuracy on failed, fault-triggered episodes (95% bootstrap intervals)",
                  caption="\n".join(caption))
    for col in ("method", "n", "type acc.", "step acc.", "joint acc.", "false blame: clean successes",
                "false blame: benign successes", "false blame: failures with no fault", "truncation found",
                "published type / step", "published truncation"):
        table.add_column(col)
    for s in scores:
        pub = PUBLISHED.get(s.method)
        table.add_row(s.method, str(s.n), _pct(s.type_accuracy), _pct(s.step_accuracy),
                      _pct(s.joint_accuracy), *(_blame(s.false_blame.get(c), s.n_by_category.get(c, 0))
                                                for c in BLAME_CATEGORIES),
                      "-" if s.truncation_found is None else f"{s.truncation_found:.1%}",
                      f"{pub.type_accuracy:.2f}% / {pub.step_accuracy:.2f}% (n={pub.n})" if pub else "-",
                      f"{TRUNCATION_FOUND}%" if pub else "-")
    return table


def _blame(i: Interval | None, n: int) -> str:
    return "-" if i is None else f"{_pct(i)} of {n}"


def hidden_outcome_table(scores: Sequence[Scores]) -> Table:
    """False blame on successes when the diagnoser is not told they succeeded: the evidence alone."""
    table = Table(title="False blame on successful episodes with the outcome hidden from the diagnoser")
    for col in ("method", "clean successes", "benign successes"):
        table.add_column(col)
    for s in scores:
        table.add_row(s.method, *(_blame(s.false_blame_hidden.get(c), s.n_by_category.get(c, 0))
                                  for c in ("clean_success", "benign_success")))
    return table


def thresholds_table(s: Scores) -> Table:
    """Accuracy, answered share and the false blame each abstention threshold buys."""
    table = Table(title=f"{s.method}: abstention threshold (answers under it are none_found; "
                        f"in use: {s.min_confidence:.2f})")
    blame_keys = [k for k in (s.thresholds[0] if s.thresholds else {}) if k.startswith("false_blame_")]
    for col in ("threshold", "answered", "type acc.", "joint acc.", *(k.removeprefix("false_blame_")
                                                                     .replace("_", " ") for k in blame_keys)):
        table.add_column(col, justify="right")
    for row in s.thresholds:
        table.add_row(f"{row['threshold']:.1f}", f"{row['answered']:.0%}", f"{row['type_accuracy']:.0%}",
                      f"{row['joint_accuracy']:.0%}", *(f"{row[k]:.0%}" if row[k] == row[k] else "-"
                                                         for k in blame_keys))
    return table


def reliability_table(s: Scores) -> Table:
    """The reliability diagram as a table: confidence bins of the raw verdicts vs accuracy."""
    table = Table(title=f"{s.method}: reliability (raw verdicts by confidence; "
                        f"below {s.min_confidence:.2f} the answer is none_found)")
    for col in ("confidence", "n", "type acc.", "joint acc.", "bar (type acc.)"):
        table.add_column(col, justify="right" if col != "bar (type acc.)" else "left")
    for b in s.reliability:
        acc = float(b["type_accuracy"])
        table.add_row(f"[{b['low']:.1f}, {b['high']:.1f})", str(int(b["n"])), f"{acc:.0%}",
                      f"{float(b['joint_accuracy']):.0%}", "#" * round(acc * 20))
    return table


def per_target_table(s: Scores) -> Table:
    table = Table(title=f"{s.method}: accuracy per family (true target)")
    for col in ("target", "n", "type acc.", "step acc."):
        table.add_column(col)
    for t, info in s.per_target.items():
        table.add_row(t, str(int(info["n"])), f"{info['type_accuracy']:.0%}", f"{info['step_accuracy']:.0%}")
    return table


def per_type_table(s: Scores) -> Table:
    table = Table(title=f"{s.method}: per-type accuracy and confusion (rows: true type)")
    preds = sorted({p for row in s.confusion.values() for p in row})
    table.add_column("true type")
    table.add_column("n", justify="right")
    table.add_column("acc.", justify="right")
    for p in preds:
        table.add_column(p, justify="right")
    for t, row in s.confusion.items():
        info = s.per_type.get(t, {})
        table.add_row(t, str(info.get("n", 0)), f"{info.get('accuracy', 0):.0%}",
                      *[str(row.get(p, "")) for p in preds])
    return table


def print_scores(console: Console, scores: Sequence[Scores], *, simulated: bool,
                 details: bool = True) -> None:
    console.print(scores_table(scores, simulated=simulated))
    if any(s.false_blame_hidden for s in scores):
        console.print(hidden_outcome_table(scores))
    if details:
        for s in scores:
            console.print(per_type_table(s))
            if s.per_target:
                console.print(per_target_table(s))
            if s.reliability:
                console.print(reliability_table(s))
            if s.thresholds:
                console.print(thresholds_table(s))


def scores_json(scores: Sequence[Scores], extra: dict[str, Any] | None = None) -> str:
    return json.dumps({**(extra or {}), "scores": [s.to_dict() for s in scores],
                       "published_source": SOURCE}, indent=2)
