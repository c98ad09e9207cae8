"""Planning the corpus from a seed: which task, which forms, where, and what outcome to expect.

Every choice comes from ``random.Random`` seeded with a string derived from the corpus seed.
Faulted episodes cycle through every form that can make a task fail (each form is placed at
least once when there are enough slots), then fill the remaining slots with the least-used
compatible forms. Long traces put the root cause among the first items of an aggregate task the
model keeps working through (it skips or carries the damaged item), so the failure shows only at
the end; two-fault episodes put a second, later fault after a first one that already changed the
trajectory (a skipped item, a wrong id carried into the next call, a wrong product picked).
"""

from __future__ import annotations

import random
from dataclasses import dataclass
from typing import Any

from .forms import LLM_FORMS, TOOL_FORMS, Form
from .model import ModelCfg
from .run import FaultSpec, Plan
from .world import (
    LONG_KINDS,
    AuditContacts,
    AuditTotals,
    InvoiceDue,
    LatestETA,
    OpenTicket,
    OrderContact,
    OrderTotalEUR,
    RefundOrder,
    Rollout,
    StockAvailable,
    StockSweep,
    World,
)

VENDORS = {
    "openai": "gpt-4o-mini-2024-07-18",
    "azure": "gpt4o-prod-eu",
    "gemini": "gemini-2.0-flash",
    "vllm": "meta-llama/Llama-3.1-8B-Instruct",
    "ollama": "llama3.1:8b",
    "litellm": "claude-3-5-haiku",
    "openrouter": "meta-llama/llama-3.1-70b-instruct",
    "anthropic": "claude-3-5-haiku-20241022",
    "bedrock": "bedrock-claude-3-haiku",
}
FORM_VENDOR = {
    "openai": "openai",
    "azure": "azure",
    "gemini": "gemini",
    "bedrock": "bedrock",
    "openrouter": "openrouter",
    "ollama": "ollama",
    "vllm": "vllm",
    "litellm": "litellm",
    "anthropic": "anthropic",
}

SHORT_BY_TOOL = {
    "lookup_order": [OrderTotalEUR, OrderContact, OpenTicket, RefundOrder],
    "get_customer": [OrderContact],
    "search_products": [StockAvailable],
    "check_inventory": [StockAvailable],
    "get_exchange_rate": [OrderTotalEUR],
    "create_ticket": [OpenTicket],
    "issue_refund": [RefundOrder],
    "list_shipments": [LatestETA],
    "get_invoice": [InvoiceDue],
    "get_deployment": [Rollout],
}
LONG_BY_TOOL = {
    "lookup_order": [AuditTotals, AuditContacts],
    "get_customer": [AuditContacts],
    "check_inventory": [StockSweep],
}
# accepted-data forms only damage a field some aggregate tasks read
LONG_FILTER = {
    ("neighbouring-record-id", "lookup_order"): [AuditContacts],
    ("stale-replica-read", "lookup_order"): [AuditTotals],
    ("minor-units-as-major", "lookup_order"): [AuditTotals],
}
ALL_SHORT = [OrderTotalEUR, OrderContact, StockAvailable, OpenTicket, RefundOrder, LatestETA, InvoiceDue, Rollout]

# LLM forms that break one tool call without stopping the loop (the model may skip the item)
ARG_FORMS = {
    "finish-length-tool-args",
    "vllm-tool-args-cut-finish-tool-calls",
    "hermes-nested-arguments",
    "parameters-wrapper-arguments",
}
WRONG_ARGS = {"crosstalk-other-entity-args"}
# tool forms whose effect is data the model accepts (carried to the answer)
ACCEPTED = {
    "stale-replica-read",
    "utc-midnight-date-shift",
    "neighbouring-record-id",
    "minor-units-as-major",
    "fx-rate-inverted",
    "api-v2-field-rename",
    "es-timed-out-partial-hits",
    "es-shard-failures-partial",
    "github-style-incomplete-results",
    "partial-flag-list",
    "array-cut-no-flag",
}


def vendor_for(form: Form, rng: random.Random) -> str:
    s = (form.system + " " + form.name).lower()
    for key in ("azure", "gemini", "bedrock", "openrouter", "ollama", "vllm", "litellm", "anthropic"):
        if key in s:
            return key
    if "openai api" in s or form.name.startswith("openai-"):
        return "openai"
    return rng.choice(["openai", "openai", "azure", "vllm", "litellm", "openrouter", "ollama", "gemini"])


def est_calls(task) -> int:
    k = task.kind
    if k in ("eta", "invoice", "rollout"):
        return 2
    if k == "stock":
        return 3 if task.parallel else 4
    if k == "audit_totals":
        return len(task.order_ids) + 1
    if k == "audit_contacts":
        return 2 * len(task.order_ids) + 1
    if k == "stock_sweep":
        return 2 * len(task.skus) * 1 + 1
    return 3


def has_nonascii(s: str) -> bool:
    return any(ord(c) > 127 for c in s)


@dataclass
class Slot:
    category: str
    shape: str


class Composer:
    def __init__(self, world: World, seed: int) -> None:
        self.world, self.seed = world, seed
        self.used: dict[str, int] = {}
        self.counter = 0

    def rng(self, *parts: Any) -> random.Random:
        return random.Random(":".join(map(str, (self.seed,) + parts)))

    # ------------------------------------------------------------------ tasks
    def make_task(self, cls, rng: random.Random, **kw):
        for _ in range(200):
            t = cls(self.world, rng, **kw) if kw else cls(self.world, rng)
            if cls is OrderContact and kw.get("_nonascii") is None:
                return t
            return t
        raise RuntimeError("no task")

    def contact_task(self, rng: random.Random, nonascii: bool) -> OrderContact:
        for _ in range(500):
            t = OrderContact(self.world, rng)
            name = self.world.customers[self.world.orders[t.order_id]["customer_id"]]["name"]
            if has_nonascii(name) == nonascii:
                return t
        raise RuntimeError("no contact task")

    def stock_task(self, rng: random.Random) -> StockAvailable:
        for _ in range(500):
            t = StockAvailable(self.world, rng)
            words = set(t.query.lower().split())
            others = [
                p for p in self.world.products.values() if p["sku"] != t.sku and words & set(p["name"].lower().split())
            ]
            if others:
                return t
        raise RuntimeError("no stock task")

    def long_task(self, cls, rng: random.Random, calls: int):
        if cls is AuditTotals:
            return AuditTotals(self.world, rng, n=max(6, calls - 1))
        if cls is AuditContacts:
            return AuditContacts(self.world, rng, n=max(3, (calls - 1) // 2))
        return StockSweep(self.world, rng, n=max(3, (calls - 1) // 2))

    # ------------------------------------------------------------------ helpers
    def base_plan(
        self,
        category: str,
        shape: str,
        task,
        rng: random.Random,
        faults: list[FaultSpec],
        cfg: ModelCfg,
        vendor: str | None = None,
        **kw,
    ) -> Plan:
        vendor = vendor or rng.choice(
            ["openai", "openai", "azure", "vllm", "litellm", "openrouter", "ollama", "gemini"]
        )
        p = Plan(
            task_id="",
            category=category,
            shape=shape,
            task=task,
            cfg=cfg,
            faults=faults,
            vendor=vendor,
            model=VENDORS[vendor],
            stream=rng.random() < 0.25,
            max_retries=rng.choice([0, 1, 2, 2]),
            max_turns=12 if shape != "long" else 60,
        )
        if shape == "long" or task.kind in ("audit_totals", "audit_contacts", "stock_sweep"):
            p.max_turns = min(30, est_calls(task) + 8)
        for k, v in kw.items():
            setattr(p, k, v)
        return p

    def cut_field(self, task, tool: str) -> str | None:
        return {
            "lookup_order": "customer_id" if task.kind in ("order_contact", "ticket", "audit_contacts") else "total",
            "get_customer": "email",
            "check_inventory": "on_hand",
            "get_invoice": "amount_due",
            "list_shipments": "items",
        }.get(tool)

    # ------------------------------------------------------------------ compatibility
    def fits(self, f: Form, shape: str) -> bool:
        if f.absorbable:
            return False
        if shape == "short":
            return True
        if f.side == "tool":
            if shape == "long":
                return bool(set(f.tools or LONG_BY_TOOL) & set(LONG_BY_TOOL)) and not f.needs
            return (
                bool(set(f.tools or LONG_BY_TOOL) & set(LONG_BY_TOOL))
                and not f.needs
                or f.name in ("es-timed-out-partial-hits", "es-shard-failures-partial", "neighbouring-record-id")
            )
        if shape == "long":
            return f.name in ARG_FORMS | WRONG_ARGS | {"prefix-keyed-cache-replay"}
        return f.name in ARG_FORMS | WRONG_ARGS

    # ------------------------------------------------------------------ faulted
    def faulted(self, f: Form, shape: str, k: int) -> Plan:
        rng = self.rng("faulted", shape, f.name, k)
        if shape == "two-fault":
            return self.two_fault(f, rng, k)
        if f.side == "tool":
            return self.tool_root(f, shape, rng, k)
        return self.llm_root(f, shape, rng, k)

    def tool_root(self, f: Form, shape: str, rng: random.Random, k: int, absorbed: FaultSpec | None = None) -> Plan:
        tools = list(f.tools or SHORT_BY_TOOL)
        if shape == "long":
            tname = rng.choice([t for t in tools if t in LONG_BY_TOOL])
            cls = rng.choice(LONG_FILTER.get((f.name, tname), LONG_BY_TOOL[tname]))
            task = self.long_task(cls, rng, rng.randint(15, 21))
            nth = rng.randint(0, 3)
            cfg = ModelCfg(retries=rng.choice([0, 1]), on_fail="skip", chatty=rng.random() < 0.2)
        else:
            if f.needs == "nonidem":
                tools = [t for t in tools if t in ("create_ticket", "issue_refund")]
            if f.needs == "distractor":
                tools = ["search_products"]
            tname = rng.choice(tools)
            cls = rng.choice(SHORT_BY_TOOL[tname])
            if f.name == "neighbouring-record-id":
                cls = rng.choice([OrderContact, OpenTicket])
            if f.name in ("fx-rate-inverted",):
                cls = OrderTotalEUR
            if f.name in ("minor-units-as-major", "stale-replica-read") and tname == "lookup_order":
                cls = rng.choice([OrderTotalEUR, RefundOrder])
            if f.name == "api-v2-field-rename" and tname == "lookup_order":
                cls = rng.choice([OrderTotalEUR, RefundOrder, OrderContact, OpenTicket])
            task = (
                self.stock_task(rng)
                if cls is StockAvailable
                else (self.contact_task(rng, rng.random() < 0.5) if cls is OrderContact else cls(self.world, rng))
            )
            nth = 0
            if tname == "check_inventory" and cls is StockAvailable:
                nth = rng.randint(0, 1)
            cfg = ModelCfg(retries=rng.choice([0, 1, 1, 2]), on_fail="give_up", chatty=rng.random() < 0.25)
        count = cfg.retries + 1
        if f.executes:
            cfg.retries, count = 1, 1
        params: dict[str, Any] = {}
        if f.name.startswith("json-cut") or f.name == "object-keys-dropped":
            params["cut_before"] = self.cut_field(task, tname)
        if f.name == "neighbouring-record-id":
            params["other_customer"] = self.other_customer(task, rng)
        spec = FaultSpec(f.name, "root", tool=tname, nth=nth, count=count, params=params)
        faults = ([absorbed] if absorbed else []) + [spec]
        p = self.base_plan("faulted_failure", shape, task, rng, faults, cfg)
        return p

    def other_customer(self, task, rng: random.Random) -> str:
        oid = getattr(task, "order_id", None) or task.order_ids[0]
        cid = self.world.orders[oid]["customer_id"]
        return rng.choice(sorted(c for c in self.world.customers if c != cid))

    def llm_root(self, f: Form, shape: str, rng: random.Random, k: int, absorbed: FaultSpec | None = None) -> Plan:
        # task
        if f.needs == "nonascii_final":
            task = self.contact_task(rng, True)
        elif f.needs == "nonascii_args":
            task = OpenTicket(self.world, rng)
        elif f.needs == "nonidem":
            task = rng.choice([OpenTicket, RefundOrder])(self.world, rng)
        elif shape == "long":
            cls = rng.choice(LONG_KINDS)
            task = self.long_task(cls, rng, rng.randint(15, 21))
        else:
            choices = [
                c
                for c in ALL_SHORT
                if not (f.needs == "id_arg" and c in (Rollout, StockAvailable))
                and not (f.name == "hermes-nested-arguments" and c is Rollout)
            ]
            cls = rng.choice(choices)
            task = (
                self.stock_task(rng)
                if cls is StockAvailable
                else (self.contact_task(rng, rng.random() < 0.5) if cls is OrderContact else cls(self.world, rng))
            )
        calls = est_calls(task)
        cfg = ModelCfg(retries=0, on_fail="skip" if shape == "long" else "give_up", chatty=rng.random() < 0.25)
        vendor = vendor_for(f, rng)
        kw: dict[str, Any] = {}
        spec = FaultSpec(f.name, "root")
        if f.stream == "only":
            kw["stream"] = True
        elif f.stream == "never":
            kw["stream"] = False
        if f.name in ARG_FORMS:
            cfg.retries = 0
        if f.sdk_retry:
            m = rng.choice([0, 0, 1, 2]) if "timeout" not in f.name and "stall" not in f.name else rng.choice([0, 0, 1])
            kw["max_retries"] = m
            spec.count = m + 1
        if f.name in ("client-read-timeout", "stream-stall"):
            kw["client_timeout"] = 1.2
        if f.name == "slow-response":
            kw["deadline"] = 1.5
            kw["slow_s"] = 2.5
        if f.name == "gateway-connection-refused":
            kw["gateway"] = True
            kw["max_retries"] = rng.choice([0, 1])
        if f.name == "fastapi-422-none-content":
            cfg.chatty = False
        # where
        if shape == "long":
            if f.name in ARG_FORMS | WRONG_ARGS:
                spec.min_attempt = rng.randint(0, 3)
                spec.when = "call"
            elif f.name == "prefix-keyed-cache-replay":
                spec.min_attempt = rng.randint(1, 3)
                spec.count = 999
            elif f.name.startswith("stream-") or f.name == "finish-length-content":
                spec.when = "final"
            else:
                spec.min_attempt = max(1, calls - rng.randint(1, 3))
        else:
            when = spec.when or f.when
            if when == "final":
                spec.min_attempt = 0
            elif when == "call":
                spec.min_attempt = rng.randint(0, max(0, calls - 2))
            else:
                spec.min_attempt = rng.randint(0, max(0, calls - 1))
            if f.needs == "toolturn_before":
                spec.min_attempt = max(1, spec.min_attempt)
            if f.name == "prefix-keyed-cache-replay":
                spec.min_attempt = max(1, spec.min_attempt)
                spec.count = 999
            if f.needs == "nonascii_args":
                spec.item = "ticket"
            if f.name == "semantic-cache-replay-previous":
                spec.prev_call = "create_ticket" if task.kind == "ticket" else "issue_refund"
            if f.name == "gateway-connection-refused":
                spec.min_attempt = rng.randint(1, max(1, calls - 1))
        if absorbed is not None and absorbed.min_attempt >= spec.min_attempt:
            spec.min_attempt = absorbed.min_attempt + 1
        faults = ([absorbed] if absorbed else []) + [spec]
        return self.base_plan("faulted_failure", shape, task, rng, faults, cfg, vendor=vendor, **kw)

    def two_fault(self, f1: Form, rng: random.Random, k: int) -> Plan:
        """f1 changes the trajectory and the model goes on; a later f2 (of another kind) hits too."""
        second_pool = [
            g for g in TOOL_FORMS if not g.absorbable and not g.needs and g.name not in ACCEPTED and g.name != f1.name
        ]
        if f1.name in ("es-timed-out-partial-hits", "es-shard-failures-partial"):
            task = self.stock_task(rng)
            s1 = FaultSpec(f1.name, "root", tool="search_products", count=1)
            g = rng.choice([x for x in second_pool if "check_inventory" in (x.tools or ("check_inventory",))])
            s2 = FaultSpec(g.name, "second", tool="check_inventory", nth=rng.randint(0, 1), count=9)
            cfg = ModelCfg(retries=rng.choice([0, 1]), on_fail="give_up")
            return self.base_plan("faulted_failure", "two-fault", task, rng, [s1, s2], cfg)
        if f1.name == "neighbouring-record-id":
            task = self.contact_task(rng, rng.random() < 0.5)
            s1 = FaultSpec(
                f1.name, "root", tool="lookup_order", params={"other_customer": self.other_customer(task, rng)}
            )
            g = rng.choice([x for x in second_pool if "get_customer" in (x.tools or ("get_customer",))])
            s2 = FaultSpec(g.name, "second", tool="get_customer", count=9)
            cfg = ModelCfg(retries=rng.choice([0, 1]), on_fail="give_up")
            return self.base_plan("faulted_failure", "two-fault", task, rng, [s1, s2], cfg)
        # aggregate task: f1 damages an early item, f2 a later one (or ends the run at the answer)
        if f1.side == "tool":
            tname = rng.choice([t for t in (f1.tools or LONG_BY_TOOL) if t in LONG_BY_TOOL])
            cls = rng.choice(LONG_BY_TOOL[tname])
        else:
            tname, cls = None, rng.choice(LONG_KINDS)
        task = self.long_task(cls, rng, rng.randint(10, 16))
        cfg = ModelCfg(retries=0, on_fail="skip", chatty=rng.random() < 0.2)
        item_tool = {
            "audit_totals": "lookup_order",
            "audit_contacts": rng.choice(["lookup_order", "get_customer"]),
            "stock_sweep": "check_inventory",
        }[task.kind]
        if f1.side == "tool":
            s1 = FaultSpec(f1.name, "root", tool=tname, nth=rng.randint(0, 1), count=1)
            if f1.name.startswith("json-cut") or f1.name == "object-keys-dropped":
                s1.params["cut_before"] = self.cut_field(task, tname)
            first_at = 1
        else:
            s1 = FaultSpec(f1.name, "root", when="call", min_attempt=rng.randint(0, 2))
            first_at = s1.min_attempt + 2
        calls = est_calls(task)
        if rng.random() < 0.55:
            g = rng.choice([x for x in second_pool if item_tool in (x.tools or (item_tool,))])
            occ = len(task.item_keys()) if task.kind != "audit_contacts" else len(task.order_ids)
            lo = min(first_at + 2, occ - 2)
            s2 = FaultSpec(g.name, "second", tool=item_tool, nth=rng.randint(lo, max(lo, occ - 2)), count=1)
            if g.name.startswith("json-cut") or g.name == "object-keys-dropped":
                s2.params["cut_before"] = self.cut_field(task, item_tool)
            kw: dict[str, Any] = {}
        else:
            hard = [
                h
                for h in LLM_FORMS
                if h.when in ("any", "final")
                and not h.needs
                and h.label not in ("latency",)
                and not h.absorbable
                and h.name not in ("client-read-timeout", "stream-stall")
            ]
            g = rng.choice(hard)
            s2 = FaultSpec(g.name, "second", min_attempt=max(first_at + 3, calls - 2), count=9)
            kw = {"stream": True} if g.stream == "only" else ({"stream": False} if g.stream == "never" else {})
            if g.sdk_retry:
                kw["max_retries"] = 0
        return self.base_plan("faulted_failure", "two-fault", task, rng, [s1, s2], cfg, **kw)

    # ------------------------------------------------------------------ absorbed faults
    def absorbed_llm(self, rng: random.Random, task, max_retries: int) -> tuple[FaultSpec, dict[str, Any]]:
        pool = [
            f for f in LLM_FORMS if f.sdk_retry and f.name not in ("gateway-connection-refused", "client-read-timeout")
        ]
        f = rng.choice(pool)
        spec = FaultSpec(f.name, "absorbed", min_attempt=rng.randint(0, max(0, est_calls(task) - 1)), count=1)
        kw = {"max_retries": max(1, max_retries)}
        if f.stream == "only":
            kw["stream"] = True
        return spec, kw

    def absorbed_tool(self, rng: random.Random, task, retries: int) -> FaultSpec | None:
        tools = {
            "order_total_eur": ["lookup_order", "get_exchange_rate"],
            "order_contact": ["lookup_order", "get_customer"],
            "stock": ["search_products", "check_inventory"],
            "ticket": ["lookup_order"],
            "refund": ["lookup_order"],
            "eta": ["list_shipments"],
            "invoice": ["get_invoice"],
            "rollout": ["get_deployment"],
            "audit_totals": ["lookup_order"],
            "audit_contacts": ["lookup_order", "get_customer"],
            "stock_sweep": ["check_inventory"],
        }[task.kind]
        tname = rng.choice(tools)
        pool = [
            f
            for f in TOOL_FORMS
            if (f.tools is None or tname in f.tools) and not f.needs and f.name not in ACCEPTED and not f.executes
        ]
        f = rng.choice(pool)
        nth = 0 if task.kind not in ("audit_totals", "audit_contacts", "stock_sweep") else rng.randint(0, 3)
        params = {"cut_before": self.cut_field(task, tname)} if f.name.startswith("json-cut") else {}
        if f.absorbable:
            return FaultSpec(f.name, "absorbed", tool=tname, nth=nth, count=1, params=params)
        return FaultSpec(f.name, "absorbed", tool=tname, nth=nth, count=max(1, retries), params=params)

    # ------------------------------------------------------------------ other categories
    def any_task(self, rng: random.Random, long: bool):
        if long:
            return self.long_task(rng.choice(LONG_KINDS), rng, rng.randint(15, 21))
        cls = rng.choice(ALL_SHORT)
        if cls is StockAvailable:
            return self.stock_task(rng)
        if cls is OrderContact:
            return self.contact_task(rng, rng.random() < 0.5)
        return cls(self.world, rng)

    def clean(self, k: int) -> Plan:
        rng = self.rng("clean", k)
        task = self.any_task(rng, rng.random() < 0.2)
        cfg = ModelCfg(
            retries=rng.choice([0, 1, 2]), on_fail=rng.choice(["give_up", "skip"]), chatty=rng.random() < 0.3
        )
        kw = {}
        if rng.random() < 0.15:
            kw["deadline"] = 2.5
        return self.base_plan(
            "clean_success",
            "long" if task.kind in ("audit_totals", "audit_contacts", "stock_sweep") else "short",
            task,
            rng,
            [],
            cfg,
            **kw,
        )

    def benign(self, k: int) -> Plan:
        rng = self.rng("benign", k)
        long = rng.random() < 0.2
        task = self.any_task(rng, long)
        shape = "long" if long else "short"
        cfg = ModelCfg(retries=rng.choice([1, 2]), on_fail="give_up", chatty=rng.random() < 0.3)
        mode = rng.choice(
            ["sdk", "sdk", "tool", "tool", "absorbable", "slow", "stale", "selfcorrect", "argfix", "sdk+tool"]
        )
        faults: list[FaultSpec] = []
        kw: dict[str, Any] = {}
        if mode in ("sdk", "sdk+tool"):
            s, kw = self.absorbed_llm(rng, task, rng.choice([1, 2]))
            faults.append(s)
        if mode in ("tool", "sdk+tool"):
            s = self.absorbed_tool(rng, task, cfg.retries)
            faults.append(s)
        if mode == "absorbable":
            cands = []
            for f in TOOL_FORMS:
                if not f.absorbable:
                    continue
                for t in f.tools or ():
                    if (
                        t
                        in {
                            "lookup_order": ("order_contact", "ticket", "audit_contacts"),
                            "check_inventory": ("stock", "stock_sweep"),
                            "get_customer": ("order_contact", "audit_contacts"),
                            "get_deployment": ("rollout",),
                            "get_invoice": ("invoice",),
                        }.get(t, ())
                        and task.kind
                        in {
                            "lookup_order": ("order_contact", "ticket", "audit_contacts"),
                            "check_inventory": ("stock", "stock_sweep"),
                            "get_customer": ("order_contact", "audit_contacts"),
                            "get_deployment": ("rollout",),
                            "get_invoice": ("invoice",),
                        }[t]
                    ):
                        if f.name == "numbers-as-strings" and t == "lookup_order":
                            continue
                        cands.append((f, t))
            if not cands:
                task = StockAvailable(self.world, rng) if rng.random() < 0.5 else self.stock_task(rng)
                cands = [
                    (f, "check_inventory") for f in TOOL_FORMS if f.absorbable and "check_inventory" in (f.tools or ())
                ]
            f, t = rng.choice(cands)
            faults.append(FaultSpec(f.name, "absorbed", tool=t, nth=0, count=1))
            if task.kind == "stock":
                pass
        if mode == "slow":
            faults.append(
                FaultSpec("slow-response", "absorbed", min_attempt=rng.randint(0, est_calls(task) - 1), count=1)
            )
            kw["slow_s"] = 0.35
        if mode == "stale":
            faults.append(
                FaultSpec(
                    "semantic-cache-replay-previous",
                    "absorbed",
                    min_attempt=1,
                    count=1,
                    prev_call={
                        "order_total_eur": "lookup_order",
                        "order_contact": "lookup_order",
                        "ticket": "lookup_order",
                        "refund": "lookup_order",
                        "stock": "search_products",
                        "eta": None,
                        "invoice": None,
                        "rollout": None,
                        "audit_totals": "lookup_order",
                        "audit_contacts": "lookup_order",
                        "stock_sweep": "check_inventory",
                    }[task.kind]
                    or "lookup_order",
                )
            )
            if task.kind in ("eta", "invoice", "rollout"):
                task = OrderTotalEUR(self.world, rng)
                shape = "short"
        if mode == "selfcorrect":
            kind = rng.choice(["wrong_id", "missing_arg", "bad_json", "unknown_tool"])
            if task.kind in ("stock", "rollout") and kind == "wrong_id":
                kind = "missing_arg"
            cfg.slip = {"kind": kind, "item": None}
        if mode == "argfix":
            f = rng.choice(sorted(ARG_FORMS))
            faults.append(
                FaultSpec(f, "absorbed", when="call", min_attempt=rng.randint(0, max(0, est_calls(task) - 2)), count=1)
            )
        if mode == "stale" and task.kind in ("ticket", "refund"):
            faults[-1].prev_call = "lookup_order"
        p = self.base_plan("benign_success", shape, task, rng, faults, cfg, **kw)
        p.note = mode
        return p

    def unfaulted(self, k: int) -> Plan:
        rng = self.rng("unfaulted", k)
        kind = rng.choice(
            [
                "wrong_id",
                "wrong_id",
                "missing_arg",
                "bad_json",
                "unknown_tool",
                "arith",
                "arith",
                "premature",
                "loop",
                "dup_call",
                "prose",
                "skip_item",
                "skip_item",
            ]
        )
        faults: list[FaultSpec] = []
        kw: dict[str, Any] = {}
        shape = "short"
        if kind == "dup_call":
            task = OpenTicket(self.world, rng)
            slip = {"kind": "dup_call", "tool": "create_ticket"}
        elif kind == "prose":
            for _ in range(100):
                task = OrderTotalEUR(self.world, rng)
                if task.json_answer:
                    break
            slip = {"kind": "prose"}
        elif kind == "skip_item":
            task = self.long_task(rng.choice([AuditTotals, StockSweep, AuditContacts]), rng, rng.randint(15, 21))
            shape = "long"
            keys = task.item_keys()
            slip = {"kind": "skip_item", "item": keys[rng.randint(2, len(keys) - 1)]}
        elif kind == "arith":
            task = rng.choice([OrderTotalEUR, StockAvailable, AuditTotals])
            task = (
                self.stock_task(rng)
                if task is StockAvailable
                else (
                    self.long_task(AuditTotals, rng, rng.randint(15, 21))
                    if task is AuditTotals
                    else OrderTotalEUR(self.world, rng)
                )
            )
            shape = "long" if task.kind == "audit_totals" else "short"
            slip = {"kind": "arith"}
        elif kind == "premature":
            task = rng.choice([OrderTotalEUR, LatestETA, InvoiceDue])(self.world, rng)
            slip = {"kind": "premature"}
        elif kind == "loop":
            task = self.any_task(rng, False)
            slip = {"kind": "loop"}
        else:
            task = self.any_task(rng, rng.random() < 0.2)
            if kind == "wrong_id" and task.kind in ("stock", "rollout"):
                kind = "missing_arg"
            shape = "long" if task.kind in ("audit_totals", "audit_contacts", "stock_sweep") else "short"
            slip = {"kind": kind, "item": None}
            if shape == "long":
                keys = task.item_keys()
                slip["item"] = keys[rng.randint(len(keys) // 2, len(keys) - 1)]
        cfg = ModelCfg(retries=0, on_fail="give_up", slip=slip, chatty=rng.random() < 0.25)
        if rng.random() < 0.4 and kind not in ("premature",):
            if rng.random() < 0.5:
                s, kw = self.absorbed_llm(rng, task, 1)
                faults.append(s)
            else:
                cfg.retries = 1 if kind not in ("wrong_id", "missing_arg", "bad_json", "unknown_tool") else 0
                s = self.absorbed_tool(rng, task, max(1, cfg.retries))
                if kind in ("wrong_id", "missing_arg", "bad_json", "unknown_tool"):
                    s = None
                if s is not None:
                    faults.append(s)
        p = self.base_plan("unfaulted_failure", shape, task, rng, faults, cfg, **kw)
        if kind == "loop":
            p.max_turns = 8
        p.note = kind
        return p


def compose(world: World, seed: int, episodes: int) -> list[Plan]:
    c = Composer(world, seed)
    scale = episodes / 320
    n_clean = round(40 * scale)
    n_benign = round(40 * scale)
    n_unf = round(40 * scale)
    n_faulted = episodes - n_clean - n_benign - n_unf
    n_long = round(n_faulted * 50 / 200)
    n_two = round(n_faulted * 30 / 200)
    n_short = n_faulted - n_long - n_two
    rng = c.rng("slots")
    forms = [f for f in LLM_FORMS + TOOL_FORMS if not f.absorbable]
    rng.shuffle(forms)
    free = {"short": n_short, "long": n_long, "two-fault": n_two}
    assigned: list[tuple[str, Form]] = []
    used: dict[str, int] = {}

    def two_ok(f: Form) -> bool:
        return (
            f.side == "tool"
            and (
                f.name in ("es-timed-out-partial-hits", "es-shard-failures-partial", "neighbouring-record-id")
                or (bool(set(f.tools or LONG_BY_TOOL) & set(LONG_BY_TOOL)) and not f.needs)
            )
            or f.name in ARG_FORMS | WRONG_ARGS
        )

    for f in forms:
        cands = [
            s
            for s in ("short", "long", "two-fault")
            if free[s] > 0 and (two_ok(f) if s == "two-fault" else c.fits(f, s))
        ]
        if not cands:
            continue
        s = max(cands, key=lambda x: (free[x] / max(1, {"short": n_short, "long": n_long, "two-fault": n_two}[x]), x))
        free[s] -= 1
        assigned.append((s, f))
        used[f.name] = used.get(f.name, 0) + 1
    label_n: dict[str, int] = {}
    for _, f in assigned:
        label_n[f.label] = label_n.get(f.label, 0) + 1
    for s in ("two-fault", "long", "short"):
        pool = [f for f in forms if (two_ok(f) if s == "two-fault" else c.fits(f, s))]
        while free[s] > 0:
            # balance labels first, then forms; no form more than MAX_PER_FORM times when others can take the slot
            ok = [f for f in pool if used.get(f.name, 0) < MAX_PER_FORM] or pool
            ok.sort(key=lambda f: (label_n.get(f.label, 0), used.get(f.name, 0), rng.random()))
            f = ok[0]
            assigned.append((s, f))
            used[f.name] = used.get(f.name, 0) + 1
            label_n[f.label] = label_n.get(f.label, 0) + 1
            free[s] -= 1
    plans: list[Plan] = []
    seen: dict[str, int] = {}
    for s, f in assigned:
        k = seen.get(f.name + s, 0)
        seen[f.name + s] = k + 1
        p = c.faulted(f, s, k)
        # some faulted episodes first meet an absorbed fault (SDK retry, tool retry) before the root
        r = c.rng("preabsorb", f.name, s, k)
        if s == "short" and r.random() < 0.12 and p.faults[0].role == "root":
            root = p.faults[0]
            if (
                root.form in LLM_FORMS_BY
                and LLM_FORMS_BY[root.form].when != "final"
                and root.min_attempt >= 1
                and not p.gateway
            ):
                a, kw = c.absorbed_llm(r, p.task, 1)
                a.min_attempt = root.min_attempt - 1
                if not (kw.get("stream") and not p.stream) and LLM_FORMS_BY[a.form].stream != "only":
                    p.faults.insert(0, a)
                    p.max_retries = max(1, p.max_retries)
                    if LLM_FORMS_BY[root.form].sdk_retry:
                        root.count = p.max_retries + 1
                    p.note = "absorbed fault before the root"
            elif root.form not in LLM_FORMS_BY and root.nth == 0 and not p.faults[0].form.startswith("neighbouring"):
                a, kw = c.absorbed_llm(r, p.task, 1)
                a.min_attempt = 0
                if LLM_FORMS_BY[a.form].stream != "only":
                    p.faults.insert(0, a)
                    p.max_retries = max(1, p.max_retries)
                    p.note = "absorbed fault before the root"
        plans.append(p)
    plans += [c.clean(k) for k in range(n_clean)]
    plans += [c.benign(k) for k in range(n_benign)]
    plans += [c.unfaulted(k) for k in range(n_unf)]
    order = c.rng("order")
    order.shuffle(plans)
    for i, p in enumerate(plans):
        p.task_id = f"r1-{i + 1:04d}"
    return plans


LLM_FORMS_BY = {f.name: f for f in LLM_FORMS}
MAX_PER_FORM = 5
