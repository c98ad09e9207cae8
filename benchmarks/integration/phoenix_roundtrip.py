"""Phoenix round trip: a demo trace file with verdicts, exported to a real Phoenix, read back.

Not part of CI (it needs ``pip install arize-phoenix``, about 3 minutes, and starts a server):

    pip install arize-phoenix
    python benchmarks/integration/phoenix_roundtrip.py

or, with Phoenix installed in another environment:

    python benchmarks/integration/phoenix_roundtrip.py --phoenix-python /path/to/phoenix-venv/bin/python

What it does, all on loopback: starts ``phoenix serve`` with a fresh working directory; runs the
demo (reference agent against the bundled SIMULATED model, content capture on) into a temporary
traces.duckdb; runs the rule diagnoser and stores its diagnoses; ``agentchaos traces export``s
the file to Phoenix's OTLP/HTTP endpoint; then reads every span back through Phoenix's REST API
(``GET /v1/projects/default/spans``) and checks that:

- every exported span arrived, with its status (the ERROR spans are the stored ERROR spans);
- LLM spans show their messages (the captured GenAI input/output messages);
- each stored diagnosis shows on the blamed span (``agentchaos.diagnosis`` event) and on the
  episode root (``agentchaos.diagnosis.type``);
- importing Phoenix's own span JSON back (``agentchaos traces import``'s OpenInference reader)
  and diagnosing it gives the same fault type and step for every diagnosed episode.

Exit code 0 when every check passes; each check prints one line.
"""

from __future__ import annotations

import argparse
import json
import os
import socket
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any

from rich.console import Console

from agentchaos_otel import attributes as A


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _get(url: str) -> Any:
    with urllib.request.urlopen(url, timeout=30) as r:
        return json.loads(r.read())


def start_phoenix(python: str, workdir: Path) -> tuple[subprocess.Popen[bytes], str]:
    port, grpc_port = _free_port(), _free_port()
    env = {**os.environ, "PHOENIX_PORT": str(port), "PHOENIX_GRPC_PORT": str(grpc_port),
           "PHOENIX_HOST": "127.0.0.1", "PHOENIX_WORKING_DIR": str(workdir), "PHOENIX_TELEMETRY_ENABLED": "false"}
    log = open(workdir / "phoenix.log", "wb")  # noqa: SIM115 - kept open for the server's life
    proc = subprocess.Popen([python, "-m", "phoenix.server.main", "serve"], env=env, stdout=log, stderr=log)
    base = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 240
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise SystemExit(f"Phoenix exited with {proc.returncode}; see {workdir / 'phoenix.log'}")
        try:
            _get(f"{base}/v1/projects")
            return proc, base
        except (urllib.error.URLError, OSError, ValueError):
            time.sleep(1)
    proc.terminate()
    raise SystemExit(f"Phoenix did not answer within 240 s; see {workdir / 'phoenix.log'}")


def phoenix_spans(base: str, project: str = "default") -> list[dict[str, Any]]:
    spans: list[dict[str, Any]] = []
    cursor = None
    while True:
        url = f"{base}/v1/projects/{project}/spans?limit=1000" + (f"&cursor={cursor}" if cursor else "")
        page = _get(url)
        spans.extend(page.get("data") or [])
        cursor = page.get("next_cursor")
        if not cursor:
            return spans


def _flat(span: dict[str, Any]) -> dict[str, Any]:
    from agentchaos_otel.store.importers.openinference import flatten

    out: dict[str, Any] = {}
    flatten(span.get("attributes") or {}, "", out)
    return out


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--phoenix-python", default=sys.executable,
                        help="Python of an environment with arize-phoenix installed (default: this one)")
    parser.add_argument("--episodes", type=int, default=16)
    parser.add_argument("--keep", action="store_true", help="keep the working directory")
    args = parser.parse_args()
    console = Console()
    os.environ[A.CAPTURE_CONTENT_ENV] = "true"  # messages must be on the spans to show in Phoenix
    for key in [k for k in os.environ if k.startswith("OTEL_EXPORTER_OTLP")]:
        del os.environ[key]

    from agentchaos_otel.cli.demo import run_demo
    from agentchaos_otel.otlp_exporters import span_exporter_from_env
    from agentchaos_otel.store.database.connect import open_store
    from agentchaos_otel.store.exporter import insert_rows
    from agentchaos_otel.store.importers.openinference import rows_from_phoenix
    from agentchaos_otel.traces_export import replay
    from diagnosers.base import diagnose_episodes
    from diagnosers.rules import RuleDiagnoser
    from diagnosers.tracefile import load, write_diagnoses

    work = Path(tempfile.mkdtemp(prefix="phoenix-roundtrip-"))
    db = work / "demo.duckdb"
    proc, base = start_phoenix(args.phoenix_python, work)
    checks: list[tuple[str, bool, str]] = []
    try:
        run_demo(db=db, episodes=args.episodes, seed=0, workers=2, base_url=None, model=None,
                 api_key_env="OPENAI_API_KEY", console=console)
        stored_diag = diagnose_episodes(RuleDiagnoser(), [e for e in load(db) if e.success is not True])
        write_diagnoses(db, stored_diag)
        exporter = span_exporter_from_env(endpoint=f"{base}/v1/traces", protocol="http/protobuf")
        summary = replay(db, exporter)
        exporter.shutdown()
        with open_store(db) as conn:
            n_spans, n_error = conn.execute("SELECT count(*), count(*) FILTER (WHERE status_code = 'ERROR') "
                                            "FROM spans").fetchone()
            n_llm = conn.execute("SELECT count(*) FROM llm_calls").fetchone()[0]
        got: list[dict[str, Any]] = []
        for _ in range(60):  # Phoenix inserts asynchronously
            got = phoenix_spans(base)
            if len(got) >= n_spans:
                break
            time.sleep(1)
        checks.append(("every span arrived", len(got) == n_spans == summary.spans,
                       f"{len(got)} in Phoenix, {n_spans} stored, {summary.spans} exported"))
        errors = sum(1 for s in got if s.get("status_code") == "ERROR")
        checks.append(("status", errors == n_error, f"{errors} ERROR spans in Phoenix, {n_error} stored"))
        flat = {s["context"]["span_id"]: _flat(s) for s in got}
        with_messages = sum(1 for a in flat.values() if a.get(A.GEN_AI_INPUT_MESSAGES) or
                            any(k.startswith("llm.input_messages.") for k in a))
        checks.append(("messages", with_messages >= n_llm > 0,
                       f"{with_messages} spans carry input messages, {n_llm} LLM calls stored"))
        events = {s["context"]["span_id"]: [e.get("name") for e in s.get("events") or []] for s in got}
        blamed_ok = [d for d in stored_diag if d.span_id and A.EVENT_DIAGNOSIS in events.get(d.span_id, [])]
        found = [d for d in stored_diag if d.span_id]
        checks.append(("diagnosis event on the blamed span", len(blamed_ok) == len(found) > 0,
                       f"{len(blamed_ok)} of {len(found)} blamed spans show agentchaos.diagnosis"))
        root_types = {a.get(A.DIAGNOSIS_TYPE) for a in flat.values() if a.get(A.DIAGNOSIS_SPAN_ID)}
        want_types = {d.fault_type for d in found}
        checks.append(("diagnosis on the episode root", root_types == want_types,
                       f"root types {sorted(t for t in root_types if t)} vs stored {sorted(want_types)}"))
        back = work / "back.duckdb"
        from agentchaos_otel.store.database.connect import connect

        conn = connect(back, read_only=False)
        insert_rows(conn, rows_from_phoenix(got))
        conn.close()
        again = {d.trace_id: (d.fault_type, d.step) for d in
                 diagnose_episodes(RuleDiagnoser(), [e for e in load(back) if e.success is not True])}
        same = sum(1 for d in found if again.get(d.trace_id) == (d.fault_type, d.step))
        checks.append(("Phoenix's spans re-imported diagnose the same", same == len(found),
                       f"{same} of {len(found)} diagnoses identical after the round trip"))
    finally:
        proc.terminate()
        proc.wait(timeout=30)
    for name, ok, detail in checks:
        console.print(f"[{'green' if ok else 'red'}]{'PASS' if ok else 'FAIL'}[/] {name}: {detail}")
    console.print("SIMULATED model: the spans show the pipeline working, not how a real model behaves.")
    if not args.keep:
        import shutil

        shutil.rmtree(work, ignore_errors=True)
    else:
        console.print(f"kept {work}")
    return 0 if checks and all(ok for _, ok, _ in checks) else 1


if __name__ == "__main__":
    raise SystemExit(main())
