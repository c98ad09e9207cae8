"""Which episodes the corpus holds: every choice drawn from the corpus seed, in both processes alike.

``episode_plans(seed, size)`` is a pure function: the agent's process (tool wrappers, labels) and the
server's process (the scripted model, LLM forms, MCP forms) call it and get the same plans.
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field

from .forms import ALL_FORMS, BENIGN_LLM, BENIGN_TOOL, LLM_FORMS, MCP_TOOLS, TOOL_DATA, TOOL_ERRORS, Form

PROVIDERS = (
    "xai",
    "perplexity",
    "cerebras",
    "sambanova",
    "nim",
    "tgi",
    "llamacpp",
    "lmstudio",
    "baseten",
    "gemini",
    "bedrock",
    "databricks",
    "kong",
    "helicone",
)
STREAM_ONLY = {"stream_cut", "stream_mid_event", "stream_error", "stall", "stream_empty"}
NON_STREAM_ONLY = {"body200", "half_body"}
# What each data transform needs from the world to change the agent's choice.
TRAPS = {
    "flights_count_cut": {"late_cheapest"},
    "flights_timed_out": {"late_cheapest"},
    "flights_halved": {"late_cheapest"},
    "flights_cut_line": {"late_cheapest"},
    "fare_strings": {"fare_strings"},
    "fare_renamed": {"first_not_cheapest"},
    "rate_renamed": {"first_not_cheapest_hotel"},
    "hotels_total_cut": {"late_cheapest_hotel"},
    "fee_camel": {"fee_nonzero"},
    "flights_json_cut": {"late_cheapest"},
    "hotels_json_cut": {"late_cheapest_hotel"},
}
EARLY = ("get_traveller", "get_fare_rules", "search_flights")
SLIPS = (
    "second_cheapest",
    "forget_fee",
    "skip_last_notify",
    "give_up_after_search",
    "wrong_date",
    "malformed_args",
    "unknown_tool",
    "missing_param",
    "hotel_first_listed",
    "final_without_codes",
    "stop_early",
)
SLIP_TRAPS = {
    "second_cheapest": set(),
    "forget_fee": {"fee_nonzero"},
    "hotel_first_listed": {"first_not_cheapest_hotel"},
}


@dataclass
class Fault:
    """One injected form and where it lands."""

    form: str
    tool: str = ""  # tool forms: the tool and which of its calls (0-based)
    occurrence: int = 0
    persist: bool = False  # tool forms: the same call repeated meets the same form
    trigger: tuple = ()  # llm forms: ("turn", k) or ("after", tool, occurrence)
    all_attempts: bool = True  # llm forms: every SDK attempt of the turn, or the first only
    absorbed: bool = False  # planned to be absorbed (retry recovers)


@dataclass
class EpisodePlan:
    task_id: str
    category: str
    n: int
    overnight: bool
    provider: str
    stream_mode: str  # never | always | mixed
    max_retries: int
    retry_on_error: bool = False
    parallel_profiles: bool = True
    parallel_pairs: bool = False
    slip: str = ""
    traps: set[str] = field(default_factory=set)
    airport_hotels: bool = True
    no_seat_pref: bool = False
    faults: list[Fault] = field(default_factory=list)
    root: int | None = None  # index in faults of the root cause
    long: bool = False

    def expected_turns(self) -> int:
        profiles = 1 if self.parallel_profiles else self.n
        per = 3 if self.parallel_pairs else 4
        hotel = (2 if self.airport_hotels else 3) if self.overnight else 0
        return profiles + 2 + self.n * per + hotel + 1


def _non_fatal(form: Form) -> bool:
    """A tool form after which the agent carries on (only a failed flight search makes it stop)."""
    if form.kind == "data":
        return form.extra.get("op") not in ("empty_list",)
    return any(t != "search_flights" for t in form.tools)


def _tool_fault(rng: random.Random, form: Form, ep: EpisodePlan, early: bool, keep_going: bool) -> Fault:
    tools = [t for t in form.tools if ep.overnight or t not in ("find_hotels", "book_ground")]
    if keep_going and any(t not in ("find_hotels", "book_ground") for t in tools):
        tools = [t for t in tools if t not in ("find_hotels", "book_ground")]
    if keep_going and form.kind != "data":
        tools = [t for t in tools if t != "search_flights"] or tools
    if not tools:
        ep.overnight = True
        tools = list(form.tools)
    if early:
        tools = [t for t in tools if t in EARLY] or tools
    tool = rng.choice(tools)
    per_traveller = tool in ("get_traveller", "hold_seat", "rebook_flight", "issue_refund", "notify_traveller")
    occ = (0 if early else rng.randrange(ep.n)) if per_traveller else 0
    return Fault(form.name, tool=tool, occurrence=occ)


def _llm_fault(rng: random.Random, form: Form, ep: EpisodePlan, lo: int = 0) -> Fault:
    if form.kind in STREAM_ONLY:
        ep.stream_mode = "always"
    elif form.kind in NON_STREAM_ONLY:
        ep.stream_mode = "never"
    ep.provider = form.provider
    if form.kind == "stale":
        ep.parallel_pairs = False
        return Fault(form.name, trigger=("after", "issue_refund", 0))
    if form.kind in ("slow",) or (form.kind == "stall" and rng.random() < 0.5):
        return Fault(form.name, trigger=("after", "hold_seat", rng.randrange(ep.n)))
    if form.kind == "silent":
        ep.max_retries = min(ep.max_retries, 1)
    hi = ep.expected_turns() - 2
    k = rng.randint(min(lo, hi), max(min(lo, hi), min(hi, lo + 6)))
    return Fault(form.name, trigger=("turn", k))


def _base(rng: random.Random, task_id: str, category: str) -> EpisodePlan:
    n = rng.choice([1, 1, 2, 2, 3])
    return EpisodePlan(
        task_id=task_id,
        category=category,
        n=n,
        overnight=rng.random() < 0.35,
        provider=rng.choice(PROVIDERS),
        stream_mode=rng.choice(["never", "always", "mixed"]),
        max_retries=rng.choice([0, 1, 2]),
        parallel_profiles=rng.random() < 0.6,
        parallel_pairs=rng.random() < 0.4,
    )


def _make_long(rng: random.Random, ep: EpisodePlan) -> None:
    ep.long = True
    ep.n = rng.choice([4, 5])
    while not 15 <= ep.expected_turns() <= 30:
        ep.parallel_profiles, ep.parallel_pairs = rng.random() < 0.5, rng.random() < 0.5
        ep.n = rng.choice([4, 5])


def _root_pool(rng: random.Random, count: int) -> list[Form]:
    """Root forms: every error form once where room allows, data forms in about the study's share."""
    data = list(TOOL_DATA)
    errors = list(TOOL_ERRORS)
    llm = list(LLM_FORMS)
    rng.shuffle(errors)
    rng.shuffle(llm)
    n_data = round(count * 0.30)
    n_llm = round(count * 0.33)
    pool = (data * 3)[:n_data] + (llm * 2)[:n_llm] + errors[: count - n_data - n_llm]
    rng.shuffle(pool)
    return pool


def episode_plans(seed: int, size: int = 320) -> list[EpisodePlan]:
    rng = random.Random(f"round6:{seed}")
    n_clean, n_benign, n_unfaulted = (round(size * 0.125),) * 3
    n_faulted = size - n_clean - n_benign - n_unfaulted
    n_two = round(n_faulted * 0.15)
    n_long = max(round(n_faulted * 0.36), 1)
    cats = (
        ["faulted_failure"] * n_faulted
        + ["clean_success"] * n_clean
        + ["benign_success"] * n_benign
        + ["unfaulted_failure"] * n_unfaulted
    )
    order = list(range(size))
    rng.shuffle(order)
    ids = {i: f"desk-{seed:02d}-{order[i]:04d}" for i in range(size)}
    roots = _root_pool(rng, n_faulted)
    plans: list[EpisodePlan] = []
    long_left = n_long
    for i, cat in enumerate(cats):
        ep = _base(rng, ids[i], cat)
        if cat == "faulted_failure":
            form = roots[i]
            two = i < n_two
            if two and (
                form.side == "llm"
                or not _non_fatal(form)
                or all(t in ("find_hotels", "book_ground") for t in form.tools)
            ):
                form = rng.choice(
                    [
                        f
                        for f in TOOL_DATA + TOOL_ERRORS
                        if _non_fatal(f) and any(t not in ("find_hotels", "book_ground") for t in f.tools)
                    ]
                )
            if form.side == "tool":
                early = long_left > 0 and _non_fatal(form) and any(t in EARLY for t in form.tools)
                if early:
                    _make_long(rng, ep)
                    long_left -= 1
                ep.traps |= TRAPS.get(form.extra.get("op", ""), set()) | TRAPS.get(form.name, set())
                f = _tool_fault(rng, form, ep, early, early or two)
                if form.kind != "data" and rng.random() < 0.25:
                    ep.retry_on_error, f.persist = True, True
                ep.faults.append(f)
            else:
                ep.faults.append(_llm_fault(rng, form, ep))
            ep.root = 0
            if two:
                _add_second(rng, ep)
            elif rng.random() < 0.12 and form.side == "tool":
                _add_absorbed_first(rng, ep)
        elif cat == "benign_success":
            _benign(rng, ep, i)
        elif cat == "unfaulted_failure":
            ep.slip = SLIPS[i % len(SLIPS)]
            ep.traps |= SLIP_TRAPS.get(ep.slip, set())
            if ep.slip in ("skip_last_notify", "stop_early"):
                ep.n = max(ep.n, 2)
            if ep.slip == "hotel_first_listed":
                ep.overnight = True
            if rng.random() < 0.3:
                _add_absorbed_first(rng, ep)
        plans.append(ep)
    plans.sort(key=lambda p: p.task_id)
    return plans


def _add_second(rng: random.Random, ep: EpisodePlan) -> None:
    """A second fault after the root, which also changes the trajectory: the episode ends on it."""
    first = ep.faults[0]
    if first.tool:
        # the root was a tool's: the second is a model-API fault that ends the run later on
        cands = [
            f
            for f in LLM_FORMS
            if f.kind in ("http", "content", "finish") and f.label not in ("latency",) and f.provider == ep.provider
        ] or [f for f in LLM_FORMS if f.kind in ("http", "content")]
        form = rng.choice(cands)
        # after the second-to-last notification the agent sends (one traveller may have been dropped)
        ep.n = max(ep.n, 2)
        first.occurrence, first.persist, ep.retry_on_error = 0, False, False
        ep.faults.append(Fault(form.name, trigger=("after", "notify_traveller", ep.n - 2)))
    else:
        # the root was the model API's (non-fatal kind forced): the second is a tool error later on
        form = rng.choice([f for f in TOOL_ERRORS if "notify_traveller" in f.tools])
        ep.faults.append(Fault(form.name, tool="notify_traveller", occurrence=ep.n - 1))


def _add_absorbed_first(rng: random.Random, ep: EpisodePlan) -> None:
    """A transient fault early on that a retry recovers from (SDK retry or the agent's own)."""
    if rng.random() < 0.5:
        form = ALL_FORMS[rng.choice(BENIGN_LLM)]
        ep.max_retries = max(ep.max_retries, 1)
        ep.faults.insert(0, Fault(form.name, trigger=("turn", 0), all_attempts=False, absorbed=True))
    else:
        form = ALL_FORMS[rng.choice([b for b in BENIGN_TOOL if "search_flights" in ALL_FORMS[b].tools])]
        ep.retry_on_error = True
        tool = "search_flights"
        ep.faults.insert(0, Fault(form.name, tool=tool, occurrence=0, absorbed=True))
    if ep.root is not None:
        ep.root += 1
    if ep.retry_on_error:
        for f in ep.faults[1:]:
            f.persist = bool(f.tool)
    for f in ep.faults[1:]:
        if f.tool and f.tool == ep.faults[0].tool and not ep.faults[0].trigger:
            f.occurrence += 1  # the agent's retry is a call of the same tool
        if f.trigger and f.trigger[0] == "turn":
            f.trigger = ("turn", max(f.trigger[1], 2))


def _benign(rng: random.Random, ep: EpisodePlan, i: int) -> None:
    kind = i % 8
    if kind in (0, 1, 2):
        form = ALL_FORMS[BENIGN_TOOL[i % len(BENIGN_TOOL)]]
        ep.retry_on_error = True
        tool = rng.choice([t for t in form.tools if t not in ("find_hotels", "book_ground")] or list(form.tools))
        if tool in ("find_hotels", "book_ground"):
            ep.overnight = True
        occ = (
            rng.randrange(ep.n)
            if tool in ("get_traveller", "hold_seat", "rebook_flight", "issue_refund", "notify_traveller")
            else 0
        )
        ep.faults.append(Fault(form.name, tool=tool, occurrence=occ, absorbed=True))
    elif kind in (3, 4):
        form = ALL_FORMS[BENIGN_LLM[i % len(BENIGN_LLM)]]
        ep.provider = form.provider
        ep.max_retries = max(ep.max_retries, 1)
        ep.stream_mode = "never" if form.kind == "half_body" else ep.stream_mode
        ep.faults.append(Fault(form.name, trigger=("turn", rng.randint(0, 3)), all_attempts=False, absorbed=True))
    elif kind == 5:
        form = ALL_FORMS[rng.choice(["gemini_slow_reply", "perplexity_slow_reply"])]
        ep.provider = form.provider
        ep.faults.append(Fault(form.name, trigger=("turn", rng.randint(0, 1)), absorbed=True))
    elif kind == 6:
        ep.overnight, ep.airport_hotels = True, False
    else:
        ep.no_seat_pref = True


def is_mcp(tool: str) -> bool:
    return tool in MCP_TOOLS


class ToolFaults:
    """Which form, if any, hits a tool call: by (tool, occurrence), and repeats of a persistent one."""

    def __init__(self, ep: EpisodePlan) -> None:
        self.ep = ep
        self.count: dict[str, int] = {}
        self.sticky: list[tuple[str, str, Fault]] = []

    def next(self, tool: str, args: dict, occurrence: int | None = None) -> tuple[int, Fault | None]:
        """``occurrence``: the caller's own count when calls may arrive out of order (parallel MCP calls)."""
        occ = self.count.get(tool, 0) if occurrence is None else occurrence
        self.count[tool] = max(self.count.get(tool, 0), occ) + 1
        key = repr(sorted(args.items())) if isinstance(args, dict) else repr(args)
        for t, k, f in self.sticky:
            if t == tool and k == key:
                return occ, f
        for f in self.ep.faults:
            if f.tool == tool and f.occurrence == occ:
                if f.persist:
                    self.sticky.append((tool, key, f))
                return occ, f
        return occ, None
