"""The corpus plan from a seed: which episodes, which forms where, and the label each one earns.

Composition at the default size (320): 200 faulted failures (30 with two faults, the first the
root; at least 45 long traces with the root early and the failure late), 40 clean successes, 40
successes with absorbed errors, 40 failures with no fault (the model's own slips, some after an
absorbed error). Smaller sizes keep the proportions.
"""

from __future__ import annotations

import json
import random
from dataclasses import dataclass, field
from typing import Any

from benchmarks.blind.round7 import world
from benchmarks.blind.round7.forms import BENIGN_DATA, BY_NAME, LLM_FORMS, TOOL_DATA, TOOL_ERRORS, Form
from benchmarks.blind.round7.llm_server import PROVIDERS, LlmFault
from benchmarks.blind.round7.local_tools import LOCAL_TOOLS
from benchmarks.blind.round7.model import Persona, stream_turn

SHIP_TOOLS = (
    "validate_address",
    "check_inventory",
    "rate_shop",
    "book_shipment",
    "create_pick_list",
    "schedule_dock",
    "notify_customer",
)
READ_ONLY = ("validate_address", "check_inventory", "rate_shop", "calculate_duties")
WRITES = ("book_shipment", "create_pick_list", "schedule_dock", "notify_customer")
RETRYABLE = ("rate_limit", "timeout", "connection", "error", "malformed_json", "empty")
SILENT_OPS = {f.name for f in TOOL_DATA if f.label in ("wrong_value", "truncated", "key_rename")}
TRACK_OPS = {"stale_status", "track_rename"}


@dataclass
class Spec:
    """One episode: its task, world, client settings, schedule and intended category."""

    task_id: str
    seed: int
    category: str
    orders: list[world.Order]
    track_only: bool
    provider: str
    max_retries: int
    agent_retries: int
    persona: Persona
    tool_faults: list[tuple[str, int, str]] = field(default_factory=list)
    llm_faults: list[LlmFault] = field(default_factory=list)
    pause_at: int = -1
    deadline: float | None = None  # the ticket's per-reply cut-off, when it has one
    root: tuple[str, Any] | None = None  # ("tool", (tool, nth)) or ("llm", index into llm_faults)
    note: str = ""

    def ticket(self) -> str:
        body = {
            "task": "track" if self.track_only else "ship",
            "ship_day": "2026-12-07",
            "orders": [o.public() for o in self.orders],
        }
        what = "Tracking check" if self.track_only else "Outbound shipping"
        return f"{what} ticket {self.task_id}. Orders:\n```json\n{json.dumps(body)}\n```"

    def turns(self) -> int:
        per = [2 if self.track_only else (6 if o.international else 5) for o in self.orders]
        return sum(per) + 1


def _calls_of(spec: Spec, tool: str) -> list[int]:
    """Indexes of the orders that call ``tool`` (each calls it once on a clean run)."""
    if spec.track_only:
        return list(range(len(spec.orders))) if tool in ("track_shipment", "notify_customer") else []
    if tool == "calculate_duties":
        return [k for k, o in enumerate(spec.orders) if o.international]
    return list(range(len(spec.orders))) if tool in SHIP_TOOLS else []


def _provider_of(form: Form, rng: random.Random) -> str:
    return form.family if form.family in PROVIDERS else rng.choice(sorted(PROVIDERS))


def _repeat(form: Form, spec: Spec) -> int:
    kind, status = form.kind, form.extra.get("status", 0)
    if kind in ("status", "status_html"):
        return 1 + spec.max_retries if status in (408, 409, 429) or status >= 500 else 1
    if kind in ("reset", "slow_timeout"):
        return 1 + spec.max_retries
    if kind in ("stream_error", "stream_cut", "body200"):
        return 1 + spec.agent_retries
    return 1


class Composer:
    def __init__(self, seed: int) -> None:
        self.rng = random.Random(seed)
        self.seed = seed
        self.count = 0

    def _spec(self, category: str, n_orders: int, track: bool = False, need_intl: bool = False) -> Spec:
        self.count += 1
        tid = f"r7-{self.seed}-{self.count:04d}"
        orders = [world.make_order(self.rng, f"ORD-{self.seed}-{self.count:04d}-{k}") for k in range(n_orders)]
        if need_intl:  # the duties fault goes on the first order, early in the trace
            while not orders[0].international:
                orders[0] = world.make_order(self.rng, orders[0].order_id)
        return Spec(
            task_id=tid,
            seed=self.rng.randrange(1 << 30),
            category=category,
            orders=orders,
            track_only=track,
            provider=self.rng.choice(sorted(PROVIDERS)),
            max_retries=self.rng.choice([0, 1, 2]),
            agent_retries=self.rng.choice([0, 1]),
            persona=Persona(retries=self.rng.choice([0, 1])),
        )

    def _tool_fault(self, spec: Spec, form: Form, tool: str, k_index: int, persistent: bool) -> None:
        nth = _calls_of(spec, tool).index(k_index) + 1
        spec.tool_faults.append((tool, nth, form.name))
        if persistent:
            for extra in range(1, spec.persona.retries + 1):
                spec.tool_faults.append((tool, nth + extra, form.name))
        if spec.root is None:
            spec.root = ("tool", (tool, nth))

    # -- faulted failures ------------------------------------------------------------------
    def faulted(self, form: Form, long: bool = False) -> Spec:
        rng = self.rng
        if form.side == "llm":
            spec = self._spec("faulted_failure", rng.choice([3, 4]) if long else rng.choice([1, 1, 2]))
            spec.provider = _provider_of(form, rng)
            self._llm_fault(spec, form, root=True)
            return spec
        op = form.extra.get("op", "")
        tools = form.extra.get("tools", ())
        track = op in TRACK_OPS or (not tools and form.kind != "data" and rng.random() < 0.12)
        if long and track:
            spec = self._spec("faulted_failure", rng.choice([7, 8]), track=True)
        else:
            spec = self._spec(
                "faulted_failure",
                rng.choice([3, 4]) if long else rng.choice([1, 1, 2]),
                track=track,
                need_intl="calculate_duties" in tools,
            )
        if tools:
            tool = tools[0]
        elif form.kind == "raise":
            tool = rng.choice([t for t in LOCAL_TOOLS if _calls_of(spec, t)])
        else:
            tool = rng.choice([t for t in (*SHIP_TOOLS, "calculate_duties", "track_shipment") if _calls_of(spec, t)])
        ks = _calls_of(spec, tool)
        if tool == "notify_customer" and not long:
            # the last notification is the last write: an error shown after it changes nothing
            ks = ks[:-1] or ks
            if len(ks) == len(spec.orders):
                spec.persona.retries = 1
        k = ks[0] if long else rng.choice(ks)
        self._tool_fault(spec, form, tool, k, persistent=form.name not in SILENT_OPS)
        return spec

    def _llm_fault(self, spec: Spec, form: Form, root: bool, absorbed: bool = False) -> None:
        rng = self.rng
        kind = form.kind
        if kind == "slow_latency":
            spec.deadline = 1.5
        if kind == "corrupt_args":
            trigger: tuple[str, Any] = ("tool", "book_shipment")
        elif kind == "stale":
            trigger = ("after_tool", "book_shipment")
        elif kind in ("schema_args", "empty_args"):
            trigger = ("tool", rng.choice(["rate_shop", "book_shipment", "notify_customer", "schedule_dock"]))
            spec.persona.retries = 0
        else:
            turns = [
                t
                for t in range(max(1, spec.turns() - 1))
                if kind not in ("stream_error", "stream_cut") or stream_turn(spec.task_id, t)
            ] or [0]
            trigger = ("attempt", rng.choice(turns))
        if absorbed:
            if kind in ("status", "status_html", "reset", "slow_timeout"):
                spec.max_retries = max(1, spec.max_retries)
            else:
                spec.agent_retries = 1
            repeat = 1
        else:
            repeat = _repeat(form, spec)
        spec.llm_faults.append(LlmFault(form.name, trigger, repeat))
        if root and spec.root is None:
            spec.root = ("llm", len(spec.llm_faults) - 1)

    def double_effect(self, form: Form) -> Spec:
        """An error shown after a write that really happened; the model repeats it and it applies twice."""
        spec = self._spec("faulted_failure", self.rng.choice([1, 2]))
        spec.persona.retries = 1
        tool = self.rng.choice([t for t in WRITES if form.kind != "raise" or t in LOCAL_TOOLS])
        self._tool_fault(spec, form, tool, self.rng.randrange(len(spec.orders)), persistent=False)
        spec.note = "non-idempotent call repeated after the error"
        return spec

    def two_fault(self, first: Form, second: Form) -> Spec:
        spec = self._spec(
            "faulted_failure", self.rng.choice([2, 3]), need_intl="calculate_duties" in first.extra["tools"]
        )
        self._tool_fault(
            spec, first, first.extra["tools"][0], _calls_of(spec, first.extra["tools"][0])[0], persistent=False
        )
        if second.side == "tool":
            tool = self.rng.choice(["notify_customer", "schedule_dock", "create_pick_list", "book_shipment"])
            self._tool_fault(spec, second, tool, len(spec.orders) - 1, persistent=True)
        else:
            spec.provider = _provider_of(second, self.rng)
            spec.llm_faults.append(LlmFault(second.name, ("tool", "notify_customer"), _repeat(second, spec)))
        spec.note = f"second fault {second.name}"
        return spec

    # -- the rest ----------------------------------------------------------------------------
    def clean(self) -> Spec:
        track = self.rng.random() < 0.2
        spec = self._spec(
            "clean_success", self.rng.choice([1, 2, 3]) if not track else self.rng.choice([2, 4]), track=track
        )
        if self.rng.random() < 0.3:
            spec.pause_at = self.rng.randrange(max(1, spec.turns() - 1))
        if self.rng.random() < 0.3:
            spec.deadline = 1.5
        return spec

    def absorbed(self, category: str, form: Form) -> Spec:
        spec = self._spec(category, self.rng.choice([1, 2]))
        if form.side == "llm":
            spec.provider = _provider_of(form, self.rng)
            self._llm_fault(spec, form, root=False, absorbed=True)
            if category == "unfaulted_failure" and spec.llm_faults[-1].trigger[0] == "attempt":
                spec.llm_faults[-1].trigger = ("attempt", min(spec.llm_faults[-1].trigger[1], 1))
        else:
            spec.persona.retries = 1
            # only read-only tools: repeating a call that wrote something is not absorbed
            tools = [t for t in READ_ONLY if _calls_of(spec, t) and (form.kind != "raise" or t in LOCAL_TOOLS)]
            tool = self.rng.choice(tools)
            nth = 1 if category == "unfaulted_failure" else self.rng.randrange(len(_calls_of(spec, tool))) + 1
            spec.tool_faults.append((tool, nth, form.name))
        spec.note = f"absorbed {form.name}"
        return spec

    def variation(self, form: Form) -> Spec:
        """A success that met an anomaly that is no fault (an optional field missing, an empty list)."""
        tool = form.extra["tools"][0]
        spec = self._spec("benign_success", self.rng.choice([1, 2]), track=tool == "track_shipment")
        spec.tool_faults.append((tool, self.rng.randrange(len(spec.orders)) + 1, form.name))
        spec.note = f"absorbed {form.name}"
        return spec

    def slip(self, spec: Spec) -> Spec:
        rng = self.rng
        if spec.track_only:
            spec.persona.slip = rng.choice(["wrong_status", "give_up"])
        else:
            spec.persona.slip = rng.choice(
                [
                    "give_up",
                    "prose",
                    "wrong_carrier",
                    "wrong_qty",
                    "wrong_duties",
                    "missing_param",
                    "unknown_tool",
                    "skip_notify",
                ]
            )
        n = len(spec.orders)
        spec.persona.slip_order = rng.randrange(n)
        if spec.persona.slip in ("give_up", "prose"):
            spec.persona.slip_order = rng.randrange(1, n) if n > 1 else 0
        if spec.persona.slip == "skip_notify":
            spec.persona.slip_order = n - 1
        if spec.persona.slip == "wrong_duties":
            intl = [k for k, o in enumerate(spec.orders) if o.international]
            if intl:
                spec.persona.slip_order = rng.choice(intl)
            else:
                spec.persona.slip = "wrong_qty"
        return spec


def compose(seed: int, n: int = 320) -> list[Spec]:
    """Every episode of the corpus, in task-id order."""
    c = Composer(seed)
    rng = c.rng
    n_fault = round(n * 200 / 320)
    n_two = round(n * 30 / 320)
    n_long = max(round(n * 50 / 320), 1)
    n_clean = round(n * 40 / 320)
    n_benign = round(n * 40 / 320)
    n_unf = n - n_fault - n_clean - n_benign
    silent = [f for f in TOOL_DATA if f.name in SILENT_OPS]
    # first faults of two-fault episodes: every order still runs its whole flow after them
    silent_ship = [f for f in silent if not set(f.extra["tools"]) & {"track_shipment", "check_inventory"}]
    errors = [f for f in TOOL_ERRORS]
    # every model-side form once, then tool error, malformed and empty forms for the rest
    tool_pool = [*TOOL_ERRORS, *[f for f in TOOL_DATA if f.name not in SILENT_OPS]]
    rng.shuffle(tool_pool)
    pool = [*LLM_FORMS, *tool_pool]
    specs: list[Spec] = []
    long_forms = [*silent, BY_NAME["mojibake_tool_args"], BY_NAME["stale_repeat_reply"]]
    for i in range(n_long):
        specs.append(c.faulted(long_forms[i % len(long_forms)], long=True))
    for i in range(n_two):
        first = silent_ship[i % len(silent_ship)]
        second = rng.choice(errors) if i % 3 else rng.choice([f for f in LLM_FORMS if f.kind == "status"])
        if second.kind == "raise":
            second = rng.choice([f for f in errors if f.kind == "err"])
        specs.append(c.two_fault(first, second))
    rest = n_fault - n_long - n_two
    n_double = round(n * 8 / 320)
    retryable_errors = [f for f in TOOL_ERRORS if f.label in RETRYABLE]
    for i in range(n_double):
        specs.append(c.double_effect(retryable_errors[(i * 7) % len(retryable_errors)]))
    for i in range(rest - n_double):
        form = pool[i % len(pool)]
        specs.append(c.faulted(form))
    for _ in range(n_clean):
        specs.append(c.clean())
    benign_forms = [f for f in (*TOOL_ERRORS, *TOOL_DATA) if f.label in RETRYABLE and f.name not in SILENT_OPS]
    benign_llm = [
        f
        for f in LLM_FORMS
        if (f.kind in ("status", "status_html") and (f.extra["status"] in (408, 429) or f.extra["status"] >= 500))
        or f.kind in ("reset", "slow_timeout", "stream_error", "stream_cut", "body200")
    ]
    for i in range(n_benign):
        if i % 5 == 4:
            specs.append(c.variation(BENIGN_DATA[i % len(BENIGN_DATA)]))
            continue
        form = rng.choice(benign_llm) if i % 2 else rng.choice(benign_forms)
        specs.append(c.absorbed("benign_success", form))
    for i in range(n_unf):
        if i % 4 == 0:
            form = rng.choice(benign_llm) if i % 8 else rng.choice(benign_forms)
            spec = c.absorbed("unfaulted_failure", form)
        else:
            track = rng.random() < 0.2
            spec = c._spec("unfaulted_failure", rng.choice([1, 2, 3]), track=track)
        specs.append(c.slip(spec))
    specs.sort(key=lambda s: s.task_id)
    return specs
