"""Phoenix round trip: a demo trace file with verdicts, exported to a real Phoenix, read back.

CI runs the same path as ``tests/agentchaos_otel/test_phoenix.py`` (``.ci/run`` installs Phoenix in
``.phoenix-venv``); this script is the longer check with a printed record, for a Phoenix
installed anywhere:

    python3 -m venv .phoenix-venv && .phoenix-venv/bin/pip install arize-phoenix==20.26.1
    python -m benchmarks.integration.phoenix_roundtrip [--phoenix-python PATH] [--episodes 16]

What it does, all on loopback: starts Phoenix with a fresh working directory; runs the demo
(reference agent against the bundled SIMULATED model, content capture on) into a temporary
traces.duckdb; stores the rule diagnoser's verdicts; exports the file the way ``agentchaos
traces export --project P`` does; then reads everything back through Phoenix's REST API
(project ``P``) and checks that:

- every exported span arrived in project P and none in ``default``, with its status (the ERROR
  spans are the stored ERROR spans), and LLM spans show their input messages;
- each diagnosis is a span annotation on the blamed span and on the episode root (label = fault
  type, score = confidence, annotator CODE), and the root's status message starts with it;
- importing Phoenix's own span JSON back (``traces import``'s OpenInference reader) and
  diagnosing it gives the same fault type and step for every diagnosed episode.

Exit code 0 when every check passes; each check prints one line.
"""

from __future__ import annotations

import argparse
import os
import shutil
import tempfile
import time
from pathlib import Path
from typing import Any

from rich.console import Console

from agentchaos_otel import attributes as A
from benchmarks.integration.phoenix_server import PhoenixServer, phoenix_python

PROJECT = "agentchaos-roundtrip"


def _flat(span: dict[str, Any]) -> dict[str, Any]:
    from agentchaos_otel.store.importers.openinference import flatten

    out: dict[str, Any] = {}
    flatten(span.get("attributes") or {}, "", out)
    return out


def main() -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n")[0])
    parser.add_argument("--phoenix-python", default=phoenix_python(),
                        help="Python of an environment with arize-phoenix installed (default: .phoenix-venv)")
    parser.add_argument("--episodes", type=int, default=16)
    parser.add_argument("--keep", action="store_true", help="keep the working directory")
    args = parser.parse_args()
    if not args.phoenix_python:
        parser.error("no arize-phoenix environment: create .phoenix-venv or pass --phoenix-python")
    console = Console()
    for key in [k for k in os.environ if k.startswith("OTEL_")]:
        del os.environ[key]
    os.environ[A.CAPTURE_CONTENT_ENV] = "true"  # messages must be on the spans to show in Phoenix

    from agentchaos_otel.cli.demo import run_demo
    from agentchaos_otel.phoenix import PhoenixClient
    from agentchaos_otel.store.database.connect import connect, open_store
    from agentchaos_otel.store.exporter import insert_rows
    from agentchaos_otel.store.importers.openinference import rows_from_phoenix
    from agentchaos_otel.traces_export import export_file
    from diagnosers.base import diagnose_episodes
    from diagnosers.rules import RuleDiagnoser
    from diagnosers.tracefile import load, write_diagnoses

    work = Path(tempfile.mkdtemp(prefix="phoenix-roundtrip-"))
    db = work / "demo.duckdb"
    checks: list[tuple[str, bool, str]] = []
    with PhoenixServer(args.phoenix_python, work / "phoenix") as server:
        console.print(f"Phoenix ready in {server.started_s:.1f} s at {server.url}")
        run_demo(db=db, episodes=args.episodes, seed=0, workers=2, base_url=None, model=None,
                 api_key_env="OPENAI_API_KEY", console=Console(quiet=True))
        stored = diagnose_episodes(RuleDiagnoser(), [e for e in load(db) if e.success is not True])
        write_diagnoses(db, stored)
        t0 = time.monotonic()
        for line in export_file(db, endpoint=server.url, project=PROJECT):
            console.print(line, markup=False)
        exported_s = time.monotonic() - t0
        with open_store(db) as conn:
            n_spans, n_error = conn.execute("SELECT count(*), count(*) FILTER (WHERE status_code = 'ERROR') "
                                            "FROM spans").fetchone()
            n_llm = conn.execute("SELECT count(*) FROM llm_calls").fetchone()[0]
            roots = dict(conn.execute("SELECT trace_id, span_id FROM spans WHERE parent_span_id IS NULL").fetchall())
        with PhoenixClient(server.url) as px:
            got = px.spans(PROJECT)
            in_default = len(px.spans("default")) if "default" in px.projects() else 0
            notes = px.span_annotations(PROJECT, sorted({s["context"]["span_id"] for s in got}))
    checks.append(("every span arrived in the chosen project", len(got) == n_spans and not in_default,
                   f"{len(got)} of {n_spans} in {PROJECT}, {in_default} in default "
                   f"(export with annotations took {exported_s:.1f} s)"))
    errors = sum(1 for s in got if s.get("status_code") == "ERROR")
    checks.append(("status", errors == n_error, f"{errors} ERROR spans in Phoenix, {n_error} stored"))
    flat = {s["context"]["span_id"]: _flat(s) for s in got}
    with_messages = sum(1 for a in flat.values() if a.get(A.GEN_AI_INPUT_MESSAGES) or
                        any(k.startswith("llm.input_messages.") for k in a))
    checks.append(("messages", with_messages >= n_llm > 0,
                   f"{with_messages} spans carry input messages, {n_llm} LLM calls stored"))
    by_span = {(a["span_id"], a["identifier"]): a for a in notes}
    want = [(d.span_id, "blamed", d) for d in stored if d.span_id] + [(roots[d.trace_id], "root", d) for d in stored]
    found = sum(1 for span, role, d in want
                if (a := by_span.get((span, f"agentchaos:{d.method}:{role}"))) is not None
                and a["result"]["label"] == d.fault_type and a["annotator_kind"] == "CODE")
    checks.append(("annotations on blamed spans and roots", found == len(want) > 0,
                   f"{found} of {len(want)} ({sum(1 for d in stored if d.span_id)} blamed spans, "
                   f"{len(stored)} roots)"))
    messages = {s["context"]["span_id"]: s.get("status_message") or "" for s in got}
    led = sum(1 for d in stored if messages.get(roots[d.trace_id], "").startswith(d.fault_type))
    checks.append(("root status message starts with the verdict", led == len(stored),
                   f"{led} of {len(stored)} roots"))
    back = work / "back.duckdb"
    conn = connect(back, read_only=False)
    insert_rows(conn, rows_from_phoenix(got))
    conn.close()
    again = {d.trace_id: (d.fault_type, d.step) for d in
             diagnose_episodes(RuleDiagnoser(), [e for e in load(back) if e.success is not True])}
    blamed = [d for d in stored if d.span_id]
    same = sum(1 for d in blamed if again.get(d.trace_id) == (d.fault_type, d.step))
    checks.append(("Phoenix's spans re-imported diagnose the same", same == len(blamed),
                   f"{same} of {len(blamed)} diagnoses identical after the round trip"))
    for name, ok, detail in checks:
        console.print(f"{'PASS' if ok else 'FAIL'} {name}: {detail}", markup=False)
    console.print("SIMULATED model: the spans show the pipeline working, not how a real model behaves.")
    if args.keep:
        console.print(f"kept {work}")
    else:
        shutil.rmtree(work, ignore_errors=True)
    return 0 if checks and all(ok for _, ok, _ in checks) else 1


if __name__ == "__main__":
    raise SystemExit(main())
