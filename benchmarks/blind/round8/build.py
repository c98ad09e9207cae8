"""Build the corpus: start the loopback model and MCP servers, run every episode traced into DuckDB
(``agentchaos_otel.configure`` + ``episode``, OpenInference's OpenAI instrumentor beside it), grade
each world, and write the labels from what actually fired.
"""

from __future__ import annotations

import asyncio
import json
import logging
import random
import socket
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

from openinference.instrumentation.openai import OpenAIInstrumentor

import agentchaos_otel

from .agent import Outcome, run_episode
from .llm_server import LoopbackModelServer
from .model import ScriptedModel
from .plan import EpisodeSpec, compose
from .providers import call_id
from .runtime import REGISTRY, Runtime
from .tools import McpDesk
from .world import World, make_task

WORKERS = 6


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def runtime_for(spec: EpisodeSpec) -> Runtime:
    world = World(random.Random(spec.world_seed), spec.kind, spec.queue_len)
    task = make_task(world)
    model = ScriptedModel(task, spec.persona, lambda turn, idx: call_id(spec.provider, f"{spec.task_id}/{turn}/{idx}"))
    return Runtime(task_id=spec.task_id, world=world, task=task, model=model, specs=spec.specs,
                   provider=spec.provider, stream_choice=spec.stream, timeout=spec.timeout,
                   max_retries=spec.max_retries, deadline=spec.deadline, slow_turn=spec.slow_turn,
                   slow_s=spec.slow_s)


def label(spec: EpisodeSpec, rt: Runtime, outcome: Outcome) -> tuple[dict[str, Any], list[str]]:
    """The episode's label row, and the problems found (the intended category did not happen)."""
    problems: list[str] = []
    row: dict[str, Any] = {"task_id": spec.task_id, "category": spec.category, "kind": spec.kind,
                           "provider": spec.provider, "llm_calls": sum(1 for s in rt.steps if s[1] == "llm"),
                           "steps": len(rt.steps), "success": outcome.success, "note": spec.note}
    fired = sorted({i for i, _ in rt.firings})
    if spec.category == "faulted_failure":
        root = spec.specs[0]
        steps = [s for i, s in rt.firings if i == 0]
        if outcome.success:
            problems.append(f"{spec.task_id}: meant to fail, succeeded")
        if not steps:
            problems.append(f"{spec.task_id}: root fault never fired")
        step = steps[0] if steps else None
        row.update(fault_type=root.form.label, target=root.form.side, step=step, form=root.form.id,
                   family=root.form.family, source=root.form.source,
                   step_kind="llm" if root.form.side == "llm" else "tool",
                   step_tool=root.tool or None, faults_fired=len(fired))
        if spec.note == "two_faults" and len(fired) < 2:
            row["note"] = "second_fault_not_reached"
    else:
        want = spec.category in ("clean_success", "benign_success")
        if outcome.success != want:
            problems.append(f"{spec.task_id}: {spec.category} but success={outcome.success} ({outcome.reason})")
        if spec.category == "clean_success" and rt.firings:
            problems.append(f"{spec.task_id}: clean episode met a fault")
        row.update(fault_type="none" if want else "none_found", target="", step=None, form="", family="",
                   source="", faults_fired=len(fired))
        if fired:
            row["absorbed_form"] = spec.specs[0].form.id
    if not outcome.success:
        row["failure"] = outcome.reason
    return row, problems


def build(db: Path, labels: Path, seed: int, n: int) -> list[str]:
    logging.getLogger("mcp").setLevel(logging.WARNING)
    logging.getLogger("httpx").setLevel(logging.WARNING)
    logging.getLogger("httpx2").setLevel(logging.WARNING)
    logging.getLogger("openai").setLevel(logging.WARNING)
    logging.getLogger("opentelemetry.attributes").setLevel(logging.ERROR)
    for p in (db, Path(str(db) + ".wal")):
        if p.exists():
            p.unlink()
    handle = agentchaos_otel.configure(db=str(db), plan=None, seed=seed, service_name="support-desk-agent",
                                       metrics=False)
    OpenAIInstrumentor().instrument()
    specs = compose(seed, n)
    rows: list[dict[str, Any]] = []
    problems: list[str] = []
    t0 = time.monotonic()
    with LoopbackModelServer() as llm, McpDesk(_free_port()) as desk:
        def one(spec: EpisodeSpec) -> tuple[dict[str, Any], list[str]]:
            rt = runtime_for(spec)
            REGISTRY[spec.task_id] = rt
            try:
                outcome = asyncio.run(run_episode(rt, llm.port, desk.url, seed))
            except Exception as exc:  # noqa: BLE001 - reported as a build problem, never hidden
                return {"task_id": spec.task_id}, [f"{spec.task_id}: harness error {type(exc).__name__}: {exc}"]
            finally:
                REGISTRY.pop(spec.task_id, None)
            return label(spec, rt, outcome)

        with ThreadPoolExecutor(max_workers=WORKERS) as pool:
            for row, probs in pool.map(one, specs):
                rows.append(row)
                problems += probs
    OpenAIInstrumentor().uninstrument()
    handle.shutdown()
    rows.sort(key=lambda r: r["task_id"])
    labels.write_text("".join(json.dumps(r, ensure_ascii=False, sort_keys=True) + "\n" for r in rows))
    print(f"built {len(rows)} episodes in {time.monotonic() - t0:.1f} s; {len(problems)} problem(s)")
    return problems
