"""Every command fails the same way: one ``agentchaos: error:`` line, exit 2 for usage, 1 for failures.

Each entry point (``agentchaos`` and each of its areas, and the standalone ``diagnose``) is run
through its console-script ``main`` with a bad option and with an input it cannot use. Most cases
run in-process (fast); two run the installed console scripts in a subprocess to show that the
real entry points behave the same.
"""

from __future__ import annotations

import os
import socket
import subprocess
import sys
from collections.abc import Callable, Iterator
from importlib.metadata import entry_points
from pathlib import Path
from typing import Any

import duckdb
import pytest

from agentchaos_otel.store.database import schema


def _script(name: str) -> Callable[[], Any]:
    (ep,) = entry_points(group="console_scripts", name=name)
    return ep.load()


def _run(capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, script: str,
         *args: str) -> tuple[int, str, str]:
    monkeypatch.setattr(sys, "argv", [script, *args])
    with pytest.raises(SystemExit) as exit_info:
        _script(script)()
    out, err = capsys.readouterr()
    return int(exit_info.value.code or 0), out, err


def _one_error_line(err: str) -> str:
    lines = [line for line in err.splitlines() if line.strip()]
    assert len(lines) == 1, err
    assert lines[0].startswith("agentchaos: error: "), err
    assert "Traceback" not in err
    return lines[0]


@pytest.fixture
def files(tmp_path: Path) -> dict[str, str]:
    junk = tmp_path / "junk.duckdb"
    junk.write_bytes(b"this is not a database" * 100)
    # A DuckDB file that claims our schema (version table, our app name) but holds no trace store.
    foreign = tmp_path / "foreign.duckdb"
    con = duckdb.connect(str(foreign))
    con.execute(schema.VERSION_DDL)
    con.execute("INSERT INTO schema_version VALUES (?, ?, NULL, 0)", [schema.SCHEMA_VERSION, schema.STORE_APP])
    con.execute("CREATE TABLE spans (x INTEGER)")
    con.close()
    return {"missing": str(tmp_path / "missing.duckdb"), "junk": str(junk), "foreign": str(foreign)}


@pytest.fixture
def busy_port() -> Iterator[int]:
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    sock.listen(1)
    yield sock.getsockname()[1]
    sock.close()


USAGE = [
    ("agentchaos", "--bogus"),
    ("agentchaos", "nonsense"),
    ("agentchaos", "faults", "list", "--bogus"),
    ("agentchaos", "faults", "list", "--family", "nope"),
    ("agentchaos", "faults", "show", "llm_eror_single"),
    ("agentchaos", "traces", "summary", "--bogus"),
    ("agentchaos", "traces", "receive", "--port", "99999"),
    ("agentchaos", "demo", "--episodes", "0"),
    ("agentchaos", "demo", "--base-url", "http://127.0.0.1:9/v1"),
    ("agentchaos", "demo", "--base-url", "localhost:9/v1", "--model", "m", "--api-key-env", "PATH"),
    ("agentchaos", "diagnose", "--bogus"),
    ("diagnose", "--bogus"),
    ("agentchaos", "diagnose", "x.duckdb", "--method", "bogus"),
    ("diagnose", "x.duckdb", "--method", "bogus"),
    ("diagnose", "train", "--bogus"),
    ("agentchaos", "predict", "train", "--bogus"),
    ("agentchaos", "campaign", "run", "--bogus"),
    ("agentchaos", "campaign", "run", "--seeds", "x"),
    ("agentchaos", "campaign", "run", "--conditions", "none,llm_eror_single"),
    ("agentchaos", "report", "x.duckdb", "--bogus"),
    ("agentchaos", "sim", "serve", "--host", "8.8.8.8"),
    ("agentchaos", "sim", "serve", "--bogus"),
    ("agentchaos", "bfcl", "tasks", "--bogus"),
]


@pytest.mark.parametrize("argv", USAGE, ids=[" ".join(a) for a in USAGE])
def test_bad_command_lines_exit_2_with_one_line(argv: tuple[str, ...], capsys: pytest.CaptureFixture[str],
                                                monkeypatch: pytest.MonkeyPatch) -> None:
    code, _, err = _run(capsys, monkeypatch, *argv)
    _one_error_line(err)
    assert code == 2


FAILURES = [
    (("agentchaos", "traces", "summary", "{missing}"), "no such file"),
    (("agentchaos", "traces", "summary", "{junk}"), "junk.duckdb"),
    (("agentchaos", "traces", "summary", "{foreign}"), "not a usable agentchaos trace store"),
    (("agentchaos", "diagnose", "{missing}"), "no such file"),
    (("diagnose", "{missing}"), "no such file"),
    (("diagnose", "{foreign}"), "foreign.duckdb"),
    (("agentchaos", "predict", "train", "{missing}"), "no such file"),
    (("agentchaos", "predict", "evaluate", "{junk}"), "junk.duckdb"),
    (("agentchaos", "campaign", "runs", "{missing}"), "no such file"),
    (("agentchaos", "report", "{missing}"), "no such file"),
    (("agentchaos", "report", "{foreign}"), "foreign.duckdb"),
    (("agentchaos", "sim", "serve", "--port", "{port}", "--seconds", "0"), "cannot listen"),
]


@pytest.mark.parametrize("argv,message", FAILURES, ids=[" ".join(a) for a, _ in FAILURES])
def test_failing_inputs_exit_1_with_one_line(argv: tuple[str, ...], message: str, files: dict[str, str],
                                             busy_port: int, capsys: pytest.CaptureFixture[str],
                                             monkeypatch: pytest.MonkeyPatch) -> None:
    code, _, err = _run(capsys, monkeypatch, *[a.format(port=busy_port, **files) for a in argv])
    line = _one_error_line(err)
    assert message in line
    assert code == 1


def test_standalone_diagnose_and_agentchaos_diagnose_say_the_same(capsys: pytest.CaptureFixture[str],
                                                                  monkeypatch: pytest.MonkeyPatch,
                                                                  files: dict[str, str]) -> None:
    for args in (["--bogus"], ["x.duckdb", "--method", "bogus"], [files["missing"]], [files["junk"]]):
        a = _run(capsys, monkeypatch, "diagnose", *args)
        b = _run(capsys, monkeypatch, "agentchaos", "diagnose", *args)
        assert a[0] == b[0] and a[0] in (1, 2)
        # Only the command path in the "see --help" hint differs.
        assert _one_error_line(a[2]) == _one_error_line(b[2]).replace("'agentchaos diagnose", "'diagnose")


def test_demo_keeps_an_existing_file_unless_told(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    precious = tmp_path / "notes.txt"
    precious.write_text("not a trace file, and not yours to delete")
    code, _, err = _run(capsys, monkeypatch, "agentchaos", "demo", "--db", str(precious), "--episodes", "1")
    assert code == 1 and "--overwrite" in _one_error_line(err)
    assert precious.read_text() == "not a trace file, and not yours to delete"
    code, _, err = _run(capsys, monkeypatch, "agentchaos", "demo", "--db", str(precious), "--episodes", "1",
                        "--workers", "1", "--overwrite")
    assert code == 0, err
    con = duckdb.connect(str(precious), read_only=True)
    assert con.execute("select count(*) from episodes").fetchone() == (1,)
    con.close()


def test_demo_against_an_unreachable_endpoint_says_so(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    with socket.socket() as s:  # a port nothing listens on
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    monkeypatch.setenv("OPENAI_API_KEY", "unused-key")
    db = tmp_path / "t.duckdb"
    code, _, err = _run(capsys, monkeypatch, "agentchaos", "demo", "--db", str(db),
                        "--base-url", f"http://127.0.0.1:{port}/v1", "--model", "m")
    assert code == 1 and "unreachable" in _one_error_line(err)
    assert not db.exists()


def test_unexpected_errors_are_one_line_and_debug_shows_the_traceback(
        files: dict[str, str], capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    import agentchaos_otel.store.read.summary as summary

    def boom(path: str) -> dict[str, Any]:
        raise RuntimeError("boom")

    monkeypatch.setattr(summary, "summarize", boom)
    code, _, err = _run(capsys, monkeypatch, "agentchaos", "traces", "summary", files["junk"])
    assert code == 1 and "unexpected RuntimeError: boom" in _one_error_line(err)
    monkeypatch.setenv("AGENTCHAOS_DEBUG", "1")
    monkeypatch.setattr(sys, "argv", ["agentchaos", "traces", "summary", files["foreign"]])
    with pytest.raises(RuntimeError, match="boom"):
        _script("agentchaos")()


@pytest.mark.parametrize("argv,expected", [
    (("diagnose", "--bogus"), 2), (("agentchaos", "traces", "summary", "{foreign}"), 1),
])
def test_installed_console_scripts(argv: tuple[str, ...], expected: int, files: dict[str, str]) -> None:
    """The real processes, started the way the installed scripts start: same line and codes."""
    (ep,) = entry_points(group="console_scripts", name=argv[0])
    code = f"import sys, {ep.module} as m; sys.argv[0] = {argv[0]!r}; m.{ep.attr}()"
    env = {k: v for k, v in os.environ.items() if not k.startswith(("OTEL_", "AGENTCHAOS_"))}
    result = subprocess.run([sys.executable, "-c", code, *[a.format(**files) for a in argv[1:]]], env=env,
                            capture_output=True, text=True, timeout=120)
    assert result.returncode == expected, result.stderr
    _one_error_line(result.stderr)


def test_debug_shows_the_traceback_of_a_known_failure(files: dict[str, str], capsys: pytest.CaptureFixture[str],
                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    from diagnosers.tracefile import DiagnoseError

    monkeypatch.setenv("AGENTCHAOS_DEBUG", "1")
    monkeypatch.setattr(sys, "argv", ["diagnose", files["missing"]])
    with pytest.raises(DiagnoseError):
        _script("diagnose")()


def test_a_condition_filter_the_store_does_not_know_names_the_known_ones(
        tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    db = tmp_path / "demo.duckdb"
    code, _, err = _run(capsys, monkeypatch, "agentchaos", "demo", "--db", str(db), "--episodes", "3",
                        "--workers", "1")
    assert code == 0, err
    for script in ("diagnose", "agentchaos"):
        prefix = ["diagnose"] if script == "agentchaos" else []
        for command in ([], ["evaluate"]):
            code, out, err = _run(capsys, monkeypatch, script, *prefix, *command, str(db), "--condition", "nnone",
                                  "--no-write" if not command else "--bootstrap", *([] if not command else ["10"]))
            line = _one_error_line(err)
            assert code == 2 and "unknown condition 'nnone'; choose one of" in line, line
            assert "llm_error_single" in line and "none" in line
            assert out == ""


READERS = [("traces", "summary", "{db}"), ("traces", "sql", "{db}", "select 1"), ("traces", "export", "{db}"),
           ("diagnose", "{db}"), ("diagnose", "evaluate", "{db}"), ("diagnose", "train", "{db}"),
           ("predict", "train", "{db}"), ("predict", "evaluate", "{db}"), ("predict", "features", "{db}"),
           ("report", "{db}"), ("campaign", "runs", "{db}")]


@pytest.mark.parametrize("argv", READERS, ids=[" ".join(a[:2]) for a in READERS])
def test_every_reader_words_the_same_mistake_the_same_way(argv: tuple[str, ...], files: dict[str, str],
                                                           tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                                           monkeypatch: pytest.MonkeyPatch) -> None:
    empty = tmp_path / "empty_dir"
    empty.mkdir()
    expected = {files["missing"]: f"no such file: {files['missing']}",
                files["junk"]: f"{files['junk']}: not a DuckDB database (corrupt or foreign file)",
                str(empty): f"{empty}: no Parquet span files (expected date=*/service=*/*.parquet)"}
    for db, message in expected.items():
        code, _, err = _run(capsys, monkeypatch, "agentchaos", *[a.format(db=db) for a in argv])
        assert (code, _one_error_line(err)) == (1, f"agentchaos: error: {message}")
