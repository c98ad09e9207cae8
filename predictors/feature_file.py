"""``agentchaos predict features --out FILE``: a store's step-prefix rows written to Parquet as they come.

``extract.store_features`` gives the rows as one table in memory, which a fleet's store (millions
of prefixes) does not fit. Here each part (one chunk of episodes, ``extract``) goes to Parquet as
soon as it is made, and is dropped.

The file must hold the rows in the whole-store episode order of ``load_episodes``, the same as
``store_features``. Parts arrive in the order their traces were stored, which is not the order
of the episodes' start times: concurrent episodes are stored as they end. Each part is sorted
within itself, so parts are appended to sorted run files (``_Runs``), and the runs are then
merged, a few rows of each at a time, into the output. Only the episodes' sort keys, one small
tuple each, are kept for the whole store.

Everything is written under a temporary directory beside ``out`` and moved into place at the
end, so a failure leaves ``out`` as it was.
"""

from __future__ import annotations

import os
import shutil
import tempfile
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from agentchaos_otel.store.read.chunks import DEFAULT_CHUNK_SPANS
from predictors.extract import Part, iter_parts
from predictors.features import feature_names

# Rows per row group of a run file, and per batch read back from it while merging: what the
# merge holds of each run at a time.
RUN_BATCH = 2048
OUT_BATCH = 8192  # rows per row group of the merged file


@dataclass(frozen=True)
class WrittenFeatures:
    """What ``write_store_features`` wrote."""

    names: tuple[str, ...]
    rows: int
    episodes: int
    simulated: bool  # some episode ran against a simulated model
    runs: int  # files the parts were appended to before the merge (1: already in order)


def _schema(names: Sequence[str]) -> Any:
    import pyarrow as pa

    return pa.schema([("trace_id", pa.string()), ("task_id", pa.string()), ("success", pa.bool_()),
                      ("step", pa.int64()), ("simulated", pa.bool_()), *((n, pa.float64()) for n in names)])


def _table(part: Part, schema: Any) -> Any:
    """A part's rows in the file's layout: each row carries its episode's columns."""
    import pyarrow as pa

    counts = np.diff(np.asarray(part.bounds, dtype=np.int64))
    episode_of_row = pa.array(np.repeat(np.arange(len(part.keys), dtype=np.int64), counts))
    meta = list(zip(*part.meta, strict=True)) if part.meta else [[], [], [], []]
    cols = [pa.array(list(values), schema.field(i).type).take(episode_of_row)
            for i, values in zip((0, 1, 2, 4), meta, strict=True)]
    trace_id, task_id, success, simulated = cols
    step = pa.array(part.steps, pa.int64())
    features = [pa.array(np.ascontiguousarray(part.rows[:, j]), pa.float64()) for j in range(part.rows.shape[1])]
    return pa.Table.from_arrays([trace_id, task_id, success, step, simulated, *features], schema=schema)


class _Runs:
    """Parquet files of parts in key order, each part appended to the run it can follow.

    A part goes after the run whose last episode is the latest one before the part's first (the
    run it disturbs least), or begins a new run when it starts before every run's end. Parts that
    overlap only their neighbours, as concurrent episodes stored as they end make them, so fill a
    few runs rather than one run per part.
    """

    def __init__(self, directory: Path, schema: Any) -> None:
        self.directory, self.schema = directory, schema
        self.files: list[Path] = []
        self.episodes: list[list[tuple[tuple[Any, ...], int]]] = []  # per run: (sort key, rows), in order
        self.simulated = False
        self._writers: list[Any] = []

    def _run_for(self, first: tuple[Any, ...]) -> int:
        import pyarrow.parquet as pq

        ends = [(eps[-1][0], run) for run, eps in enumerate(self.episodes) if eps[-1][0] < first]
        if ends:
            return max(ends)[1]
        self.files.append(self.directory / f"run-{len(self.files)}.parquet")
        self.episodes.append([])
        self._writers.append(pq.ParquetWriter(self.files[-1], self.schema))
        return len(self.files) - 1

    def add(self, part: Part) -> None:
        if not part.keys:
            return
        run = self._run_for(part.keys[0])
        self.episodes[run].extend((key, part.bounds[i + 1] - part.bounds[i]) for i, key in enumerate(part.keys))
        self.simulated = self.simulated or any(m[3] for m in part.meta)
        table = _table(part, self.schema)
        if table.num_rows:
            self._writers[run].write_table(table, row_group_size=RUN_BATCH)

    @property
    def rows(self) -> int:
        return sum(n for eps in self.episodes for _, n in eps)

    def close(self) -> None:
        for writer in self._writers:
            writer.close()
        self._writers = []

    def merge(self, out: Path) -> None:
        """Write every run's rows to ``out`` in episode key order: one run is moved, several merged."""
        import heapq

        import pyarrow as pa
        import pyarrow.parquet as pq

        self.close()
        if len(self.files) == 1:
            os.replace(self.files[0], out)
            return
        readers = [_RunReader(f) for f in self.files]
        heap = [(eps[0][0], run, 0) for run, eps in enumerate(self.episodes)]
        heapq.heapify(heap)
        pending: list[Any] = []
        held = 0
        with pq.ParquetWriter(out, self.schema) as writer:
            while heap:
                _, run, i = heapq.heappop(heap)
                eps = self.episodes[run]
                if i + 1 < len(eps):
                    heapq.heappush(heap, (eps[i + 1][0], run, i + 1))
                pending += readers[run].take(eps[i][1])
                held += eps[i][1]
                if held >= OUT_BATCH or not heap:
                    if held:
                        writer.write_table(pa.Table.from_batches(pending, self.schema).combine_chunks())
                    pending, held = [], 0


class _RunReader:
    """A run file read front to back, ``take(n)`` rows at a time, one batch of it held at once."""

    def __init__(self, path: Path) -> None:
        import pyarrow.parquet as pq

        self._batches = pq.ParquetFile(path).iter_batches(batch_size=RUN_BATCH)
        self._batch: Any = None
        self._at = 0

    def take(self, n: int) -> list[Any]:
        """The next ``n`` rows, as slices of the batches they are in."""
        out = []
        while n:
            if self._batch is None or self._at == self._batch.num_rows:
                self._batch, self._at = next(self._batches), 0
            k = min(n, self._batch.num_rows - self._at)
            out.append(self._batch.slice(self._at, k))
            self._at += k
            n -= k
        return out


def write_store_features(path: str | os.PathLike[str], out: str | os.PathLike[str], feature_set: str = "both", *,
                         workers: int = 1, chunk_spans: int = DEFAULT_CHUNK_SPANS) -> WrittenFeatures:
    """Write the rows ``store_features`` gives to the Parquet file ``out``, one part at a time.

    ``out`` is replaced only when the store has episodes and everything was written; otherwise it
    is left as it was. Raises ``StoreError`` for a file that is not a readable store.
    """
    names = feature_names(feature_set)
    out = Path(out)
    schema = _schema(names)
    tmp = Path(tempfile.mkdtemp(prefix=f".{out.name}.", dir=out.parent))
    runs = _Runs(tmp, schema)
    try:
        for part in iter_parts(path, names, workers=workers, chunk_spans=chunk_spans):
            runs.add(part)
        runs.close()
        written = WrittenFeatures(names, runs.rows, sum(map(len, runs.episodes)), runs.simulated, len(runs.files))
        if written.episodes:
            runs.merge(tmp / "merged.parquet")
            os.replace(tmp / "merged.parquet", out)
        return written
    finally:
        runs.close()
        shutil.rmtree(tmp, ignore_errors=True)

