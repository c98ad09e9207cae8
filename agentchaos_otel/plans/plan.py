"""Fault plans: which faults may fire, how often, and for which task.

A plan is either a catalog name (``"llm_error_single"``) or a declarative TOML/JSON file. A plan
holds one or more *experiments*; each task id is assigned one experiment deterministically from
a digest of (plan seed, task id), so a campaign can spread a plan over many tasks and re-running
it assigns every task the same experiment.

File format (TOML shown; JSON has the same keys)::

    name = "degraded-api"
    seed = 7                 # optional; an explicit episode seed wins
    delay_scale = 1.0        # multiplies every injected delay (0 disables sleeping)
    tool_condition = "bursty"  # tool-result faults for wrapped tools: none/independent/bursty/persistent,
                               # or once_<kind> (one fault of that kind within the first 4 tool calls)

    [[experiment]]
    name = "errors"
    faults = ["llm_error_single", { fault = "http_429", probability = 0.5, count = 2 }]

    [[experiment]]
    name = "truncation"
    faults = ["llm_truncate_persistent"]
    strategy = "intermittent"    # overrides the catalog strategy of every fault in this experiment
    probability = 0.3

A file with top-level ``faults`` (and optional ``strategy``/``probability``/``count``) is a plan
with a single experiment.
"""

from __future__ import annotations

import hashlib
import json
import tomllib
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from agentchaos_otel.faults.catalog import FaultSpec, get_fault
from agentchaos_otel.plans.schedule import TOOL_CONDITIONS  # one list: the schedule defines them

STRATEGIES = ("single", "persistent", "intermittent", "burst")
DEFAULT_INTERMITTENT_P = 0.3
DEFAULT_BURST_COUNT = 3


class PlanError(ValueError):
    """A plan that cannot be loaded or is inconsistent; the message is one readable line."""


@dataclass(frozen=True)
class FaultRule:
    """One fault of an experiment with the firing parameters the scheduler applies."""

    spec: FaultSpec
    probability: float
    max_fires: int | None
    on_call: int | None
    strategy: str

    @classmethod
    def from_spec(cls, spec: FaultSpec) -> FaultRule:
        return cls(spec=spec, probability=spec.probability, max_fires=spec.max_fires,
                   on_call=spec.on_call, strategy=spec.strategy)

    def with_overrides(self, *, strategy: str | None = None, probability: float | None = None,
                       count: int | None = None) -> FaultRule:
        rule = self
        if strategy is not None:
            if strategy not in STRATEGIES:
                raise PlanError(f"unknown strategy {strategy!r}; expected one of {', '.join(STRATEGIES)}")
            p, n = {"single": (1.0, 1), "persistent": (1.0, None),
                    "intermittent": (DEFAULT_INTERMITTENT_P, None),
                    "burst": (1.0, DEFAULT_BURST_COUNT)}[strategy]
            rule = replace(rule, strategy=strategy, probability=p, max_fires=n)
        if probability is not None:
            if not 0.0 <= float(probability) <= 1.0:
                raise PlanError(f"probability must be within [0, 1], got {probability!r}")
            rule = replace(rule, probability=float(probability))
        if count is not None:
            if int(count) < 0:
                raise PlanError(f"count must be >= 0, got {count!r}")
            rule = replace(rule, max_fires=int(count))
        return rule


@dataclass(frozen=True)
class Experiment:
    name: str
    rules: tuple[FaultRule, ...]

    @property
    def fault_names(self) -> list[str]:
        return [r.spec.name for r in self.rules]


@dataclass(frozen=True)
class Plan:
    name: str
    experiments: tuple[Experiment, ...]
    seed: int | None = None
    delay_scale: float = 1.0
    tool_condition: str | None = None
    source: str | None = None
    meta: Mapping[str, Any] = field(default_factory=dict)

    def experiment_for(self, task_id: str | None, seed: int = 0) -> Experiment:
        """Deterministic assignment of a task to one experiment."""
        if len(self.experiments) == 1 or not self.experiments:
            return self.experiments[0] if self.experiments else Experiment("none", ())
        key = f"{self.seed if self.seed is not None else seed}:{task_id or ''}".encode()
        index = int.from_bytes(hashlib.sha256(key).digest()[:8], "big") % len(self.experiments)
        return self.experiments[index]

    def with_overrides(self, *, probability: float | None = None, strategy: str | None = None,
                       count: int | None = None, delay_scale: float | None = None) -> Plan:
        exps = tuple(Experiment(e.name, tuple(r.with_overrides(strategy=strategy, probability=probability,
                                                                count=count) for r in e.rules))
                     for e in self.experiments)
        return replace(self, experiments=exps,
                       delay_scale=self.delay_scale if delay_scale is None else float(delay_scale))


NO_FAULTS = Plan(name="none", experiments=(Experiment("none", ()),))


def from_fault_names(names: Iterable[str], *, name: str | None = None, **overrides: Any) -> Plan:
    names = list(names)
    rules = tuple(FaultRule.from_spec(_lookup(n)) for n in names)
    plan = Plan(name=name or "+".join(names), experiments=(Experiment(name or "+".join(names), rules),))
    return plan.with_overrides(**overrides) if overrides else plan


def _lookup(name: str) -> FaultSpec:
    try:
        return get_fault(name)
    except (KeyError, ValueError) as exc:
        raise PlanError(str(exc).strip("'\"")) from None


def _rule(entry: Any, defaults: Mapping[str, Any]) -> FaultRule:
    if isinstance(entry, str):
        entry = {"fault": entry}
    if not isinstance(entry, Mapping) or "fault" not in entry:
        raise PlanError(f"a fault entry must be a catalog name or a table with 'fault', got {entry!r}")
    unknown = set(entry) - {"fault", "strategy", "probability", "count"}
    if unknown:
        raise PlanError(f"unknown key(s) in fault entry: {', '.join(sorted(unknown))}")
    rule = FaultRule.from_spec(_lookup(str(entry["fault"])))
    return rule.with_overrides(strategy=entry.get("strategy", defaults.get("strategy")),
                               probability=entry.get("probability", defaults.get("probability")),
                               count=entry.get("count", defaults.get("count")))


_EXPERIMENT_KEYS = frozenset({"name", "faults", "strategy", "probability", "count"})


def _experiment(data: Mapping[str, Any], fallback_name: str) -> Experiment:
    faults = data.get("faults")
    if not isinstance(faults, list):
        raise PlanError(f"experiment {data.get('name', fallback_name)!r} needs a 'faults' list")
    unknown = set(data) - _EXPERIMENT_KEYS
    if unknown:
        raise PlanError(f"unknown key(s) in experiment: {', '.join(sorted(unknown))}")
    return Experiment(str(data.get("name", fallback_name)), tuple(_rule(f, data) for f in faults))


def plan_from_mapping(data: Mapping[str, Any], *, source: str | None = None) -> Plan:
    if not isinstance(data, Mapping):
        raise PlanError("a plan must be a table/object at the top level")
    known = {"name", "seed", "delay_scale", "tool_condition", "experiment", "experiments", "faults",
             "strategy", "probability", "count", "description"}
    unknown = set(data) - known
    if unknown:
        raise PlanError(f"unknown key(s) in plan: {', '.join(sorted(unknown))}")
    name = str(data.get("name") or (Path(source).stem if source else "plan"))
    exps_data = data.get("experiment", data.get("experiments"))
    if exps_data is not None:
        if not isinstance(exps_data, list) or not exps_data:
            raise PlanError("'experiment' must be a non-empty list of tables")
        exps = tuple(_experiment(e, f"{name}-{i}") for i, e in enumerate(exps_data))
    elif "faults" in data:
        exps = (_experiment({k: v for k, v in data.items() if k in _EXPERIMENT_KEYS}, name),)
    elif data.get("tool_condition"):
        exps = (Experiment(name, ()),)
    else:
        raise PlanError("a plan needs 'faults', 'experiment' entries or a 'tool_condition'")
    seed = data.get("seed")
    if seed is not None and not isinstance(seed, int):
        raise PlanError(f"seed must be an integer, got {seed!r}")
    delay_scale = data.get("delay_scale", 1.0)
    if not isinstance(delay_scale, int | float) or delay_scale < 0:
        raise PlanError(f"delay_scale must be a non-negative number, got {delay_scale!r}")
    tool_condition = data.get("tool_condition")
    if tool_condition is not None and tool_condition not in TOOL_CONDITIONS:
        raise PlanError(f"unknown tool_condition {tool_condition!r}; expected one of {', '.join(TOOL_CONDITIONS)}")
    return Plan(name=name, experiments=exps, seed=seed, delay_scale=float(delay_scale),
                tool_condition=tool_condition, source=source,
                meta={"description": data.get("description", "")})


def load_plan_file(path: str | Path) -> Plan:
    p = Path(path)
    try:
        raw = p.read_bytes()
    except OSError as exc:
        raise PlanError(f"cannot read plan file {p}: {exc.strerror or exc}") from None
    suffix = p.suffix.lower()
    try:
        if suffix == ".toml":
            data = tomllib.loads(raw.decode("utf-8"))
        elif suffix == ".json":
            data = json.loads(raw)
        else:
            raise PlanError(f"unknown plan format {suffix or '(none)'!r} for {p}; use .toml or .json")
    except (tomllib.TOMLDecodeError, json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise PlanError(f"plan file {p} is not valid {suffix[1:].upper()}: {exc}") from None
    return plan_from_mapping(data, source=str(p))


def resolve_plan(plan: Plan | str | Path | None) -> Plan:
    """A plan object, a catalog name, a comma-separated list of names, or a plan file path."""
    if plan is None:
        return NO_FAULTS
    if isinstance(plan, Plan):
        return plan
    text = str(plan).strip()
    if not text or text == "none":
        return NO_FAULTS
    if text in TOOL_CONDITIONS:
        return Plan(name=text, experiments=(Experiment(text, ()),), tool_condition=text)
    if isinstance(plan, Path) or text.endswith((".toml", ".json")) or Path(text).is_file():
        return load_plan_file(text)
    return from_fault_names([n.strip() for n in text.split(",") if n.strip()], name=text)
