"""Run every planned episode against the loopback servers, traced into DuckDB, and write the labels.

The labels come from the plan and from what the servers and tools recorded while the episode ran
(which turn and call the root-cause form hit: its index in the episode's start order is the step),
never from the store. An episode whose outcome is not the planned one, or whose planned fault did
not land where planned, is a build problem: the build exits non-zero rather than relabel it.
"""

from __future__ import annotations

import asyncio
import json
import logging
import os
import time
from pathlib import Path
from typing import Any

from benchmarks.blind.round4 import registry
from benchmarks.blind.round4.compose import Spec, plan
from benchmarks.blind.round4.forms_llm import LLM_FORMS
from benchmarks.blind.round4.toolside import form_label

CONCURRENCY = 8
QUIET = ("httpx", "httpx2", "mcp", "uvicorn", "uvicorn.error", "uvicorn.access", "anthropic")


def prompt_for(spec: Spec, task: dict[str, Any]) -> str:
    what = {
        "rollback": f"Incident {task.get('incident')} reports elevated errors. Find the bad deploy, roll back to "
        "the last healthy version and mark the incident mitigated.",
        "triage": f"Triage incident {task.get('incident')} on {task.get('service')}: find the dominant error "
        "code in the logs, page the owning team, open a ticket at the incident's priority.",
        "capacity": "Weekly capacity review: for each listed service, scale it so the 15-minute CPU peak "
        "would sit at the target utilisation, then file one review ticket.",
        "postmortem": "Postmortem sweep: close every listed incident that is resolved (not the others), then "
        "file one summary ticket.",
    }[spec.kind]
    return f"{what}\n<task>{json.dumps(task, sort_keys=True)}</task>"


def _source(name: str) -> tuple[str, str, str, str]:
    """(label, family, source, surface) of a form."""
    if name in LLM_FORMS:
        f = LLM_FORMS[name]
        return f.label, f.family, f.source, f.target
    label, family, source = form_label(name)
    return label, family, source, "tool_result"


def label_row(spec: Spec, script: registry.Script, result: dict[str, Any]) -> tuple[dict[str, Any], list[str]]:
    problems: list[str] = []
    ev = script.events
    llm_calls = sum(1 for e in ev if e["kind"] == "llm")
    row: dict[str, Any] = {
        "task_id": spec.task_id,
        "category": spec.category,
        "n_steps": len(ev),
        "n_llm_calls": llm_calls,
        "task_kind": spec.kind,
    }
    if any(e.get("mismatch") for e in ev):
        problems.append(f"{spec.task_id}: a form landed on a call it does not fit")
    if result["success"] != spec.expect_success:
        why = result["aborted"] or result["final"][:80]
        problems.append(f"{spec.task_id}: planned {spec.category} but success={result['success']} ({why})")
    if spec.category == "faulted_failure":
        roots = [i for i, e in enumerate(ev) if e["role"] == "root"]
        if not roots:
            problems.append(f"{spec.task_id}: the root-cause form never fired")
            return row, problems
        step = roots[0]
        name = ev[step]["fault"]
        label, family, source, surface = _source(name)
        seconds = [i for i, e in enumerate(ev) if e["role"] == "second"]
        if any(f.role == "second" for f in [*spec.llm_faults.values(), *spec.tool_faults.values()]) and (
            not seconds or seconds[0] <= step
        ):
            problems.append(f"{spec.task_id}: the second fault did not fire after the root")
        row.update(
            fault_type=label,
            target="llm" if ev[step]["kind"] == "llm" else "tool",
            step=step,
            form=name,
            family=family,
            source=source,
            surface=surface,
            step_kind=ev[step]["kind"],
            tool=ev[step].get("name"),
            two_faults=bool(seconds),
            second_form=ev[seconds[0]]["fault"] if seconds else None,
        )
        return row, problems
    absorbed = [e["fault"] for e in ev if e["role"] == "absorbed"]
    planned_absorbed = [f for f in [*spec.llm_faults.values(), *spec.tool_faults.values()] if f.role == "absorbed"]
    if planned_absorbed and not absorbed:
        problems.append(f"{spec.task_id}: the absorbed form never fired")
    if spec.category == "clean_success" and any(e["fault"] for e in ev):
        problems.append(f"{spec.task_id}: a clean episode met a fault")
    form = absorbed[0] if absorbed else ""
    family, source = "", ""
    if form:
        _, family, source, _ = _source(form)
    row.update(
        fault_type="none_found" if spec.category == "unfaulted_failure" else "none",
        target="",
        step=None,
        form=form or spec.note,
        family=family or ("model_slip" if spec.note.startswith("slip:") else ""),
        source=source,
        note=spec.note,
    )
    return row, problems


async def _run_all(specs: list[Spec], model_url: str, mcp_url: str) -> list[dict[str, Any]]:
    import anthropic

    from benchmarks.blind.round4.agent import run_episode

    client = anthropic.AsyncAnthropic(
        base_url=model_url, api_key="sk-ant-loopback-placeholder", max_retries=2, timeout=3.0
    )
    gate = asyncio.Semaphore(CONCURRENCY)

    async def one(spec: Spec) -> dict[str, Any]:
        async with gate:
            world = spec.world()
            registry.register(
                registry.Script(
                    spec.task_id,
                    world,
                    spec.temper,
                    dict(spec.llm_faults),
                    dict(spec.tool_faults),
                    frozenset(spec.stream_turns),
                )
            )
            try:
                return await run_episode(client, mcp_url, spec.task_id, prompt_for(spec, world.task), spec.seed)
            except Exception as exc:  # a crash of the harness is a build problem, reported per episode
                return {"success": None, "aborted": f"harness error: {type(exc).__name__}: {exc}", "final": ""}

    return await asyncio.gather(*(one(s) for s in specs))


def build(db: Path, labels: Path, seed: int, size: int) -> int:
    import agentchaos_otel
    from benchmarks.blind.round4.mcp_server import McpHttpServer
    from benchmarks.blind.round4.server import ModelServer

    for name in QUIET:
        logging.getLogger(name).setLevel(logging.WARNING)
    started = time.monotonic()
    specs = plan(seed, size)
    for path in (db, Path(f"{db}.wal")):
        if path.exists():
            path.unlink()
    db.parent.mkdir(parents=True, exist_ok=True)
    os.environ.setdefault("OTEL_SERVICE_NAME", "ops-responder")
    handle = agentchaos_otel.configure(db=str(db), plan=None, seed=seed)
    try:
        with ModelServer() as model_server, McpHttpServer() as mcp_server:
            results = asyncio.run(_run_all(specs, model_server.url, mcp_server.url))
    finally:
        handle.shutdown()
    rows, problems = [], []
    for spec, result in zip(specs, results, strict=True):
        row, probs = label_row(spec, registry.get(spec.task_id), result)
        rows.append(row)
        problems += probs
    rows.sort(key=lambda r: r["task_id"])
    labels.parent.mkdir(parents=True, exist_ok=True)
    labels.write_text("".join(json.dumps(r, sort_keys=True) + "\n" for r in rows))
    print(summary(rows, time.monotonic() - started))
    for p in problems:
        print("problem:", p)
    print(f"{len(problems)} problems")
    return 1 if problems else 0


def summary(rows: list[dict[str, Any]], seconds: float) -> str:
    from collections import Counter

    cats = Counter(r["category"] for r in rows)
    faulted = [r for r in rows if r["category"] == "faulted_failure" and "form" in r]
    long_ = sum(1 for r in faulted if 15 <= r["n_llm_calls"] <= 30 and r["n_steps"] - r["step"] >= 12)
    forms = {r["form"] for r in faulted}
    families = {r["family"] for r in faulted}
    labels = Counter(r["fault_type"] for r in faulted)
    sides = Counter(r["target"] for r in faulted)
    return (
        f"{len(rows)} episodes in {seconds:.0f} s: {dict(sorted(cats.items()))}\n"
        f"faulted: {len(faulted)}; long (15-30 LLM calls, root >=12 steps before the end): {long_}; "
        f"two faults: {sum(1 for r in faulted if r.get('two_faults'))}\n"
        f"distinct root forms: {len(forms)} in {len(families)} families; sides: {dict(sides)}\n"
        f"labels: {dict(sorted(labels.items()))}"
    )

