"""Verify a label file against its store: every labelled episode, step, side and outcome."""

from __future__ import annotations

import json
from pathlib import Path

import duckdb

CATEGORIES = {"faulted_failure", "clean_success", "benign_success", "unfaulted_failure"}


def check(db: Path, labels: Path) -> list[str]:
    problems: list[str] = []
    rows = [json.loads(line) for line in labels.read_text().splitlines() if line.strip()]
    ids = [r["task_id"] for r in rows]
    if ids != sorted(ids) or len(set(ids)) != len(ids):
        problems.append("labels are not sorted by task_id or repeat a task_id")
    con = duckdb.connect(str(db), read_only=True)
    steps: dict[str, dict[int, tuple[str, str]]] = {}
    for task, step, kind, name in con.execute("SELECT task_id, step, kind, name FROM steps").fetchall():
        steps.setdefault(task, {})[int(step)] = (kind, name or "")
    success = dict(con.execute("SELECT task_id, success FROM episodes").fetchall())
    con.close()
    for r in rows:
        t = r["task_id"]
        if t not in success:
            problems.append(f"{t}: no episode in the store")
            continue
        cat = r.get("category")
        if cat not in CATEGORIES:
            problems.append(f"{t}: unknown category {cat!r}")
        if bool(success[t]) != (cat in ("clean_success", "benign_success")):
            problems.append(f"{t}: outcome success={success[t]} disagrees with category {cat}")
        if cat != "faulted_failure":
            if r.get("step") is not None or r.get("fault_type") not in ("", "none", "none_found"):
                problems.append(f"{t}: {cat} carries a root cause")
            if cat == "unfaulted_failure" and r.get("fault_type") != "none_found":
                problems.append(f"{t}: unfaulted failure not labelled none_found")
            continue
        step = r.get("step")
        got = steps.get(t, {}).get(step) if isinstance(step, int) else None
        if got is None:
            problems.append(f"{t}: labelled step {step!r} is not a step of the episode")
            continue
        kind, name = got
        if r.get("target") not in ("llm", "tool"):
            problems.append(f"{t}: target {r.get('target')!r}")
        elif r["target"] == "llm" and kind != "llm":
            problems.append(f"{t}: step {step} is a {kind} step, label says llm")
        elif r["target"] == "tool" and (kind != "tool" or not name.endswith(" " + r.get("tool_name", "?"))):
            problems.append(f"{t}: step {step} is {kind} {name!r}, label says tool {r.get('tool_name')}")
        if not r.get("fault_type") or r["fault_type"] in ("none", "none_found"):
            problems.append(f"{t}: faulted failure without a fault type")
    return problems
