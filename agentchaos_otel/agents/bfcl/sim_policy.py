"""A simulated model for BFCL multi-turn tasks (simulated: never evidence about a real model).

It lets the whole harness (SDK, injectors, traces, the official checker, campaigns) run end to
end with no LLM. It knows the answers: it recognises the task from the conversation, builds a
per-turn plan from the turn's ground-truth calls with seeded mistakes (skipped call, wrong
argument value, duplicated call), and follows it. What makes it useful for fault studies is how
it reacts to tool results that look wrong, with the mechanisms the tool-response study found:

* errors that carry no content (timeout, rate limit) often make it *retry the same call*; the
  tool had actually run, so a state-changing call is applied twice;
* empty results make it *give up* on the turn and answer with text;
* content-carrying faults (truncated, renamed keys, wrong values) are ignored, because the plan
  does not depend on tool output, just as the study saw no effect from them.

It is stateless: each request is answered by re-reading the conversation (which turn, which
planned calls were already issued, what the last tool result looked like). The per-turn plan
comes from a random stream derived from (policy seed, task, turn), so it is the same at every
step of the turn; reactions use the request-derived stream the server passes in.
"""

from __future__ import annotations

import json
import random
import threading
from dataclasses import dataclass, field
from typing import Any

from agentchaos_otel.agents.bfcl.env import BfclEnv, render_result
from agentchaos_otel.agents.bfcl.tasks import BfclTask, Call, load_tasks
from agentchaos_otel.seeds import derive_seed
from agentchaos_otel.sim.policy import Turn, declared_tools, message_text, request_messages

SIM_LABEL = "(simulated)"
# What a tool result looked like to the model, as the policy classifies it.
ANOMALY_KINDS = ("timeout", "rate_limit", "empty", "malformed", "error")


@dataclass(frozen=True)
class MistakeRates:
    """Per planned call: probability to skip it, to get one argument wrong, to issue it twice."""

    skip: float = 0.0
    wrong_arg: float = 0.0
    extra: float = 0.0

    @classmethod
    def default(cls) -> MistakeRates:
        """Rates that put the simulated clean success at 30-40%, near the study's 29.5% (a choice, not a fit)."""
        return cls(skip=0.09, wrong_arg=0.09, extra=0.05)


def _default_retry() -> dict[str, float]:
    return {"rate_limit": 0.8, "timeout": 0.7, "malformed": 0.15, "error": 0.1, "empty": 0.05}


def _default_abandon() -> dict[str, float]:
    return {"rate_limit": 0.7, "timeout": 0.5, "empty": 0.55, "malformed": 0.05, "error": 0.1}


def _default_bump() -> dict[str, float]:
    return {"timeout": 0.45, "rate_limit": 0.45, "empty": 0.4, "malformed": 0.3, "error": 0.3}


@dataclass(frozen=True)
class FaultReactions:
    """How the simulated model reacts to an anomalous tool result, by anomaly kind.

    After such a result it retries the identical call with probability ``retry[kind]`` (at most
    ``max_retries`` times in a row), else gives up the turn with text with ``abandon[kind]``,
    else moves on. The defaults order the kinds as the study measured (timeout and rate_limit
    retried most, empty abandoned most) but are larger, so effects show in small simulated runs.
    """

    retry: dict[str, float] = field(default_factory=_default_retry)
    abandon: dict[str, float] = field(default_factory=_default_abandon)
    max_retries: int = 2
    # Uncertainty the next turns get after an anomaly (decays by ``decay`` per later step).
    bump: dict[str, float] = field(default_factory=_default_bump)
    base_uncertainty: float = 0.08
    decay: float = 0.6

    @classmethod
    def none(cls) -> FaultReactions:
        """Never retry or abandon: follow the plan whatever the tools say."""
        return cls(retry={}, abandon={})


_CLOSERS = {"{": "}", "[": "]", '"': '"'}


def classify_result(text: str) -> str:
    """What a tool message looks like to the policy: one of ANOMALY_KINDS, or 'ok'.

    ``null`` is a void call's normal answer (``mkdir``, ``touch``) and a complete Python repr
    (BFCL's fallback for results JSON cannot encode) is a normal answer too; only text that
    opens a JSON structure and is cut before closing it counts as malformed.
    """
    stripped = (text or "").strip()
    if not stripped:
        return "empty"
    if stripped.startswith("Error during execution"):
        return "error"
    try:
        value = json.loads(stripped)
    except ValueError:
        opener = stripped[0]
        if opener in _CLOSERS and not (len(stripped) > 1 and stripped.endswith(_CLOSERS[opener])):
            return "malformed"
        return "ok"
    if value in ({}, [], ""):
        return "empty"
    if isinstance(value, dict):
        err = value.get("error")
        status = value.get("status")
        flat = str(err).lower() if err is not None else ""
        if status == 429 or "rate" in flat:
            return "rate_limit"
        if "timeout" in flat or "timed out" in flat:
            return "timeout"
        if err is not None:
            return "error"
    return "ok"


@dataclass
class _Issued:
    name: str
    args: Any
    results: list[str]


def _current_turn(messages: list[dict[str, Any]]) -> tuple[int, list[_Issued], bool]:
    """User messages so far, the calls issued since the last user message, and whether the
    model has already answered with text after it."""
    users = [i for i, m in enumerate(messages) if m.get("role") == "user"]
    start = users[-1] + 1 if users else 0
    issued: list[_Issued] = []
    by_id: dict[str, _Issued] = {}
    answered = False
    for m in messages[start:]:
        role = m.get("role")
        if role == "assistant":
            calls = m.get("tool_calls") or []
            if not calls:
                answered = True
            for call in calls:
                fn = (call.get("function") or {}) if isinstance(call, dict) else {}
                raw = fn.get("arguments")
                try:
                    args = json.loads(raw) if isinstance(raw, str) else raw
                except ValueError:
                    args = None
                item = _Issued(str(fn.get("name") or ""), args, [])
                issued.append(item)
                if isinstance(call, dict) and call.get("id"):
                    by_id[str(call["id"])] = item
        elif role == "tool":
            item = by_id.get(str(m.get("tool_call_id")))
            if item is None and issued:
                item = issued[-1]
            if item is not None:
                item.results.append(message_text(m))
    return len(users), issued, answered


def _canon(args: Any) -> str:
    try:
        return json.dumps(args, sort_keys=True)
    except (TypeError, ValueError):
        return repr(args)


def _wrong_value(value: Any, rng: random.Random) -> Any:
    if isinstance(value, bool):
        return not value
    if isinstance(value, int):
        return value + rng.choice([-2, -1, 1, 2])
    if isinstance(value, float):
        return round(value * rng.choice([0.9, 1.1]) + 1.0, 2)
    if isinstance(value, str):
        return value + "_2" if value else "x"
    if isinstance(value, list) and value:
        return value[:-1] if len(value) > 1 else value + value
    return value


class BfclSimPolicy:
    """Simulated BFCL model for :class:`agentchaos_otel.sim.server.SimulatedModelServer`."""

    def __init__(self, tasks: list[BfclTask] | None = None, *, name: str = "sim-bfcl", seed: int = 0,
                 mistakes: MistakeRates | None = None, reactions: FaultReactions | None = None) -> None:
        if not name.startswith("sim-"):
            raise ValueError(f"simulated model names must start with 'sim-', got {name!r}")
        self.name = name
        self.seed = seed
        self.mistakes = mistakes if mistakes is not None else MistakeRates.default()
        self.reactions = reactions if reactions is not None else FaultReactions()
        self.tasks = list(tasks) if tasks is not None else load_tasks()
        self._by_first: dict[str, list[BfclTask]] = {}
        for task in self.tasks:
            self._by_first.setdefault(self._opening(task), []).append(task)
        self._plans: dict[tuple[str, int, str], list[Call]] = {}
        self._expected: dict[str, dict[tuple[str, str], str]] = {}
        self._tool_names: dict[str, frozenset[str]] = {}
        self._lock = threading.Lock()

    @staticmethod
    def _opening(task: BfclTask) -> str:
        return "\n".join(message_text(m) for m in task.turn_messages(0))

    # -- recognising the task and turn
    def identify(self, request: dict[str, Any]) -> tuple[BfclTask, int] | None:
        """The task and turn a conversation belongs to, from its user messages and tools."""
        messages = request_messages(request)
        users = [message_text(m) for m in messages if m.get("role") == "user"]
        if not users:
            return None
        tools = set(declared_tools(request))
        for task in self._by_first.get(users[0], []):
            opened: list[str] = []
            for turn in range(task.n_turns):
                opened.extend(message_text(m) for m in task.turn_messages(turn))
                if len(opened) >= len(users):
                    break
            if opened[: len(users)] != users:
                continue
            if tools and not self._offered(task) <= tools:
                continue
            turn = self._turn_of(task, len(users))
            if turn is not None:
                return task, turn
        return None

    def _offered(self, task: BfclTask) -> frozenset[str]:
        names = self._tool_names.get(task.id)
        if names is None:
            names = frozenset(t["function"]["name"] for t in task.tools_at(0))
            self._tool_names[task.id] = names
        return names

    @staticmethod
    def _turn_of(task: BfclTask, n_user: int) -> int | None:
        count = 0
        for turn in range(task.n_turns):
            count += len(task.turn_messages(turn))
            if count >= n_user:
                return turn
        return None

    # -- the per-turn plan
    def plan(self, task: BfclTask, turn: int, request_seed: Any = None) -> list[Call]:
        """The calls the simulated model means to make in a turn, mistakes included."""
        key = (task.id, turn, repr(request_seed))
        cached = self._plans.get(key)
        if cached is not None:
            return cached
        rng = random.Random(derive_seed("bfcl-plan", self.seed, task.id, turn, repr(request_seed)))
        out: list[Call] = []
        m = self.mistakes
        for call in task.ground_truth_calls(turn):
            # Compare in JSON form: that is how the arguments come back in the conversation.
            call = Call(call.name, json.loads(json.dumps(call.args)), call.source)
            roll = rng.random()
            if roll < m.skip:
                continue
            if roll < m.skip + m.wrong_arg and call.args:
                key_name = rng.choice(sorted(call.args))
                args = dict(call.args)
                args[key_name] = _wrong_value(args[key_name], rng)
                call = Call(call.name, args, call.source + " [wrong value]")
            out.append(call)
            if rng.random() < m.extra:
                out.append(call)
        self._plans[key] = out
        return out

    def expected_kinds(self, task: BfclTask) -> dict[tuple[str, str], str]:
        """How each ground-truth call's genuine result looks, from a shadow run on fresh instances.

        Some APIs answer normally with something that looks empty (``cd('..')`` returns ``{}``);
        a model that knows the tools is not alarmed by that, so the policy only reacts to
        anomalies the API itself does not explain.
        """
        with self._lock:
            cached = self._expected.get(task.id)
        if cached is not None:
            return cached
        env = BfclEnv(task)
        out: dict[tuple[str, str], str] = {}
        for turn in range(task.n_turns):
            for call in task.ground_truth_calls(turn):
                kind = classify_result(render_result(env.execute(call.name, call.args)))
                out.setdefault((call.name, _canon(call.args)), kind)
        with self._lock:
            self._expected[task.id] = out
        return out

    def anomaly(self, task: BfclTask, item: _Issued) -> str:
        """The anomaly a model would see in an issued call's results ('ok' when none)."""
        kinds = [classify_result(t) for t in item.results]
        kind = next((k for k in kinds if k != "ok"), "ok")
        if kind != "ok" and self.expected_kinds(task).get((item.name, _canon(item.args))) == kind:
            return "ok"
        return kind

    # -- answering
    def respond(self, request: dict[str, Any], rng: random.Random) -> Turn:
        found = self.identify(request)
        if found is None:
            return Turn(content=f"{SIM_LABEL} I do not recognise this BFCL task.", uncertainty=0.5)
        task, turn = found
        plan = self.plan(task, turn, request.get("seed"))
        _, issued, answered = _current_turn(request_messages(request))
        r = self.reactions
        uncertainty = self._uncertainty(task, issued)
        if answered:
            return Turn(content=f"{SIM_LABEL} This turn is complete.", uncertainty=uncertainty)
        pos = 0
        for item in issued:
            if pos < len(plan) and item.name == plan[pos].name and item.args == plan[pos].args:
                pos += 1
        if issued:
            last = issued[-1]
            kind = self.anomaly(task, last)
            if kind != "ok":
                repeats = 0
                for item in reversed(issued[:-1]):
                    if item.name == last.name and item.args == last.args:
                        repeats += 1
                    else:
                        break
                if (repeats < r.max_retries and isinstance(last.args, dict)
                        and rng.random() < r.retry.get(kind, 0.0)):
                    return Turn(tool_calls=[(last.name, dict(last.args))], uncertainty=uncertainty)
                if rng.random() < r.abandon.get(kind, 0.0):
                    return Turn(content=f"{SIM_LABEL} The tool did not give a usable answer ({kind}); "
                                        "I cannot finish this request.", uncertainty=uncertainty)
        if pos >= len(plan):
            return Turn(content=f"{SIM_LABEL} Done with this request.", uncertainty=uncertainty)
        nxt = plan[pos]
        return Turn(tool_calls=[(nxt.name, dict(nxt.args))], uncertainty=uncertainty)

    def _uncertainty(self, task: BfclTask, issued: list[_Issued]) -> float:
        r = self.reactions
        level = r.base_uncertainty
        for age, item in enumerate(reversed(issued)):
            kind = self.anomaly(task, item)
            if kind != "ok":
                level += r.bump.get(kind, 0.0) * (r.decay ** age)
        return round(min(1.0, level), 4)
