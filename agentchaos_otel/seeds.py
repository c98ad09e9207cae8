"""One way to derive seeds: every random choice in the project flows from an explicit seed.

Python's ``hash`` is salted per process, so it cannot make a sub-seed that is the same in every
run and every worker; a digest of the parts' ``repr`` can.
"""

from __future__ import annotations

import hashlib
from typing import Any


def derive_seed(*parts: Any) -> int:
    """A stable 64-bit seed from any parts whose ``repr`` is stable (ints, strings, tuples)."""
    return int.from_bytes(hashlib.sha256(repr(parts).encode()).digest()[:8], "big")
