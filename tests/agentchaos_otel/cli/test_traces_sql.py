"""`agentchaos traces sql`: the store is queryable without a duckdb command, read-only, and the demo's
hint is a command that runs."""

from __future__ import annotations

import csv
import io
import json
import re
import shlex
from pathlib import Path

import pytest
from rich.console import Console

from agentchaos_otel.cli.demo import run_demo
from agentchaos_otel.cli.errors import run_app
from agentchaos_otel.cli.main import app
from agentchaos_otel.store.importers.trace_files import import_paths
from tests.support import ecosystem as B

pytestmark = pytest.mark.ecosystem


@pytest.fixture()
def db(tmp_path: Path) -> Path:
    path = tmp_path / "t.duckdb"
    (tmp_path / "m.jsonl").write_text("\n".join(json.dumps(B.trajectory(f"t{i}", i % 2 == 0)) for i in range(3)))
    import_paths([tmp_path / "m.jsonl"], path)
    return path


def test_csv_and_json_output(db: Path, capsys: pytest.CaptureFixture[str]) -> None:
    q = "select task_id, success, n_steps from episodes order by task_id"
    assert run_app(app, "agentchaos", ["traces", "sql", str(db), q, "--csv"]) == 0
    rows = list(csv.reader(io.StringIO(capsys.readouterr().out)))
    assert rows == [["task_id", "success", "n_steps"], ["t0", "True", "3"], ["t1", "False", "3"], ["t2", "True", "3"]]
    assert run_app(app, "agentchaos", ["traces", "sql", str(db), q, "--json", "--max-rows", "1"]) == 0
    assert json.loads(capsys.readouterr().out) == [{"task_id": "t0", "success": True, "n_steps": 3}]


def test_read_only_and_bad_queries_fail_in_one_line(db: Path, capsys: pytest.CaptureFixture[str]) -> None:
    before = db.read_bytes()
    assert run_app(app, "agentchaos", ["traces", "sql", str(db), "delete from spans"]) == 1
    err = capsys.readouterr().err.strip()
    assert "query failed" in err and "read-only" in err and "\n" not in err
    assert db.read_bytes() == before
    assert run_app(app, "agentchaos", ["traces", "sql", str(db), "select nope from episodes"]) == 1
    assert "nope" in capsys.readouterr().err
    assert run_app(app, "agentchaos", ["traces", "sql", str(db.parent / "missing.duckdb"), "select 1"]) == 1


def test_the_demo_hint_runs_as_printed(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                       capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.chdir(tmp_path)
    out = io.StringIO()
    run_demo(db=Path("traces.duckdb"), episodes=2, seed=0, workers=1, base_url=None, model=None,
             api_key_env="OPENAI_API_KEY", console=Console(file=out, width=300))
    hint = re.search(r"Query it: (agentchaos traces sql .+?\"[^\"]+\")", out.getvalue()).group(1)
    argv = shlex.split(hint)
    assert argv[:3] == ["agentchaos", "traces", "sql"]
    capsys.readouterr()
    assert run_app(app, "agentchaos", argv[1:] + ["--csv"]) == 0
    assert len(capsys.readouterr().out.strip().splitlines()) == 3  # header + two episodes


@pytest.mark.parametrize("query,keyword", [
    ("COPY (SELECT * FROM spans) TO '{out}/copied.csv'", "COPY"),
    ("EXPORT DATABASE '{out}/exported'", "EXPORT"),
    ("INSTALL httpfs", "INSTALL"),
    ("LOAD httpfs", "LOAD"),
    ("ATTACH '{out}/other.duckdb' AS other", "ATTACH"),
    ("SELECT 1; COPY (SELECT 1) TO '{out}/second.csv'", "COPY"),
    ("SELECT * FROM read_text('{secret}')", "files"),
    ("SELECT * FROM read_csv('{secret}')", "files"),
    ("SELECT count(*) FROM glob('{out}/*')", "files"),
])
def test_sql_reads_the_store_and_nothing_else(query: str, keyword: str, db: Path, tmp_path: Path,
                                              capsys: pytest.CaptureFixture[str]) -> None:
    secret = tmp_path / "secret.txt"
    secret.write_text("a,b\n1,2\n")
    out = tmp_path / "out"
    out.mkdir()
    before = db.read_bytes()
    code = run_app(app, "agentchaos", ["traces", "sql", str(db), query.format(out=out, secret=secret)])
    captured = capsys.readouterr()
    assert code == 1
    lines = captured.err.strip().splitlines()
    assert len(lines) == 1 and "read-only" in lines[0] and keyword in lines[0], captured.err
    assert "1,2" not in captured.out
    assert list(out.iterdir()) == [] and db.read_bytes() == before


def test_sql_on_a_parquet_dataset_reads_its_files_only(db: Path, tmp_path: Path,
                                                       capsys: pytest.CaptureFixture[str]) -> None:
    from agentchaos_otel.store.parquet import export_store

    dataset = tmp_path / "dataset"
    n = export_store(db, dataset)
    assert run_app(app, "agentchaos", ["traces", "sql", str(dataset), "select count(*) AS n from spans",
                                       "--json"]) == 0
    assert json.loads(capsys.readouterr().out) == [{"n": n}]
    secret = tmp_path / "secret.txt"
    secret.write_text("not yours")
    assert run_app(app, "agentchaos", ["traces", "sql", str(dataset), f"select * from read_text('{secret}')"]) == 1
    assert "not yours" not in capsys.readouterr().out
