"""``traces import`` holds a bounded amount of a file at a time, and refuses what it cannot read in one line.

A Collector file can be gigabytes and a small ``.gz`` can decompress to a gigabyte: the importer
reads record by record (a JSON Lines line, a JSON document, a protobuf message) and stores rows
in batches, so what it holds grows with the largest record (``MAX_RECORD_BYTES``) and the batch,
not with the file. A record beyond the bound, a file nested deeper than the JSON parser goes,
bytes that are not UTF-8 in a JSON file, and a directory given as ``--db`` are each refused in
one line naming the file. (The peak memory of the 1 MB ``.gz`` case is measured in
``benchmarks/bench_import.py``, not here.)
"""

from __future__ import annotations

import gzip
import json
from pathlib import Path
from typing import Any

import duckdb
import pytest

from agentchaos_otel.cli.errors import run_app
from agentchaos_otel.cli.main import app
from agentchaos_otel.store.importers import trace_files
from agentchaos_otel.store.importers.trace_files import TraceImportError, import_paths
from tests.support import ecosystem as B

pytestmark = pytest.mark.ecosystem


def _one_error_line(capsys: pytest.CaptureFixture[str]) -> str:
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and err.startswith("agentchaos: error: ") and "Traceback" not in err, err
    return err


def _fleet(path: Path, lines: int) -> Path:
    """A Collector-style JSON Lines file, gzipped: ``lines`` requests of the SDK's spans."""
    text = "\n".join(B.otlp_json_line(B.sdk_spans(f"fleet-{i}")) for i in range(lines)) + "\n"
    path.write_bytes(gzip.compress(text.encode()))
    return path


def test_rows_are_stored_in_bounded_batches_not_the_whole_file(tmp_path: Path,
                                                                monkeypatch: pytest.MonkeyPatch) -> None:
    seen: list[int] = []
    real = trace_files.insert_rows

    def spy(conn: Any, rows: list[dict[str, Any]], **kwargs: Any) -> Any:
        seen.append(len(rows))
        return real(conn, rows, **kwargs)

    monkeypatch.setattr(trace_files, "insert_rows", spy)
    monkeypatch.setattr(trace_files, "BATCH_ROWS", 10, raising=False)
    path = _fleet(tmp_path / "fleet.jsonl.gz", 40)
    report = import_paths([path], tmp_path / "t.duckdb")
    per_line = len(B.sdk_spans("x"))
    assert report.spans == 40 * per_line > 10
    assert max(seen) <= 10 + per_line  # a batch closes once it reaches the bound
    with duckdb.connect(str(tmp_path / "t.duckdb"), read_only=True) as conn:
        assert conn.execute("SELECT count(*) FROM spans").fetchone() == (40 * per_line,)


def test_a_record_beyond_the_bound_is_refused_in_one_line(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                          capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setattr(trace_files, "MAX_RECORD_BYTES", 64 << 10, raising=False)
    small = B.otlp_json_line(B.sdk_spans("small"))
    big = json.dumps({"resourceSpans": [], "padding": "x" * 100_000})
    path = tmp_path / "big.jsonl"
    path.write_text(small + "\n" + big + "\n")
    db = tmp_path / "t.duckdb"
    assert run_app(app, "agentchaos", ["traces", "import", str(path), "--db", str(db)]) == 1
    err = _one_error_line(capsys)
    assert "big.jsonl line 2" in err and "64 KiB" in err and "JSON Lines" in err
    assert not db.exists()  # nothing of the file was kept


def test_a_deeply_nested_file_names_itself(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "deep.json"
    path.write_text("[" * 100_000 + "]" * 100_000)
    assert run_app(app, "agentchaos", ["traces", "import", str(path), "--db", str(tmp_path / "t.duckdb")]) == 1
    err = _one_error_line(capsys)
    assert "deep.json" in err and "nested too deep" in err and "RecursionError" not in err


def test_invalid_utf8_in_a_json_file_is_said_as_such(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "latin1.jsonl"
    good = B.otlp_json_line(B.sdk_spans("ok")).encode()
    path.write_bytes(good + b"\n" + good.replace(b'"ok', b'"caf\xe9', 1) + b"\n")
    assert run_app(app, "agentchaos", ["traces", "import", str(path), "--db", str(tmp_path / "t.duckdb")]) == 1
    err = _one_error_line(capsys)
    assert "latin1.jsonl line 2" in err and "not UTF-8" in err and "protobuf" not in err


def test_a_directory_as_db_is_refused(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = _fleet(tmp_path / "f.jsonl.gz", 1)
    existing = tmp_path / "adir"
    existing.mkdir()
    assert run_app(app, "agentchaos", ["traces", "import", str(path), "--db", str(existing)]) == 2
    err = _one_error_line(capsys)
    assert "is a directory" in err and "--parquet" in err
    assert list(existing.iterdir()) == []
    assert run_app(app, "agentchaos", ["traces", "receive", "--db", str(existing), "--port", "0",
                                       "--seconds", "0", "--workers", "0"]) == 2
    assert "is a directory" in _one_error_line(capsys)
    assert run_app(app, "agentchaos", ["traces", "receive-grpc", "--db", str(existing), "--port", "0",
                                       "--seconds", "0"]) == 2
    assert "is a directory" in _one_error_line(capsys)
    assert list(existing.iterdir()) == []


def test_the_gzip_bound_still_stops_a_bomb(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(trace_files, "MAX_FILE_BYTES", 1 << 20)
    path = _fleet(tmp_path / "bomb.jsonl.gz", 400)
    with pytest.raises(TraceImportError, match=r"bomb\.jsonl\.gz: decompresses to more than 1 MiB"):
        import_paths([path], tmp_path / "t.duckdb")
    assert not (tmp_path / "t.duckdb").exists()
