"""A Parquet span dataset reads as the DuckDB file it was copied from: diagnose, predict, report.

The dataset is written through the sink the receiver is given (``ParquetSpanSink``), once from
the store's rows and once more for a share of them (a re-sent batch), so the reader's collapse
of duplicates is exercised too. Then the real commands run on the file and on the directory.
"""

from __future__ import annotations

import gzip
import json
from pathlib import Path

import httpx
import pytest
from typer.testing import CliRunner

from agentchaos_otel.campaign.measures import STEP_KEYS
from agentchaos_otel.campaign.report import build, load_corpus, to_json
from agentchaos_otel.cli.main import app as agentchaos_app
from agentchaos_otel.records import EpisodeTrace
from agentchaos_otel.store.database import schema
from agentchaos_otel.store.database.connect import StoreError, open_store
from agentchaos_otel.store.parquet import ParquetSpanSink, export_store, partition_of
from agentchaos_otel.store.read.episodes import load_episodes, load_ground_truth
from agentchaos_otel.store.receivers.otlp_http import OTLPReceiver
from diagnosers.cli import app as diagnose_app
from tests.support.scale import scale_store

pytestmark = pytest.mark.scale


@pytest.fixture(scope="module")
def pair(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    root = tmp_path_factory.mktemp("parquet")
    db = scale_store(root / "traces.duckdb")
    data = root / "dataset"
    n = export_store(db, data)
    with open_store(db) as conn:  # a batch delivered twice must not become two spans
        cols = ", ".join(schema.SPAN_COLUMNS)
        again = [dict(zip(schema.SPAN_COLUMNS, r, strict=True))
                 for r in conn.execute(f"SELECT {cols} FROM spans ORDER BY rowid LIMIT 40").fetchall()]
    assert ParquetSpanSink(data).export_rows([{**r, "exported_ns": r["exported_ns"] + 1} for r in again]).name == \
        "SUCCESS"
    assert n > 500
    return db, data


def test_layout_is_hive_partitioned_by_date_and_service(pair: tuple[Path, Path]) -> None:
    _, data = pair
    files = sorted(data.rglob("*.parquet"))
    assert files and all(f.parent.name.startswith("service=") and f.parent.parent.name.startswith("date=")
                         for f in files)
    assert not list(data.rglob("*.tmp"))
    assert partition_of({"start_ns": 86_400 * 10**9, "service_name": "my agent/v2"}) == ("1970-01-02", "my_agent_v2")


def test_episodes_and_ground_truth_equal_the_file(pair: tuple[Path, Path]) -> None:
    db, data = pair
    assert load_episodes(data, blind=False) == load_episodes(db, blind=False)
    assert load_ground_truth(data) == load_ground_truth(db)
    with open_store(data) as a, open_store(db) as b:
        assert a.execute("SELECT count(*) FROM spans").fetchone() == b.execute("SELECT count(*) FROM spans").fetchone()


def _run(app: object, args: list[str]) -> str:
    result = CliRunner().invoke(app, args)  # type: ignore[arg-type]
    assert result.exit_code == 0, result.output
    return result.stdout


def test_diagnose_and_report_commands_read_the_directory_unchanged(pair: tuple[Path, Path]) -> None:
    db, data = pair
    from_file = json.loads(_run(diagnose_app, [str(db), "--json", "--no-write"]))
    from_dir = json.loads(_run(diagnose_app, [str(data), "--json"]))  # writes data/derived.duckdb
    assert from_file and from_dir == from_file
    with open_store(data) as conn:  # the derived table (keyed by trace and method) is visible
        assert conn.execute("SELECT count(*) FROM diagnoses").fetchone()[0] == len({d["trace_id"] for d in from_file})
    rep_file = json.loads(_run(agentchaos_app, ["report", str(db), "--json", "--resamples", "50"]))
    rep_dir = json.loads(_run(agentchaos_app, ["report", str(data), "--json", "--resamples", "50"]))
    assert rep_file["episodes"] > 50 and rep_dir == rep_file


def test_report_loads_projected_steps_from_the_directory(pair: tuple[Path, Path]) -> None:
    """The report's load (``measures.STEP_KEYS`` per step) gives the full load's report on a dataset."""
    db, data = pair
    projected = load_corpus(data)
    assert projected == load_corpus(db) and any(e.triggered for e in projected)
    assert all(not s.events and s.attributes.keys() <= STEP_KEYS for e in projected for s in e.steps)

    def report(episodes: list[EpisodeTrace]) -> str:
        return json.dumps(to_json(build(episodes, resamples=50)), sort_keys=True, default=str)

    assert report(projected) == report(load_episodes(data, blind=False))


def test_predict_reads_the_directory_unchanged(pair: tuple[Path, Path]) -> None:
    """Every predict command loads through ``_load``; the feature rows it feeds the model match."""
    from predictors.cli import _load
    from predictors.features import feature_names, prefix_table

    db, data = pair
    a, b = _load(db), _load(data)
    assert a == b
    names = feature_names("both")
    assert prefix_table(a, names) == prefix_table(b, names)


def test_predict_features_reads_the_directory_unchanged(pair: tuple[Path, Path]) -> None:
    from predictors.extract import store_features

    db, data = pair
    from_dir = store_features(data, "both", chunk_spans=200, workers=2).frame()
    assert from_dir.height > 0
    assert from_dir.equals(store_features(db, "both").frame())


def test_receiver_writes_parquet_through_the_sink(tmp_path: Path) -> None:
    from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest

    req = ExportTraceServiceRequest()
    rs = req.resource_spans.add()
    kv = rs.resource.attributes.add()
    kv.key, kv.value.string_value = "service.name", "fleet-agent"
    span = rs.scope_spans.add().spans.add()
    span.trace_id, span.span_id, span.name = b"\x01" * 16, b"\x02" * 8, "chat m"
    span.start_time_unix_nano, span.end_time_unix_nano = 1_700_000_000 * 10**9, 1_700_000_001 * 10**9
    data = tmp_path / "recv"
    with OTLPReceiver(port=0, sink=ParquetSpanSink(data)) as r:
        resp = httpx.post(r.endpoint, content=gzip.compress(req.SerializeToString()),
                          headers={"Content-Type": "application/x-protobuf", "Content-Encoding": "gzip"})
    assert resp.status_code == 200
    (f,) = data.rglob("*.parquet")
    assert f.parent.name == "service=fleet-agent" and f.parent.parent.name == "date=2023-11-14"
    with open_store(data) as conn:
        assert conn.execute("SELECT trace_id, name, service_name FROM spans").fetchall() == [
            ("01" * 16, "chat m", "fleet-agent")]


def test_empty_or_foreign_directory_is_a_clear_error(tmp_path: Path) -> None:
    with pytest.raises(StoreError, match="no Parquet span files"):
        load_episodes(tmp_path)
    result = CliRunner().invoke(diagnose_app, [str(tmp_path)])
    assert result.exit_code == 1 and "no Parquet span files" in result.stderr  # bad input: a failure, not usage
