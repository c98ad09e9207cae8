"""Build the corpus: run every episode traced into DuckDB, then write the labels and check them."""

from __future__ import annotations

import asyncio
import json
import logging
import sys
import time
from collections import Counter
from pathlib import Path
from typing import Any

from .corpus import build_specs, label_for
from .forms import FORMS

LLM_TARGETS = {"content", "tool_calls", "http", "stream"}


def _quiet() -> None:
    for name in ("httpx", "httpx2", "mcp", "uvicorn", "uvicorn.error", "uvicorn.access", "openai", "anthropic",
                 "agentchaos_otel"):
        logging.getLogger(name).setLevel(logging.ERROR)
    logging.getLogger().setLevel(logging.ERROR)


async def _run_all(specs: list[dict[str, Any]], model_port: int, mcp_url: str, concurrency: int,
                   progress: bool) -> dict[str, dict[str, Any]]:
    from .episode import run_episode

    sem = asyncio.Semaphore(concurrency)
    results: dict[str, dict[str, Any]] = {}
    done = 0

    async def one(spec: dict[str, Any]) -> None:
        nonlocal done
        async with sem:
            try:
                results[spec["task_id"]] = await run_episode(spec, model_port, mcp_url)
            except Exception as e:  # a bug of ours: recorded, reported, never silently labelled
                results[spec["task_id"]] = {"success": None, "why": f"harness error {type(e).__name__}: {e}",
                                            "events": [], "final": None}
            done += 1
            if progress and done % 40 == 0:
                print(f"  {done}/{len(specs)} episodes", file=sys.stderr, flush=True)

    await asyncio.gather(*(one(s) for s in specs))
    return results


def store_steps(db: Path) -> dict[str, list[tuple[int, str]]]:
    import duckdb

    con = duckdb.connect(str(db), read_only=True)
    try:
        rows = con.execute("SELECT task_id, step, kind FROM steps ORDER BY task_id, step").fetchall()
    finally:
        con.close()
    out: dict[str, list[tuple[int, str]]] = {}
    for tid, step, kind in rows:
        out.setdefault(tid, []).append((int(step), kind))
    return out


def verify(specs: list[dict[str, Any]], results: dict[str, dict[str, Any]], steps: dict[str, list[tuple[int, str]]]
           ) -> list[str]:
    problems = []
    for s in specs:
        tid = s["task_id"]
        r = results.get(tid, {})
        ev = r.get("events", [])
        want_success = s["category"] in ("clean_success", "benign_success")
        if r.get("success") is not want_success:
            problems.append(f"{tid} [{s['category']}] outcome {r.get('success')}: {r.get('why')}")
        fired = {e["fault"] for e in ev if e.get("fault")}
        declared = {f["id"] for f in s["llm_faults"] + s["tool_faults"]}
        if s["category"] == "clean_success" and fired:
            problems.append(f"{tid} clean episode met a fault")
        if s["category"] in ("benign_success",) and not fired:
            problems.append(f"{tid} benign episode met no fault")
        if s["category"] == "faulted_failure":
            if s["root"] not in fired:
                problems.append(f"{tid} root fault {s['root']} never fired")
            if s["meta"].get("two_fault") and fired != declared:
                problems.append(f"{tid} two-fault episode fired {sorted(fired)} of {sorted(declared)}")
        got = [k for _, k in steps.get(tid, [])]
        idx = [i for i, _ in steps.get(tid, [])]
        if idx != list(range(len(idx))):
            problems.append(f"{tid} stored steps are not numbered 0..n-1: {idx[:8]}")
        if got != [e["kind"] for e in ev]:
            problems.append(f"{tid} step kinds differ: store {''.join(k[0] for k in got)} vs run "
                            f"{''.join(e['kind'][0] for e in ev)}")
    return problems


def build(db: Path, labels: Path, seed: int, episodes: int, concurrency: int = 8, progress: bool = True) -> int:
    import agentchaos_otel

    from .llm_server import ModelServer
    from .mcp_server import McpHttpServer

    t0 = time.monotonic()
    specs = build_specs(seed, episodes)
    for p in (db, Path(str(db) + ".wal")):
        if p.exists():
            p.unlink()
    db.parent.mkdir(parents=True, exist_ok=True)
    ms = ModelServer()
    ms.start()
    mc = McpHttpServer()
    mc.start()
    _quiet()
    handle = agentchaos_otel.configure(db=str(db), plan=None, seed=0, metrics=False)
    _quiet()
    try:
        results = asyncio.run(_run_all(specs, ms.port, mc.url, concurrency, progress))
    finally:
        handle.shutdown()
        mc.stop()
        ms.stop()
    steps = store_steps(db)
    problems = verify(specs, results, steps)
    rows = []
    for s in specs:
        try:
            rows.append(label_for(s, results[s["task_id"]].get("events", [])))
        except StopIteration:
            rows.append({"task_id": s["task_id"], "fault_type": "none", "category": s["category"],
                         "note": "root fault not found"})
    rows.sort(key=lambda r: r["task_id"])
    labels.parent.mkdir(parents=True, exist_ok=True)
    with labels.open("w", encoding="utf-8") as fh:
        for r in rows:
            fh.write(json.dumps(r, ensure_ascii=False, sort_keys=False) + "\n")
    report = {s["task_id"]: {"category": s["category"], "success": results[s["task_id"]].get("success"),
                             "why": results[s["task_id"]].get("why"),
                             "events": ["".join(e["kind"][0] for e in results[s["task_id"]].get("events", []))]}
              for s in specs}
    Path(str(labels) + ".run.json").write_text(json.dumps({"seed": seed, "episodes": len(specs),
                                                          "seconds": round(time.monotonic() - t0, 1),
                                                          "problems": problems, "episodes_detail": report},
                                                         indent=1, ensure_ascii=False))
    print(summary(specs, rows, time.monotonic() - t0), file=sys.stderr)
    if problems:
        print(f"{len(problems)} problem(s):", file=sys.stderr)
        for p in problems[:60]:
            print("  " + p, file=sys.stderr)
        return 1
    return 0


def summary(specs: list[dict[str, Any]], rows: list[dict[str, Any]], seconds: float) -> str:
    cat = Counter(r["category"] for r in rows)
    lab = Counter(r["fault_type"] for r in rows if r["category"] == "faulted_failure")
    prov = Counter(s["provider"] for s in specs)
    tools = Counter(s["tools"] for s in specs)
    fam = Counter(r.get("family") for r in rows if r["category"] == "faulted_failure")
    side = Counter("llm" if r.get("target") in LLM_TARGETS else "tool" for r in rows
                   if r["category"] == "faulted_failure")
    forms = {r["form"] for r in rows if r["category"] == "faulted_failure"}
    long_ = sum(1 for s in specs if s["meta"].get("long") and s["category"] == "faulted_failure")
    two = sum(1 for s in specs if s["meta"].get("two_fault"))
    lines = [f"built {len(rows)} episodes in {seconds:.0f}s",
             f"categories: {dict(cat)}", f"faulted labels: {dict(sorted(lab.items()))}",
             f"faulted side: {dict(side)}; distinct root forms: {len(forms)} of {len(FORMS)} catalogued",
             f"families: {dict(sorted(fam.items()))}", f"providers: {dict(prov)}; tools: {dict(tools)}",
             f"long faulted traces: {long_}; two-fault episodes: {two}"]
    return "\n".join(lines)


def check(db: Path, labels: Path) -> int:
    """Every labelled step exists in the store with the kind its target implies; outcomes match categories."""
    import duckdb

    rows = [json.loads(ln) for ln in labels.read_text(encoding="utf-8").splitlines() if ln.strip()]
    con = duckdb.connect(str(db), read_only=True)
    try:
        steps = {(t, int(s)): k for t, s, k in con.execute("SELECT task_id, step, kind FROM steps").fetchall()}
        eps = dict(con.execute("SELECT task_id, success FROM episodes").fetchall())
    finally:
        con.close()
    bad = []
    for r in rows:
        tid = r["task_id"]
        if tid not in eps:
            bad.append(f"{tid}: no episode in the store")
            continue
        want_success = r["category"] in ("clean_success", "benign_success")
        if bool(eps[tid]) is not want_success:
            bad.append(f"{tid}: stored success={eps[tid]} but category {r['category']}")
        if r["fault_type"] == "none":
            if r["category"] == "faulted_failure":
                bad.append(f"{tid}: faulted_failure without a fault type")
            continue
        kind = steps.get((tid, int(r["step"])))
        want = "llm" if r.get("target") in LLM_TARGETS else "tool"
        if kind is None:
            bad.append(f"{tid}: step {r['step']} not in the store")
        elif kind != want:
            bad.append(f"{tid}: step {r['step']} is {kind}, label target {r.get('target')} needs {want}")
    print(f"checked {len(rows)} labels against {db}: {len(bad)} problem(s)", file=sys.stderr)
    for b in bad[:50]:
        print("  " + b, file=sys.stderr)
    return 1 if bad else 0
