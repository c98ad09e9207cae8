"""Verify a built corpus: every label against the DuckDB ``steps`` and ``episodes`` views.

Checks, per label: the episode is in the store once, its outcome agrees with the category, and a
faulted failure's step exists with the labelled side (an LLM request attempt, ``chat ...``, for
``llm``; a tool span for ``tool``); plus the label file's own shape (sorted, unique, known keys
and values, the default composition when the corpus has 320 episodes).
"""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import duckdb

KEYS = ["task_id", "fault_type", "target", "step", "category", "form", "family", "source"]
CATEGORIES = {"faulted_failure", "clean_success", "benign_success", "unfaulted_failure"}
LABELS = {"rate_limit", "timeout", "connection", "error", "http_error", "auth", "not_found", "invalid_request",
          "content_filter", "truncate", "empty", "corrupt", "schema", "stale", "wrong_value", "latency",
          "stream_cut", "malformed_json", "truncated", "key_rename"}


def check(db: Path, labels: Path) -> list[str]:
    problems: list[str] = []
    rows = [json.loads(line) for line in labels.read_text().splitlines() if line.strip()]
    ids = [r["task_id"] for r in rows]
    if ids != sorted(ids) or len(set(ids)) != len(ids):
        problems.append("label file not sorted by task_id or task ids repeated")
    con = duckdb.connect(str(db), read_only=True)
    episodes = {t: (n, s) for t, n, s in con.execute(
        "select task_id, count(*), bool_and(success) from episodes group by task_id").fetchall()}
    steps: dict[tuple[str, int], list[tuple[str, str, str]]] = {}
    for t, step, kind, name, op in con.execute(
            "select task_id, step, kind, name, json_extract_string(attributes, '$.\"gen_ai.operation.name\"') "
            "from steps").fetchall():
        steps.setdefault((t, int(step)), []).append((kind, name, op or ""))
    for r in rows:
        t = r["task_id"]
        if list(r) != KEYS:
            problems.append(f"{t}: keys {list(r)}")
        if r["category"] not in CATEGORIES:
            problems.append(f"{t}: category {r['category']}")
        if t not in episodes:
            problems.append(f"{t}: not in the store")
            continue
        n, success = episodes[t]
        if n != 1:
            problems.append(f"{t}: {n} episodes in the store")
        if bool(success) != r["category"].endswith("success"):
            problems.append(f"{t}: stored success={success} but category {r['category']}")
        if r["category"] != "faulted_failure":
            want = "none_found" if r["category"] == "unfaulted_failure" else "none"
            if r["fault_type"] != want or r["step"] is not None:
                problems.append(f"{t}: {r['category']} labelled {r['fault_type']} at {r['step']}")
            continue
        if r["fault_type"] not in LABELS:
            problems.append(f"{t}: unknown label {r['fault_type']}")
        if r["target"] not in ("llm", "tool") or not isinstance(r["step"], int):
            problems.append(f"{t}: target {r['target']!r} step {r['step']!r}")
            continue
        found = steps.get((t, r["step"]))
        if not found:
            problems.append(f"{t}: step {r['step']} not in the store")
        elif len(found) != 1:
            problems.append(f"{t}: step {r['step']} is {len(found)} spans")
        else:
            kind, name, op = found[0]
            if r["target"] == "llm" and not (kind == "llm" and op == "chat"):
                problems.append(f"{t}: step {r['step']} is {kind} {name!r}, not an LLM request attempt")
            if r["target"] == "tool" and kind != "tool":
                problems.append(f"{t}: step {r['step']} is {kind} {name!r}, not a tool call")
        if not r["source"]:
            problems.append(f"{t}: no source")
    missing = set(episodes) - set(ids)
    if missing:
        problems.append(f"{len(missing)} stored episodes without a label, e.g. {sorted(missing)[:3]}")
    if len(rows) == 320:
        cats = Counter(r["category"] for r in rows)
        want = {"faulted_failure": 200, "clean_success": 40, "benign_success": 40, "unfaulted_failure": 40}
        if dict(cats) != want:
            problems.append(f"composition {dict(cats)} differs from {want}")
    return problems
