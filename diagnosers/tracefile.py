"""Reading episodes from a trace store and writing diagnoses back into it.

Diagnoses go to a ``diagnoses`` table in the same DuckDB file, keyed by (trace_id, method), so
re-running a method replaces its rows and different methods sit side by side.
"""

from __future__ import annotations

import os
import time
from collections import defaultdict
from collections.abc import Sequence
from typing import Any

from agentchaos_otel.errors import no_such_file
from agentchaos_otel.records import EpisodeTrace
from agentchaos_otel.store.database.connect import StoreError, write_rows
from agentchaos_otel.store.database.schema import DIAGNOSES_DDL
from agentchaos_otel.store.read.episodes import load_episodes
from diagnosers.base import Diagnosis

DIAGNOSES_TABLE = "diagnoses"


class DiagnoseError(ValueError):
    """A problem with the user's input; its message is one readable line."""


def _sql_str(value: str) -> str:
    return "'" + value.replace("'", "''") + "'"


def where_clause(tasks: Sequence[str] = (), conditions: Sequence[str] = ()) -> str | None:
    """The SQL condition over the ``episodes`` view that selects these tasks and conditions."""
    clauses = []
    if tasks:
        clauses.append(f"task_id IN ({', '.join(_sql_str(t) for t in tasks)})")
    if conditions:
        clauses.append(f"condition IN ({', '.join(_sql_str(c) for c in conditions)})")
    return " AND ".join(clauses) or None


def load(path: str | os.PathLike[str], *, blind: bool = False, tasks: Sequence[str] = (),
         conditions: Sequence[str] = (), trace_ids: Sequence[str] | None = None) -> list[EpisodeTrace]:
    """Episodes of a trace store. Unblinded by default: callers blind through
    ``diagnose_episodes`` and evaluation needs the ground truth."""
    if not os.path.exists(path):
        raise DiagnoseError(no_such_file(path))
    try:
        return load_episodes(path, blind=blind, trace_ids=list(trace_ids) if trace_ids else None,
                             where=where_clause(tasks, conditions))
    except StoreError as exc:
        raise DiagnoseError(str(exc)) from None


def rule_verdicts(db: str | os.PathLike[str]) -> dict[str, list[dict[str, Any]]]:
    """The rule diagnoser on every episode whose outcome is not a success (as ``diagnose`` does),
    as rows by trace id: the ``agentchaos_otel.verdicts`` plug-in ``traces export`` calls."""
    from diagnosers.base import diagnose_episodes
    from diagnosers.norms import ToolNorms
    from diagnosers.rules import RuleDiagnoser

    episodes = [ep for ep in load(db) if ep.success is not True]
    out: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for d in diagnose_episodes(RuleDiagnoser(norms=ToolNorms.from_store(db)), episodes):
        out[d.trace_id].append(d.to_dict())
    return dict(out)


def write_diagnoses(path: str | os.PathLike[str], diagnoses: Sequence[Diagnosis]) -> int:
    now = time.time_ns()
    rows = [{**d.to_dict(), "created_ns": now} for d in diagnoses]
    try:
        return write_rows(path, DIAGNOSES_TABLE, rows, DIAGNOSES_DDL, key=("trace_id", "method"))
    except StoreError as exc:
        raise DiagnoseError(str(exc)) from None
