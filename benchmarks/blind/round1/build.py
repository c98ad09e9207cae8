"""Building the corpus: run every planned episode under the project's tracing, then write labels."""

from __future__ import annotations

import json
import random
import sys
import time
from pathlib import Path
from typing import Any

from .compose import compose
from .provider import Provider
from .run import EpisodeRun, Plan
from .world import build_world


def label_for(p: Plan, run: EpisodeRun, success: bool) -> tuple[dict[str, Any], list[str]]:
    problems: list[str] = []
    row: dict[str, Any] = {"task_id": p.task_id}
    absorbed = [f"{spec.form}@{ev}" for ev, spec in run.applied if spec.role == "absorbed"]
    if p.category == "faulted_failure":
        roots = [(ev, s) for ev, s in run.applied if s.role == "root"]
        if success:
            problems.append("expected failure, got success")
        if not roots:
            problems.append("root fault never applied")
            row.update(fault_type="?", category=p.category)
            return row, problems
        ev, spec = roots[0]
        f = spec.f
        row.update(
            fault_type=f.label,
            target=f.target,
            step=ev,
            category=p.category,
            form=f.name,
            family=f.family,
            source=f.source,
        )
        if p.shape == "two-fault" and not any(s.role == "second" for _, s in run.applied):
            problems.append("second fault never applied")
        seconds = [f"{s.form}@{e}" for e, s in run.applied if s.role == "second"]
        notes = []
        if seconds:
            notes.append("second: " + ", ".join(dict.fromkeys(seconds)))
        if absorbed:
            notes.append("absorbed before: " + ", ".join(dict.fromkeys(absorbed)))
        if f.note:
            notes.append(f.note)
        if notes:
            row["note"] = "; ".join(notes)
    else:
        if p.category == "unfaulted_failure":
            row.update(fault_type="none_found", category=p.category)
            if success:
                problems.append("expected failure, got success")
        else:
            row.update(fault_type="none", category=p.category)
            if not success:
                problems.append("expected success, got failure")
        if p.category == "clean_success" and run.applied:
            problems.append("clean episode met a fault")
        if p.category == "benign_success" and not run.applied and not (p.cfg.slip):
            problems.append("benign episode met no fault")
        notes = []
        if p.note:
            notes.append(p.note)
        if absorbed:
            notes.append("absorbed: " + ", ".join(dict.fromkeys(absorbed)))
        if notes:
            row["note"] = "; ".join(notes)
    n_llm = sum(1 for e in run.events if e["kind"] == "llm")
    row["shape"] = "two-fault" if p.shape == "two-fault" else ("long" if n_llm >= 15 else "short")
    return row, problems


def build(db: Path, labels: Path, seed: int, episodes: int, verbose: bool = False) -> int:
    import agentchaos_otel

    t0 = time.monotonic()
    for pth in (db, Path(str(db) + ".wal")):
        if pth.exists():
            pth.unlink()
    world = build_world(random.Random(f"{seed}:world"))
    plans = compose(world, seed, episodes)
    handle = agentchaos_otel.configure(db=str(db), plan=None, seed=0, metrics=False)
    provider = Provider()
    rows: list[dict[str, Any]] = []
    trace: list[dict[str, Any]] = []
    problems: list[str] = []
    try:
        for i, p in enumerate(plans):
            run = EpisodeRun(p, world, provider, i, seed)
            provider.current = run
            te = time.monotonic()
            with agentchaos_otel.episode(task_id=p.task_id, plan=None, seed=0, agent_name="blind-agent") as ep:
                tools = ep.wrap_tools(run.tool_fns())
                try:
                    out = run.execute(tools)
                finally:
                    run.close()
                success = out.error is None and p.task.check(out.final, run.world)
                ep.set_outcome(success=success, error=out.error)
            provider.current = None
            row, probs = label_for(p, run, success)
            rows.append(row)
            trace.append(
                {
                    "task_id": p.task_id,
                    "success": success,
                    "steps": [[e["kind"], e["name"], e["form"]] for e in run.events],
                }
            )
            for pr in probs:
                problems.append(
                    f"{p.task_id} [{p.category}/{p.shape}] {[s.form for s in p.faults]} task={p.task.kind} "
                    f"slip={p.cfg.slip} : {pr} (final={out.final!r:.120} error={out.error!r:.160})"
                )
            if verbose:
                print(
                    f"{p.task_id} {p.category:18s} {p.shape:9s} {row.get('fault_type'):15s} "
                    f"step={row.get('step', '-')!s:4s} "
                    f"{row.get('form', p.note or '')[:38]:38s} ok={success!s:5s} n={len(run.events):3d} "
                    f"{time.monotonic() - te:5.2f}s",
                    flush=True,
                )
    finally:
        provider.stop()
        handle.shutdown()
    labels.parent.mkdir(parents=True, exist_ok=True)
    with open(labels, "w", encoding="utf-8") as fh:
        for r in rows:
            fh.write(json.dumps(r, ensure_ascii=False, sort_keys=False) + "\n")
    with open(events_path(labels), "w", encoding="utf-8") as fh:
        for t in trace:
            fh.write(json.dumps(t, ensure_ascii=False) + "\n")
    dt = time.monotonic() - t0
    print(f"built {len(rows)} episodes in {dt:.1f}s -> {db}, {labels}", file=sys.stderr)
    for pr in problems:
        print("PROBLEM", pr, file=sys.stderr)
    return 1 if problems else 0


def events_path(labels: Path) -> Path:
    return labels.with_name(labels.stem + ".steps.jsonl")
