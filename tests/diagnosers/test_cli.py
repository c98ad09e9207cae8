"""The `diagnose` command line, through typer's CliRunner on a real trace store."""

from __future__ import annotations

import json
import threading
from http.server import ThreadingHTTPServer
from pathlib import Path

import pytest
import typer
from typer.testing import CliRunner

from agentchaos_otel.store.database.connect import open_store
from benchmarks.corpora import synthetic
from benchmarks.corpora.spans import write_episodes
from diagnosers.cli import app
from tests.diagnosers.test_llm import ScriptedEndpoint

runner = CliRunner()
CONFIGS = ["llm_error_single", "llm_truncate_single", "tool_schema_single", "compound_stale_cache",
           "tools_bursty", "tools_independent", "llm_empty_persistent", "http_429"]


@pytest.fixture(scope="module")
def store(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("cli") / "traces.duckdb"
    write_episodes(synthetic.make_corpus(5, 1, configs=CONFIGS, heldout=False) +
                   synthetic.make_corpus(2, 1, configs=["http_429"], heldout=True, include_clean=False), path)
    return path


def invoke(*args: str) -> tuple[int, str, str]:
    result = runner.invoke(app, [str(a) for a in args])
    return result.exit_code, result.stdout, result.stderr


def test_json_output_has_the_required_fields(store: Path) -> None:
    code, out, _ = invoke(store, "--json", "--no-write")
    assert code == 0
    rows = json.loads(out)
    assert rows and all({"trace_id", "task_id", "fault_type", "step", "span_id", "confidence",
                         "evidence"} <= set(r) for r in rows)
    assert all(r["method"] == "rule" for r in rows)
    assert {r["fault_type"] for r in rows} & {"error", "truncate", "schema", "stale"}


def test_table_output_writes_diagnoses_table(store: Path) -> None:
    code, out, _ = invoke(store, "--limit", "3")
    assert code == 0
    assert "rule diagnosis of" in out and "first 3 shown" in out and "simulated" in out
    with open_store(store) as conn:
        n = conn.execute("SELECT count(*) FROM diagnoses WHERE method = 'rule'").fetchone()[0]
        failed = conn.execute("SELECT count(*) FROM episodes WHERE success = false").fetchone()[0]
    assert n == failed


def test_filters_limit_and_all(store: Path) -> None:
    _, out, _ = invoke(store, "--json", "--no-write", "--condition", "llm_truncate_single")
    rows = json.loads(out)
    assert rows and {r["fault_type"] for r in rows} <= {"truncate", "none_found"}
    _, out, _ = invoke(store, "--json", "--no-write", "--task", "task-001", "--limit", "2")
    rows = json.loads(out)
    assert 0 < len(rows) <= 2 and {r["task_id"] for r in rows} == {"task-001"}
    _, failed, _ = invoke(store, "--json", "--no-write")
    _, everything, _ = invoke(store, "--json", "--no-write", "--all")
    assert len(json.loads(everything)) > len(json.loads(failed))


def test_evaluate_json(store: Path) -> None:
    code, out, _ = invoke(store, "--evaluate", "--json", "--bootstrap", "200")
    assert code == 0
    report = json.loads(out)
    methods = {s["method"]: s for s in report["scores"]}
    assert set(methods) == {"rule", "text"}
    rule = methods["rule"]
    assert rule["n"] == report["evaluated"] > 0
    acc = rule["type_accuracy"]
    assert 0 <= acc["low"] <= acc["value"] <= acc["high"] <= 1
    assert rule["published"]["step_accuracy"] == pytest.approx(0.555)
    assert report["simulated"] is True and "arXiv" in report["published_source"]


def test_evaluate_table_shows_published_figures(store: Path) -> None:
    code, out, _ = invoke(store, "--evaluate", "--bootstrap", "100")
    assert code == 0
    assert "52.45% / 55.50%" in out and "4.3%" in out and "per-type accuracy" in out


def test_train_then_learned_method(store: Path, tmp_path: Path) -> None:
    model = tmp_path / "m.skops"
    code, out, err = invoke("train", store, "--out", model, "--json", "--bootstrap", "50",
                            "--test-fraction", "0.4")
    assert code == 0, err
    report = json.loads(out)
    assert model.exists() and report["train_episodes"] > 0 and report["test_episodes"] > 0
    assert {s["method"] for s in report["scores"]} == {"learned", "rule"}
    code, out, _ = invoke(store, "--method", "learned", "--model-file", model, "--json", "--no-write")
    assert code == 0 and all(r["method"] == "learned" for r in json.loads(out))


def test_llm_method_against_loopback(store: Path) -> None:
    endpoint = ScriptedEndpoint(malformed_first=False)
    server = ThreadingHTTPServer(("127.0.0.1", 0), endpoint.handler())
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        url = f"http://127.0.0.1:{server.server_address[1]}/v1"
        code, out, err = invoke(store, "--method", "llm", "--base-url", url, "--model", "sim-diagnoser",
                                "--json", "--condition", "llm_error_single", "--no-write")
        assert code == 0, err
        rows = json.loads(out)
        assert rows and all(r["method"] == "llm" for r in rows)
        assert "tokens used" in err and len(endpoint.requests) == len(rows)
    finally:
        server.shutdown()
        server.server_close()


@pytest.mark.parametrize("args,message,expected", [
    (["missing.duckdb"], "no such file", 1),
    (["{store}", "--method", "bogus"], "unknown method", 2),
    (["{store}", "--method", "learned"], "needs --model-file", 2),
    (["{store}", "--method", "learned", "--model-file", "{junk}"], "not a diagnoser model", 1),
    (["{store}", "--method", "llm"], "needs --base-url", 2),
    (["{junk}"], "agentchaos: error:", 1),
])
def test_bad_input_is_one_line_and_nonzero(store: Path, tmp_path: Path, args: list[str],
                                           message: str, expected: int) -> None:
    # 2: the command line is wrong; 1: a well-formed command met a file it cannot use.
    junk = tmp_path / "junk.bin"
    junk.write_bytes(b"\x00junk")
    code, out, err = invoke(*[a.format(store=store, junk=junk) for a in args])
    assert code == expected
    assert message in err and "Traceback" not in err + out
    assert len(err.strip().splitlines()) == 1


def test_mounted_under_a_parent_app(store: Path) -> None:
    parent = typer.Typer()

    @parent.command()
    def other() -> None:
        pass

    parent.add_typer(app, name="diagnose")
    result = runner.invoke(parent, ["diagnose", str(store), "--json", "--no-write", "--limit", "1"])
    assert result.exit_code == 0, result.stderr
    assert len(json.loads(result.stdout)) == 1
