"""One bad string or integer never takes other spans with it (issue 8, item 5).

Real SDK spans through the real exporter into DuckDB files: a lone surrogate anywhere in a span
(name, attribute keys and values, event attributes, resource) or a time beyond BIGINT is repaired
and marked; a row the database still refuses goes to the rejected file alone, and rows already in
the spool are stored, not moved aside.
"""

from __future__ import annotations

import json
import logging
from pathlib import Path

import pytest
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import BatchSpanProcessor, SpanExportResult

from agentchaos_otel import attributes as A
from agentchaos_otel.store.database.connect import open_store
from agentchaos_otel.store.database.repair import INT64_MAX, repair_row
from agentchaos_otel.store.durability.spool import Spool, spool_path
from agentchaos_otel.store.exporter import DuckDBSpanExporter, span_to_row
from tests.agentchaos_otel.store.test_spool import episode_spans

pytestmark = pytest.mark.reliability

LONE = "\ud83d"  # the first half of an emoji, as a provider's truncated text leaves it


def rows_of(db: Path) -> list[tuple[str, str, str, str, int]]:
    with open_store(db) as conn:
        return conn.execute("SELECT span_id, name, attributes::VARCHAR, events::VARCHAR, start_ns "
                            "FROM spans ORDER BY start_ns").fetchall()


def test_lone_surrogates_do_not_drop_the_batch(tmp_path: Path) -> None:
    db = tmp_path / "t.duckdb"
    tp = TracerProvider(resource=Resource({A.SERVICE_NAME: "svc", "host" + LONE: "h" + LONE}))
    tp.add_span_processor(BatchSpanProcessor(DuckDBSpanExporter(db), schedule_delay_millis=60_000))
    tracer = tp.get_tracer("t")
    for i in range(10):
        with tracer.start_as_current_span(f"span-{i}" + (LONE if i == 3 else "")) as span:
            if i == 3:
                span.set_attribute("gen_ai.output" + LONE, "text " + LONE)
                span.set_attribute("list", ["ok", "bad" + LONE])
                span.add_event("ev", {"body": "x" + LONE})
    tp.shutdown()
    stored = rows_of(db)
    assert len(stored) == 10  # before: the batch was refused, the spool write failed, all 10 lost
    bad = [r for r in stored if r[1].startswith("span-3")][0]
    assert bad[1] == "span-3\ufffd"
    attrs = json.loads(bad[2])
    assert attrs["gen_ai.output\ufffd"] == "text \ufffd" and attrs["list"] == ["ok", "bad\ufffd"]
    assert "name" in attrs[A.STORE_REPAIRED] and "attributes" in attrs[A.STORE_REPAIRED]
    assert json.loads(bad[3])[0]["attributes"]["body"] == "x\ufffd"
    good = [r for r in stored if not r[1].startswith("span-3")]
    assert all(json.loads(r[2])[A.STORE_REPAIRED] == ["resource"] for r in good)  # shared resource
    assert not spool_path(db).exists()


def test_time_beyond_bigint_is_clamped_and_marked(tmp_path: Path) -> None:
    db = tmp_path / "t.duckdb"
    spans = episode_spans("a")
    rows = [span_to_row(s) for s in spans]
    rows[0] = {**rows[0], "start_ns": 2**63, "end_ns": 2**64 + 5}
    exp = DuckDBSpanExporter(db)
    assert exp.export_rows(rows) == SpanExportResult.SUCCESS
    stored = rows_of(db)
    assert len(stored) == len(rows)
    clamped = [r for r in stored if r[0] == rows[0]["span_id"]][0]
    assert clamped[4] == INT64_MAX
    assert json.loads(clamped[2])[A.STORE_REPAIRED] == ["end_ns", "start_ns"]


def test_escaped_lone_surrogate_in_json_column_is_repaired() -> None:
    row = {"trace_id": "a" * 32, "span_id": "b" * 16, "attributes": '{"k":"\\ud800","\\udc00":1}',
           "events": "[]", "resource": "{}"}
    fixed = repair_row(row)
    attrs = json.loads(fixed["attributes"])
    assert attrs["k"] == "\ufffd" and attrs["\ufffd"] == 1 and attrs[A.STORE_REPAIRED] == ["attributes"]
    untouched = {**row, "attributes": '{"k":"a literal \\\\ud800 in text"}'}
    assert repair_row(untouched)["attributes"] == untouched["attributes"]


def test_refused_row_goes_to_rejected_alone_and_spooled_rows_are_stored(
        tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    db = tmp_path / "t.duckdb"
    spooled = [span_to_row(s) for s in episode_spans("spooled", 6)]
    Spool(db).append(spooled)  # written while the database was unavailable
    new = [span_to_row(s) for s in episode_spans("new", 6)]
    broken = {**new[2], "span_id": None}  # NOT NULL: no repair can make this storable
    batch = [*new[:2], broken, *new[3:]]
    with caplog.at_level(logging.ERROR):
        assert DuckDBSpanExporter(db).export_rows(batch) == SpanExportResult.SUCCESS
    stored = {r[0] for r in rows_of(db)}
    assert stored == {r["span_id"] for r in spooled} | {r["span_id"] for r in batch if r["span_id"]}
    rejected = Path(str(db) + ".spool.rejected.jsonl").read_text().splitlines()
    assert [json.loads(x)["name"] for x in rejected] == [broken["name"]]
    assert not spool_path(db).exists()


def test_spool_append_never_fails_on_encoding(tmp_path: Path) -> None:
    db = tmp_path / "t.duckdb"
    row = {**span_to_row(episode_spans("a")[0]), "name": "n" + LONE}
    Spool(db).append([row])  # before: UnicodeEncodeError, and the batch was lost
    DuckDBSpanExporter(db).drain_spool()
    assert [r[1] for r in rows_of(db)] == ["n\ufffd"]


def test_spooled_rows_are_repaired_as_a_batch_on_load(tmp_path: Path) -> None:
    """Hand-written spool lines: an escaped lone surrogate in the JSON, a time beyond BIGINT."""
    db = tmp_path / "t.duckdb"
    good, escaped, huge = (span_to_row(s) for s in episode_spans("a", 3)[:3])
    escaped["attributes"] = '{"text":"cut \\ud83d"}'
    huge["end_ns"] = INT64_MAX + 5
    Spool(db).append([good, escaped, huge])
    assert DuckDBSpanExporter(db).drain_spool()
    stored = {r[0]: r for r in rows_of(db)}
    assert len(stored) == 3
    attrs = json.loads(stored[escaped["span_id"]][2])
    assert attrs["text"] == "cut \ufffd" and attrs[A.STORE_REPAIRED] == ["attributes"]
    assert A.STORE_REPAIRED not in json.loads(stored[good["span_id"]][2])
    with open_store(db) as conn:
        assert conn.execute("SELECT end_ns FROM spans WHERE span_id = ?", [huge["span_id"]]).fetchone()[0] == INT64_MAX
