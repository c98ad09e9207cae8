"""Run every episode of the plan against the loopback servers and write the store and the labels.

Labels come from the plan and from what the servers and wrappers logged as fired (which call got
which form), mapped to step numbers by the agent's own record of what it started, in order: each
LLM request attempt (SDK retries included) is a step, then the turn's tool calls in the order the
reply listed them. ``check`` later compares these with the store.
"""

from __future__ import annotations

import asyncio
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from . import world
from .forms import ALL_FORMS
from .plan import EpisodePlan, episode_plans

REPO = Path(__file__).resolve().parents[3]


def _steps(run_events: list[tuple[str, str, int]], log: list[dict[str, Any]]) -> list[tuple[str, str, int, int]]:
    """(kind, tool, turn-or-occurrence, attempt) per step, in start order."""
    attempts: dict[int, int] = {}
    for row in log:
        if row["side"] == "llm":
            attempts[row["turn"]] = attempts.get(row["turn"], 0) + 1
    out: list[tuple[str, str, int, int]] = []
    for kind, name, n in run_events:
        if kind == "llm":
            out += [("llm", "", n, a) for a in range(attempts.get(n, 0))]
        else:
            out.append(("tool", name, n, 0))
    return out


def _fired(ep: EpisodePlan, log: list[dict[str, Any]]) -> list[tuple[int, tuple[str, str, int, int]]]:
    """For each planned fault that fired, its first hit as a step key."""
    out = []
    for i, f in enumerate(ep.faults):
        for row in log:
            if row["form"] != f.form:
                continue
            if f.tool and row["side"] == "tool" and row["tool"] == f.tool:
                out.append((i, ("tool", f.tool, row["occurrence"], 0)))
                break
            if not f.tool and row["side"] == "llm":
                out.append((i, ("llm", "", row["turn"], row["attempt"])))
                break
    return out


def label_row(ep: EpisodePlan, run: Any, log: list[dict[str, Any]]) -> tuple[dict[str, Any], list[str], list[str]]:
    problems: list[str] = []
    steps = _steps(run.events, log)
    fired = dict(_fired(ep, log))
    row: dict[str, Any] = {
        "task_id": ep.task_id,
        "fault_type": "none",
        "target": "",
        "step": None,
        "category": ep.category,
        "form": "",
        "family": "",
        "source": "",
    }
    failed = not run.success
    if ep.category in ("faulted_failure", "unfaulted_failure") and not failed:
        problems.append(f"{ep.task_id}: planned {ep.category} but the task succeeded")
    if ep.category in ("clean_success", "benign_success") and failed:
        problems.append(f"{ep.task_id}: planned {ep.category} but failed ({run.reason})")
    if ep.category == "clean_success" and any(r["form"] for r in log):
        problems.append(f"{ep.task_id}: clean episode met a form")
    for i, f in enumerate(ep.faults):
        if i not in fired:
            problems.append(f"{ep.task_id}: planned form {f.form} did not fire")
    if ep.category == "unfaulted_failure":
        row.update(fault_type="none_found", form=ep.slip, family="model_slip")
    if ep.category == "faulted_failure" and ep.root is not None and ep.root in fired:
        form = ALL_FORMS[ep.faults[ep.root].form]
        key = fired[ep.root]
        if key not in steps:
            problems.append(f"{ep.task_id}: root {key} is not among the steps")
        else:
            row.update(
                fault_type=form.label,
                target=form.side,
                step=steps.index(key),
                form=form.name,
                family=form.family,
                source=form.source,
            )
    return row, problems, [f"{k}:{n}" for k, n, _, _ in steps]


async def _run_all(
    plans: list[EpisodePlan], specs: dict[str, world.TaskSpec], ports: dict[str, int], worlds: Path, concurrency: int
) -> dict[str, Any]:
    from .agent import run_episode

    sem = asyncio.Semaphore(concurrency)
    runs = await asyncio.gather(
        *(run_episode(p, specs[p.task_id], ports, worlds / f"{p.task_id}.sqlite", sem) for p in plans)
    )
    return {p.task_id: r for p, r in zip(plans, runs, strict=True)}


def build(db: Path, labels: Path, seed: int, size: int, concurrency: int = 8) -> list[str]:
    import agentchaos_otel

    t0 = time.monotonic()
    plans = episode_plans(seed, size)
    worlds = Path(tempfile.mkdtemp(prefix="round6-worlds-"))
    specs = {
        p.task_id: world.build_world(
            worlds / f"{p.task_id}.sqlite",
            seed,
            p.task_id,
            p.n,
            p.overnight,
            frozenset(p.traps),
            p.airport_hotels,
            p.no_seat_pref,
        )
        for p in plans
    }
    port_file = worlds / "ports.json"
    env = {**os.environ, "OTEL_SDK_DISABLED": "true", "OTEL_TRACES_EXPORTER": "none"}
    server = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "benchmarks.blind.round6.server",
            "--seed",
            str(seed),
            "--size",
            str(size),
            "--worlds",
            str(worlds),
            "--port-file",
            str(port_file),
        ],
        cwd=REPO,
        env=env,
    )
    try:
        while not port_file.exists():
            if server.poll() is not None:
                raise SystemExit("the loopback servers did not start")
            time.sleep(0.1)
        time.sleep(0.1)
        ports = json.loads(port_file.read_text())
        for p in (db, Path(f"{db}.wal")):
            if p.exists():
                p.unlink()
        handle = agentchaos_otel.configure(db=str(db), plan=None, seed=seed, service_name="travel-desk")
        try:
            runs = asyncio.run(_run_all(plans, specs, ports, worlds, concurrency))
        finally:
            handle.shutdown()
    finally:
        server.terminate()
        server.wait(timeout=10)
    problems: list[str] = []
    rows, expect = [], {}
    for p in plans:
        con = world.connect(worlds / f"{p.task_id}.sqlite")
        log = [dict(r) for r in con.execute("SELECT * FROM log ORDER BY seq")]
        con.close()
        row, probs, steps = label_row(p, runs[p.task_id], log)
        rows.append(row)
        problems += probs
        expect[p.task_id] = {
            "steps": steps,
            "success": runs[p.task_id].success,
            "long": p.long,
            "n_faults": len(p.faults),
            "llm_calls": sum(1 for s in steps if s.startswith("llm")),
        }
    rows.sort(key=lambda r: r["task_id"])
    labels.write_text("".join(json.dumps(r, sort_keys=False) + "\n" for r in rows))
    Path(f"{labels}.expect.json").write_text(json.dumps(expect, indent=0, sort_keys=True))
    shutil.rmtree(worlds, ignore_errors=True)
    print(f"build time {time.monotonic() - t0:.1f}s", file=sys.stderr)
    return problems
