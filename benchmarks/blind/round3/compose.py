"""The corpus design: which episodes, which task, which agent, which faults, from one seed.

Categories (at the default 320): 200 faulted failures (50 long batch runs of 15-30 model calls
whose root cause sits in the first orders and whose failure shows only in the final state; 30
episodes with two faults that both change the run, the first being the root; 120 others), 40
clean successes, 40 successes with benign errors (absorbed by the SDK's retry, by the agent's
repeat of a tool call, a slow reply waited out, an optional field missing, a slip the model
corrected), 40 failures with no fault (the model's own slips, some after an absorbed fault).
Root forms are drawn so that every form is used before any is used twice.
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field

from benchmarks.blind.round3.forms_llm import LLM_FORMS, LlmForm, sdk_retries
from benchmarks.blind.round3.forms_tool import TOOL_FORMS, ToolForm
from benchmarks.blind.round3.policy import Persona, Task
from benchmarks.blind.round3.runtime import Injection
from benchmarks.blind.round3.world import World

Form = LlmForm | ToolForm
TASK_TOOLS = {
    "fulfil": ("get_order", "get_customer", "check_stock", "reserve_stock", "charge_payment", "create_shipment",
               "send_email"),
    "refund": ("get_order", "refund_payment", "get_customer", "send_email"),
    "stock_report": ("check_stock", "send_email"),
    "batch": ("list_orders", "get_order", "reserve_stock", "charge_payment"),
}
UNREADABLE = {"error", "literal"}
UNREADABLE_DATA = {"malformed_json", "key_rename"}
FINAL_ONLY = {"length", "mojibake", "replacement", "cut"}
NON_IDEMPOTENT = {"charge_payment", "refund_payment"}


@dataclass
class Spec:
    index: int
    category: str
    task: Task
    persona: Persona
    streaming: bool
    sdk_retries: int
    world_seed: int
    n_orders: int
    injections: list[Injection] = field(default_factory=list)
    accented: bool | None = None
    min_lines: int = 1
    shape: str = "short"        # short | long | two_fault | clean | benign | unfaulted
    halved_listing: bool = False
    task_id: str = ""

    @property
    def root(self) -> Injection | None:
        return next((i for i in self.injections if i.role == "root"), None)


def form_of(inj: Injection) -> Form:
    from benchmarks.blind.round3.runtime import LLM_BY_ID, TOOL_BY_ID
    return LLM_BY_ID[inj.form] if inj.side == "llm" else TOOL_BY_ID[inj.form]


def _tool_times(form: ToolForm, persona: Persona) -> int:
    unreadable = form.kind in UNREADABLE or form.label in UNREADABLE_DATA or form.id == "es_timed_out_empty"
    return persona.tool_retries + 1 if unreadable else 1


def _llm_times(form: LlmForm, retries: int) -> int:
    if form.kind in ("empty",) or (form.kind == "args" and form.params["how"] in ("empty", "undeclared")):
        return 2       # pydantic-ai asks the model once more, then gives up
    return 1 + retries if sdk_retries(form) else 1


class Composer:
    def __init__(self, seed: int, size: int) -> None:
        self.seed = seed
        self.size = size
        self.rng = random.Random(seed)
        forms: list[Form] = [*TOOL_FORMS, *LLM_FORMS]
        self.rng.shuffle(forms)
        self.pool = forms
        self.uses: dict[str, int] = {f.id: 0 for f in forms}

    def _pick(self, ok: object) -> Form:
        """The least-used form that fits ``ok`` (ties in the seeded shuffle's order)."""
        fits = [f for f in self.pool if ok(f)]  # type: ignore[operator]
        best = min(fits, key=lambda f: self.uses[f.id])
        self.uses[best.id] += 1
        return best

    def persona(self, flaw: str | None = None, *, retries: int | None = None) -> Persona:
        return Persona(tool_retries=self.rng.choice([0, 1, 1, 2]) if retries is None else retries, flaw=flaw)

    # ---- shapes ----------------------------------------------------------------------------------
    def _base(self, i: int, category: str, shape: str, kind: str, persona: Persona, **kw: object) -> Spec:
        streaming = bool(kw.pop("streaming", self.rng.random() < 0.45))
        retries = int(kw.pop("sdk_retries", self.rng.choice([0, 1, 2, 2])))
        n_orders = 3 if kind != "batch" else self.rng.randrange(4, 8)
        task = Task(kind)
        spec = Spec(i, category, task, persona, streaming, retries, self.rng.randrange(1 << 30), n_orders, shape=shape)
        for k, v in kw.items():
            setattr(spec, k, v)
        return spec

    def _tool_inj(self, form: ToolForm, spec: Spec, tool: str, nth: int, role: str) -> Injection:
        took = role == "root" and tool in NON_IDEMPOTENT and form.label in ("timeout", "connection") and \
            spec.persona.tool_retries > 0 and self.rng.random() < 0.5
        return Injection(form.id, "tool", tool, nth, _tool_times(form, spec.persona), role, took_effect=took)

    def _llm_target(self, form: LlmForm, kind: str) -> str:
        if form.kind in FINAL_ONLY:
            return "final"
        if form.kind == "args":
            how = form.params["how"]
            if how in ("cut", "symbols"):
                return "send_email"
            if how == "amount":
                return "refund_payment" if kind == "refund" else "charge_payment"
            if how == "order":
                return "create_shipment" if kind == "fulfil" else "charge_payment"
            return self.rng.choice([t for t in TASK_TOOLS[kind] if t != "list_orders"])
        if form.kind == "stale":
            return {"fulfil": "create_shipment", "refund": "get_customer", "batch": "get_order"}[kind]
        return self.rng.choice([*TASK_TOOLS[kind], "final"])

    def _fits_short(self, f: Form) -> bool:
        if isinstance(f, ToolForm):
            return any(set(f.tools) & set(TASK_TOOLS[k]) for k in ("fulfil", "refund", "stock_report"))
        return True

    def short(self, i: int, category: str = "faulted_failure", shape: str = "short") -> Spec:
        form = self._pick(lambda f: self._fits_short(f))
        return self.place_short(i, form, category, shape)

    def place_short(self, i: int, form: Form, category: str, shape: str) -> Spec:
        if isinstance(form, ToolForm):
            kinds = [k for k in ("fulfil", "refund", "stock_report") if set(form.tools) & set(TASK_TOOLS[k])]
            kind = self.rng.choice(kinds)
            tool = self.rng.choice([t for t in TASK_TOOLS[kind] if t in form.tools])
            persona = self.persona()
            spec = self._base(i, category, shape, kind, persona)
            if form.kind == "data" and form.text in ("partial_flag", "halve"):
                spec.min_lines = 2
            nth = 0
            if tool in ("check_stock", "reserve_stock") and kind == "fulfil" and self.rng.random() < 0.5:
                spec.min_lines = max(spec.min_lines, 2)
                nth = 1
            if kind == "stock_report" and tool == "check_stock":
                nth = self.rng.randrange(0, 3)
            spec.injections.append(self._tool_inj(form, spec, tool, nth, "root"))
        else:
            assert isinstance(form, LlmForm)
            kind = "fulfil"
            if form.kind == "args" and form.params["how"] == "amount":
                kind = self.rng.choice(["fulfil", "refund"])
            elif form.kind in ("length", "replacement", "cut") or form.kind == "stale":
                kind = self.rng.choice(["fulfil", "refund"] + (["stock_report"] if form.kind != "stale" else []))
            elif form.kind == "mojibake":
                kind = self.rng.choice(["fulfil", "refund"])
            elif form.kind == "args" and form.params["how"] in ("cut", "symbols"):
                kind = self.rng.choice(["fulfil", "refund", "stock_report"])
            elif form.kind != "args" or form.params["how"] in ("empty", "undeclared"):
                kind = self.rng.choice(["fulfil", "refund", "stock_report"])
            kw: dict[str, object] = {}
            if form.stream is not None:
                kw["streaming"] = form.stream
            if form.kind == "mojibake":
                kw["accented"] = True
            spec = self._base(i, category, shape, kind, self.persona(), **kw)
            if form.kind == "filter" and form.surface == "stream":
                spec.streaming = True
            target = self._llm_target(form, kind)
            nth = self.rng.randrange(0, 3) if (kind == "stock_report" and target == "check_stock") else 0
            spec.injections.append(Injection(form.id, "llm", target, nth, _llm_times(form, spec.sdk_retries), "root"))
        self._finish_task(spec)
        return spec

    def _finish_task(self, spec: Spec) -> None:
        if spec.task.kind == "stock_report":
            spec.task.skus = []  # filled from the world when it is built (3 SKUs)

    # ---- long runs ---------------------------------------------------------------------------------
    def long(self, i: int, category: str = "faulted_failure", shape: str = "long") -> Spec:
        quiet = i % 2 == 0  # every other long run: a root that says nothing (wrong or partial data, a repeat)

        def ok(f: Form) -> bool:
            if isinstance(f, LlmForm):
                return quiet and (f.kind == "stale" or (f.kind == "args" and f.params["how"] in ("amount", "order")))
            if f.kind == "data":
                return quiet and bool({"list_orders", "get_order"} & set(f.tools)) and \
                    f.label in ("truncated", "wrong_value")
            return not quiet and bool({"get_order", "reserve_stock", "charge_payment"} & set(f.tools))
        form = self._pick(ok)
        return self.place_long(i, form, category, shape)

    def place_long(self, i: int, form: Form, category: str, shape: str) -> Spec:
        persona = self.persona()
        spec = self._base(i, category, shape, "batch", persona)
        spec.n_orders = self.rng.randrange(5, 8)
        order_nth = self.rng.choice([0, 0, 1])
        if isinstance(form, LlmForm):
            target = self._llm_target(form, "batch")
            nth = order_nth if target == "charge_payment" else 1
            spec.injections.append(Injection(form.id, "llm", target, nth, 1, "root"))
        else:
            if form.kind == "data":
                tool = "list_orders" if "list_orders" in form.tools else "get_order"
                if tool == "get_order":
                    spec.min_lines = 2
                elif form.label == "truncated":   # half the listing is lost: start from more orders
                    spec.n_orders = self.rng.randrange(9, 13)
                    spec.halved_listing = True
            else:
                tool = self.rng.choice([t for t in ("get_order", "reserve_stock", "charge_payment") if t in form.tools])
            nth = 0 if tool == "list_orders" else order_nth
            spec.injections.append(self._tool_inj(form, spec, tool, nth, "root"))
        return spec

    # ---- two faults --------------------------------------------------------------------------------
    def two_fault(self, i: int) -> Spec:
        if self.rng.random() < 0.5:
            spec = self.long(i, shape="two_fault")
            while spec.root is not None and spec.root.target == "list_orders":  # keep every order in the run
                spec = self.long(i, shape="two_fault")
            # a second order fails later on its own: skipped too
            second = self._pick(lambda f: isinstance(f, ToolForm) and f.kind == "error" and "get_order" in f.tools)
            assert isinstance(second, ToolForm)
            root = spec.root
            assert root is not None
            extra = root.times - 1 if (root.side == "tool" and root.target == "get_order") else 0
            tool = "get_order"
            spec.injections.append(Injection(second.id, "tool", tool, 3 + extra, _tool_times(second, spec.persona),
                                             "second"))
            return spec
        # fulfil: a wrong value early, then a failing email at the end
        first = self._pick(lambda f: isinstance(f, ToolForm) and f.id in ("price_shifted", "email_wrong_entity",
                                                                          "tracking_swapped") or
                           (isinstance(f, LlmForm) and f.kind == "args" and f.params["how"] == "amount"))
        spec = self._base(i, "faulted_failure", "two_fault", "fulfil", self.persona())
        if isinstance(first, ToolForm):
            spec.injections.append(self._tool_inj(first, spec, first.tools[0], 0, "root"))
        else:
            spec.injections.append(Injection(first.id, "llm", "charge_payment", 0, 1, "root"))
        second = self._pick(lambda f: isinstance(f, ToolForm) and f.kind == "error" and "send_email" in f.tools)
        assert isinstance(second, ToolForm)
        spec.injections.append(Injection(second.id, "tool", "send_email", 0, _tool_times(second, spec.persona),
                                         "second"))
        return spec

    # ---- successes and unfaulted failures ------------------------------------------------------------
    def clean(self, i: int) -> Spec:
        kind = self.rng.choice(["fulfil", "fulfil", "refund", "stock_report", "batch"])
        return self._base(i, "clean_success", "clean", kind, self.persona())

    def benign(self, i: int) -> Spec:
        kind = self.rng.choice(["fulfil", "fulfil", "refund", "stock_report", "batch"])
        variant = self.rng.choice(["sdk_retry", "sdk_retry", "tool_retry", "tool_retry", "slow_ok", "optional",
                                   "slip_once", "empty_once"])
        spec = self._base(i, "benign_success", "benign", kind, self.persona(retries=1), sdk_retries=2)
        spec.injections += self.absorbed(variant, spec)
        if variant == "slip_once":
            spec.persona = Persona(tool_retries=1, flaw="slip_once")
        return spec

    def absorbed(self, variant: str, spec: Spec) -> list[Injection]:
        tools = TASK_TOOLS[spec.task.kind]
        if variant == "sdk_retry":
            form = self._pick(lambda f: isinstance(f, LlmForm) and sdk_retries(f) and f.kind != "stall")
            return [Injection(form.id, "llm", self.rng.choice([*tools, "final"]), 0, 1, "benign")]
        if variant == "tool_retry":
            form = self._pick(lambda f: isinstance(f, ToolForm) and f.kind in ("error", "literal") and
                              bool(set(f.tools) & set(tools)))
            assert isinstance(form, ToolForm)
            tool = self.rng.choice([t for t in tools if t in form.tools])
            return [Injection(form.id, "tool", tool, 0, 1, "benign")]
        if variant == "slow_ok":
            spec.streaming = False
            return [Injection("slow_reply", "llm", self.rng.choice(tools), 0, 1, "benign", variant="ok")]
        if variant == "optional":
            tool = next(t for t in ("get_customer", "check_stock", "get_order") if t in tools)
            return [Injection("rename_legacy", "tool", tool, 0, 1, "benign", variant="drop_optional")]
        if variant == "empty_once":
            return [Injection("empty_content", "llm", self.rng.choice(tools), 0, 1, "benign")]
        return []

    def unfaulted(self, i: int) -> Spec:
        kind = self.rng.choice(["fulfil", "fulfil", "refund", "stock_report", "batch"])
        flaws = {"fulfil": ["give_up_early", "wrong_total", "wrong_recipient", "bad_args_json", "unknown_tool",
                            "missing_param", "prose_only", "skip_email", "wrong_reply"],
                 "refund": ["give_up_early", "wrong_total", "wrong_recipient", "bad_args_json", "unknown_tool",
                            "missing_param", "prose_only", "skip_email", "wrong_reply"],
                 "stock_report": ["give_up_early", "wrong_recipient", "bad_args_json", "unknown_tool", "prose_only",
                                  "skip_email", "wrong_reply"],
                 "batch": ["give_up_early", "wrong_total", "bad_args_json", "unknown_tool", "missing_param",
                           "skip_last_order"]}[kind]
        flaw = self.rng.choice(flaws)
        spec = self._base(i, "unfaulted_failure", "unfaulted", kind, self.persona(flaw), sdk_retries=2)
        if flaw == "wrong_total":
            spec.min_lines = 2
        if flaw not in ("prose_only", "give_up_early") and self.rng.random() < 0.35:
            spec.injections += self.absorbed(self.rng.choice(["sdk_retry", "tool_retry"]), spec)
            spec.injections = [Injection(j.form, j.side, j.target, j.nth, j.times, "absorbed") for j in spec.injections]
            if any(j.side == "tool" for j in spec.injections):
                spec.persona = Persona(tool_retries=max(1, spec.persona.tool_retries), flaw=flaw)
        return spec

    def with_absorbed_prefix(self, spec: Spec) -> None:
        """Put an absorbed fault before the root (the root must stay the first fault that mattered)."""
        spec.sdk_retries = max(1, spec.sdk_retries)
        spec.injections = [Injection(j.form, j.side, j.target, j.nth, _llm_times(form_of(j), spec.sdk_retries), j.role,
                                     j.took_effect, j.variant) if j.side == "llm" else j for j in spec.injections]
        form = self._pick(lambda f: isinstance(f, LlmForm) and sdk_retries(f) and f.kind not in ("stall",))
        first_tool = TASK_TOOLS[spec.task.kind][0]
        spec.injections.insert(0, Injection(form.id, "llm", first_tool, 0, 1, "absorbed"))


def compose(seed: int, size: int = 320) -> list[Spec]:
    c = Composer(seed, size)
    scale = size / 320
    n_long, n_two, n_short = round(50 * scale), round(30 * scale), round(120 * scale)
    n_clean = n_benign = n_unf = round(40 * scale)
    specs: list[Spec] = []
    i = 0
    for _ in range(n_long):
        specs.append(c.long(i))
        i += 1
    for _ in range(n_two):
        specs.append(c.two_fault(i))
        i += 1
    for _ in range(n_short):
        specs.append(c.short(i))
        i += 1
    for spec in specs:
        root = spec.root
        if root is not None and c.rng.random() < 0.12 and not (root.side == "llm" and root.target in
                                                                 TASK_TOOLS[spec.task.kind][:1]):
            c.with_absorbed_prefix(spec)
    for make, n in ((c.clean, n_clean), (c.benign, n_benign), (c.unfaulted, n_unf)):
        for _ in range(n):
            specs.append(make(i))
            i += 1
    order = list(range(len(specs)))
    c.rng.shuffle(order)
    for number, idx in enumerate(order):
        specs[idx].task_id = f"shop-{seed}-{number:04d}"
    return sorted(specs, key=lambda s: s.task_id)


def build_world(spec: Spec) -> World:
    """The episode's world; redrawn (deterministically) until it fits the spec's needs."""
    rng = random.Random(spec.world_seed)
    for _ in range(200):
        w = World.build(rng, n_orders=spec.n_orders, accented=spec.accented)
        target = next(iter(w.orders))
        if len(w.orders[target]["lines"]) < spec.min_lines:
            continue
        if spec.task.kind == "batch":
            seen = w.pending()[: max(1, len(w.pending()) // 2)] if spec.halved_listing else w.pending()
            calls = 2 + sum(2 + len(w.orders[o]["lines"]) for o in seen)
            short_first = any(len(w.orders[o]["lines"]) < 2 for o in w.pending()[:2])
            if not 16 <= calls <= 27 or (spec.min_lines > 1 and short_first):
                continue
        if spec.persona.flaw == "wrong_total" and spec.task.kind != "batch" and \
                all(ln["qty"] == 1 for ln in w.orders[target]["lines"]) and len(w.orders[target]["lines"]) < 2:
            continue
        break
    if spec.task.kind in ("fulfil",):
        spec.task.order_id = target
    elif spec.task.kind == "refund":
        paid = [o for o, v in w.orders.items() if v["status"] == "paid"]
        spec.task.order_id = paid[0]
        w.orders[paid[0]]["customer_id"] = w.orders[target]["customer_id"]
        if spec.min_lines > 1 and len(w.orders[paid[0]]["lines"]) < 2:
            w.orders[paid[0]]["lines"] = w.orders[target]["lines"] if len(w.orders[target]["lines"]) > 1 else \
                w.orders[paid[0]]["lines"]
            w.charges = [c if c["order_id"] != paid[0] else {**c, "amount_cents": w.total(paid[0])} for c in w.charges]
    elif spec.task.kind == "stock_report":
        spec.task.skus = sorted(w.products)[:3]
    return w
