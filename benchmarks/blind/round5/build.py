"""Run every planned episode through the real agent, tracer and store; write the labels from what happened.

A label is written from the run, not from the plan: the root cause's step is the position, in the
episode's own order of LLM request attempts and tool calls, of the request or call the root form
was armed on. The run is checked against its category (a faulted failure failed, a success
succeeded, every armed form that should have fired fired); anything else is a problem and the
build exits non-zero.
"""

from __future__ import annotations

import json
import shutil
import tempfile
import time
from pathlib import Path
from typing import Any

import agentchaos_otel
from benchmarks.blind.round5.agent import EpisodePlan, McpTools, run_episode
from benchmarks.blind.round5.llm_server import ChatServer, Current
from benchmarks.blind.round5.scenarios import Planned, compose
from benchmarks.blind.round5.world import Ledger

ROOT = Path(__file__).resolve().parents[3]


def _step(log: list[tuple[Any, ...]], where: tuple[str, Any]) -> int | None:
    kind, at = where
    key = ("llm", at) if kind == "llm" else ("tool", at[0], at[1])
    return log.index(key) if key in log else None


def label_of(p: Planned, run: dict[str, Any]) -> tuple[dict[str, Any], list[str]]:
    """The label row of one episode, and the problems its run shows."""
    problems: list[str] = []
    log = run["log"]
    row: dict[str, Any] = {
        "task_id": p.task_id,
        "category": p.category,
        "n_steps": len(log),
        "llm_calls": sum(1 for e in log if e[0] == "llm"),
    }
    fired_llm = {a for a, _ in run["llm_fired"]}
    fired_tool = {(t, k) for t, k, _ in run["tool_fired"]}

    def fired(w: tuple[str, Any]) -> bool:
        return w[1] in fired_llm if w[0] == "llm" else tuple(w[1]) in fired_tool

    if p.category == "faulted_failure":
        assert p.root is not None and p.root_form is not None
        f = p.root_form
        step = _step(log, p.root)
        if step is None or not fired(p.root):
            problems.append(f"{p.task_id}: root form {f['id']} did not fire")
        if run["success"]:
            problems.append(f"{p.task_id}: faulted episode succeeded ({f['id']})")
        row.update(
            {
                "fault_type": f["label"],
                "target": f["side"],
                "where": f["where"],
                "step": step,
                "at": "llm" if f["side"] == "llm" else f"tool:{p.root[1][0]}",
                "form": f["id"],
                "family": f["family"],
                "source": f["source"],
                "two_faults": bool(p.second and fired(p.second)),
                "long_trace": bool(
                    p.long and 15 <= row["llm_calls"] <= 30 and step is not None and step <= len(log) // 2
                ),
            }
        )
    else:
        ok = p.category in ("clean_success", "benign_success")
        if run["success"] != ok:
            problems.append(f"{p.task_id}: {p.category} but success={run['success']} ({run['why']})")
        for w in p.absorbed:
            if not fired(w):
                problems.append(f"{p.task_id}: absorbed form did not fire")
        form = p.root_form
        row.update(
            {
                "fault_type": "none_found" if p.category == "unfaulted_failure" else "none",
                "target": "",
                "step": None,
                "form": form["id"] if form else (p.slip or "none"),
                "family": (form["family"] if form else ("model_slip" if p.category == "unfaulted_failure" else "none")),
                "source": form["source"] if form else "SIMULATED clerk (model.py)",
            }
        )
        if p.category == "unfaulted_failure":
            row["slip"] = p.slip
            row["absorbed_first"] = bool(p.absorbed)
    return row, problems


def build(db: Path, labels: Path, seed: int, size: int, quiet: bool = False) -> int:
    t0 = time.monotonic()
    planned = compose(seed, size)
    for suffix in ("", ".wal"):
        Path(str(db) + suffix).unlink(missing_ok=True)
    handle = agentchaos_otel.configure(db=str(db), plan=None, seed=seed, metrics=False)
    work = Path(tempfile.mkdtemp(prefix="round5-"))
    ledger = Ledger(work / "ledger.sqlite")
    server = ChatServer()
    mcp = McpTools(ledger.path, ROOT)
    rows: list[dict[str, Any]] = []
    problems: list[str] = []
    try:
        for i, p in enumerate(planned):
            cur = Current(task_id=p.task_id, profile=p.profile, temperament=p.temperament, llm_faults=p.llm_faults)
            run = run_episode(
                EpisodePlan(p.task, cur, p.stream_mode, p.tool_faults, seed=seed * 100000 + i), server, mcp, ledger
            )
            row, probs = label_of(p, run)
            rows.append(row)
            problems += probs
            if not quiet and (i + 1) % 40 == 0:
                print(f"{i + 1}/{len(planned)} episodes, {time.monotonic() - t0:.0f} s", flush=True)
    finally:
        mcp.close()
        server.close()
        handle.shutdown()
        shutil.rmtree(work, ignore_errors=True)
    rows.sort(key=lambda r: r["task_id"])
    labels.write_text("".join(json.dumps(r, ensure_ascii=False, sort_keys=True) + "\n" for r in rows))
    summary(rows)
    print(f"built {len(rows)} episodes in {time.monotonic() - t0:.0f} s; {len(problems)} problem(s)")
    for pr in problems:
        print("problem:", pr)
    return 1 if problems else 0


def summary(rows: list[dict[str, Any]]) -> None:
    from collections import Counter

    cats = Counter(r["category"] for r in rows)
    f = [r for r in rows if r["category"] == "faulted_failure"]
    long_ok = sum(1 for r in f if r["long_trace"])
    print("categories:", dict(sorted(cats.items())))
    print(
        f"faulted: {len(f)}; two-fault {sum(r['two_faults'] for r in f)}; "
        f"long (15-30 LLM calls, root in the first half) {long_ok}; "
        f"distinct root forms {len({r['form'] for r in f})}; families {len({r['family'] for r in f})}"
    )
    print("labels:", dict(sorted(Counter(r["fault_type"] for r in f).items())))
    print("sides:", dict(Counter(r["target"] for r in f)))
