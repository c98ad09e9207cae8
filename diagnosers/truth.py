"""Ground truth from the user's own label file, so every method can be scored on their incidents.

A label file is JSONL (one object a line) or CSV (a header row), keyed by ``task_id`` or
``trace_id``, with the fault type (``fault_type`` or ``type``) and where it hit: ``step`` (the
episode's step number) or ``span_id``. An optional ``target`` keeps same-named types of the two
sides apart. A type of ``none`` (or empty) marks an episode known to be clean. Episodes the file
does not mention are left out of the scores. Traces recorded with ``plan=None`` need nothing else.
"""

from __future__ import annotations

import csv
import io
import json
import os
from collections.abc import Sequence
from typing import Any

from agentchaos_otel.records import EpisodeTrace, FaultLabel
from diagnosers.taxonomy import FAULT_TYPES
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


def resolve(episodes: Sequence[EpisodeTrace], rows: Sequence[dict[str, Any]], *, source: str = "labels"
            ) -> dict[str, FaultLabel | None]:
    """trace id -> the labelled root cause (None: labelled clean), for the episodes the file names.

    A row's key is ``trace_id`` when it has one, else ``task_id`` (which must then name one
    episode). ``span_id`` is turned into the episode's step number. Unknown types are an error.
    """
    by_trace = {ep.trace_id: ep for ep in episodes}
    by_task: dict[str, list[EpisodeTrace]] = {}
    for ep in episodes:
        if ep.task_id is not None:
            by_task.setdefault(ep.task_id, []).append(ep)
    out: dict[str, FaultLabel | None] = {}
    for n, row in enumerate(rows, 1):
        tid, task = row.get("trace_id"), row.get("task_id")
        if tid:
            ep = by_trace.get(str(tid))
        elif task:
            found = by_task.get(str(task), [])
            if len(found) > 1:
                raise DiagnoseError(f"{source} row {n}: task_id {task!r} names {len(found)} episodes; "
                                    "key the labels by trace_id")
            ep = found[0] if found else None
        else:
            raise DiagnoseError(f"{source} row {n}: needs a task_id or trace_id")
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
                                      row.get("form") or None)
    return out
