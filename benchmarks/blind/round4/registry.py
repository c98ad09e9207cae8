"""What the loopback servers and the tool wrappers know about a running episode.

Keyed by task id (the Messages request's ``metadata.user_id``, the MCP client's
``x-ops-tenant`` header). Each episode's calls are sequential, so its event log is in start
order: the index of an event is the step the store numbers it with (checked by ``--check``).
"""

from __future__ import annotations

import threading
from dataclasses import dataclass, field
from typing import Any

from benchmarks.blind.round4.model import Temper
from benchmarks.blind.round4.world import World


@dataclass
class Fault:
    form: str
    role: str                    # root | second | absorbed
    times: int = 1               # consecutive attempts (LLM) or same-argument calls (tool) it hits


@dataclass
class Script:
    task_id: str
    world: World
    temper: Temper
    llm_faults: dict[int, Fault] = field(default_factory=dict)      # turn -> fault
    tool_faults: dict[tuple[str, int], Fault] = field(default_factory=dict)   # (tool, occurrence) -> fault
    stream_turns: frozenset[int] = frozenset()
    events: list[dict[str, Any]] = field(default_factory=list)
    attempts: dict[int, int] = field(default_factory=dict)
    tool_seen: dict[str, int] = field(default_factory=dict)
    sticky: dict[str, tuple[Fault, int]] = field(default_factory=dict)     # call key -> fault, hits left
    replies: list[tuple[int, bytes, bool]] = field(default_factory=list)   # (turn, body, streamed)

    def event(self, **kw: Any) -> dict[str, Any]:
        ev = dict(kw, fault=None, role=None)
        self.events.append(ev)
        return ev


_LOCK = threading.Lock()
_SCRIPTS: dict[str, Script] = {}


def register(script: Script) -> None:
    with _LOCK:
        _SCRIPTS[script.task_id] = script


def get(task_id: str) -> Script:
    with _LOCK:
        return _SCRIPTS[task_id]


def drop(task_id: str) -> None:
    with _LOCK:
        _SCRIPTS.pop(task_id, None)
