"""``--check``: every label against the store, read through the DuckDB views only.

For each labelled episode: one episode row with that task id and the planned outcome; steps
numbered 0..n-1 without gaps or repeats and as many as the build recorded; the labelled step
present, of the labelled kind (an LLM call or a call of the labelled tool).
"""

from __future__ import annotations

import json
from pathlib import Path

import duckdb


def check(db: Path, labels: Path) -> int:
    rows = [json.loads(line) for line in labels.read_text().splitlines() if line.strip()]
    con = duckdb.connect(str(db), read_only=True)
    episodes = {r[0]: r[1:] for r in con.sql("select task_id, count(*), bool_and(success), any_value(simulated) "
                                             "from episodes group by task_id").fetchall()}
    steps: dict[str, list[tuple[int, str, str | None]]] = {}
    for task_id, step, kind, tool in con.sql(
            "select task_id, step, kind, json_extract_string(attributes, '$.\"gen_ai.tool.name\"') "
            "from steps order by task_id, step").fetchall():
        steps.setdefault(task_id, []).append((step, kind, tool))
    problems = []
    if [r["task_id"] for r in rows] != sorted(r["task_id"] for r in rows):
        problems.append("label file not sorted by task_id")
    for r in rows:
        tid = r["task_id"]
        ep = episodes.get(tid)
        if ep is None or ep[0] != 1:
            problems.append(f"{tid}: {0 if ep is None else ep[0]} episode rows")
            continue
        want_success = r["category"] in ("clean_success", "benign_success")
        if ep[1] is not want_success:
            problems.append(f"{tid}: stored success={ep[1]}, label says {r['category']}")
        got = steps.get(tid, [])
        if [s for s, _, _ in got] != list(range(len(got))):
            problems.append(f"{tid}: steps not numbered 0..n-1")
        if len(got) != r["n_steps"]:
            problems.append(f"{tid}: {len(got)} steps stored, {r['n_steps']} recorded while running")
        if sum(1 for _, k, _ in got if k == "llm") != r["n_llm_calls"]:
            problems.append(f"{tid}: LLM call count differs")
        if r.get("step") is not None:
            step = int(r["step"])
            if step >= len(got):
                problems.append(f"{tid}: labelled step {step} missing")
                continue
            _, kind, tool = got[step]
            if kind != r["step_kind"] or (kind == "tool" and tool != r["tool"]):
                problems.append(f"{tid}: step {step} is {kind}/{tool}, label says {r['step_kind']}/{r.get('tool')}")
            if r["target"] != ("llm" if kind == "llm" else "tool"):
                problems.append(f"{tid}: target {r['target']} does not match the step's kind {kind}")
    for p in problems:
        print("problem:", p)
    print(f"checked {len(rows)} labels against {db}: {len(problems)} problems")
    return 1 if problems else 0
