"""Ground truth from the user's own label file, so every method can be scored on their incidents.

A label file is JSONL (one object a line) or CSV (a header row), keyed by ``task_id`` or
``trace_id``, with the fault type (``fault_type`` or ``type``) and where it hit: ``step`` (the
episode's step number) or ``span_id``. An optional ``target`` keeps same-named types of the two
sides apart. A type of ``none`` (or empty) marks an episode with no root cause; an optional
``category`` (``faulted_failure``, ``clean_success``, ``benign_success``, ``unfaulted_failure``;
docs/taxonomy.md) says which kind, so false blame is reported for each. Episodes the file does
not mention are left out of the scores. Traces recorded with ``plan=None`` need nothing else.
"""

from __future__ import annotations

import csv
import io
import json
import os
from collections.abc import Sequence
from typing import Any

from agentchaos_otel.records import EpisodeTrace, FaultLabel
from diagnosers.taxonomy import CATEGORIES, FAULT_TYPES
from diagnosers.tracefile import DiagnoseError

CLEAN = ("", "none", "none_found", "clean", "null")


def read_labels(path: str | os.PathLike[str]) -> list[dict[str, Any]]:
    """Rows of a JSONL or CSV label file (told apart by the first non-blank character)."""
    try:
        with open(path, encoding="utf-8") as fh:
            text = fh.read()
    except OSError as exc:
        raise DiagnoseError(f"{path}: cannot read labels ({exc.strerror or exc})") from None
    stripped = text.lstrip()
    if not stripped:
        raise DiagnoseError(f"{path}: label file is empty")
    rows: list[dict[str, Any]] = []
    if stripped.startswith("{"):
        for n, line in enumerate(text.splitlines(), 1):
            if not line.strip():
                continue
            try:
                obj = json.loads(line)
            except ValueError:
                raise DiagnoseError(f"{path}:{n}: not a JSON object") from None
            if not isinstance(obj, dict):
                raise DiagnoseError(f"{path}:{n}: not a JSON object")
            rows.append(obj)
    else:
        rows = [dict(r) for r in csv.DictReader(io.StringIO(text))]
    if not rows:
        raise DiagnoseError(f"{path}: no labels")
    return rows


def _int(v: Any) -> int | None:
    if v is None or v == "":
        return None
    try:
        return int(v)
    except (TypeError, ValueError):
        return None


class _Rows:
    """Label rows matched to the loaded episodes (by trace id, else by a task id naming one)."""

    def __init__(self, episodes: Sequence[EpisodeTrace], source: str):
        self.source = source
        self.by_trace = {ep.trace_id: ep for ep in episodes}
        self.by_task: dict[str, list[EpisodeTrace]] = {}
        for ep in episodes:
            if ep.task_id is not None:
                self.by_task.setdefault(ep.task_id, []).append(ep)

    def episode(self, n: int, row: dict[str, Any]) -> EpisodeTrace | None:
        tid, task = row.get("trace_id"), row.get("task_id")
        if tid:
            return self.by_trace.get(str(tid))
        if task:
            found = self.by_task.get(str(task), [])
            if len(found) > 1:
                raise DiagnoseError(f"{self.source} row {n}: task_id {task!r} names {len(found)} episodes; "
                                    "key the labels by trace_id")
            return found[0] if found else None
        raise DiagnoseError(f"{self.source} row {n}: needs a task_id or trace_id")


def resolve(episodes: Sequence[EpisodeTrace], rows: Sequence[dict[str, Any]], *, source: str = "labels"
            ) -> dict[str, FaultLabel | None]:
    """trace id -> the labelled root cause (None: labelled clean), for the episodes the file names.

    A row's key is ``trace_id`` when it has one, else ``task_id`` (which must then name one
    episode). ``span_id`` is turned into the episode's step number. Unknown types are an error.
    """
    match = _Rows(episodes, source)
    out: dict[str, FaultLabel | None] = {}
    for n, row in enumerate(rows, 1):
        ep = match.episode(n, row)
        if ep is None:
            continue  # the file may cover more than was loaded (filters)
        ftype = str(row.get("fault_type", row.get("type", "")) or "").strip()
        if ftype.lower() in CLEAN:
            out[ep.trace_id] = None
            continue
        if ftype not in FAULT_TYPES:
            raise DiagnoseError(f"{source} row {n}: unknown fault type {ftype!r} "
                                f"(one of {', '.join(FAULT_TYPES)} or none)")
        step = _int(row.get("step"))
        span = row.get("span_id") or None
        if step is None and span:
            step = next((s.step for s in ep.steps if s.span_id == span), None)
            if step is None:
                raise DiagnoseError(f"{source} row {n}: span_id {span!r} is not a step of trace {ep.trace_id}")
        if step is None:
            raise DiagnoseError(f"{source} row {n}: needs a step or a span_id")
        if not span:
            span = next((s.span_id for s in ep.steps if s.step == step), "")
        target = row.get("target") or None
        out[ep.trace_id] = FaultLabel(step, str(span), ftype, str(target) if target else None,
                                      row.get("form") or row.get("family") or None)
    return out


def resolve_categories(episodes: Sequence[EpisodeTrace], rows: Sequence[dict[str, Any]], *,
                       source: str = "labels") -> dict[str, str]:
    """trace id -> the ``category`` a row gives (rows without one are left out)."""
    match = _Rows(episodes, source)
    out: dict[str, str] = {}
    for n, row in enumerate(rows, 1):
        cat = str(row.get("category") or "").strip()
        if not cat:
            continue
        if cat not in CATEGORIES:
            raise DiagnoseError(f"{source} row {n}: unknown category {cat!r} (one of {', '.join(CATEGORIES)})")
        ep = match.episode(n, row)
        if ep is not None:
            out[ep.trace_id] = cat
    return out
