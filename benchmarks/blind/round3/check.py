"""``--check``: every label against the store (DuckDB ``steps`` and ``episodes`` views).

For each episode: it is in the store; its steps are numbered 0..n-1 in start order and are, one by
one, the steps the build recorded (LLM request or the named tool); the labelled step is a step of
the labelled side (and of the named tool); the stored outcome is the category's; long runs have
15-30 model calls with the root in their first half. Prints each problem; exits 1 if any.
"""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import duckdb

from benchmarks.blind.round3.build import ledger_path

SUCCESS = ("clean_success", "benign_success")


def check(db: Path, labels: Path) -> int:
    rows = [json.loads(line) for line in labels.read_text().splitlines() if line.strip()]
    ledgers = {d["task_id"]: d for d in map(json.loads, ledger_path(labels).read_text().splitlines())}
    con = duckdb.connect(str(db), read_only=True)
    steps: dict[str, list[tuple[int, str, str]]] = {}
    query = "SELECT task_id, step, kind, name FROM steps ORDER BY task_id, step"
    for task_id, step, kind, name in con.sql(query).fetchall():
        steps.setdefault(task_id, []).append((step, kind, name))
    episodes = dict(con.sql("SELECT task_id, success FROM episodes").fetchall())
    problems: list[str] = []
    if [r["task_id"] for r in rows] != sorted(r["task_id"] for r in rows):
        problems.append("labels are not sorted by task_id")
    for r in rows:
        tid = r["task_id"]
        got = steps.get(tid, [])
        want = ledgers[tid]["steps"]
        if tid not in episodes:
            problems.append(f"{tid}: no episode in the store")
            continue
        if [s[0] for s in got] != list(range(len(got))):
            problems.append(f"{tid}: steps not dense from 0: {[s[0] for s in got]}")
        stored = [(k, n.removeprefix("execute_tool ") if k == "tool" else "chat") for _, k, n in got]
        built = [(k, n if k == "tool" else "chat") for k, n, _ in want]
        if stored != built:
            problems.append(f"{tid}: stored steps differ from the build's ({len(stored)} vs {len(built)})")
        if (r["category"] in SUCCESS) != bool(episodes[tid]):
            problems.append(f"{tid}: stored outcome {episodes[tid]} disagrees with {r['category']}")
        if r["category"] == "faulted_failure":
            step = r.get("step")
            if not isinstance(step, int) or not 0 <= step < len(got):
                problems.append(f"{tid}: labelled step {step} is not a step of the episode")
                continue
            kind, name = got[step][1], got[step][2]
            if kind != r["target"]:
                problems.append(f"{tid}: step {step} is {kind}, label says {r['target']}")
            if want[step][2] != r["form"]:
                problems.append(f"{tid}: step {step} carried {want[step][2]}, label says {r['form']}")
            if r["target"] == "tool" and name.removeprefix("execute_tool ") != want[step][1]:
                problems.append(f"{tid}: step {step} is tool {name}, the build called {want[step][1]}")
            if r.get("shape") == "long":
                n_llm = sum(1 for s in got if s[1] == "llm")
                if not 15 <= n_llm <= 30:
                    problems.append(f"{tid}: long run with {n_llm} model calls")
                if step > len(got) // 2:
                    problems.append(f"{tid}: long run's root at step {step} of {len(got)}")
        elif r["fault_type"] not in ("", "none", "none_found"):
            problems.append(f"{tid}: {r['category']} labelled {r['fault_type']}")
    counts = Counter(r["category"] for r in rows)
    forms = {r["form"] for r in rows if r["category"] == "faulted_failure"}
    families = {r["family"] for r in rows if r["category"] == "faulted_failure"}
    print(f"checked {len(rows)} labels against {db}: {dict(counts)}; {len(forms)} root forms in "
          f"{len(families)} families; long runs {sum(r.get('shape') == 'long' for r in rows)}, two-fault "
          f"{sum(r.get('shape') == 'two_fault' for r in rows)}")
    for p in problems:
        print("problem:", p)
    print(f"{len(problems)} problems")
    return 1 if problems else 0
