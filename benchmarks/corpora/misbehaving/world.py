"""The tasks of the misbehaving corpus and the data its tools answer with (all deterministic).

A task is a numbered list of questions, each answered by one tool call; the expected answer
strings come from the same data, so an episode's outcome is checked against values, not wording.
"""

from __future__ import annotations

import hashlib
import json
import random
import re
from dataclasses import dataclass
from typing import Any

CITIES = ("Lisbon", "Oslo", "Nairobi", "Lima", "Hanoi", "Tallinn", "Porto Alegre", "Kraków", "Osaka", "Quito")
CURRENCIES = ("EUR", "USD", "GBP", "JPY", "CHF")
CONDITIONS = ("sunny", "cloudy", "light rain", "fog", "snow showers")


def _h(*parts: Any) -> int:
    return int(hashlib.sha256("|".join(map(str, parts)).encode()).hexdigest()[:12], 16)


# Healthy answers vary the way real APIs do: optional members left out for some entities, lists
# empty for some (deterministic per argument, so the same call always answers the same).
def _optional(kind: str, key: str) -> bool:
    return _h("opt", kind, key) % 4 != 0


def weather(city: str) -> dict[str, Any]:
    out: dict[str, Any] = {"city": city, "temperature_c": _h("t", city) % 35 - 5,
                           "condition": CONDITIONS[_h("c", city) % 5]}
    if _optional("w", city):
        out["observed_at"] = "2026-03-14T09:00:00Z"
    out["alerts"] = ["high wind"] if _h("a", city) % 3 == 0 else []
    return out


def population(city: str) -> dict[str, Any]:
    out: dict[str, Any] = {"city": city, "population": 150_000 + _h("p", city) % 4_000_000}
    if _optional("p", city):
        out["year"] = 2024
    return out


def convert(amount: float, source: str, target: str) -> dict[str, Any]:
    rate = round(0.5 + (_h("r", source, target) % 1500) / 1000, 4)
    return {"amount": amount, "from": source, "to": target, "rate": rate, "converted": round(amount * rate, 2)}


def order(order_id: str) -> dict[str, Any]:
    out: dict[str, Any] = {"order_id": order_id,
                           "status": ("shipped", "processing", "delivered")[_h("o", order_id) % 3]}
    if _optional("o", order_id):
        out["eta"] = f"2026-04-{1 + _h('e', order_id) % 28:02d}"
    return out


TOOL_SCHEMAS: list[dict[str, Any]] = [
    {"type": "function", "function": {"name": "get_weather", "description": "Current weather in a city.",
     "parameters": {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}}},
    {"type": "function", "function": {"name": "get_population", "description": "Population of a city.",
     "parameters": {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}}},
    {"type": "function", "function": {"name": "convert_currency", "description": "Convert an amount.",
     "parameters": {"type": "object", "properties": {"amount": {"type": "number"}, "source": {"type": "string"},
                                                     "target": {"type": "string"}},
                    "required": ["amount", "source", "target"]}}},
    {"type": "function", "function": {"name": "get_order_status", "description": "Status of an order.",
     "parameters": {"type": "object", "properties": {"order_id": {"type": "string"}}, "required": ["order_id"]}}},
]


@dataclass(frozen=True)
class Question:
    tool: str
    args: dict[str, Any]
    field: str  # the result field that answers it
    text: str

    def expected(self) -> str:
        return str(TOOLS[self.tool](**self.args)[self.field])


TOOLS = {"get_weather": weather, "get_population": population, "convert_currency": convert,
         "get_order_status": order}


def make_question(rng: random.Random) -> Question:
    kind = rng.choice(("temp", "cond", "pop", "fx", "order"))
    city = rng.choice(CITIES)
    if kind == "temp":
        return Question("get_weather", {"city": city}, "temperature_c", f"What is the temperature in {city}?")
    if kind == "cond":
        return Question("get_weather", {"city": city}, "condition", f"What is the weather like in {city}?")
    if kind == "pop":
        return Question("get_population", {"city": city}, "population", f"How many people live in {city}?")
    if kind == "fx":
        src, dst = rng.sample(CURRENCIES, 2)
        amount = rng.choice((50, 120, 999, 2500))
        return Question("convert_currency", {"amount": amount, "source": src, "target": dst}, "converted",
                        f"Convert {amount} {src} to {dst}.")
    oid = f"A-{rng.randint(1000, 9999)}"
    return Question("get_order_status", {"order_id": oid}, "status", f"What is the status of order {oid}?")


@dataclass(frozen=True)
class Task:
    task_id: str
    questions: tuple[Question, ...]
    json_mode: bool

    def prompt(self) -> str:
        lines = [f"{i + 1}. {q.text}" for i, q in enumerate(self.questions)]
        tail = ("\nReply with a JSON object {\"answers\": [...]} holding one string per question."
                if self.json_mode else "\nAnswer every question, one numbered line each.")
        return "Please help with the following:\n" + "\n".join(lines) + tail

    def check(self, answer: str | None) -> bool:
        """Whether the final answer carries every expected value (JSON tasks: as a JSON object)."""
        if not answer:
            return False
        want = [q.expected() for q in self.questions]
        if self.json_mode:
            try:
                got = json.loads(answer)
            except ValueError:
                return False
            return isinstance(got, dict) and [str(x) for x in got.get("answers") or []] == want
        return all(re.search(rf"(?<![\w.]){re.escape(w)}(?![\w])", answer) for w in want)


def parse_questions(prompt: str) -> list[Question] | None:
    """The model's side: recover the questions from the prompt text."""
    out = []
    for line in prompt.splitlines():
        m = re.match(r"\s*\d+\.\s+(.*)$", line)
        if not m:
            continue
        text = m.group(1)
        if mm := re.match(r"What is the temperature in (.+)\?", text):
            out.append(Question("get_weather", {"city": mm.group(1)}, "temperature_c", text))
        elif mm := re.match(r"What is the weather like in (.+)\?", text):
            out.append(Question("get_weather", {"city": mm.group(1)}, "condition", text))
        elif mm := re.match(r"How many people live in (.+)\?", text):
            out.append(Question("get_population", {"city": mm.group(1)}, "population", text))
        elif mm := re.match(r"Convert (\d+) (\w+) to (\w+)\.", text):
            out.append(Question("convert_currency", {"amount": int(mm.group(1)), "source": mm.group(2),
                                                     "target": mm.group(3)}, "converted", text))
        elif mm := re.match(r"What is the status of order (\S+)\?", text):
            out.append(Question("get_order_status", {"order_id": mm.group(1)}, "status", text))
    return out or None
