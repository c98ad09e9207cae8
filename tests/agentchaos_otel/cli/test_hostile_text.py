"""Span text is data: never rich markup, never a control sequence on the terminal; JSON keeps it exact.

The store holds what a provider's 500 body put in the spans (``tests/support/hostile.py``): every
human-readable output prints it escaped (the markup text literally, ``\\x1b`` instead of ESC), in a
terminal and through a pipe alike, and exits 0; ``--json`` gives back the exact string.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from agentchaos_otel.cli.errors import run_app
from agentchaos_otel.cli.main import app
from agentchaos_otel.terminal import printable
from tests.support.hostile import HOSTILE, MARKUP, RAW_CONTROLS, hostile_store


@pytest.fixture(scope="module")
def store(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return hostile_store(tmp_path_factory.mktemp("hostile") / "t.duckdb")


COMMANDS = [
    ["traces", "summary", "{db}"],
    ["traces", "sql", "{db}", "select task_id, condition, error from episodes"],
    ["diagnose", "{db}", "--no-write"],
    ["diagnose", "evaluate", "{db}", "--bootstrap", "10"],
    ["report", "{db}", "--resamples", "10"],
]


@pytest.mark.parametrize("argv", COMMANDS, ids=[" ".join(a[:2]) for a in COMMANDS])
def test_tables_print_span_text_as_escaped_data(argv: list[str], store: Path,
                                                capsys: pytest.CaptureFixture[str]) -> None:
    code = run_app(app, "agentchaos", [a.format(db=store) for a in argv])
    out, err = capsys.readouterr()
    assert code == 0, err
    assert not any(c in out + err for c in RAW_CONTROLS), repr(out)
    if argv[:2] != ["diagnose", "evaluate"]:  # scores show no task ids
        assert "[/v1/chat/completions]" in out and "\\x1b]52;" in out, out


@pytest.mark.parametrize("argv", COMMANDS, ids=[" ".join(a[:2]) for a in COMMANDS])
def test_a_terminal_gets_no_sequence_from_span_text(argv: list[str], store: Path, monkeypatch: pytest.MonkeyPatch,
                                                    capsys: pytest.CaptureFixture[str]) -> None:
    """With a terminal (``FORCE_COLOR``, as rich sees one) our own styles may be sent, the spans' never."""
    monkeypatch.setenv("FORCE_COLOR", "1")
    monkeypatch.setenv("COLUMNS", "200")
    code = run_app(app, "agentchaos", [a.format(db=store) for a in argv])
    out, err = capsys.readouterr()
    assert code == 0, err
    if argv[:2] != ["diagnose", "evaluate"]:  # its scores are plain lines, with no style to send
        assert "\x1b[" in out, "not printed as to a terminal"
    for sequence in ("\x1b]", "\x07", "\x1b[2J", "\x1b[H"):  # OSC (clipboard, title), BEL, clear, home
        assert sequence not in out + err, repr(out)


def test_json_keeps_the_exact_string(store: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert run_app(app, "agentchaos", ["traces", "sql", str(store), "select task_id, condition from episodes "
                                       "order by task_id", "--json"]) == 0
    rows = json.loads(capsys.readouterr().out)
    assert [r["condition"] for r in rows] == [HOSTILE, HOSTILE]
    assert rows[0]["task_id"] == f"{HOSTILE} #0"
    assert run_app(app, "agentchaos", ["diagnose", str(store), "--json", "--no-write"]) == 0
    assert {d["task_id"] for d in json.loads(capsys.readouterr().out)} == {f"{HOSTILE} #0", f"{HOSTILE} #1"}


def test_printable_escapes_controls_and_keeps_the_rest() -> None:
    assert printable(MARKUP) == MARKUP
    assert printable("a\tb\nc\x1b[2J\x07\x9b\u202e") == "a\tb\nc\\x1b[2J\\x07\\x9b\\u202e"
