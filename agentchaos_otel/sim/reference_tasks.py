"""The reference agent's world: tools over a simulated data table, multi-fact tasks and their grader.

The toolkit needs a tool-using agent whose success depends on what it was shown, so that faults
have measurable consequences without an LLM: wrong or truncated tool results lead to wrong
answers, and retrying a non-idempotent ``book_flight`` after an error that hid a real success
books twice, the failure path the tool-response study identified. All data here is simulated:
values are drawn from a table seeded by the city name, not from any real source, and every tool
result says so in its ``data_source`` field.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import random
import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

DATA_SOURCE = "simulated"
_TABLE_SEED = "agentchaos-sim-reference-table-v1"

CITIES: tuple[str, ...] = (
    "Lisbon", "Madrid", "Paris", "Berlin", "Rome", "Vienna", "Prague", "Warsaw", "Oslo", "Stockholm",
    "Helsinki", "Dublin", "Athens", "Istanbul", "Cairo", "Nairobi", "Lagos", "Johannesburg", "Mumbai",
    "Delhi", "Bangkok", "Singapore", "Jakarta", "Manila", "Seoul", "Tokyo", "Osaka", "Sydney",
    "Auckland", "Toronto", "Chicago", "Denver", "Lima", "Santiago", "Bogota", "Reykjavik",
)
# In the table so that AgentChaos' wrong-entity and stale-data faults ({"city": "Pyongyang"},
# {"city": "Springfield"}) return plausible but wrong data instead of an error; never asked about.
DECOY_CITIES: tuple[str, ...] = ("Pyongyang", "Springfield")

_CONDITIONS = ("clear", "sunny", "partly cloudy", "overcast", "light rain", "heavy rain", "drizzle",
               "fog", "snow", "thunderstorm", "windy")
_AIRLINES = ("SK", "LH", "AF", "IB", "TP", "KL", "AZ", "OS", "LX", "BA")


class ToolError(ValueError):
    """A tool refusing its arguments; the agent shows the message to the model."""


def _rng(*parts: Any) -> random.Random:
    key = "|".join(str(p) for p in (_TABLE_SEED, *parts))
    return random.Random(int.from_bytes(hashlib.sha256(key.encode()).digest()[:8], "big"))


def _city(name: Any) -> str:
    if not isinstance(name, str):
        raise ToolError(f"city must be a string, got {type(name).__name__}")
    wanted = name.strip().casefold()
    for city in CITIES + DECOY_CITIES:
        if city.casefold() == wanted:
            return city
    raise ToolError(f"unknown city: {name!r}")


def _weather(city: str) -> dict[str, Any]:
    r = _rng("weather", city)
    return {"temperature_c": round(r.uniform(-8.0, 34.0), 1), "condition": r.choice(_CONDITIONS),
            "humidity_pct": r.randint(18, 97), "wind_kph": r.randint(0, 55)}


# --- Tools (plain functions; what the agent executes) --------------------------------------------


def get_weather(city: str) -> dict[str, Any]:
    """Current weather for a city (simulated)."""
    c = _city(city)
    return {"city": c, **_weather(c), "data_source": DATA_SOURCE}


_UNITS = {"c": "C", "celsius": "C", "f": "F", "fahrenheit": "F", "k": "K", "kelvin": "K"}


def _unit(u: Any) -> str:
    key = str(u).strip().casefold().lstrip("°")
    if key not in _UNITS:
        raise ToolError(f"unknown temperature unit: {u!r}")
    return _UNITS[key]


def convert_temperature(value: float, from_unit: str, to_unit: str) -> dict[str, Any]:
    """Convert a temperature between C, F and K."""
    try:
        v = float(value)
    except (TypeError, ValueError):
        raise ToolError(f"value must be a number, got {value!r}") from None
    src, dst = _unit(from_unit), _unit(to_unit)
    celsius = {"C": v, "F": (v - 32.0) * 5.0 / 9.0, "K": v - 273.15}[src]
    out = {"C": celsius, "F": celsius * 9.0 / 5.0 + 32.0, "K": celsius + 273.15}[dst]
    return {"value": round(out, 1), "unit": dst, "data_source": DATA_SOURCE}


def get_population(city: str) -> dict[str, Any]:
    """Population of a city (simulated)."""
    c = _city(city)
    r = _rng("population", c)
    return {"city": c, "population": r.randint(150, 9000) * 1000 + r.randint(0, 999), "year": 2025,
            "data_source": DATA_SOURCE}


def get_timezone(city: str) -> dict[str, Any]:
    """UTC offset of a city (simulated)."""
    c = _city(city)
    hours = _rng("tz", c).randint(-10, 12)
    return {"city": c, "utc_offset": f"{'+' if hours >= 0 else '-'}{abs(hours):02d}:00",
            "data_source": DATA_SOURCE}


def _date(value: Any) -> str:
    try:
        return dt.date.fromisoformat(str(value)).isoformat()
    except ValueError:
        raise ToolError(f"date must be YYYY-MM-DD, got {value!r}") from None


def search_flights(origin: str, destination: str, date: str) -> dict[str, Any]:
    """Flights on a route and day (simulated), in departure order."""
    o, d, day = _city(origin), _city(destination), _date(date)
    if o == d:
        raise ToolError("origin and destination must differ")
    r = _rng("flights", o, d, day)
    flights = []
    for _ in range(r.randint(3, 5)):
        flights.append({"flight_id": f"{r.choice(_AIRLINES)}{r.randint(100, 9899)}",
                        "departure": f"{r.randint(5, 22):02d}:{r.choice((0, 15, 30, 45)):02d}",
                        "price_usd": r.randint(60, 900)})
    seen: set[int] = set()
    for f in flights:  # distinct prices: a unique cheapest flight keeps grading unambiguous
        while f["price_usd"] in seen:
            f["price_usd"] += 1
        seen.add(f["price_usd"])
    flights.sort(key=lambda f: f["departure"])
    return {"origin": o, "destination": d, "date": day, "flights": flights, "data_source": DATA_SOURCE}


_FLIGHT_ID = re.compile(r"^[A-Z]{2}\d{3,4}$")


def book_flight(flight_id: str) -> dict[str, Any]:
    """Book a seat (simulated). Not idempotent: every call is a new booking."""
    fid = str(flight_id).strip().upper()
    if not _FLIGHT_ID.match(fid):
        raise ToolError(f"invalid flight id: {flight_id!r}")
    booking = _rng("booking", fid).getrandbits(32)
    return {"booking_id": f"BK{booking:08X}", "flight_id": fid, "status": "confirmed",
            "data_source": DATA_SOURCE}


REFERENCE_TOOLS: dict[str, Callable[..., Any]] = {
    f.__name__: f for f in (get_weather, convert_temperature, get_population, get_timezone, search_flights,
                            book_flight)
}


def _spec(name: str, description: str, props: dict[str, dict[str, Any]]) -> dict[str, Any]:
    return {"type": "function", "function": {
        "name": name, "description": description,
        "parameters": {"type": "object", "properties": props, "required": list(props),
                       "additionalProperties": False}}}


_CITY = {"city": {"type": "string", "description": "City name, e.g. Lisbon"}}
TOOL_SPECS: dict[str, dict[str, Any]] = {
    "get_weather": _spec("get_weather", "Current weather for a city.", _CITY),
    "convert_temperature": _spec("convert_temperature", "Convert a temperature between units.", {
        "value": {"type": "number"},
        "from_unit": {"type": "string", "enum": ["C", "F", "K"]},
        "to_unit": {"type": "string", "enum": ["C", "F", "K"]}}),
    "get_population": _spec("get_population", "Population of a city.", _CITY),
    "get_timezone": _spec("get_timezone", "UTC offset of a city.", _CITY),
    "search_flights": _spec("search_flights", "Flights between two cities on a date.", {
        "origin": {"type": "string"}, "destination": {"type": "string"},
        "date": {"type": "string", "description": "YYYY-MM-DD"}}),
    "book_flight": _spec("book_flight", "Book a seat on a flight. Every call makes a new booking.", {
        "flight_id": {"type": "string"}}),
}


# --- Sub-queries: prompt text, expected answer, parsing back -------------------------------------


@dataclass(frozen=True)
class SubQuery:
    """One fact the user asks for; ``args`` names the city / route it is about."""

    kind: str
    args: tuple[tuple[str, str], ...]

    def arg(self, key: str) -> str:
        return dict(self.args)[key]


_TEMPLATES: dict[str, str] = {
    "temp_c": "What is the current temperature in {city} in degrees Celsius?",
    "temp_f": "What is the current temperature in {city} in degrees Fahrenheit?",
    "condition": "What are the current weather conditions in {city}?",
    "population": "What is the population of {city}?",
    "utc_offset": "What is the UTC offset of {city}?",
    "booking": "Book the cheapest flight from {origin} to {destination} on {date} and tell me its flight id.",
}
_KIND_WEIGHTS = (("temp_c", 5), ("population", 5), ("condition", 3), ("utc_offset", 3), ("temp_f", 3),
                 ("booking", 2))


def _template_regex(template: str) -> re.Pattern[str]:
    pattern = re.escape(template)
    for key in ("city", "origin", "destination"):
        pattern = pattern.replace(re.escape("{" + key + "}"), f"(?P<{key}>[A-Za-z][A-Za-z .'-]*?)")
    pattern = pattern.replace(re.escape("{date}"), r"(?P<date>\d{4}-\d{2}-\d{2})")
    return re.compile(r"^\s*(?P<num>\d+)[.)]\s*" + pattern + r"\s*$")


_PARSERS = {kind: _template_regex(t) for kind, t in _TEMPLATES.items()}


def subquery_text(q: SubQuery) -> str:
    return _TEMPLATES[q.kind].format(**dict(q.args))


def parse_prompt(text: str) -> list[SubQuery]:
    """The numbered sub-queries of a reference prompt, in order ([] if it is not one)."""
    found: list[SubQuery] = []
    for line in (text or "").splitlines():
        for kind, regex in _PARSERS.items():
            m = regex.match(line)
            if m:
                args = tuple((k, v) for k, v in m.groupdict().items() if k != "num")
                found.append(SubQuery(kind, args))
                break
    return found


def _cheapest(flights: Sequence[Mapping[str, Any]]) -> Mapping[str, Any]:
    return min(flights, key=lambda f: f["price_usd"])


def expected_answer(q: SubQuery) -> str:
    """The answer the grader looks for, computed directly from the table."""
    if q.kind == "booking":
        return str(_cheapest(search_flights(q.arg("origin"), q.arg("destination"), q.arg("date"))["flights"])
                   ["flight_id"])
    city = q.arg("city")
    if q.kind == "temp_c":
        return format_number(get_weather(city)["temperature_c"])
    if q.kind == "temp_f":
        return format_number(convert_temperature(get_weather(city)["temperature_c"], "C", "F")["value"])
    if q.kind == "condition":
        return str(get_weather(city)["condition"])
    if q.kind == "population":
        return str(get_population(city)["population"])
    if q.kind == "utc_offset":
        return str(get_timezone(city)["utc_offset"])
    raise ValueError(f"unknown sub-query kind {q.kind!r}")


def format_number(x: Any) -> str:
    """How numbers are written in answers: integers plain, others with at most 2 decimals."""
    if isinstance(x, bool):
        return str(x)
    if isinstance(x, int):
        return str(x)
    if isinstance(x, float):
        if x.is_integer():
            return f"{x:.1f}"
        return f"{x:.2f}".rstrip("0")
    return str(x)


def answer_lines(text: str | None) -> dict[int, str]:
    """``N. answer`` lines of a final answer, by question number."""
    out: dict[int, str] = {}
    for line in (text or "").splitlines():
        m = re.match(r"^\s*(\d+)[.)]\s*(.*)$", line)
        if m:
            out.setdefault(int(m.group(1)), m.group(2))
    return out


def _mentions(line: str, expected: str) -> bool:
    """Whole-value match, so '21.3' does not accept '121.35' and commas in numbers are ignored."""
    text = re.sub(r"(?<=\d),(?=\d{3}\b)", "", line).casefold()
    # A sign in front changes the value ("-4.6" is not "4.6"); "UTC+09:00" still matches "+09:00".
    before = r"(?<![\w.+\-])" if expected[:1].isalnum() else r"(?<![\d.])"
    pattern = before + re.escape(expected.casefold()) + r"(?![\w]|\.\d)"
    return re.search(pattern, text) is not None


# --- Tool log (what the agent executed) ----------------------------------------------------------


@dataclass
class ToolLogEntry:
    """One tool call the agent made; ``executed`` is False when the call never reached the tool."""

    name: str
    arguments: dict[str, Any] | None
    result: str
    call_id: str | None = None
    executed: bool = True


def _entry_fields(entry: Any) -> tuple[str, Any, bool]:
    if isinstance(entry, Mapping):
        return str(entry.get("name")), entry.get("arguments"), bool(entry.get("executed", True))
    if isinstance(entry, tuple):
        return str(entry[0]), entry[1] if len(entry) > 1 else None, True
    return str(entry.name), entry.arguments, bool(getattr(entry, "executed", True))


@dataclass
class RefTask:
    """A reference task: a multi-fact prompt, its expected answers and a grader.

    The grader checks each numbered answer line and that every requested flight was booked
    exactly once: a retry after an error that hid a successful booking fails the task.
    """

    task_id: str
    prompt: str
    expected: dict[str, str]
    subqueries: tuple[SubQuery, ...] = field(default=())

    @property
    def expected_bookings(self) -> list[str]:
        return sorted(self.expected[str(i + 1)] for i, q in enumerate(self.subqueries) if q.kind == "booking")

    def check(self, final_text: str | None, tool_log: Iterable[Any] = ()) -> bool:
        lines = answer_lines(final_text)
        for num, answer in self.expected.items():
            if not _mentions(lines.get(int(num), ""), answer):
                return False
        booked = []
        for entry in tool_log:
            name, args, executed = _entry_fields(entry)
            if name == "book_flight" and executed:
                fid = args.get("flight_id") if isinstance(args, Mapping) else None
                booked.append(str(fid).strip().upper() if fid is not None else "")
        return sorted(booked) == self.expected_bookings


def _weighted_kind(r: random.Random) -> str:
    kinds, weights = zip(*_KIND_WEIGHTS, strict=True)
    return r.choices(kinds, weights=weights)[0]


def reference_tasks(n: int, seed: int, *, min_subtasks: int = 1, max_subtasks: int = 6) -> list[RefTask]:
    """``n`` tasks of ``min_subtasks``..``max_subtasks`` sub-queries, deterministic in ``seed``.

    Each sub-query needs one or two tool calls, so a task of k sub-queries takes about 1.2k tool
    calls plus a final answer; k around 16 gives the ~20-call episodes long-episode corpora need.
    Cities are not repeated within a task, so a repeated identical call is always a retry.
    """
    if n < 0:
        raise ValueError("n must be >= 0")
    if not 1 <= min_subtasks <= max_subtasks <= len(CITIES):
        raise ValueError(f"need 1 <= min_subtasks <= max_subtasks <= {len(CITIES)}")
    r = random.Random(int.from_bytes(hashlib.sha256(f"reftasks|{seed}".encode()).digest()[:8], "big"))
    tasks = []
    base = dt.date(2026, 3, 1)
    for i in range(n):
        k = r.randint(min_subtasks, max_subtasks)
        cities = r.sample(CITIES, len(CITIES))
        routes: set[tuple[str, str]] = set()
        subs: list[SubQuery] = []
        for _ in range(k):
            kind = _weighted_kind(r)
            if kind == "booking":
                while True:
                    o, d = r.sample(CITIES, 2)
                    if (o, d) not in routes:
                        routes.add((o, d))
                        break
                day = (base + dt.timedelta(days=r.randint(0, 120))).isoformat()
                subs.append(SubQuery(kind, (("origin", o), ("destination", d), ("date", day))))
            else:
                subs.append(SubQuery(kind, (("city", cities.pop()),)))
        lines = [f"{j + 1}. {subquery_text(q)}" for j, q in enumerate(subs)]
        prompt = ("Answer the following using the available tools (all data is simulated).\n"
                  + "\n".join(lines)
                  + "\nReply with one line per question in the form `<number>. <answer>`.")
        expected = {str(j + 1): expected_answer(q) for j, q in enumerate(subs)}
        tasks.append(RefTask(task_id=f"ref-{seed}-{i:04d}", prompt=prompt, expected=expected,
                             subqueries=tuple(subs)))
    return tasks
