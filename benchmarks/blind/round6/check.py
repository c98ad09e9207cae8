"""Verify the labels against the store: every episode present, its steps as the agent recorded them,
every labelled step there with the right side (and tool), and the stored outcome as labelled."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import duckdb


def _columns(con: duckdb.DuckDBPyConnection, view: str) -> set[str]:
    return {r[0] for r in con.execute(f"DESCRIBE {view}").fetchall()}


def check(db: Path, labels: Path) -> list[str]:
    problems: list[str] = []
    rows = [json.loads(line) for line in labels.read_text().splitlines() if line.strip()]
    expect: dict[str, Any] = json.loads(Path(f"{labels}.expect.json").read_text())
    if [r["task_id"] for r in rows] != sorted(r["task_id"] for r in rows):
        problems.append("labels are not sorted by task_id")
    con = duckdb.connect(str(db), read_only=True)
    steps: dict[str, list[tuple[int, str, str]]] = {}
    for task, step, kind, name in con.execute(
        "SELECT task_id, step, kind, name FROM steps ORDER BY task_id, step"
    ).fetchall():
        # span names: "chat {model}", "execute_tool {tool}", "tools/call {tool}"
        tool = str(name or "").split(" ", 1)[-1] if kind != "llm" else ""
        steps.setdefault(str(task), []).append((int(step), str(kind), tool))
    ecols = _columns(con, "episodes")
    outcome = (
        {str(t): s for t, s in con.execute("SELECT task_id, success FROM episodes").fetchall()}
        if "success" in ecols
        else {}
    )
    for r in rows:
        t = r["task_id"]
        got = steps.get(t)
        if got is None:
            problems.append(f"{t}: no steps in the store")
            continue
        if [s for s, _, _ in got] != list(range(len(got))):
            problems.append(f"{t}: steps not dense from 0: {[s for s, _, _ in got]}")
        want = expect[t]["steps"]
        seen = [f"{k}:{n}" for _, k, n in got]
        if seen != want:
            problems.append(f"{t}: stored steps {seen} differ from the agent's record {want}")
        if t in outcome and bool(outcome[t]) != expect[t]["success"]:
            problems.append(f"{t}: stored outcome {outcome[t]} differs from the run's {expect[t]['success']}")
        success_cat = r["category"] in ("clean_success", "benign_success")
        if success_cat != expect[t]["success"]:
            problems.append(f"{t}: category {r['category']} but success={expect[t]['success']}")
        if r["category"] == "faulted_failure":
            if r["step"] is None or r["fault_type"] in ("", "none", "none_found"):
                problems.append(f"{t}: faulted failure without a root")
                continue
            if not 0 <= r["step"] < len(want):
                problems.append(f"{t}: step {r['step']} out of range")
                continue
            kind = want[r["step"]].split(":")[0]
            if kind != r["target"]:
                problems.append(f"{t}: step {r['step']} is {want[r['step']]}, label says {r['target']}")
        elif r["step"] is not None:
            problems.append(f"{t}: {r['category']} with a step")
    missing = set(expect) - {r["task_id"] for r in rows}
    problems += [f"{t}: in the build record, not in the labels" for t in sorted(missing)]
    return problems
