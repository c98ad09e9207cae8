"""``--check``: every label against the store (the DuckDB ``steps`` and ``episodes`` views).

Each labelled episode must be in the store once with the outcome its category says; its steps must
be numbered 0..n-1 with as many model calls as the build counted; a root cause's step must be the
model call or the named tool call the build saw the fault fire on.
"""

from __future__ import annotations

import json
from pathlib import Path

import duckdb

LABELS = {"rate_limit", "timeout", "connection", "error", "http_error", "auth", "not_found", "invalid_request",
          "content_filter", "truncate", "empty", "corrupt", "schema", "stale", "wrong_value", "latency",
          "stream_cut", "malformed_json", "truncated", "key_rename"}
CATEGORIES = {"faulted_failure": False, "clean_success": True, "benign_success": True, "unfaulted_failure": False}


def check(db: Path, labels: Path) -> list[str]:
    problems: list[str] = []
    rows = [json.loads(line) for line in labels.read_text().splitlines() if line.strip()]
    ids = [r["task_id"] for r in rows]
    if ids != sorted(ids) or len(set(ids)) != len(ids):
        problems.append("labels are not sorted by task_id or repeat a task_id")
    con = duckdb.connect(str(db), read_only=True)
    episodes = {t: (s, n) for t, s, n in con.execute(
        "select task_id, success, count(*) over (partition by task_id) from episodes").fetchall()}
    steps: dict[str, list[tuple[int, str, str]]] = {}
    for task, step, kind, name in con.execute(
            "select task_id, step, kind, name from steps order by task_id, step").fetchall():
        steps.setdefault(task, []).append((int(step), str(kind), str(name)))
    for r in rows:
        t = r["task_id"]
        cat = r.get("category")
        if cat not in CATEGORIES:
            problems.append(f"{t}: unknown category {cat}")
            continue
        if t not in episodes:
            problems.append(f"{t}: not in the store")
            continue
        success, count = episodes[t]
        if count != 1:
            problems.append(f"{t}: {count} episode rows")
        if bool(success) != CATEGORIES[cat] or bool(r.get("success")) != CATEGORIES[cat]:
            problems.append(f"{t}: stored success={success}, label category {cat}")
        mine = steps.get(t, [])
        if [s for s, _, _ in mine] != list(range(len(mine))) or len(mine) != r["steps"]:
            problems.append(f"{t}: store has {len(mine)} steps (numbered {[s for s, _, _ in mine][:3]}...), "
                            f"the build counted {r['steps']}")
        if sum(1 for _, k, _ in mine if k == "llm") != r["llm_calls"]:
            problems.append(f"{t}: model-call count differs from the build's")
        if cat == "faulted_failure":
            if r["fault_type"] not in LABELS or r["target"] not in ("llm", "tool") or not r.get("source"):
                problems.append(f"{t}: bad label {r['fault_type']}/{r['target']}")
            step = r.get("step")
            if not isinstance(step, int) or not 0 <= step < len(mine):
                problems.append(f"{t}: root step {step} not in the store")
                continue
            _, kind, name = mine[step]
            if kind != r["step_kind"] or (r["step_kind"] == "tool" and not name.endswith(" " + str(r["step_tool"]))):
                problems.append(f"{t}: step {step} is {kind} {name!r}, "
                                f"label says {r['step_kind']} {r.get('step_tool')}")
        elif r.get("fault_type") != ("none" if CATEGORIES[cat] else "none_found") or r.get("step") is not None:
            problems.append(f"{t}: a {cat} must have no root cause")
    missing = set(episodes) - set(ids)
    if missing:
        problems.append(f"{len(missing)} stored episodes have no label")
    print(f"checked {len(rows)} labels against {db}: {len(problems)} problem(s)")
    return problems
