"""Verify a built corpus: every label against the DuckDB store the build wrote.

For each label row: its episode is in the store once, with the outcome its category says; the
episode's steps are numbered 0..n-1 with as many steps as the run logged; a faulted failure's
labelled step exists and is of the labelled side (an LLM request for ``llm``, a call of the named
tool for ``tool``); the label uses the taxonomy's vocabulary. Prints each problem; exits 1 if any.
"""

from __future__ import annotations

import json
from pathlib import Path

import duckdb

LABELS = {
    "rate_limit",
    "timeout",
    "connection",
    "error",
    "http_error",
    "auth",
    "not_found",
    "invalid_request",
    "content_filter",
    "truncate",
    "empty",
    "corrupt",
    "schema",
    "stale",
    "wrong_value",
    "latency",
    "stream_cut",
    "malformed_json",
    "truncated",
    "key_rename",
}
CATEGORIES = {"faulted_failure", "clean_success", "benign_success", "unfaulted_failure"}


def check(db: Path, labels: Path) -> int:
    rows = [json.loads(line) for line in labels.read_text().splitlines() if line.strip()]
    problems: list[str] = []
    ids = [r["task_id"] for r in rows]
    if ids != sorted(ids) or len(set(ids)) != len(ids):
        problems.append("label rows are not sorted by task_id or not unique")
    con = duckdb.connect(str(db), read_only=True)
    episodes: dict[str, list[bool | None]] = {}
    for tid, success in con.execute("SELECT task_id, success FROM episodes").fetchall():
        episodes.setdefault(tid, []).append(success)
    steps: dict[str, list[tuple[int, str, str]]] = {}
    for tid, step, kind, name in con.execute(
        "SELECT task_id, step, kind, name FROM steps ORDER BY task_id, step"
    ).fetchall():
        steps.setdefault(tid, []).append((step, kind, name))
    injected = con.execute("SELECT count(*) FROM steps WHERE fault_injected").fetchone()[0]
    if injected:
        problems.append(f"{injected} step(s) carry the library injector's faults; this corpus injects its own")
    for r in rows:
        tid, cat = r["task_id"], r.get("category")
        if cat not in CATEGORIES:
            problems.append(f"{tid}: unknown category {cat!r}")
            continue
        ep = episodes.get(tid, [])
        if len(ep) != 1:
            problems.append(f"{tid}: {len(ep)} episodes in the store")
            continue
        if ep[0] is not (cat in ("clean_success", "benign_success")):
            problems.append(f"{tid}: stored success={ep[0]} but category {cat}")
        st = steps.get(tid, [])
        if [s for s, _, _ in st] != list(range(len(st))):
            problems.append(f"{tid}: steps are not numbered 0..{len(st) - 1}")
        if len(st) != r.get("n_steps"):
            problems.append(f"{tid}: {len(st)} steps stored, {r.get('n_steps')} logged by the run")
        if cat == "faulted_failure":
            if r.get("fault_type") not in LABELS or r.get("target") not in ("llm", "tool"):
                problems.append(f"{tid}: label {r.get('fault_type')!r}/{r.get('target')!r} is not in the taxonomy")
            k = r.get("step")
            if not isinstance(k, int) or not 0 <= k < len(st):
                problems.append(f"{tid}: labelled step {k!r} is not a step of the episode")
                continue
            _, kind, name = st[k]
            if kind != r["target"]:
                problems.append(f"{tid}: step {k} is a {kind} step, labelled {r['target']}")
            elif kind == "tool" and name.split(" ")[-1] != r["at"].split(":", 1)[1]:
                problems.append(f"{tid}: step {k} is {name!r}, labelled {r['at']}")
        elif r.get("fault_type") not in ("", "none", "none_found") or r.get("step") is not None:
            problems.append(f"{tid}: a {cat} episode with a root cause")
    missing = set(episodes) - set(ids)
    if missing:
        problems.append(f"{len(missing)} stored episode(s) have no label")
    for p in problems:
        print("problem:", p)
    print(f"checked {len(rows)} labels against {db}: {len(problems)} problem(s)")
    return 1 if problems else 0
