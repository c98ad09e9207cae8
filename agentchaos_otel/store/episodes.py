"""Loading stored episodes as EpisodeTrace objects for diagnosers, predictors and evaluation.

Blinding is on by default so a consumer that forgets about ground truth cannot read it by
accident; evaluation code asks for `blind=False` or uses `load_ground_truth`.
"""

from __future__ import annotations

import json
import os
from collections import defaultdict
from collections.abc import Sequence
from typing import Any

import duckdb

from agentchaos_otel.store.db import StoreError, open_store
from agentchaos_otel.store.model import EpisodeTrace, FaultLabel, StepRecord


def _parse(value: Any, default: Any) -> Any:
    if value is None:
        return default
    if isinstance(value, (dict, list)):
        return value
    try:
        return json.loads(value)
    except (TypeError, ValueError):
        return default


def _episode_rows(conn: duckdb.DuckDBPyConnection, trace_ids: Sequence[str] | None,
                  where: str | None) -> list[tuple[Any, ...]]:
    sql = ("SELECT trace_id, span_id, task_id, condition, seed, success, attributes "
           "FROM episodes WHERE TRUE")
    params: list[Any] = []
    if trace_ids is not None:
        sql += " AND trace_id IN (SELECT unnest(?::VARCHAR[]))"
        params.append(list(trace_ids))
    if where:
        sql += f" AND ({where})"
    sql += " ORDER BY start_ns, trace_id, span_id"
    return conn.execute(sql, params).fetchall()


def _step_rows(conn: duckdb.DuckDBPyConnection, trace_ids: list[str] | None) -> dict[str, list[StepRecord]]:
    sql = ("SELECT trace_id, step, span_id, kind, name, start_ns, end_ns, status_code, error_type, "
           "attributes, events FROM steps")
    params: list[Any] = []
    if trace_ids is not None:  # a hash semi-join; list_contains would scan the list per row
        sql += " WHERE trace_id IN (SELECT unnest(?::VARCHAR[]))"
        params.append(trace_ids)
    rows = conn.execute(sql + " ORDER BY trace_id, step, start_ns, span_id", params).fetchall()
    out: dict[str, list[StepRecord]] = defaultdict(list)
    for trace_id, step, span_id, kind, name, start, end, status, err, attrs, events in rows:
        out[trace_id].append(StepRecord(
            step=int(step), span_id=span_id, kind=kind, name=name or "",
            start_ns=int(start or 0), end_ns=int(end or start or 0),
            status_code=status or "UNSET", error_type=err,
            attributes=_parse(attrs, {}), events=_parse(events, []),
        ))
    return out


def load_episodes(path: str | os.PathLike[str], *, blind: bool = True,
                  trace_ids: Sequence[str] | None = None, where: str | None = None) -> list[EpisodeTrace]:
    """Episodes in start order, steps in step order.

    `where` is an SQL condition over the `episodes` view (e.g. ``condition = 'bursty'``). A trace
    without an agent root span (a foreign agent, or an episode whose root is not exported yet)
    becomes one episode with the task id its steps carry, usually None. A trace with several root
    agent spans gives one episode per root, each with all steps of the trace.
    """
    with open_store(path) as conn:
        try:
            eps = _episode_rows(conn, trace_ids, where)
            wanted = None if trace_ids is None and not where else sorted({e[0] for e in eps})
            steps = _step_rows(conn, wanted)
        except duckdb.Error as exc:
            raise StoreError(f"{path}: cannot load episodes ({' '.join(str(exc).split())[:200]})") from None
    out = []
    for trace_id, _span_id, task_id, condition, seed, success, attrs in eps:
        ep = EpisodeTrace(
            trace_id=trace_id, task_id=task_id, steps=tuple(steps.get(trace_id, ())),
            success=success, condition=condition, seed=None if seed is None else int(seed),
            attributes=_parse(attrs, {}),
        )
        out.append(ep.blind() if blind else ep)
    return out


def load_ground_truth(path: str | os.PathLike[str]) -> dict[str, list[FaultLabel]]:
    """Faults that changed what the agent saw, per trace, in step order.

    A fault recorded on a span that is not an LLM or tool step (so has no step) gets step -1.
    """
    with open_store(path) as conn:
        rows = conn.execute(
            "SELECT trace_id, step, span_id, fault_type, target, experiment FROM injected_faults "
            "WHERE COALESCE(changed, TRUE) ORDER BY trace_id, step NULLS LAST, span_id"
        ).fetchall()
    out: dict[str, list[FaultLabel]] = defaultdict(list)
    for trace_id, step, span_id, ftype, target, experiment in rows:
        out[trace_id].append(FaultLabel(step=-1 if step is None else int(step), span_id=span_id,
                                        fault_type=str(ftype), target=target, experiment=experiment))
    return dict(out)
