"""The ordered Parquet writer of ``predict features``: parts in any order, rows in key order.

Parts come in the order their traces were stored; the file must hold the episodes in key order.
Here parts with random keys and row counts are handed over in a random order, and the file must
hold every episode's rows once, in key order, each episode's rows in their own order. Batches are
made tiny so that episodes cross run and output batch boundaries.
"""

from __future__ import annotations

import os
import random
from pathlib import Path

import numpy as np
import polars as pl
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from agentchaos_otel.store.database.connect import StoreError
from predictors import feature_file
from predictors.extract import Part

_EXAMPLES = int(os.environ.get("AGENTCHAOS_FUZZ_EXAMPLES", "60"))
NAMES = ("f0", "f1")


def _part(episodes: list[tuple[int, int]]) -> Part:
    """A part of (key, rows) episodes: its rows say which episode and which row they are."""
    episodes = sorted(episodes)
    bounds = [0]
    rows: list[list[float]] = []
    steps: list[int] = []
    for key, n in episodes:
        rows += [[float(key), float(j)] for j in range(n)]
        steps += list(range(n))
        bounds.append(bounds[-1] + n)
    meta = [(f"t{key}", None if key % 3 == 0 else f"task{key}", key % 2 == 0, key % 5 == 0) for key, _ in episodes]
    return Part([(False, key, f"t{key}", False, "") for key, _ in episodes], meta, bounds, steps,
                np.asarray(rows, dtype=np.float64).reshape(-1, len(NAMES)))


@settings(max_examples=_EXAMPLES, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(counts=st.lists(st.integers(0, 4), min_size=1, max_size=40), cuts=st.integers(1, 8), seed=st.integers(0, 999))
def test_parts_in_any_order_give_rows_in_key_order(tmp_path_factory: pytest.TempPathFactory, counts: list[int],
                                                   cuts: int, seed: int) -> None:
    rng = random.Random(seed)
    keys = rng.sample(range(10_000), len(counts))
    episodes = list(zip(keys, counts, strict=True))
    rng.shuffle(episodes)
    size = max(1, len(episodes) // cuts)
    parts = [_part(episodes[i:i + size]) for i in range(0, len(episodes), size)]
    directory = tmp_path_factory.mktemp("runs")
    with pytest.MonkeyPatch.context() as m:
        m.setattr(feature_file, "RUN_BATCH", 3)
        m.setattr(feature_file, "OUT_BATCH", 5)
        runs = feature_file._Runs(directory, feature_file._schema(NAMES))
        for part in parts:
            runs.add(part)
        out = directory / "out.parquet"
        runs.merge(out)
    frame = pl.read_parquet(out)
    expected = [(float(key), float(j)) for key, n in sorted(episodes) for j in range(n)]
    assert list(zip(frame["f0"].to_list(), frame["f1"].to_list(), strict=True)) == expected
    assert frame["trace_id"].to_list() == [f"t{int(k)}" for k, _ in expected]
    assert frame["step"].to_list() == [int(j) for _, j in expected]
    assert frame["simulated"].to_list() == [int(k) % 5 == 0 for k, _ in expected]
    assert frame["task_id"].to_list() == [None if int(k) % 3 == 0 else f"task{int(k)}" for k, _ in expected]
    assert runs.rows == len(expected) and sum(map(len, runs.episodes)) == len(episodes)


def test_a_failure_leaves_the_output_and_no_temporary_files(tmp_path: Path) -> None:
    out = tmp_path / "f.parquet"
    out.write_bytes(b"earlier")
    junk = tmp_path / "junk.duckdb"
    junk.write_text("not a database")
    with pytest.raises(StoreError):
        feature_file.write_store_features(junk, out)
    assert out.read_bytes() == b"earlier"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["f.parquet", "junk.duckdb"]
