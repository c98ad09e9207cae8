"""The simulated model that plays the reference agent's tasks (served by ``SimulatedModelServer``).

:class:`ReferencePolicy` re-reads the conversation every turn (the server is stateless), works
through the numbered questions, and reacts to what it was *shown*: it answers from the tool results
it saw, so wrong values and truncations propagate into wrong answers; after error-like results it
retries or gives up with seeded probabilities; its turns right after anomalies carry higher
uncertainty, which the server turns into higher logprob entropy. It is simulated behaviour, not a
model of any real LLM.

It lives apart from the agent loop in ``reference_agent`` because the two sides of the closed loop
must stay independent: the agent only talks to the policy over HTTP, through the real SDK.
"""

from __future__ import annotations

import json
import random
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from agentchaos_otel.signals import error_marker, mojibake_score, unicode_anomaly
from agentchaos_otel.sim.policy import Turn, message_text, request_messages
from agentchaos_otel.sim.reference_tasks import CITIES, SubQuery, format_number, parse_prompt

__all__ = ["ReferencePolicy"]


@dataclass
class _Obs:
    """One executed tool call as the model sees it in the conversation."""

    name: str
    args: dict[str, Any] | None
    result: str


@dataclass(frozen=True)
class _Step:
    tool: str
    args: dict[str, Any]
    field: str  # what to read from the result
    final: bool  # whether this step's value is the answer


# Where each field sits in the original result: the fallback when its key has drifted beyond
# recognition (key renames keep the order of keys).
_POSITION = {"temperature_c": 1, "condition": 2, "value": 0, "population": 1, "utc_offset": 1,
             "flights": 3, "flight_id": 1, "price_usd": 2}
_ALIASES = {"temperature_c": ("temp",), "condition": ("cond", "sky"), "value": ("converted", "result"),
            "population": ("pop", "inhabit"), "utc_offset": ("offset", "utc", "zone"),
            "flights": ("flight", "option"), "flight_id": ("flight", "number"),
            "price_usd": ("price", "usd", "cost", "fare")}


def _norm(key: Any) -> str:
    return re.sub(r"[^a-z0-9]", "", str(key).casefold())


def _skeleton(key: Any) -> str:
    """Consonants of a key: "temperature_c", "temperatureC", "tmprtr_c" and "data_temperature_c"
    all contain "tmprtrc", which is how a reader still recognises a drifted key."""
    return re.sub(r"[aeiou]", "", _norm(key))


def _loose_json(text: str) -> Any:
    """Parse a result the way a model reads one: strict JSON, else the key/value pairs it can see."""
    try:
        return json.loads(text)
    except (ValueError, TypeError):
        pass
    pairs: dict[str, Any] = {}
    for m in re.finditer(r'"([^"\\]{1,60})"\s*:\s*("(?:[^"\\]|\\.)*"|-?\d+(?:\.\d+)?)', text):
        try:
            pairs.setdefault(m.group(1), json.loads(m.group(2)))
        except ValueError:
            continue
    objects = []
    for m in re.finditer(r"\{[^{}\[\]]*\}", text):
        try:
            obj = json.loads(m.group(0))
        except ValueError:
            continue
        if isinstance(obj, dict) and any("flght" in _skeleton(k) for k in obj):
            objects.append(obj)
    if objects:
        pairs["flights"] = objects
    return pairs or None


def _pick(obj: Mapping[str, Any], field_name: str, position: int | None = None) -> Any:
    """A field by exact key, then by drifted spelling, then by alias, then by position."""
    if field_name in obj:
        return obj[field_name]
    wanted = _skeleton(field_name)
    for key, value in obj.items():
        if wanted and wanted in _skeleton(key):
            return value
    for sub in _ALIASES.get(field_name, ()):
        for key, value in obj.items():
            if sub in _norm(key) or _skeleton(sub) in _skeleton(key):
                return value
    values = list(obj.values())
    pos = _POSITION.get(field_name, 0) if position is None else position
    return values[pos] if pos < len(values) else None


def _number(value: Any) -> float | int | None:
    if isinstance(value, bool):
        return None
    if isinstance(value, int | float):
        return value
    if isinstance(value, str):
        m = re.fullmatch(r"\s*(-?\d+(?:\.\d+)?)\s*", value)
        if m:
            return float(m.group(1)) if "." in m.group(1) else int(m.group(1))
    return None


def _read(field_name: str, parsed: Any) -> Any:
    """The value a step needs from a parsed result, or None when it is not there."""
    if not isinstance(parsed, Mapping):
        return None
    value = _pick(parsed, field_name)
    if field_name in ("temperature_c", "value", "population"):
        return _number(value)
    if field_name == "flights":
        if not isinstance(value, list):
            return None
        flights = []
        for f in value:
            if isinstance(f, Mapping):
                fid = _pick(f, "flight_id", 0)
                price = _number(_pick(f, "price_usd"))
                if isinstance(fid, str) and price is not None:
                    flights.append((price, fid))
        return min(flights)[1] if flights else None
    if field_name == "flight_id":
        return value if isinstance(value, str) else None
    return value if isinstance(value, str) and value else None


def _classify(result: str, field_name: str) -> tuple[str, Any]:
    """'ok' with the value, or 'error' / 'empty' / 'unreadable' for what the model could not use."""
    text = (result or "").strip()
    if text in ("", "{}", "[]", "null", '""'):
        return "empty", None
    parsed = _loose_json(text)
    if isinstance(parsed, Mapping) and not parsed:
        return "empty", None
    if isinstance(parsed, Mapping) and any(_norm(k) in ("error", "errors") for k in parsed):
        return "error", None
    value = _read(field_name, parsed)
    if value is not None:
        return "ok", value
    if error_marker(text):
        return "error", None
    return "unreadable", None


def _plan(q: SubQuery, j: int, values: list[Any]) -> _Step | None:
    """Step j of a sub-query given the values read at its earlier steps (None once it is done)."""
    if q.kind in ("temp_c", "condition"):
        return _Step("get_weather", {"city": q.arg("city")},
                     "temperature_c" if q.kind == "temp_c" else "condition", True) if j == 0 else None
    if q.kind == "temp_f":
        if j == 0:
            return _Step("get_weather", {"city": q.arg("city")}, "temperature_c", False)
        if j == 1:
            return _Step("convert_temperature", {"value": values[0], "from_unit": "C", "to_unit": "F"},
                         "value", True)
        return None
    if q.kind == "population":
        return _Step("get_population", {"city": q.arg("city")}, "population", True) if j == 0 else None
    if q.kind == "utc_offset":
        return _Step("get_timezone", {"city": q.arg("city")}, "utc_offset", True) if j == 0 else None
    if q.kind == "booking":
        if j == 0:
            return _Step("search_flights", {"origin": q.arg("origin"), "destination": q.arg("destination"),
                                            "date": q.arg("date")}, "flights", False)
        if j == 1:
            return _Step("book_flight", {"flight_id": values[0]}, "flight_id", True)
        return None
    return None


def _answer_sentence(q: SubQuery, value: Any) -> str:
    if value is None:
        what = {"temp_c": "the temperature in {city}", "temp_f": "the temperature in {city}",
                "condition": "the weather in {city}", "population": "the population of {city}",
                "utc_offset": "the UTC offset of {city}",
                "booking": "a flight from {origin} to {destination}"}[q.kind]
        return f"I could not get {what.format(**dict(q.args))}."
    v = format_number(value)
    a = dict(q.args)
    return {"temp_c": f"It is {v} C in {a.get('city')}.",
            "temp_f": f"It is {v} F in {a.get('city')}.",
            "condition": f"The weather in {a.get('city')} is {v}.",
            "population": f"{a.get('city')} has a population of {v}.",
            "utc_offset": f"{a.get('city')} is at UTC{v}.",
            "booking": f"Booked flight {v} from {a.get('origin')} to {a.get('destination')}."}[q.kind]


@dataclass
class _Replay:
    """Where the conversation stands: per-question answers, the current step and its failures."""

    item: int = 0
    step: int = 0
    values: list[Any] = field(default_factory=list)
    answers: dict[int, Any] = field(default_factory=dict)
    failures: int = 0  # consecutive unusable results at the current step
    last_failure: str | None = None  # class of the most recent result if it was unusable
    last_failed_args: dict[str, Any] | None = None


class ReferencePolicy:
    """The simulated model behind the reference agent (see the module docstring).

    ``mistake_rate``: chance per fresh tool call of a slip (a neighbouring city, the second
    cheapest flight), the clean-run failure baseline. After an error-like result it retries with
    probability ``retry_on_error`` and gives up (ends with text, no tool call) with ``give_up_rate``;
    otherwise it moves on and reports the fact as unavailable. Empty results use ``retry_on_empty``
    and ``give_up_on_empty``. At most ``max_attempts`` tries per step.
    """

    def __init__(self, *, mistake_rate: float = 0.0, retry_on_error: float = 0.5, give_up_rate: float = 0.1,
                 retry_on_empty: float = 0.2, give_up_on_empty: float = 0.2, max_attempts: int = 3,
                 base_uncertainty: float = 0.1, name: str = "sim-reference") -> None:
        for label, p in (("mistake_rate", mistake_rate), ("retry_on_error", retry_on_error),
                         ("give_up_rate", give_up_rate), ("retry_on_empty", retry_on_empty),
                         ("give_up_on_empty", give_up_on_empty)):
            if not 0.0 <= p <= 1.0:
                raise ValueError(f"{label} must be in [0, 1], got {p}")
        if retry_on_error + give_up_rate > 1.0 or retry_on_empty + give_up_on_empty > 1.0:
            raise ValueError("retry and give-up probabilities must sum to at most 1")
        if not name.startswith("sim-"):
            raise ValueError(f"simulated model names must start with 'sim-', got {name!r}")
        self.name = name
        self.mistake_rate = mistake_rate
        self.retry_on_error = retry_on_error
        self.give_up_rate = give_up_rate
        self.retry_on_empty = retry_on_empty
        self.give_up_on_empty = give_up_on_empty
        self.max_attempts = max(1, max_attempts)
        self.base_uncertainty = base_uncertainty

    # -- reading the conversation
    @staticmethod
    def _task(messages: list[dict[str, Any]]) -> tuple[int, list[SubQuery]]:
        for i in range(len(messages) - 1, -1, -1):
            if messages[i].get("role") == "user":
                subs = parse_prompt(message_text(messages[i]))
                if subs:
                    return i, subs
        return -1, []

    @staticmethod
    def _observations(messages: list[dict[str, Any]]) -> list[_Obs]:
        pending: dict[str, tuple[str, str]] = {}
        out = []
        for m in messages:
            if m.get("role") == "assistant":
                for call in m.get("tool_calls") or []:
                    fn = call.get("function") if isinstance(call, dict) else None
                    if isinstance(fn, dict):
                        pending[str(call.get("id"))] = (str(fn.get("name") or ""),
                                                        str(fn.get("arguments") or ""))
            elif m.get("role") == "tool":
                name, raw = pending.pop(str(m.get("tool_call_id")), ("", ""))
                try:
                    args = json.loads(raw) if raw else {}
                except ValueError:
                    args = None
                out.append(_Obs(name, args if isinstance(args, dict) else None, message_text(m)))
        return out

    @staticmethod
    def _broken_previous_turn(messages: list[dict[str, Any]]) -> bool:
        """Whether our own last assistant turn came back empty, garbled, truncated or as an error."""
        last = next((m for m in reversed(messages) if m.get("role") == "assistant"), None)
        if last is None:
            return False
        text = message_text(last)
        calls = last.get("tool_calls") or []
        if not calls and not text.strip():
            return True
        if text and (error_marker(text) or mojibake_score(text) > 0.01 or unicode_anomaly(text) > 0.05):
            return True
        for call in calls:
            fn = call.get("function") if isinstance(call, dict) else None
            raw = fn.get("arguments") if isinstance(fn, dict) else None
            try:
                json.loads(raw or "{}")
            except (TypeError, ValueError):
                return True
        return False

    def _advance(self, st: _Replay, subs: Sequence[SubQuery]) -> None:
        st.step += 1
        if _plan(subs[st.item], st.step, st.values) is None:
            st.item += 1
            st.step = 0
            st.values = []
        st.failures = 0
        st.last_failure = None
        st.last_failed_args = None

    def _skip(self, st: _Replay) -> None:
        st.answers[st.item] = None
        st.item += 1
        st.step = 0
        st.values = []
        st.failures = 0
        st.last_failure = None
        st.last_failed_args = None

    def _replay(self, subs: Sequence[SubQuery], observations: Sequence[_Obs]) -> _Replay:
        st = _Replay()
        for obs in observations:
            if st.item >= len(subs):
                break
            step = _plan(subs[st.item], st.step, st.values)
            if step is None:
                break
            if st.last_failure is not None and not self._is_retry(obs, step, st, subs):
                self._skip(st)  # the model moved on after the failure
                if st.item >= len(subs):
                    break
                step = _plan(subs[st.item], st.step, st.values)
                if step is None:
                    break
            if obs.name != step.tool:
                continue  # a call we did not intend (e.g. rewritten in transit): not progress
            kind, value = _classify(obs.result, step.field)
            if kind == "ok":
                st.values.append(value)
                if step.final:
                    st.answers[st.item] = value
                self._advance(st, subs)
            else:
                st.failures += 1
                st.last_failure = kind
                st.last_failed_args = obs.args
                if st.failures >= self.max_attempts:
                    self._skip(st)
        return st

    @staticmethod
    def _is_retry(obs: _Obs, step: _Step, st: _Replay, subs: Sequence[SubQuery]) -> bool:
        if obs.name != step.tool:
            return False
        if obs.args in (step.args, st.last_failed_args):
            return True
        nxt = _plan(subs[st.item + 1], 0, []) if st.item + 1 < len(subs) else None
        return not (nxt is not None and nxt.tool == obs.name and obs.args == nxt.args)

    # -- deciding the next turn
    def _final(self, subs: Sequence[SubQuery], st: _Replay, *, gave_up: str | None = None,
               uncertainty: float) -> Turn:
        lines = []
        if gave_up:
            lines.append(f"I could not finish: {gave_up}")
        else:
            lines.append("Here are the answers (simulated):")
        for i, q in enumerate(subs):
            if i in st.answers or not gave_up:
                lines.append(f"{i + 1}. {_answer_sentence(q, st.answers.get(i))}")
        return Turn(content="\n".join(lines), uncertainty=uncertainty)

    def _slip(self, step: _Step, rng: random.Random) -> dict[str, Any]:
        args = dict(step.args)
        if "city" in args and args["city"] in CITIES:
            i = CITIES.index(args["city"])
            args["city"] = CITIES[(i + rng.choice((-1, 1))) % len(CITIES)]
        elif "value" in args and isinstance(args["value"], int | float):
            args["from_unit"], args["to_unit"] = "F", "C"
        elif "origin" in args:
            args["origin"], args["destination"] = args["destination"], args["origin"]
        return args

    def respond(self, request: dict[str, Any], rng: random.Random) -> Turn:
        messages = request_messages(request)
        start, subs = self._task(messages)
        if not subs:
            return Turn(content="(simulated) I can only work on the reference tasks: please send numbered "
                                "questions.", uncertainty=0.3)
        st = self._replay(subs, self._observations(messages[start + 1:]))
        anomaly = st.last_failure is not None or self._broken_previous_turn(messages[start + 1:])
        base = min(1.0, max(0.0, self.base_uncertainty + rng.uniform(-0.03, 0.04)))
        uncertainty = min(1.0, base + (rng.uniform(0.25, 0.45) if anomaly else 0.0))
        if st.item >= len(subs):
            return self._final(subs, st, uncertainty=uncertainty)
        step = _plan(subs[st.item], st.step, st.values)
        assert step is not None
        if st.last_failure is not None:
            retry_p, give_up_p = ((self.retry_on_empty, self.give_up_on_empty) if st.last_failure == "empty"
                                  else (self.retry_on_error, self.give_up_rate))
            r = rng.random()
            if r < give_up_p:
                return self._final(subs, st, uncertainty=min(1.0, uncertainty + 0.1),
                                   gave_up=f"the {step.tool} tool did not return a usable result.")
            if r < give_up_p + retry_p:
                return Turn(tool_calls=[(step.tool, dict(step.args))], uncertainty=uncertainty)
            self._skip(st)
            if st.item >= len(subs):
                return self._final(subs, st, uncertainty=uncertainty)
            step = _plan(subs[st.item], st.step, st.values)
            assert step is not None
        args = dict(step.args)
        if self.mistake_rate and rng.random() < self.mistake_rate:
            args = self._slip(step, rng)
            uncertainty = min(1.0, uncertainty + 0.15)
        return Turn(tool_calls=[(step.tool, args)], uncertainty=uncertainty)
