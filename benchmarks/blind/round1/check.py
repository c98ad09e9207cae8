"""Consistency check of a built corpus against the trace store (reads only the store and our files).

For every label row: the episode exists and its stored outcome matches the category; the stored
steps (kind, tool name) equal the step sequence the harness recorded; a labelled step exists and
is an LLM step for model-API targets and a tool step for ``tool_result``.
"""

from __future__ import annotations

import json
import sys
from collections import Counter
from pathlib import Path

from .build import events_path

LLM_TARGETS = {"content", "tool_calls", "http", "stream"}


def check(db: Path, labels: Path) -> int:
    import duckdb

    con = duckdb.connect(str(db), read_only=True)
    steps: dict[str, list[tuple[int, str, str]]] = {}
    for task_id, step, kind, name in con.execute(
        "SELECT task_id, step, kind, name FROM steps ORDER BY task_id, step"
    ).fetchall():
        steps.setdefault(task_id, []).append((step, kind, name))
    outcome = dict(con.execute("SELECT task_id, success FROM episodes").fetchall())
    rows = [json.loads(line) for line in open(labels, encoding="utf-8")]
    recorded = {}
    ep = events_path(labels)
    if ep.exists():
        recorded = {d["task_id"]: d for d in (json.loads(x) for x in open(ep, encoding="utf-8"))}
    bad: list[str] = []
    for r in rows:
        tid = r["task_id"]
        if tid not in outcome:
            bad.append(f"{tid}: episode missing from the store")
            continue
        want = r["category"] in ("clean_success", "benign_success")
        if bool(outcome[tid]) != want:
            bad.append(f"{tid}: stored success={outcome[tid]} but category {r['category']}")
        st = steps.get(tid, [])
        if [s for s, _, _ in st] != list(range(len(st))):
            bad.append(f"{tid}: stored steps are not numbered 0..n-1: {[s for s, _, _ in st]}")
        if tid in recorded:
            exp = [(k, n) for k, n, _ in recorded[tid]["steps"]]
            got = [(k, None if k == "llm" else (nm or "").replace("execute_tool ", "")) for _, k, nm in st]
            if exp != got:
                bad.append(f"{tid}: stored steps {got} differ from the harness record {exp}")
        if "step" in r:
            idx = {s: (k, n) for s, k, n in st}
            if r["step"] not in idx:
                bad.append(f"{tid}: labelled step {r['step']} not in the store")
                continue
            kind = idx[r["step"]][0]
            need = "tool" if r.get("target") == "tool_result" else "llm"
            if kind != need:
                bad.append(f"{tid}: labelled step {r['step']} is a {kind} step, target {r.get('target')} needs {need}")
    for b in bad:
        print("CHECK", b, file=sys.stderr)
    c = Counter(r["category"] for r in rows)
    print(f"checked {len(rows)} labels against {db}: {len(bad)} problem(s); {dict(c)}", file=sys.stderr)
    return 1 if bad else 0
