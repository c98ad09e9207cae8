"""Build the corpus: world, MCP server, Messages server, every episode traced into DuckDB; then labels.

The root cause's step is read back from the store (``steps`` view): the k-th model request of the
episode or the n-th call of the named tool, as the form fired there.
"""

from __future__ import annotations

import asyncio
import json
import os
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import duckdb
from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client

import agentchaos_otel
from benchmarks.blind.round7 import agent, world
from benchmarks.blind.round7.compose import Spec, compose
from benchmarks.blind.round7.forms import BY_NAME
from benchmarks.blind.round7.llm_server import EpisodePlan, MessagesServer
from benchmarks.blind.round7.local_tools import LocalTools

CONCURRENCY = 10
REPO = Path(__file__).resolve().parents[3]


async def _run_all(specs: list[Spec], world_path: Path) -> dict[str, dict[str, Any]]:
    db = world.connect(world_path)
    for s in specs:
        for o in s.orders:
            db.execute("INSERT INTO orders VALUES (?,?,?)", (o.order_id, s.task_id, json.dumps(o.__dict__)))
        for tool, nth, form in s.tool_faults:
            db.execute("INSERT INTO faults VALUES (?,?,?,?)", (s.task_id, tool, nth, form))
    server = MessagesServer()
    await server.start()
    tools = LocalTools(db)
    params = StdioServerParameters(
        command=sys.executable,
        args=["-m", "benchmarks.blind.round7.mcp_server", str(world_path)],
        cwd=str(REPO),
        env={**os.environ, "OTEL_SDK_DISABLED": "true"},
    )
    outcomes: dict[str, dict[str, Any]] = {}
    sem = asyncio.Semaphore(CONCURRENCY)
    async with stdio_client(params) as (read, write), ClientSession(read, write) as session:
        await session.initialize()

        async def one(s: Spec) -> None:
            plan = EpisodePlan(s.task_id, s.provider, s.persona, s.llm_faults, s.pause_at)
            server.plans[s.task_id] = plan
            run = agent.EpisodeRun(
                s.task_id, s.seed, s.provider, s.max_retries, s.agent_retries, s.ticket(), s.deadline
            )
            async with sem:
                ok, ended = await agent.run_episode(run, server.port, session, tools, s.orders, s.track_only)
            outcomes[s.task_id] = {"success": ok, "ended": ended, "llm_fired": list(plan.fired)}

        await asyncio.gather(*(one(s) for s in specs))
    await server.close()
    fired = db.execute("SELECT task_id, name, nth, form FROM fired WHERE side='tool'").fetchall()
    for task, name, nth, form in fired:
        outcomes[task].setdefault("tool_fired", []).append((name, nth, form))
    db.close()
    return outcomes


def _steps(store: Path) -> dict[str, list[tuple[int, str, str]]]:
    con = duckdb.connect(str(store), read_only=True)
    rows = con.execute("SELECT task_id, step, kind, name FROM steps ORDER BY task_id, step").fetchall()
    con.close()
    out: dict[str, list[tuple[int, str, str]]] = {}
    for task, step, kind, name in rows:
        out.setdefault(task, []).append((int(step), kind, name or ""))
    return out


def _locate(steps: list[tuple[int, str, str]], side: str, name: str, nth: int) -> int | None:
    """The store's step of the ``nth`` (1-based) model request or call of tool ``name``."""
    hits = [
        s for s, kind, n in steps if (kind == "llm" if side == "llm" else kind == "tool" and n.endswith(" " + name))
    ]
    return hits[nth - 1] if len(hits) >= nth else None


def label(spec: Spec, outcome: dict[str, Any], steps: list[tuple[int, str, str]]) -> dict[str, Any]:
    row: dict[str, Any] = {"task_id": spec.task_id}
    if spec.category != "faulted_failure":
        fired = outcome["llm_fired"] or outcome.get("tool_fired")
        absorbed = spec.note.removeprefix("absorbed ") if spec.note.startswith("absorbed ") and fired else ""
        form = BY_NAME.get(absorbed)
        slip = spec.persona.slip
        row.update(
            {
                "fault_type": "none_found" if spec.category == "unfaulted_failure" else "none",
                "target": "",
                "step": None,
                "category": spec.category,
                "form": (form.name if form else "") + (("+" if form else "") + f"slip:{slip}" if slip else ""),
                "family": form.family if form else ("model_slip" if slip else "clean"),
                "source": form.source if form else "",
            }
        )
        return row
    assert spec.root is not None
    if spec.root[0] == "tool":
        tool, nth = spec.root[1]
        form = BY_NAME[next(f for t, n, f in spec.tool_faults if (t, n) == (tool, nth))]
        step = _locate(steps, "tool", tool, nth)
        side = "tool"
    else:
        fault = spec.llm_faults[spec.root[1]]
        form = fault.spec
        attempt = next((a for a, f in outcome["llm_fired"] if f == form.name), None)
        step = _locate(steps, "llm", "", attempt + 1) if attempt is not None else None
        side, tool = "llm", ""
    row.update(
        {
            "fault_type": form.label,
            "target": side,
            "step": step,
            "category": spec.category,
            "form": form.name,
            "family": form.family,
            "source": form.source,
            "target_detail": form.target,
        }
    )
    if tool:
        row["tool_name"] = tool
    if spec.note:
        row["note"] = spec.note
    return row


def build(db_path: Path, labels_path: Path, seed: int, n: int) -> int:
    t0 = time.monotonic()
    specs = compose(seed, n)
    for p in (db_path, Path(str(db_path) + ".wal")):
        if p.exists():
            p.unlink()
    handle = agentchaos_otel.configure(db=str(db_path), plan=None, seed=seed)
    with tempfile.TemporaryDirectory() as tmp:
        world_path = Path(tmp) / "world.sqlite"
        world.init(world_path)
        outcomes = asyncio.run(_run_all(specs, world_path))
    handle.shutdown()
    steps = _steps(db_path)
    rows = [label(s, outcomes[s.task_id], steps.get(s.task_id, [])) for s in specs]
    labels_path.write_text(
        "".join(json.dumps(r, sort_keys=True) + "\n" for r in sorted(rows, key=lambda r: r["task_id"]))
    )
    bad = sum(1 for r in rows if r["category"] == "faulted_failure" and r["step"] is None)
    for s in specs:
        o = outcomes[s.task_id]
        want = s.category in ("clean_success", "benign_success")
        fired = bool(o["llm_fired"] or o.get("tool_fired"))
        if s.note.startswith("absorbed ") and not fired and s.category == "benign_success":
            bad += 1
            print(f"absorbed fault never fired {s.task_id}", file=sys.stderr)
        if s.note.startswith("second fault") and len(o["llm_fired"]) + len(o.get("tool_fired", [])) < 2:
            bad += 1
            print(f"second fault never fired {s.task_id}", file=sys.stderr)
        if s.category == "clean_success" and fired:
            bad += 1
            print(f"fault fired in a clean episode {s.task_id}", file=sys.stderr)
        if o["success"] != want:
            bad += 1
            print(
                f"outcome mismatch {s.task_id} {s.category} ended={o['ended']} llm={o['llm_fired']} "
                f"tool={o.get('tool_fired')} note={s.note} slip={s.persona.slip}",
                file=sys.stderr,
            )
    print(f"built {len(specs)} episodes in {time.monotonic() - t0:.1f}s; {bad} outcome mismatches", file=sys.stderr)
    return bad
