"""``traces receive`` stopped by SIGTERM stores what it accepted; readers say what still waits in the spool.

A service manager (or ``docker stop``, or ``kill PID``) stops a receiver with SIGTERM. It must
leave the way Ctrl-C does: queue drained, journal loaded, every accepted span in the store and
the count said. When spans do wait in a store's spool (a receiver killed with SIGKILL, a file
that was locked), every command that reads the store says how many, on stderr.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import signal
import subprocess
import sys
from pathlib import Path

import duckdb
import httpx
import pytest

from agentchaos_otel.cli.errors import run_app
from agentchaos_otel.cli.main import app
from agentchaos_otel.store.durability.spool import Spool
from agentchaos_otel.store.receivers.otlp_http import OTLPReceiver
from tests.support.otlp import PB, pb_request, stored_ids

pytestmark = pytest.mark.reliability


def test_sigterm_stops_the_receiver_like_ctrl_c(tmp_path: Path) -> None:
    db = tmp_path / "r.duckdb"
    code = ("import sys; from agentchaos_otel.cli.main import main; "
            "sys.argv = ['agentchaos', *sys.argv[1:]]; main()")
    proc = subprocess.Popen([sys.executable, "-c", code, "traces", "receive", "--db", str(db), "--port", "0",
                             "--workers", "0", "--seconds", "600"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            env={**os.environ, "COLUMNS": "300"})
    try:
        assert proc.stdout is not None
        line = proc.stdout.readline()
        m = re.search(r"OTEL_EXPORTER_OTLP_TRACES_ENDPOINT=(\S+)", line)
        assert m, line
        with httpx.Client(timeout=30) as client:
            statuses = [client.post(m.group(1), content=pb_request(100, trace_byte=0x30 + i), headers=PB).status_code
                        for i in range(10)]
        assert statuses == [200] * 10
        proc.send_signal(signal.SIGTERM)
        out, err = proc.communicate(timeout=120)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == 0, err
    assert "received 1000 spans; stopped (terminated)" in out
    assert len(stored_ids(db)) == 1000
    assert not Spool(db).path.exists() or not Spool(db).path.read_text().strip()


def _spool_everything(db: Path) -> int:
    con = duckdb.connect(str(db))
    cur = con.execute("SELECT * FROM spans")
    cols = [d[0] for d in cur.description]
    rows = [dict(zip(cols, r, strict=True)) for r in cur.fetchall()]
    con.execute("DELETE FROM spans WHERE trace_id IN (SELECT trace_id FROM spans ORDER BY trace_id LIMIT 1)")
    kept = {r[0] for r in con.execute("SELECT span_id FROM spans").fetchall()}
    con.close()
    moved = [r for r in rows if r["span_id"] not in kept]
    Spool(db).append(moved)
    return len(moved)


@pytest.fixture(scope="module")
def spooled_store(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, int]:
    db = tmp_path_factory.mktemp("spooled") / "t.duckdb"
    assert run_app(app, "agentchaos", ["demo", "--db", str(db), "--episodes", "8", "--workers", "2"]) == 0
    return db, _spool_everything(db)


READERS = [
    ["traces", "summary", "{db}"],
    ["traces", "summary", "{db}", "--json"],
    ["traces", "sql", "{db}", "select count(*) from spans"],
    ["traces", "sql", "{db}", "select count(*) from spans", "--json"],
    ["diagnose", "{db}", "--no-write"],
    ["diagnose", "evaluate", "{db}", "--bootstrap", "10"],
    ["report", "{db}", "--resamples", "10", "--json"],
    ["predict", "features", "{db}", "--out", "{out}"],
    ["campaign", "runs", "{db}"],
    ["traces", "export", "{db}", "--endpoint", "{endpoint}", "--diagnose", "none", "--phoenix", "off"],
]


@pytest.mark.parametrize("argv", READERS, ids=[" ".join(a[:2] + a[3:]) for a in READERS])
def test_every_reader_says_how_many_spans_wait_in_the_spool(argv: list[str], spooled_store: tuple[Path, int],
                                                            tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    db, waiting = spooled_store
    assert waiting > 0
    with contextlib.ExitStack() as stack:
        endpoint = ""
        if "export" in argv:  # traces export sends to a receiver of its own
            endpoint = stack.enter_context(OTLPReceiver(str(tmp_path / "sent.duckdb"), port=0)).endpoint
        code = run_app(app, "agentchaos", [a.format(db=db, out=tmp_path / "f.parquet", endpoint=endpoint)
                                           for a in argv])
    out, err = capsys.readouterr()
    assert code == 0, err
    assert f"note: {waiting} span(s) still wait in {db.name}.spool.jsonl" in err
    if "--json" in argv:
        json.loads(out)  # stdout stays JSON
