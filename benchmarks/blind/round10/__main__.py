"""Build blind round 10 (``--db D --labels L --seed S [--size N]``) or check it (``--check``)."""

from __future__ import annotations

import argparse
import asyncio
import json
import logging
import os
import socket
import sys
import threading
import time
from pathlib import Path
from typing import Any


def _port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _serve(app: Any, port: int) -> None:
    import uvicorn

    server = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=port, log_level="critical",
                                           lifespan="on" if hasattr(app, "router") else "off"))
    threading.Thread(target=server.run, daemon=True).start()
    for _ in range(200):
        if server.started:
            return
        time.sleep(0.02)


async def _build(specs: list[Any], llm_port: int, mcp_port: int, width: int) -> list[dict[str, Any]]:
    from benchmarks.blind.round10.agent import run_episode

    sem = asyncio.Semaphore(width)

    async def one(spec: Any) -> dict[str, Any]:
        async with sem:
            return await run_episode(spec, llm_port, mcp_port)

    return list(await asyncio.gather(*(one(s) for s in specs)))


def build(db: Path, labels: Path, seed: int, size: int) -> int:
    os.environ.pop("OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT", None)
    from openinference.instrumentation.openai_agents import OpenAIAgentsInstrumentor

    import agentchaos_otel
    from benchmarks.blind.round10.llm_server import App
    from benchmarks.blind.round10.plan import compose
    from benchmarks.blind.round10.tools import build_mcp_server

    for name in ("httpx", "httpx2", "mcp", "agents", "openai", "uvicorn"):
        logging.getLogger(name).setLevel(logging.ERROR)
    started = time.monotonic()
    if db.exists():
        db.unlink()
    handle = agentchaos_otel.configure(db=str(db), plan=None, seed=seed, service_name="data-platform-assistant")
    OpenAIAgentsInstrumentor().instrument()
    llm_port, mcp_port = _port(), _port()
    _serve(App(), llm_port)
    _serve(build_mcp_server().streamable_http_app(stateless_http=True), mcp_port)
    composed = compose(seed, size)
    results = asyncio.run(_build([s for s, _ in composed], llm_port, mcp_port, 6))
    handle.shutdown()
    rows, problems = [], []
    for (spec, label), res in zip(composed, results, strict=True):
        cat = label["category"]
        failed = not res["success"]
        if cat == "faulted_failure":
            if len(res["fault_steps"]) < len(spec.llm_faults) + len(spec.tool_faults):
                problems.append(f"{spec.task_id}: a planned fault never fired")
            if not failed:   # the fault was absorbed: by the taxonomy a success has no root cause
                label = {**label, "category": "benign_success", "fault_type": "none", "target": "", "family": "benign"}
            else:
                first = min(res["fault_steps"])
                kind, tool = res["events"][first]
                label = {**label, "step": first, "step_tool": tool}
        elif cat in ("clean_success", "benign_success") and failed:
            problems.append(f"{spec.task_id}: {cat} failed ({res['error']})")
            label = {**label, "category": "unfaulted_failure", "fault_type": "none_found"}
        elif cat == "unfaulted_failure" and not failed:
            label = {**label, "category": "clean_success", "fault_type": "none", "family": "clean"}
        row = {"task_id": label["task_id"], "fault_type": label.get("fault_type", "none"),
               "target": label.get("target", ""), "step": label.get("step"), "category": label["category"],
               "form": label.get("form", ""), "family": label.get("family", ""), "source": label.get("source", ""),
               "success": res["success"], "n_steps": len(res["events"])}
        if "second_form" in label and row["category"] == "faulted_failure":
            row["second_form"] = label["second_form"]
        if "step_tool" in label:
            row["step_tool"] = label["step_tool"]
        if row["fault_type"] in ("none", "none_found"):
            row["target"] = ""
        rows.append(row)
    rows.sort(key=lambda r: r["task_id"])
    labels.write_text("".join(json.dumps(r, sort_keys=True) + "\n" for r in rows))
    counts: dict[str, int] = {}
    for r in rows:
        counts[r["category"]] = counts.get(r["category"], 0) + 1
    print(json.dumps({"episodes": len(rows), "categories": counts, "seconds": round(time.monotonic() - started, 1),
                      "notes": problems}, indent=1))
    return 0


def check(db: Path, labels: Path) -> int:
    import duckdb

    from benchmarks.blind.round10.forms import ALL_FORMS

    con = duckdb.connect(str(db), read_only=True)
    cols = [r[0] for r in con.execute("DESCRIBE steps").fetchall()]
    rows = [json.loads(x) for x in labels.read_text().splitlines() if x.strip()]
    problems = []
    if [r["task_id"] for r in rows] != sorted(r["task_id"] for r in rows):
        problems.append("labels not sorted by task_id")
    ep_cols = [r[0] for r in con.execute("DESCRIBE episodes").fetchall()]
    succ_col = "success" if "success" in ep_cols else None
    for r in rows:
        if r["category"] != "faulted_failure":
            continue
        q = con.execute("SELECT * FROM steps WHERE task_id = ? AND step = ?", [r["task_id"], r["step"]]).fetchall()
        if len(q) != 1:
            problems.append(f"{r['task_id']}: step {r['step']} not found once in steps ({len(q)})")
            continue
        step = dict(zip(cols, q[0], strict=True))
        side = ALL_FORMS[r["form"]].side
        if step["kind"] != side:
            problems.append(f"{r['task_id']}: step {r['step']} is {step['kind']}, label says {side}")
        elif side == "tool" and ALL_FORMS[r["form"]].how == "data" and step["status_code"] == "ERROR":
            problems.append(f"{r['task_id']}: step {r['step']} failed where the label says a data fault was shown")
        elif side == "tool" and step["name"].split(" ")[-1] != r.get("step_tool"):
            problems.append(f"{r['task_id']}: step {r['step']} is {step['name']}, label says {r.get('step_tool')}")
    stored = dict(con.execute("SELECT task_id, count(*) FROM steps GROUP BY 1").fetchall())
    dense = dict(con.execute("SELECT task_id, max(step) + 1 = count(DISTINCT step) FROM steps GROUP BY 1").fetchall())
    for r in rows:
        if stored.get(r["task_id"], 0) != r["n_steps"]:
            problems.append(f"{r['task_id']}: {stored.get(r['task_id'], 0)} steps stored, {r['n_steps']} made")
        elif not dense.get(r["task_id"]):
            problems.append(f"{r['task_id']}: steps not dense")
    if succ_col:
        got = dict(con.execute(f"SELECT task_id, {succ_col} FROM episodes").fetchall())
        for r in rows:
            if r["task_id"] not in got:
                problems.append(f"{r['task_id']}: no episode in the store")
            elif bool(got[r["task_id"]]) != r["success"]:
                problems.append(f"{r['task_id']}: stored outcome differs from the label")
    for p in problems:
        print(p)
    print(f"{len(rows)} labels, {len(problems)} problems")
    return 1 if problems else 0


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__)
    p.add_argument("--db", type=Path, required=True)
    p.add_argument("--labels", type=Path, required=True)
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--size", type=int, default=320)
    p.add_argument("--check", action="store_true")
    a = p.parse_args(argv)
    return check(a.db, a.labels) if a.check else build(a.db, a.labels, a.seed, a.size)


if __name__ == "__main__":
    sys.exit(main())
