"""Verdicts in Phoenix: a real Phoenix (the arize-phoenix package, its own environment, loopback) gets a
demo file and a campaign through `agentchaos traces export` and `diagnose --phoenix`; everything is read
back through Phoenix's REST API.

Phoenix runs from ``.phoenix-venv`` (``.ci/run`` installs it) or ``AGENTCHAOS_PHOENIX_PYTHON``; without
either, the tests that need it are skipped and say why. The refusals at the end need no Phoenix.
"""

from __future__ import annotations

import json
import socket
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import duckdb
import pytest
from rich.console import Console

from agentchaos_otel import attributes as A
from agentchaos_otel.cli.errors import run_app
from agentchaos_otel.cli.main import app
from agentchaos_otel.phoenix import PhoenixClient
from benchmarks.integration.phoenix_server import PhoenixServer, phoenix_python

pytestmark = pytest.mark.ecosystem

needs_phoenix = pytest.mark.skipif(phoenix_python() is None, reason="no arize-phoenix environment "
                                   "(.ci/run installs .phoenix-venv; or set AGENTCHAOS_PHOENIX_PYTHON)")


@pytest.fixture(scope="module")
def phoenix(tmp_path_factory: pytest.TempPathFactory) -> Iterator[PhoenixServer]:
    python = phoenix_python()
    assert python is not None
    with PhoenixServer(python, tmp_path_factory.mktemp("phoenix")) as server:
        yield server


@pytest.fixture(autouse=True)
def _clean_env(monkeypatch: pytest.MonkeyPatch) -> None:
    for key in ("OTEL_RESOURCE_ATTRIBUTES", "OTEL_SERVICE_NAME", "OTEL_EXPORTER_OTLP_ENDPOINT",
                "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", "OTEL_EXPORTER_OTLP_HEADERS", "PHOENIX_API_KEY"):
        monkeypatch.delenv(key, raising=False)


def _demo(db: Path, episodes: int = 16) -> None:
    from agentchaos_otel.cli.demo import run_demo

    run_demo(db=db, episodes=episodes, seed=0, workers=2, base_url=None, model=None,
             api_key_env="OPENAI_API_KEY", console=Console(quiet=True))


def _stored(db: Path) -> tuple[list[dict[str, Any]], dict[str, str], dict[str, str], int]:
    """Diagnoses, each trace's root span, each root's stored status message, the span count: read with
    plain SQL, not through the exporter under test."""
    with duckdb.connect(str(db), read_only=True) as conn:
        cur = conn.execute("SELECT trace_id, span_id, method, fault_type, step, confidence, evidence FROM diagnoses")
        cols = [d[0] for d in cur.description]
        diagnoses = [dict(zip(cols, r, strict=True)) for r in cur.fetchall()]
        roots = dict(conn.execute("SELECT trace_id, span_id FROM spans WHERE parent_span_id IS NULL").fetchall())
        messages = dict(conn.execute("SELECT span_id, coalesce(status_message, '') FROM spans "
                                     "WHERE parent_span_id IS NULL").fetchall())
        n = conn.execute("SELECT count(*) FROM spans").fetchone()[0]
    return diagnoses, roots, messages, n


def _cli(*args: str) -> int:
    return run_app(app, "agentchaos", list(args))


@needs_phoenix
def test_export_puts_verdicts_on_spans_roots_and_the_chosen_project(phoenix: PhoenixServer, tmp_path: Path,
                                                                    capsys: pytest.CaptureFixture[str]) -> None:
    from diagnosers.cli import app as diagnose_app

    db = tmp_path / "demo.duckdb"
    _demo(db)
    assert run_app(diagnose_app, "diagnose", [str(db), "--json"]) == 0
    capsys.readouterr()
    diagnoses, roots, messages, n_spans = _stored(db)
    assert len(diagnoses) >= 5

    # The OTLP/HTTP endpoint is Phoenix: detected, annotated; the project comes from --project.
    assert _cli("traces", "export", str(db), "--endpoint", f"{phoenix.url}/v1/traces", "--project", "chaos-demo") == 0
    out = " ".join(capsys.readouterr().out.split())  # the console may wrap the line
    assert f"{2 * len(diagnoses) - sum(d['span_id'] is None for d in diagnoses)} span annotations stored" in out

    with PhoenixClient(phoenix.url) as px:
        assert "chaos-demo" in px.projects()
        spans = {s["context"]["span_id"]: s for s in px.spans("chaos-demo")}
        assert len(spans) == n_spans  # the annotations waited for every span, so all are there now
        assert "default" not in px.projects() or not px.spans("default")
        notes = px.span_annotations("chaos-demo", sorted(spans))
    by_span: dict[str, list[dict[str, Any]]] = {}
    for a in notes:
        by_span.setdefault(a["span_id"], []).append(a)
    for d in diagnoses:
        root = roots[d["trace_id"]]
        targets = [("root", root)] + ([("blamed", d["span_id"])] if d["span_id"] else [])
        for role, span_id in targets:
            (a,) = by_span[span_id]  # exactly one per diagnosed episode and span
            assert (a["name"], a["annotator_kind"], a["identifier"]) == ("rule diagnosis", "CODE",
                                                                         f"agentchaos:rule:{role}")
            assert a["result"]["label"] == d["fault_type"]
            assert a["result"]["score"] == pytest.approx(d["confidence"], abs=1e-4)
            assert a["result"]["explanation"] == d["evidence"]
        # The root's status message starts with the verdict and keeps what it said before.
        message = spans[root]["status_message"]
        head = f"{d['fault_type']} at step {d['step']}: " if d["step"] is not None else f"{d['fault_type']}: "
        assert message.startswith(head), message
        assert message.endswith(messages[root]) and spans[root]["status_code"] == "ERROR"
    undiagnosed = set(roots.values()) - {roots[d["trace_id"]] for d in diagnoses}
    assert undiagnosed and not any(s in by_span for s in undiagnosed)


@needs_phoenix
def test_campaign_episodes_form_one_session_in_the_project_from_the_environment(
        phoenix: PhoenixServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    from agentchaos_otel.campaign.runner import campaign_runs
    from diagnosers.cli import app as diagnose_app

    db = tmp_path / "campaign.duckdb"
    assert _cli("campaign", "run", "--tasks", "3", "--conditions", "none,llm_truncate_single", "--db", str(db),
                "--no-progress", "--workers", "2") == 0
    (run,) = campaign_runs(db)
    monkeypatch.setenv("OTEL_RESOURCE_ATTRIBUTES", "openinference.project.name=chaos%20campaign,team=qa")
    # Spans only: the verdicts come later from `diagnose --phoenix`.
    assert _cli("traces", "export", str(db), "--endpoint", phoenix.url, "--diagnose", "none") == 0
    assert "no diagnoses to annotate, 1 sessions" in " ".join(capsys.readouterr().out.split())
    assert run_app(diagnose_app, "diagnose", [str(db), "--phoenix", phoenix.url]) == 0
    diagnoses, roots, _messages, n_spans = _stored(db)
    assert diagnoses
    with PhoenixClient(phoenix.url) as px:
        spans = px.spans("chaos campaign")
        (session,) = px.sessions("chaos campaign")
        notes = px.span_annotations("chaos campaign", sorted({s["context"]["span_id"] for s in spans}))
    assert len(spans) == n_spans
    assert session["session_id"] == f"chaos campaign:campaign {run['id']}"
    assert {t["trace_id"] for t in session["traces"]} == set(roots)
    got = {(a["span_id"], a["identifier"]) for a in notes}
    want = {(roots[d["trace_id"]], "agentchaos:rule:root") for d in diagnoses}
    want |= {(d["span_id"], "agentchaos:rule:blamed") for d in diagnoses if d["span_id"]}
    assert got == want


def _closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])  # closed again when the block ends


def test_a_phoenix_that_is_down_is_one_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from agentchaos_otel.store.exporter import DuckDBSpanExporter
    from diagnosers.cli import app as diagnose_app
    from tests.support import ecosystem as B

    db = tmp_path / "t.duckdb"
    exporter = DuckDBSpanExporter(str(db))
    exporter.export(B.sdk_spans("ep-a"))
    exporter.shutdown()
    down = f"http://127.0.0.1:{_closed_port()}"
    assert _cli("traces", "export", str(db), "--endpoint", down, "--phoenix", down) == 1
    err = capsys.readouterr().err.strip()
    assert err.startswith(f"agentchaos: error: Phoenix at {down} is not reachable") and "\n" not in err
    assert run_app(diagnose_app, "diagnose", [str(db), "--phoenix", down]) == 1
    err = capsys.readouterr().err.strip()
    assert f"Phoenix at {down} is not reachable" in err and "\n" not in err and "Traceback" not in err


def test_an_otlp_receiver_that_is_not_phoenix_gets_spans_without_annotations(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from agentchaos_otel.store.exporter import DuckDBSpanExporter
    from agentchaos_otel.store.receivers.otlp_http import OTLPReceiver
    from tests.support import ecosystem as B

    db = tmp_path / "t.duckdb"
    exporter = DuckDBSpanExporter(str(db))
    exporter.export(B.sdk_spans("ep-a"))
    exporter.shutdown()
    dst = tmp_path / "dst.duckdb"
    with OTLPReceiver(str(dst), port=0) as receiver:
        assert _cli("traces", "export", str(db), "--endpoint", receiver.endpoint, "--project", "p1") == 0
        assert _cli("traces", "export", str(db), "--endpoint", receiver.endpoint,
                    "--phoenix", receiver.endpoint) == 1
    out, err = capsys.readouterr()
    assert "annotation" not in out and "answers, but not as Phoenix" in err
    with duckdb.connect(str(dst), read_only=True) as conn:
        resources = {r[0] for r in conn.execute("SELECT resource FROM spans").fetchall()}
        sessions = conn.execute("SELECT count(*) FROM spans WHERE json_extract_string(attributes, "
                                "'$.\"session.id\"') IS NOT NULL").fetchone()[0]
    assert {json.loads(r)[A.OI_PROJECT_NAME] for r in resources} == {"p1"} and sessions == 0


@needs_phoenix
def test_annotations_of_spans_phoenix_never_stored_are_left_to_its_queue(phoenix: PhoenixServer) -> None:
    from agentchaos_otel.phoenix import annotations

    now = [0.0]
    slept: list[float] = []

    def sleep(s: float) -> None:  # an injected clock: the bounded wait passes without real time
        slept.append(s)
        now[0] += s

    rows = {"0" * 31 + "1": [{"method": "rule", "fault_type": "timeout", "confidence": 0.9, "evidence": "e",
                              "span_id": "00000000000000ab", "step": 1}]}
    items = annotations(rows, {"0" * 31 + "1": "00000000000000ac"})
    with PhoenixClient(phoenix.url, clock=lambda: now[0], sleep=sleep) as px:
        posted = px.post_annotations(items, wait_s=3.0)
    assert (posted.stored, posted.queued) == (0, 2)  # both spans missing: handed to Phoenix's retry queue
    assert slept and sum(slept) <= 3.0 and posted.waited_s == pytest.approx(sum(slept))
