"""The report loads only the step attributes the measures read (``measures.STEP_KEYS``).

Two checks keep that safe: the report from the projected load equals the one from a full load on
a store with every kind of episode the measures treat apart, and a recording attribute dict shows
that the measures ask for no step attribute outside the list (and for every one in it).
"""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from agentchaos_otel import attributes as A
from agentchaos_otel.campaign import measures as M
from agentchaos_otel.campaign import report as R
from agentchaos_otel.records import EpisodeTrace
from agentchaos_otel.store.read.episodes import load_episodes
from benchmarks.corpora.spans import write_episodes
from tests.agentchaos_otel.campaign.test_cli import mounted
from tests.agentchaos_otel.campaign.test_report_corpus import episode, llm, synthetic_study, tool
from tests.agentchaos_otel.guards.test_campaign import _pair


def _hand_built() -> list[EpisodeTrace]:
    """What the reference campaign does not produce: crashes, suppressed repeats, error steps,
    LLM faults that changed nothing, besides the study's retried and burst tool faults."""
    eps = synthetic_study(n_tasks=6)
    eps += _pair("g1", False, True, doubled=1) + _pair("g2", True, True, doubled=0)
    eps.append(episode("boom", "independent", 0, False, [llm(), tool("op", "x", fault="timeout")],
                       error="RuntimeError: boom"))
    eps.append(episode("noop", "llm_empty_single", 0, True, [llm(fault="empty", changed=False), llm(0)]))
    failed = episode("err", "independent", 1, False, [llm(), tool("op", "y", fault="rate_limit"), llm(0)])
    steps = list(failed.steps)
    steps[1] = dataclasses.replace(steps[1], status_code="ERROR", error_type="RateLimitError")
    eps.append(dataclasses.replace(failed, steps=tuple(steps)))
    return [_storable(ep, i) for i, ep in enumerate(eps)]


def _storable(ep: EpisodeTrace, index: int) -> EpisodeTrace:
    """The hand-built episode as spans the store takes for steps: an operation name on each, and
    its own stretch of (positive) time."""
    offset = 10**12 + index * 10**9
    return dataclasses.replace(ep, steps=tuple(dataclasses.replace(
        s, start_ns=s.start_ns + offset, end_ns=s.end_ns + offset,
        attributes={A.GEN_AI_OPERATION_NAME: A.OP_CHAT if s.kind == "llm" else A.OP_EXECUTE_TOOL,
                    **s.attributes}) for s in ep.steps))


@pytest.fixture(scope="module")
def store(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A SIMULATED reference campaign with guards, then the hand-built episodes, in one DuckDB file."""
    db = tmp_path_factory.mktemp("projection") / "traces.duckdb"
    run = CliRunner().invoke(mounted(), [
        "campaign", "run", "--agent", "reference", "--tasks", "3", "--conditions",
        "none,once_timeout,llm_empty_single,bursty", "--guard", "response,idempotency", "--seeds", "0",
        "--workers", "2", "--db", str(db), "--no-progress"])
    assert run.exit_code == 0, run.output
    write_episodes(_hand_built(), db)
    return db


def _report(episodes: list[EpisodeTrace]) -> str:
    return json.dumps(R.to_json(R.build(episodes, resamples=50)), sort_keys=True, default=str)


def test_report_from_projected_steps_equals_the_full_load(store: Path) -> None:
    full = load_episodes(store, blind=False)
    projected = R.load_corpus(store)
    assert [e.trace_id for e in projected] == [e.trace_id for e in full]
    assert all(not s.events and s.attributes.keys() <= M.STEP_KEYS for e in projected for s in e.steps)
    assert _report(projected) == _report(full)
    # The store holds what the measures tell apart, so the comparison covers them.
    m = R.build(full, resamples=50)
    assert m.crashes and m.guards is not None and m.guards.by_condition
    assert m.guards.cost.suppressed_tool_calls and m.guards.cost.guard_retries
    assert m.retry["timeout"].hits and m.retry["unfaulted"].total and m.abandonment
    assert {"none", "bursty", "once_timeout", "llm_empty_single"} <= set(m.conditions)
    assert any(c.fired_not_changed for c in m.conditions.values()) and m.contributions.effects
    assert any(s.status_code == "ERROR" for e in projected for s in e.steps)


_EVERY_KEY = "<every key>"


class RecordingAttributes(dict[str, Any]):
    """Step attributes that note every key a reader asks about; reading them all is noted too."""

    def __init__(self, data: dict[str, Any], asked: set[str]) -> None:
        super().__init__(data)
        self.asked = asked

    def get(self, key: str, default: Any = None) -> Any:
        self.asked.add(key)
        return super().get(key, default)

    def __getitem__(self, key: str) -> Any:
        self.asked.add(key)
        return super().__getitem__(key)

    def __contains__(self, key: object) -> bool:
        self.asked.add(str(key))
        return super().__contains__(key)

    def __iter__(self) -> Any:
        self.asked.add(_EVERY_KEY)
        return super().__iter__()

    def keys(self) -> Any:
        self.asked.add(_EVERY_KEY)
        return super().keys()

    def values(self) -> Any:
        self.asked.add(_EVERY_KEY)
        return super().values()

    def items(self) -> Any:
        self.asked.add(_EVERY_KEY)
        return super().items()


def test_measures_read_exactly_the_step_keys_the_report_loads(store: Path) -> None:
    asked: set[str] = set()
    episodes = [dataclasses.replace(e, steps=tuple(dataclasses.replace(s, attributes=RecordingAttributes(
        s.attributes, asked)) for s in e.steps)) for e in load_episodes(store, blind=False)]
    m = M.compute_all(episodes, resamples=20)
    assert m.guards is not None and m.retry and m.abandonment  # the guard and retry paths ran
    # A key outside the list would be missing from the report's load; a listed key nobody reads
    # is a stale entry (or a path this corpus no longer reaches).
    assert asked == M.STEP_KEYS, (sorted(asked - M.STEP_KEYS), sorted(M.STEP_KEYS - asked))


def test_the_recording_dict_sees_reads_through_step_record() -> None:
    asked: set[str] = set()
    ep = episode("t", "none", 0, True, [tool("op", "x")])
    step = dataclasses.replace(ep.steps[0], attributes=RecordingAttributes(ep.steps[0].attributes, asked))
    step.get("some.key")
    _ = A.STEP in step.attributes
    assert asked == {"some.key", A.STEP}
    dict(step.attributes)
    assert _EVERY_KEY in asked
