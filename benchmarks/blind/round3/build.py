"""Build the corpus: run every episode of the design against the loopback model, then label it."""

from __future__ import annotations

import asyncio
import json
import os
import time
from pathlib import Path
from typing import Any

import agentchaos_otel
from benchmarks.blind.round3.compose import Spec, build_world, compose, form_of
from benchmarks.blind.round3.grade import expectations
from benchmarks.blind.round3.policy import Play
from benchmarks.blind.round3.runner import run_agent, run_episode
from benchmarks.blind.round3.runtime import LLM_BY_ID, TOOL_BY_ID, Runtime
from benchmarks.blind.round3.server import ModelServer, Reply

CONCURRENCY = 12
STAGGER_S = 0.15   # the first wave starts one by one: agents built all at once would slow every first call
SUCCESS_CATEGORIES = ("clean_success", "benign_success")


async def _run_all(specs: list[Spec], db: Path, seed: int) -> list[Runtime]:
    registry: dict[str, Runtime] = {}

    async def handler(path: str, headers: dict[str, str], body: bytes) -> Reply:
        rt = registry.get(headers.get("x-shop-session", ""))
        if rt is None or not path.endswith("/chat/completions"):
            return Reply(status=404, body={"error": {"message": "unknown session", "type": "invalid_request_error"}})
        return await rt.on_request(json.loads(body))

    server = ModelServer(handler)
    port = await server.start()
    await warm_up(port, registry)
    handle = agentchaos_otel.configure(db=str(db), plan=None, seed=seed, service_name="shop-fulfilment")
    sem = asyncio.Semaphore(CONCURRENCY)

    async def one(k: int, spec: Spec) -> Runtime:
        if k < CONCURRENCY:
            await asyncio.sleep(STAGGER_S * k)
        async with sem:
            world = build_world(spec)
            rt = Runtime(spec.task_id, Play(spec.task, spec.persona), world, spec.injections,
                         seed=spec.world_seed ^ 0x5EED, expected=expectations(spec.task, world))
            registry[spec.task_id] = rt
            await run_episode(rt, port, streaming=spec.streaming, sdk_retries=spec.sdk_retries,
                              prompt=spec.task.prompt(), attributes={"shop.task.kind": spec.task.kind})
            return rt

    order = sorted(range(len(specs)), key=lambda k: (_waits(specs[k]), k))
    try:
        done = await asyncio.gather(*(one(rank, specs[k]) for rank, k in enumerate(order)))
        by_spec = dict(zip(order, done, strict=True))
        return [by_spec[k] for k in range(len(specs))]
    finally:
        handle.shutdown()
        await server.stop()


def _waits(spec: Spec) -> int:
    """0 for episodes that spend long waiting (stalls, slow replies, retried errors): they start first."""
    for inj in spec.injections:
        form = form_of(inj)
        if getattr(form, "kind", "") in ("stall", "slow", "stalled") or (inj.side == "llm" and inj.times > 1):
            return 0
    return 1 if spec.task.kind == "batch" else 2


async def warm_up(port: int, registry: dict[str, Runtime]) -> None:
    """One untraced fulfil run, plain and streamed, so that no first call of the corpus pays for imports."""
    from benchmarks.blind.round3.compose import Composer

    spec = Composer(0, 1).clean(0)
    spec.task = type(spec.task)("stock_report")
    for streaming in (False, True):
        spec.task_id = f"warm-up-{streaming}"
        world = build_world(spec)
        rt = Runtime(spec.task_id, Play(spec.task, spec.persona), world, [], seed=0,
                     expected=expectations(spec.task, world))
        registry[spec.task_id] = rt
        await run_agent(rt, port, streaming=streaming, sdk_retries=0, prompt=spec.task.prompt())
        del registry[spec.task_id]


def label(spec: Spec, rt: Runtime) -> tuple[dict[str, Any], list[str]]:
    """The label row of one episode, and what went against the design."""
    problems: list[str] = []
    ok = bool(rt.outcome and rt.outcome[0])
    row: dict[str, Any] = {"task_id": spec.task_id, "fault_type": "", "target": "", "step": None,
                           "category": spec.category, "form": "", "family": "", "source": "", "shape": spec.shape}
    fired = [e for e in rt.ledger if e.form]
    absorbed = [e.form for e in fired if e.role == "absorbed"]
    if absorbed:
        row["absorbed"] = absorbed
    if spec.category in SUCCESS_CATEGORIES and not ok:
        problems.append(f"{spec.task_id}: designed {spec.category} but failed ({rt.outcome})")
    if spec.category not in SUCCESS_CATEGORIES and ok:
        problems.append(f"{spec.task_id}: designed {spec.category} but succeeded")
    if spec.category == "clean_success":
        row["fault_type"] = "none"
        if fired:
            problems.append(f"{spec.task_id}: clean episode met {fired[0].form}")
    elif spec.category == "benign_success":
        row["fault_type"] = "none"
        if spec.injections and not fired:
            problems.append(f"{spec.task_id}: benign fault never fired")
        if spec.persona.flaw == "slip_once":  # the model's own malformed call, corrected on pydantic-ai's retry
            row["form"], row["family"] = "own_slip_corrected", "agent_own_slip"
        if fired:
            row["form"] = fired[0].form
            known = LLM_BY_ID.get(fired[0].form) or TOOL_BY_ID.get(fired[0].form)
            row["family"] = known.family if known else "optional_field"
            row["source"] = known.source if known else ""
    elif spec.category == "unfaulted_failure":
        row["fault_type"] = "none_found"
        row["form"] = f"own_{spec.persona.flaw}"
        row["family"] = "agent_own_failure"
        if any(e.role in ("root", "second") for e in fired):
            problems.append(f"{spec.task_id}: unfaulted episode met a root fault")
    else:
        root = spec.root
        assert root is not None
        hit = [e for e in rt.ledger if e.role == "root"]
        if not hit:
            problems.append(f"{spec.task_id}: root {root.form} never fired")
        else:
            form = form_of(root)
            first = hit[0]
            before = [e for e in fired if e.step < first.step and e.role != "absorbed"]
            if before:
                problems.append(f"{spec.task_id}: {before[0].form} fired before the root")
            row.update(fault_type=form.label, target=form.side, step=first.step, form=form.id, family=form.family,
                       source=form.source, surface=form.surface)
            if first.kind != form.side:
                problems.append(f"{spec.task_id}: root step {first.step} is a {first.kind} step")
        if spec.shape == "two_fault" and not any(e.role == "second" for e in rt.ledger):
            problems.append(f"{spec.task_id}: second fault never fired")
    return row, problems


def build(db: Path, labels: Path, seed: int, size: int) -> int:
    os.environ["OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT"] = "true"
    for path in (db, labels, ledger_path(labels)):
        if path.exists():
            path.unlink()
    started = time.monotonic()
    specs = compose(seed, size)
    rts = asyncio.run(_run_all(specs, db, seed))
    rows, problems = [], []
    with ledger_path(labels).open("w") as ledger:
        for spec, rt in zip(specs, rts, strict=True):
            row, bad = label(spec, rt)
            rows.append(row)
            problems += bad
            ledger.write(json.dumps({"task_id": spec.task_id, "steps": [[e.kind, e.name, e.form] for e in rt.ledger],
                                     "outcome": list(rt.outcome or ())}, ensure_ascii=False) + "\n")
    labels.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows))
    took = time.monotonic() - started
    counts: dict[str, int] = {}
    for r in rows:
        counts[r["category"]] = counts.get(r["category"], 0) + 1
    print(f"built {len(rows)} episodes in {took:.1f}s: {counts}")
    for p in problems:
        print("problem:", p)
    return 1 if problems else 0


def ledger_path(labels: Path) -> Path:
    return labels.with_name(labels.name + ".ledger.jsonl")
