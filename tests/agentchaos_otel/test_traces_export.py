"""`agentchaos traces export`: a round trip through OTLP/HTTP and OTLP/gRPC gives back the same spans,
plus each diagnosis on the span it blames and on the episode root."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import duckdb
import pytest

from agentchaos_otel import attributes as A
from agentchaos_otel.cli.errors import run_app
from agentchaos_otel.cli.main import app
from agentchaos_otel.store.exporter import DuckDBSpanExporter
from agentchaos_otel.store.importers.trace_files import import_paths
from agentchaos_otel.store.receivers.otlp_grpc import OTLPGrpcReceiver
from agentchaos_otel.store.receivers.otlp_http import OTLPReceiver
from tests.support import ecosystem as B

pytestmark = pytest.mark.ecosystem

_COLS = ("trace_id", "span_id", "parent_span_id", "name", "kind", "start_ns", "end_ns", "status_code",
         "status_message", "service_name", "scope_name", "attributes", "resource", "events")


def _spans(db: Path) -> dict[tuple[str, str], dict[str, Any]]:
    with duckdb.connect(str(db), read_only=True) as conn:
        rows = conn.execute(f"SELECT {', '.join(_COLS)} FROM spans").fetchall()
    out = {}
    for r in rows:
        d = dict(zip(_COLS, r, strict=True))
        for c in ("attributes", "resource", "events"):
            d[c] = json.loads(d[c])
        out[(d["trace_id"], d["span_id"])] = d
    return out


def _without_verdicts(span: dict[str, Any], stored: dict[str, Any]) -> dict[str, Any]:
    """The replayed span minus what export adds: verdict attributes and events, and the verdict that leads
    a failed root's status message (``<type> at step <n>: <evidence>; <stored message>``)."""
    added = (A.DIAGNOSIS_PREFIX, "agentchaos.predictor.")
    message = span["status_message"]
    verdict = span["attributes"].get(A.DIAGNOSIS_TYPE)
    if span["parent_span_id"] is None and verdict is not None and message != stored["status_message"]:
        assert message.startswith(f"{verdict} at step ") or message.startswith(f"{verdict}: "), message
        assert message.endswith(f"; {stored['status_message']}") if stored["status_message"] else True, message
        message = stored["status_message"]
    return {**span, "status_message": message,
            "attributes": {k: v for k, v in span["attributes"].items() if not k.startswith(added)},
            "events": [e for e in span["events"] if e["name"] not in (A.EVENT_DIAGNOSIS, A.EVENT_FAILURE_PREDICTED)]}


@pytest.fixture()
def store(tmp_path: Path) -> Path:
    """Two failed episodes of ours, one foreign (OpenInference) trace, one successful trajectory."""
    db = tmp_path / "src.duckdb"
    exporter = DuckDBSpanExporter(str(db))
    exporter.export(B.sdk_spans("ep-a") + B.sdk_spans("ep-b"))
    exporter.shutdown()
    (tmp_path / "px.json").write_text(json.dumps(B.phoenix_spans()))
    (tmp_path / "ok.json").write_text(json.dumps(B.trajectory("ok-1", success=True)))
    import_paths([tmp_path / "px.json", tmp_path / "ok.json"], db)
    return db


def _export(db: Path, *args: str) -> None:
    assert run_app(app, "agentchaos", ["traces", "export", str(db), *args]) == 0


def _check_round_trip(src: Path, dst: Path) -> dict[tuple[str, str], dict[str, Any]]:
    before, after = _spans(src), _spans(dst)
    assert after.keys() == before.keys()
    for key, span in before.items():
        assert _without_verdicts(after[key], span) == span, key
    return after


def _blamed(after: dict[tuple[str, str], dict[str, Any]]) -> list[tuple[str, str, str]]:
    return sorted((s["name"], e["attributes"][A.DIAGNOSIS_TYPE], e["attributes"][A.DIAGNOSIS_METHOD])
                  for s in after.values() for e in s["events"] if e["name"] == A.EVENT_DIAGNOSIS)


def test_round_trip_over_http_with_diagnoses_computed_at_export(store: Path, tmp_path: Path,
                                                                monkeypatch: pytest.MonkeyPatch) -> None:
    dst = tmp_path / "http.duckdb"
    with OTLPReceiver(str(dst), port=0) as receiver:
        monkeypatch.setenv("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", receiver.endpoint)
        _export(store)  # endpoint from the standard variable
    after = _check_round_trip(store, dst)
    # Three failed-or-unknown episodes; each blamed step is the error reply (chat span of ours,
    # ChatCompletion of OpenInference); the successful trajectory is not diagnosed.
    assert _blamed(after) == [("ChatCompletion", "error", "rule"), ("chat gpt-test", "error", "rule"),
                              ("chat gpt-test", "error", "rule")]
    roots = [s for s in after.values() if s["parent_span_id"] is None]
    diagnosed = {s["name"]: s["attributes"] for s in roots if A.DIAGNOSIS_TYPE in s["attributes"]}
    assert len(diagnosed) == 2  # "invoke_agent agent" (twice, same name) and "Agent"
    for s in roots:
        a = s["attributes"]
        if A.DIAGNOSIS_TYPE not in a:
            assert a.get(A.TASK_ID) == "ok-1"
            continue
        blamed = after[(s["trace_id"], a[A.DIAGNOSIS_SPAN_ID])]
        assert a[A.DIAGNOSIS_STEP] == 2 and blamed["attributes"][A.DIAGNOSIS_TYPE] == "error"
        assert 0 < a[A.DIAGNOSIS_CONFIDENCE] <= 1 and a[A.DIAGNOSIS_EVIDENCE]
        # A failed root's status message starts with the verdict (trace lists show only its start);
        # a root neither failed nor in error keeps its status: export does not make it a failure.
        before = _spans(store)[(s["trace_id"], s["span_id"])]
        if a.get(A.EPISODE_SUCCESS) is False or before["status_code"] == "ERROR":
            assert s["status_code"] == "ERROR" and s["status_message"].startswith("error at step 2: ")
            assert "`" not in s["status_message"].split(";")[0]  # the evidence's own step prefix is dropped
        else:
            assert (s["status_code"], s["status_message"]) == (before["status_code"], before["status_message"])


def test_round_trip_over_grpc_with_stored_diagnoses_and_predictions(store: Path, tmp_path: Path) -> None:
    from agentchaos_otel.store.database.schema import PREDICTIONS_DDL
    from diagnosers.cli import app as diagnose_app

    assert run_app(diagnose_app, "diagnose", [str(store), "--json"]) == 0
    with duckdb.connect(str(store)) as conn:
        conn.execute("UPDATE diagnoses SET evidence = 'stored: ' || evidence")
        conn.execute(PREDICTIONS_DDL)
        steps = conn.execute("SELECT trace_id, task_id, step, span_id FROM steps WHERE task_id = 'ep-a' "
                             "ORDER BY step").fetchall()
        for t, task, step, span in steps:
            conn.execute("INSERT INTO predictions VALUES (?, ?, ?, ?, ?, ?, 0.5, 'external', 'm', 'd1', 1)",
                         [t, task, step, span, 0.2 + 0.3 * step, step >= 1])
    dst = tmp_path / "grpc.duckdb"
    with OTLPGrpcReceiver(str(dst), port=0) as receiver:
        _export(store, "--endpoint", receiver.endpoint, "--protocol", "grpc")
    after = _check_round_trip(store, dst)
    events = [e["attributes"] for s in after.values() for e in s["events"] if e["name"] == A.EVENT_DIAGNOSIS]
    assert len(events) == 3 and all(e[A.DIAGNOSIS_EVIDENCE].startswith("stored: ") for e in events)
    ep_a = {s["attributes"].get(A.STEP): s for s in after.values() if s["trace_id"] == steps[0][0]}
    assert [ep_a[i]["attributes"][A.PREDICTOR_SCORE] for i in range(3)] == pytest.approx([0.2, 0.5, 0.8])
    alarms = [e for s in after.values() for e in s["events"] if e["name"] == A.EVENT_FAILURE_PREDICTED]
    assert [e["attributes"][A.PREDICTOR_STEP] for e in alarms] == [1]
    root = ep_a[None]["attributes"]
    assert root[A.PREDICTOR_ALARM] is True and root[A.PREDICTOR_STEP] == 1
    assert root[A.PREDICTOR_SCORE] == pytest.approx(0.8)


def test_diagnose_none_sends_spans_only_and_bad_endpoint_is_one_line(store: Path, tmp_path: Path,
                                                                     capsys: pytest.CaptureFixture[str]) -> None:
    dst = tmp_path / "plain.duckdb"
    with OTLPReceiver(str(dst), port=0) as receiver:
        _export(store, "--endpoint", receiver.endpoint, "--diagnose", "none")
    assert _spans(dst) == _spans(store)
    assert run_app(app, "agentchaos", ["traces", "export", str(store), "--protocol", "http/json"]) == 1
    assert "no OTLP/JSON exporter" in capsys.readouterr().err
