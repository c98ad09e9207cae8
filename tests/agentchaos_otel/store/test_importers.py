"""`agentchaos traces import`: every format lands in the same views and gives the same diagnosis."""

from __future__ import annotations

import gzip
import json
from pathlib import Path

import duckdb
import pytest

from agentchaos_otel.cli.errors import run_app
from agentchaos_otel.cli.main import app
from agentchaos_otel.store.exporter import DuckDBSpanExporter
from agentchaos_otel.store.importers.trace_files import TraceImportError, import_paths
from diagnosers.base import diagnose_episodes
from diagnosers.rules import RuleDiagnoser
from diagnosers.tracefile import load
from tests.support import REPO
from tests.support import ecosystem as B

pytestmark = pytest.mark.ecosystem

_COLS = "trace_id, span_id, parent_span_id, name, kind, start_ns, end_ns, status_code, status_message, " \
        "service_name, scope_name, attributes, resource, events"


def _rows(db: Path) -> list[tuple]:
    with duckdb.connect(str(db), read_only=True) as conn:
        return conn.execute(f"SELECT {_COLS} FROM spans ORDER BY trace_id, span_id").fetchall()


def _diagnoses(db: Path) -> list[tuple]:
    eps = [e for e in load(db) if e.success is not True]
    return [(d.fault_type, d.step) for d in diagnose_episodes(RuleDiagnoser(), eps)]


def _write(tmp: Path, name: str, data: str | bytes) -> Path:
    p = tmp / name
    p.write_bytes(data.encode() if isinstance(data, str) else data)
    return p


@pytest.fixture(scope="module")
def direct(tmp_path_factory: pytest.TempPathFactory) -> tuple[list, Path]:
    spans = B.sdk_spans()
    db = tmp_path_factory.mktemp("direct") / "direct.duckdb"
    DuckDBSpanExporter(str(db)).export(spans)
    return spans, db


@pytest.mark.parametrize("fmt", ["jsonl", "base64-json", "protobuf", "gzip-jsonl"])
def test_otlp_files_store_the_same_rows_as_live_export(tmp_path: Path, direct: tuple[list, Path], fmt: str) -> None:
    spans, direct_db = direct
    data: str | bytes = {"jsonl": lambda: B.otlp_json_line(spans) + "\n",
                         "base64-json": lambda: B.otlp_json_base64(spans),
                         "protobuf": lambda: B.otlp_protobuf_stream(spans),
                         "gzip-jsonl": lambda: gzip.compress((B.otlp_json_line(spans) + "\n").encode())}[fmt]()
    name = {"jsonl": "t.jsonl", "base64-json": "t.json", "protobuf": "t.pb", "gzip-jsonl": "t.jsonl.gz"}[fmt]
    db = tmp_path / "imported.duckdb"
    report = import_paths([_write(tmp_path, name, data)], db)
    assert report.spans == 4
    assert _rows(db) == _rows(direct_db)  # ids, timings, attributes (unknown ones too), events
    assert _diagnoses(db) == _diagnoses(direct_db) == [("error", 2)]


def test_collector_jsonl_with_many_lines_and_directories(tmp_path: Path) -> None:
    lines = [B.otlp_json_line(B.sdk_spans(f"otlp-{i}")) for i in range(3)]
    (tmp_path / "in" / "sub").mkdir(parents=True)
    _write(tmp_path / "in", "a.jsonl", "\n".join(lines[:2]) + "\n")
    _write(tmp_path / "in" / "sub", "b.json", lines[2])
    _write(tmp_path / "in", "notes.txt", "not a trace")  # unknown suffix inside a directory: skipped
    db = tmp_path / "t.duckdb"
    report = import_paths([tmp_path / "in"], db)
    assert [Path(f.path).name for f in report.files] == ["a.jsonl", "b.json"]
    with duckdb.connect(str(db), read_only=True) as conn:
        tasks = conn.execute("SELECT task_id FROM episodes ORDER BY task_id").fetchall()
    assert tasks == [("otlp-0",), ("otlp-1",), ("otlp-2",)]
    import_paths([tmp_path / "in"], db)  # importing again stores nothing twice
    assert len(_rows(db)) == 12


def test_openinference_export_normalises_into_the_views(tmp_path: Path) -> None:
    db = tmp_path / "px.duckdb"
    import_paths([_write(tmp_path, "spans.json", json.dumps({"data": B.phoenix_spans()}))], db)
    with duckdb.connect(str(db), read_only=True) as conn:
        calls = conn.execute("SELECT step, request_model, input_tokens, output_tokens, duration_ms "
                             "FROM llm_calls ORDER BY step").fetchall()
        tools = conn.execute("SELECT step, tool_name FROM tool_calls").fetchall()
        kept = conn.execute("SELECT json_extract_string(attributes, '$.\"custom.unknown\"') FROM spans "
                            "WHERE json_extract_string(attributes, '$.\"custom.unknown\"') IS NOT NULL").fetchall()
        agent = conn.execute("SELECT agent_name, n_steps FROM episodes").fetchall()
    assert calls == [(0, "gpt-test", 20, 9, 800.0), (2, "gpt-test", 40, 30, 700.0)]
    assert tools == [(1, "get_weather")]
    assert kept == [("kept",)]
    assert agent == [("px-agent", 3)]
    assert _diagnoses(db) == [("error", 2)]


def test_dataframe_records_with_flat_columns_and_epoch_ms(tmp_path: Path) -> None:
    flat = []
    for s in B.phoenix_spans():
        row = {"name": s["name"], "span_kind": s["span_kind"], "parent_id": s["parent_id"],
               "context.trace_id": s["context"]["trace_id"], "context.span_id": s["context"]["span_id"],
               "start_time": 1793613600000, "end_time": 1793613600500, "status_code": s["status_code"]}
        from agentchaos_otel.store.importers.openinference import flatten

        attrs: dict = {}
        flatten(s["attributes"], "", attrs)
        row.update({f"attributes.{k}": v for k, v in attrs.items()})
        flat.append(row)
    db = tmp_path / "df.duckdb"
    records = _write(tmp_path, "df.jsonl", "\n".join(json.dumps(r) for r in flat))
    import_paths([records], db)
    with duckdb.connect(str(db), read_only=True) as conn:
        starts = conn.execute("SELECT DISTINCT start_ns FROM spans").fetchall()
    assert starts == [(1793613600000 * 10**6,)]
    assert _diagnoses(db) == [("error", 2)]
    # The same dataframe saved as Parquet (DataFrame.to_parquet), times as timestamps.
    parquet = tmp_path / "df.parquet"
    with duckdb.connect() as conn:
        conn.execute(f"COPY (SELECT * REPLACE (make_timestamptz(start_time * 1000) AS start_time, "
                     f"make_timestamptz(end_time * 1000) AS end_time) FROM read_json_auto('{records}')) "
                     f"TO '{parquet}' (FORMAT parquet)")
    pq_db = tmp_path / "pq.duckdb"
    assert import_paths([parquet], pq_db).files[0].format == "openinference"
    def parsed(rows: list[tuple]) -> list[tuple]:  # column order of a Parquet file is not the JSON's
        return [(*r[:11], json.loads(r[11]), json.loads(r[12]), json.loads(r[13])) for r in rows]

    assert parsed(_rows(pq_db)) == parsed(_rows(db))


def test_trajectories_become_episodes_with_outcome(tmp_path: Path) -> None:
    db = tmp_path / "m.duckdb"
    text = "\n".join(json.dumps(t) for t in (B.trajectory("traj-1", False), B.trajectory("traj-2", True)))
    report = import_paths([_write(tmp_path, "runs.jsonl", text)], db)
    assert report.files[0].format == "messages" and report.files[0].episodes == 2
    with duckdb.connect(str(db), read_only=True) as conn:
        eps = conn.execute("SELECT task_id, success, n_llm_calls, n_tool_calls FROM episodes ORDER BY 1").fetchall()
        fr = conn.execute("SELECT finish_reasons, tool_call_count FROM llm_calls WHERE task_id = 'traj-1' "
                          "ORDER BY step").fetchall()
    assert eps == [("traj-1", False, 2, 1), ("traj-2", True, 2, 1)]
    assert fr == [(["tool_calls"], 1), (["stop"], 0)]
    assert _diagnoses(db) == [("error", 2)]


def test_diagnose_command_runs_unchanged_on_imports(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from diagnosers.cli import app as diagnose_app

    traj = _write(tmp_path, "one.json", json.dumps(B.trajectory()))
    db = tmp_path / "cli.duckdb"
    assert run_app(app, "agentchaos", ["traces", "import", str(traj), "--db", str(db)]) == 0
    assert "messages" in capsys.readouterr().out
    assert run_app(diagnose_app, "diagnose", [str(db), "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    rows = out if isinstance(out, list) else out["diagnoses"]
    assert [(r["fault_type"], r["step"]) for r in rows] == [("error", 2)]


def test_bad_files_fail_in_one_line_and_store_nothing(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    good = _write(tmp_path, "good.json", json.dumps(B.trajectory()))
    bad = _write(tmp_path, "bad.jsonl", json.dumps(B.trajectory("x")) + "\n{not json\n")
    db = tmp_path / "x.duckdb"
    with pytest.raises(TraceImportError, match=r"bad\.jsonl: not JSON"):
        import_paths([good, bad], db)
    assert not db.exists()
    odd = _write(tmp_path, "odd.json", json.dumps({"hello": 1}))
    assert run_app(app, "agentchaos", ["traces", "import", str(odd), "--db", str(db)]) == 1
    err = capsys.readouterr().err.strip()
    assert "odd.json" in err and "unrecognised record" in err and "\n" not in err


def test_the_documented_import_line_runs_on_the_shipped_examples(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                         capsys: pytest.CaptureFixture[str]) -> None:
    import shlex

    root = REPO
    line = next(ln for ln in (root / "docs" / "backends.md").read_text().splitlines()
                if ln.startswith("agentchaos traces import "))
    argv = shlex.split(line)[1:]
    monkeypatch.chdir(root)  # the page's paths are relative to the repository
    argv[argv.index("--db") + 1] = str(tmp_path / "imported.duckdb")
    assert run_app(app, "agentchaos", argv) == 0
    capsys.readouterr()
    formats = {f.format for f in import_paths([root / "docs" / "examples" / "import"], tmp_path / "again.duckdb").files}
    assert formats == {"otlp-json", "openinference", "messages"}
    assert sorted(_diagnoses(tmp_path / "imported.duckdb")) == [("error", 2)] * 3


def test_parquet_import_reads_back_as_the_file_and_diagnoses_the_same(tmp_path: Path,
                                                                       capsys: pytest.CaptureFixture[str]) -> None:
    from agentchaos_otel.store.database.connect import open_store
    from diagnosers.cli import app as diagnose_app

    examples = REPO / "docs" / "examples" / "import"
    lines = [B.otlp_json_line(B.sdk_spans(f"pq-{i}")) for i in range(3)]
    more = _write(tmp_path, "fleet.jsonl", "\n".join(lines) + "\n")
    db, data = tmp_path / "imported.duckdb", tmp_path / "dataset"
    assert import_paths([examples, more], db).spans == import_paths([examples, more], None, parquet=data).spans
    parts = sorted(p.relative_to(data).parts[:2] for p in data.rglob("*.parquet"))
    assert parts and all(d.startswith("date=") and s.startswith("service=") for d, s in parts)
    with open_store(data) as conn:
        from_dataset = conn.execute(f"SELECT {_COLS} FROM spans ORDER BY trace_id, span_id").fetchall()
    assert from_dataset == _rows(db)
    assert sorted(_diagnoses(data)) == sorted(_diagnoses(db)) == [("error", 2)] * 6

    # the command line, as the README shows it; importing the same files again stores nothing twice
    again = tmp_path / "cli-dataset"
    for _ in range(2):
        assert run_app(app, "agentchaos", ["traces", "import", str(examples), str(more), "--parquet", str(again)]) == 0
    assert str(again) in capsys.readouterr().out
    assert run_app(diagnose_app, "diagnose", [str(db), "--json", "--no-write"]) == 0
    from_file = json.loads(capsys.readouterr().out)
    assert run_app(diagnose_app, "diagnose", [str(again), "--json"]) == 0
    assert json.loads(capsys.readouterr().out) == from_file and len(from_file) == 6

    not_a_dir = _write(tmp_path, "plain.file", "x")
    assert run_app(app, "agentchaos", ["traces", "import", str(more), "--parquet", str(not_a_dir)]) == 1
    err = capsys.readouterr().err.strip()
    assert "not a directory" in err and "\n" not in err
