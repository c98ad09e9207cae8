"""Chunked loading and the chunk-by-chunk diagnose driver give what a whole-store read gives.

The oracle reads the file's own views in one query per view (the store as every other reader
sees it); the code under test evaluates the same views over chunks of whole traces in a private
connection. Tiny chunks force many chunk boundaries, including through the special traces.
"""

from __future__ import annotations

import json
from collections import defaultdict
from pathlib import Path

import pytest

from agentchaos_otel.records import EpisodeTrace, StepRecord
from agentchaos_otel.store.database.connect import StoreError, open_store
from agentchaos_otel.store.read.episodes import iter_episode_chunks, load_episodes
from diagnosers.base import diagnose_episodes
from diagnosers.driver import diagnose_store
from diagnosers.rules import RuleDiagnoser
from tests.support.scale import scale_store

pytestmark = pytest.mark.scale


@pytest.fixture(scope="module")
def store(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return scale_store(tmp_path_factory.mktemp("scale") / "traces.duckdb")


def whole_store(path: Path, where: str = "TRUE") -> list[EpisodeTrace]:
    """Every episode by one query per view over the whole file."""
    with open_store(path) as conn:
        eps = conn.execute("SELECT trace_id, task_id, condition, seed, success, attributes FROM episodes "
                           f"WHERE {where} ORDER BY start_ns, trace_id, span_id").fetchall()
        rows = conn.execute("SELECT trace_id, step, span_id, kind, name, start_ns, end_ns, status_code, "
                            "error_type, attributes, events FROM steps "
                            "ORDER BY trace_id, step, start_ns, span_id").fetchall()
    steps: dict[str, list[StepRecord]] = defaultdict(list)
    for tid, step, sid, kind, name, start, end, status, err, attrs, events in rows:
        steps[tid].append(StepRecord(step, sid, kind, name or "", start or 0, end or start or 0,
                                     status or "UNSET", err, json.loads(attrs), json.loads(events)))
    return [EpisodeTrace(tid, task, tuple(steps[tid]), success, cond, seed,
                         json.loads(attrs) if attrs else {}) for tid, task, cond, seed, success, attrs in eps]


def test_chunked_load_equals_whole_store_read(store: Path) -> None:
    expected = whole_store(store)
    assert len(expected) > 50
    assert sum(ep.task_id in ("twin-0", "twin-1") for ep in expected) == 2  # two roots, one trace
    assert any(ep.task_id is None and len(ep.steps) == 1 for ep in expected)  # no agent root
    assert load_episodes(store, blind=False) == expected
    assert load_episodes(store) == [ep.blind() for ep in expected]
    chunks = list(iter_episode_chunks(store, blind=False, chunk_spans=7))
    assert len(chunks) > 20
    flat = [ep for c in chunks for ep in c]
    assert sorted(flat, key=lambda e: (e.trace_id, e.task_id or "")) == sorted(
        expected, key=lambda e: (e.trace_id, e.task_id or ""))


def test_filters_match_whole_store_read(store: Path) -> None:
    expected = whole_store(store, "condition = 'none'")
    assert expected
    assert load_episodes(store, blind=False, where="condition = 'none'") == expected
    ids = [ep.trace_id for ep in expected[:3]]
    assert [e.trace_id for e in load_episodes(store, trace_ids=ids)] == ids


def test_diagnose_driver_equals_diagnosing_the_whole_store(store: Path) -> None:
    expected_eps = whole_store(store)
    expected = diagnose_episodes(RuleDiagnoser(), [ep for ep in expected_eps if ep.success is not True])
    assert len(expected) > 20
    for chunk_spans in (5, 64, 1 << 40):
        got = diagnose_store(store, RuleDiagnoser(), chunk_spans=chunk_spans)
        assert got.diagnoses == expected
        assert got.episodes == len(expected_eps) and got.simulated


def test_unusable_inputs_give_one_line_errors(tmp_path: Path) -> None:
    bad = tmp_path / "bad.duckdb"
    bad.write_bytes(b"not a database at all" * 100)
    with pytest.raises(StoreError, match="not a DuckDB database"):
        load_episodes(bad)
    with pytest.raises(StoreError, match="no such file"):
        list(iter_episode_chunks(tmp_path / "missing.duckdb"))


def test_the_store_can_be_written_between_chunks(store: Path, tmp_path: Path) -> None:
    """A diagnoser that writes into the store while it is being read (the LLM cache) is not refused."""
    import shutil

    from agentchaos_otel.store.database.connect import write_rows

    copy = tmp_path / "copy.duckdb"
    shutil.copyfile(store, copy)
    n = 0
    for i, chunk in enumerate(iter_episode_chunks(copy, chunk_spans=50)):
        n += len(chunk)
        write_rows(copy, "cache_probe", [{"k": i}], "k INTEGER", key=("k",))
    with open_store(copy) as conn:
        assert conn.execute("SELECT count(*) FROM cache_probe").fetchone()[0] > 5
    assert n == len(whole_store(store))
