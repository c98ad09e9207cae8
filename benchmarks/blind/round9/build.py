"""Run every planned episode against the loopback server, traced into DuckDB, and write the labels.

Labels come from what happened, by the taxonomy's rules: a success is ``none`` (clean, or benign
when a fault fired on the way); a failure whose planned root fault fired is a faulted failure,
labelled with that fault's type at the step where it first fired; any other failure is
``none_found``. Where the outcome differs from the plan the label follows the outcome and the
build says so.
"""

from __future__ import annotations

import asyncio
import json
import time
from collections import Counter
from pathlib import Path
from typing import Any

from benchmarks.blind.round9.plan import plan
from benchmarks.blind.round9.runner import Outcome, run_episode


def label(o: Outcome) -> dict[str, Any]:
    s = o.spec
    row: dict[str, Any] = {"task_id": s.task_id}
    fired = [f for _, _, f in o.fired]
    if o.success:
        cat = "benign_success" if fired else "clean_success"
        form = s.root if (fired and s.root) else None
        row.update(fault_type="none", target="", step=None, category=cat)
    else:
        first = next(((side, step, f) for side, step, f in o.fired if s.root is not None and f == s.root), None)
        if first is not None and s.category == "faulted_failure":
            side, step, form = first
            row.update(fault_type=form.label, target=side, step=step, category="faulted_failure")
        else:
            form = s.root if fired else None
            row.update(fault_type="none_found", target="", step=None, category="unfaulted_failure")
    if row["category"] == "unfaulted_failure":
        row.update(form=s.persona.slip or (form.name if form else "none"),
                   family="model_slip" if s.persona.slip else (form.family if form else "none"),
                   source="SIMULATED model" if s.persona.slip else (form.source if form else ""))
    else:
        row.update(form=form.name if form else "clean", family=form.family if form else "clean",
                   source=form.source if form else "")
    return row


async def _run_all(specs: list[Any], workers: int) -> list[Outcome]:
    from benchmarks.blind.round9.server import Sim

    sim = Sim()
    gate = asyncio.Semaphore(workers)

    async def one(spec: Any) -> Outcome:
        async with gate:
            return await run_episode(spec, sim)

    def waits(spec: Any) -> int:  # episodes that mostly wait (timeouts, stalls, retries) start first
        return -sum(1 for f in spec.llm_faults.values() if f.kind in ("sleep", "slow", "drop", "http"))

    order = sorted(range(len(specs)), key=lambda k: (waits(specs[k]), k))
    try:
        done = await asyncio.gather(*(one(specs[k]) for k in order))
        return [o for _, o in sorted(zip(order, done, strict=True), key=lambda pair: pair[0])]
    finally:
        sim.close()


def build(db: Path, labels: Path, seed: int, size: int, workers: int) -> int:
    from openinference.instrumentation.langchain import LangChainInstrumentor

    import agentchaos_otel

    t0 = time.monotonic()
    for path in (db, Path(f"{db}.wal")):
        if path.exists():
            path.unlink()
    specs = plan(seed, size)
    handle = agentchaos_otel.configure(db=str(db), plan=None, seed=seed, service_name="frontdesk-agent")
    instrumentor = LangChainInstrumentor()
    instrumentor.instrument()
    try:
        outcomes = asyncio.run(_run_all(specs, workers))
    finally:
        instrumentor.uninstrument()
        handle.shutdown()
    rows = sorted((label(o) for o in outcomes), key=lambda r: r["task_id"])
    labels.write_text("".join(json.dumps(r) + "\n" for r in rows))
    by_id = {o.spec.task_id: o for o in outcomes}
    drift = [r["task_id"] for r in rows if r["category"] != by_id[r["task_id"]].spec.category]
    cats = Counter(r["category"] for r in rows)
    long_ = sum(1 for r in rows if r["category"] == "faulted_failure" and len(by_id[r["task_id"]].llm_steps) >= 15)
    two = sum(1 for r in rows if r["category"] == "faulted_failure" and len(by_id[r["task_id"]].fired) >= 2
              and by_id[r["task_id"]].spec.note == "two_faults")
    forms = {r["form"] for r in rows if r["category"] == "faulted_failure"}
    fams = {r["family"] for r in rows if r["category"] == "faulted_failure"}
    print(f"{len(rows)} episodes in {time.monotonic() - t0:.0f} s: {dict(sorted(cats.items()))}")
    print(f"faulted: {long_} long (>=15 LLM requests), {two} with two faults, {len(forms)} root forms, "
          f"{len(fams)} families; labels by type {dict(sorted(Counter(r['fault_type'] for r in rows).items()))}")
    if drift:
        print(f"{len(drift)} episodes ended otherwise than planned (labelled by outcome): {', '.join(drift[:20])}")
    return 0
