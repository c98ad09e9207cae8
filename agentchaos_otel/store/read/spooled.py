"""What waits in a store's spool, read without taking it: counts for readers, rows for resumes.

A read-only open never loads the spool (only a writer does), so every reader (``traces
summary``, ``traces sql``, ``diagnose``, ``report``, ``predict``) says how many spans exist beyond
the ones it read, and a resumed campaign counts the episodes whose root spans are still there.
Nothing here locks or renames the spool: a writer may be loading it at the same moment, and a
row read twice (spool and database) only repeats a key in a set.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from agentchaos_otel.store.durability.spool import Spool


def _files(path: str | os.PathLike[str]) -> list[Path]:
    sp = Spool(path)
    return [sp.path, *sp.loading_files()]


def _lines(paths: list[Path], needle: bytes | None = None) -> Iterator[bytes]:
    for p in paths:
        try:
            with open(p, "rb") as f:
                for line in f:
                    if line.strip() and (needle is None or needle in line):
                        yield line
        except FileNotFoundError:  # taken by a load, or stored and deleted, since it was listed
            continue


def waiting_in_spool(path: str | os.PathLike[str]) -> tuple[int, int]:
    """(spans waiting in the spool, spans the database refused) next to a store, without locking it."""
    return sum(1 for _ in _lines(_files(path))), sum(1 for _ in _lines([Spool(path).rejected_path]))


def spooled_rows(path: str | os.PathLike[str], needle: str | None = None) -> Iterator[dict[str, Any]]:
    """The span rows waiting in the spool (those whose line contains ``needle``, when given).

    ``needle`` is a cheap filter before JSON decoding (a resume looks for root spans only); a line
    that does not decode (a write cut short by a kill) is skipped, as the loader skips it.
    """
    raw = None if needle is None else needle.encode()
    for line in _lines(_files(path), raw):
        try:
            row = json.loads(line)
        except ValueError:
            continue
        if isinstance(row, dict):
            yield row


def spool_note(path: str | os.PathLike[str]) -> str | None:
    """One line for a reader when spans wait in the spool (they are not in what it read), else None."""
    waiting, _ = waiting_in_spool(path)
    if not waiting:
        return None
    return (f"note: {waiting} span(s) still wait in {Spool(path).path.name} and are not counted here; the "
            "next process that writes to the store loads them")
