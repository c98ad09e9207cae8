"""How many local processes work that the interpreter lock keeps on one core should use."""

from __future__ import annotations

import os

MAX_PROCESSES = 4


def processes_per_core(cap: int = MAX_PROCESSES) -> int:
    """One per core, at most `cap`, at least one.

    Parsing OTLP requests and diagnosing episodes are Python work: one process uses one core,
    whatever the machine has. Beyond a few processes the one writer or the file being read is
    the limit, hence the cap.
    """
    return max(1, min(os.cpu_count() or 1, cap))
