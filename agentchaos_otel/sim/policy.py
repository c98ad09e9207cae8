"""The contract between the simulated model server and whatever decides what the "model" says.

The server owns HTTP, the wire format, tokens, logprobs and usage; a policy only decides the next
assistant turn from the request. Keeping that interface to one method lets task-specific
simulated models (the reference agent's, a BFCL one) be written and tested without touching the
server. A policy must be a pure function of (request, rng): the server is stateless across
requests so that concurrent episodes stay reproducible regardless of interleaving, which means a
policy must not keep per-conversation state either; it re-reads the conversation every turn.

Everything a policy produces is simulated and is never evidence about a real model.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol, runtime_checkable


@dataclass
class Turn:
    """One simulated assistant turn.

    ``uncertainty`` (0..1) sets how spread the simulated token distributions are, so a policy can
    make the turns that follow an anomaly look hesitant to entropy-based predictors.
    """

    content: str | None = None
    tool_calls: list[tuple[str, dict[str, Any]]] = field(default_factory=list)
    finish_reason: str | None = None
    uncertainty: float = 0.1

    @property
    def resolved_finish_reason(self) -> str:
        if self.finish_reason:
            return self.finish_reason
        return "tool_calls" if self.tool_calls else "stop"


@runtime_checkable
class Policy(Protocol):
    """A simulated model. ``name`` is the model id it answers as and must start with ``sim-``."""

    name: str

    def respond(self, request: dict[str, Any], rng: random.Random) -> Turn: ...


# --- Reading a chat request ----------------------------------------------------------------------


def message_text(message: Any) -> str:
    """The text of a message whether content is a string, a list of parts, or missing."""
    if not isinstance(message, dict):
        return ""
    content = message.get("content")
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        parts = []
        for part in content:
            if isinstance(part, dict) and isinstance(part.get("text"), str):
                parts.append(part["text"])
            elif isinstance(part, str):
                parts.append(part)
        return "".join(parts)
    return ""


def request_messages(request: dict[str, Any]) -> list[dict[str, Any]]:
    msgs = request.get("messages")
    return [m for m in msgs if isinstance(m, dict)] if isinstance(msgs, list) else []


def assistant_turn_index(request: dict[str, Any]) -> int:
    """How many assistant messages the conversation already holds (0 for the first turn)."""
    return sum(1 for m in request_messages(request) if m.get("role") == "assistant")


def last_user_text(request: dict[str, Any]) -> str:
    for m in reversed(request_messages(request)):
        if m.get("role") == "user":
            return message_text(m)
    return ""


def declared_tools(request: dict[str, Any]) -> list[str]:
    """Names of the function tools the request offers."""
    names = []
    for t in request.get("tools") or []:
        fn = t.get("function") if isinstance(t, dict) else None
        if isinstance(fn, dict) and isinstance(fn.get("name"), str):
            names.append(fn["name"])
    return names


# --- A fixed script, for tests -------------------------------------------------------------------

TurnSource = Turn | Callable[[dict[str, Any], random.Random], Turn]


class ScriptedPolicy:
    """Plays a fixed list of turns, chosen by how many assistant turns the conversation holds.

    Indexing by the conversation rather than by a call counter keeps it stateless, so the same
    script can serve many concurrent conversations. An entry may be a callable for turns that
    depend on the request. Past the end of the script it keeps answering with ``after_end``.
    """

    def __init__(self, turns: Sequence[TurnSource], *, name: str = "sim-scripted",
                 after_end: TurnSource | None = None) -> None:
        if not name.startswith("sim-"):
            raise ValueError(f"simulated model names must start with 'sim-', got {name!r}")
        self.name = name
        self.turns = list(turns)
        self.after_end: TurnSource = after_end if after_end is not None else Turn(
            content="(simulated) The script has no further turns.")

    def respond(self, request: dict[str, Any], rng: random.Random) -> Turn:
        i = assistant_turn_index(request)
        source = self.turns[i] if i < len(self.turns) else self.after_end
        return source(request, rng) if callable(source) else source
