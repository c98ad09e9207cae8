"""An episode's observations and the comparisons across its steps that rules and features need.

Per-tool norms (what a tool's results normally look like), the latency baseline, earlier
responses and key styles seen so far are computed once per episode (``EpisodeView``), so each
per-step comparison is O(1) rather than a scan of the episode. ``effect`` says what followed a
step: whether a failure there was absorbed by a retry (an SDK retry of the same request, the same
tool call again) and what the agent did next, which is how a root cause is told from a fault
that did not matter.
"""

from __future__ import annotations

import bisect
import statistics
from collections import Counter
from dataclasses import dataclass
from typing import TYPE_CHECKING

from agentchaos_otel import attributes as A
from agentchaos_otel import signals, vocabulary
from agentchaos_otel.records import EpisodeTrace
from diagnosers.key_style import key_style
from diagnosers.observe import Observation, observe_step

if TYPE_CHECKING:
    from diagnosers.norms import ToolNorms

_EMPTY_LIST_SHAPE = signals.canonical_json_digest([])
RETRY_WINDOW = 3  # tool calls within which an identical call counts as a retry (the study's window)
# What a failed call tells about whether it took effect: these say the other side refused it
# before acting, so repeating it cannot apply it twice.
_REFUSED_BEFORE_ACTING = frozenset({"rate_limit", "auth", "not_found", "invalid_request", "content_filter"})


@dataclass(frozen=True, slots=True)
class Effect:
    """What followed a step. ``retried_at``: the step index that repeated the same call (SDK
    retry, identical tool call); ``absorbed``: a retry of it succeeded; ``double_applied``: the
    absorbed call was not idempotent and may have taken effect twice; ``followed_by``: retry /
    repeat (retried, never succeeded) / replan (the agent called something else) / answer (it
    answered without another call) / end (nothing followed)."""

    retried_at: int | None = None
    retry_ok_at: int | None = None  # the retry that succeeded
    absorbed: bool = False
    double_applied: bool = False
    followed_by: str = "end"

    def describe(self) -> str:
        if self.double_applied:
            return (f"retried at step index {self.retried_at}, which succeeded: a call that is not idempotent "
                    "took effect twice")
        if self.absorbed:
            return f"absorbed: retried at step index {self.retried_at}, which succeeded"
        return {"repeat": "the agent repeated the call without success", "replan": "the agent changed its plan",
                "answer": "the agent answered without another call", "end": "the episode ended there",
                "continue": "the agent went on"}.get(self.followed_by, self.followed_by)


@dataclass
class ToolReference:
    """What results of one tool normally look like within an episode."""

    keys: tuple[str, ...] | None
    shape: str | None
    numeric_strings: int | None
    key_count: int | None
    item_count: int | None
    json_results: int
    nonempty_results: int
    text_results: int
    from_later: bool = False  # the norm comes from calls after this one (this is the first call)
    support: int = 0  # clean calls sharing the norm's key set


def named_keys(o: Observation) -> tuple[str, ...]:
    """The keys a result names: its own and those of the records it carries."""
    return (*(o.result_keys or ()), *o.result_record_keys)


class EpisodeView:
    """An episode's observations plus the comparisons rules and features need (per-tool norms,
    latency baseline, earlier responses), computed once."""

    def __init__(self, episode: EpisodeTrace, norms: ToolNorms | None = None):
        self.episode = episode
        self.norms = norms  # what each tool answers across the whole store, when it is known
        self.obs = [observe_step(s, i) for i, s in enumerate(episode.steps)]
        llm = [o.duration_ms for o in self.obs if o.kind == "llm" and not o.transport_failed]
        self.llm_median_ms = statistics.median(llm) if llm else 0.0
        self._llm_sorted = sorted(llm)
        self._effects: dict[int, Effect] = {}
        # What the agent itself said ended the episode (its recorded error), read with the vocabulary.
        error = episode.attributes.get(A.EPISODE_ERROR)
        self.episode_failure = vocabulary.read_text(error).meaning if isinstance(error, str) and error else ""
        self._first_by_id: dict[str, int] | None = None
        self._by_tool: dict[str, list[Observation]] = {}
        for o in self.obs:
            if o.kind == "tool" and o.tool_name:
                self._by_tool.setdefault(o.tool_name, []).append(o)

    def __len__(self) -> int:
        return len(self.obs)

    @staticmethod
    def _clean(o: Observation) -> bool:
        return bool(o.result_is_json) and not o.result_is_error and not o.result_empty

    def is_clean(self, o: Observation) -> bool:
        """A JSON tool result that is neither an error nor empty: usable as a norm."""
        return self._clean(o)

    @staticmethod
    def is_empty_list(o: Observation) -> bool:
        """A result that is ``[]``: no hits, an ordinary answer of a search."""
        return o.result_empty and o.result_shape == _EMPTY_LIST_SHAPE

    def calls_of(self, o: Observation) -> list[Observation]:
        """Every step of the episode that called o's tool, o included."""
        return self._by_tool.get(o.tool_name or "", [])

    def tool_reference(self, o: Observation) -> ToolReference | None:
        """Norm for o's tool from the *other* calls of the same tool: earlier ones first, because
        a fault that persists (a rename kept for the rest of the episode) would otherwise become
        the norm; later ones only when o is the first call."""
        calls = [c for c in self._by_tool.get(o.tool_name or "", []) if c is not o]
        if not calls:
            return None
        earlier = [c for c in calls if c.index < o.index and self._clean(c)]
        pool = earlier or [c for c in calls if self._clean(c)]
        first = None
        support = 0
        if pool:
            if earlier:
                first = earlier[0]
            else:
                common, _ = Counter(c.result_keys for c in pool).most_common(1)[0]
                first = next(c for c in pool if c.result_keys == common)
            support = sum(1 for c in pool if c.result_keys == first.result_keys)
        return ToolReference(
            keys=first.result_keys if first else None, shape=first.result_shape if first else None,
            numeric_strings=first.result_numeric_strings if first else None,
            key_count=first.result_key_count if first else None,
            item_count=first.result_item_count if first else None,
            json_results=sum(1 for c in calls if c.result_is_json),
            nonempty_results=sum(1 for c in calls if not c.result_empty),
            text_results=sum(1 for c in calls if c.result_is_json is False and not c.result_empty),
            from_later=not earlier, support=support,
        )

    def _prefix(self) -> None:
        """One pass over the clean tool results: what was seen before each step (styles, keys
        shared by all, numbers-as-strings), so per-step comparisons cost O(1) instead of O(n).

        A step's snapshot is the object current when it is reached; a clean result replaces it
        with an updated copy instead of changing it, so snapshots are shared between the steps
        in between (one copy per clean result, not per step) and none changes afterwards.
        Callers read them and never change them."""
        self._style_before: list[Counter[str]] = []
        self._shared_before: list[set[str] | None] = []
        self._tools_before: list[int] = []
        self._num_before: list[int] = []
        self._clean_before: list[int] = []
        self._styled_before: list[int] = []
        styles: Counter[str] = Counter()
        shared: set[str] | None = None
        tools: set[str] = set()
        num = clean = styled = 0
        for c in self.obs:
            self._style_before.append(styles)
            self._shared_before.append(shared)
            self._tools_before.append(len(tools))
            self._num_before.append(num)
            self._clean_before.append(clean)
            self._styled_before.append(styled)
            if c.kind == "tool" and self._clean(c):
                num += c.result_numeric_strings or 0
                named = named_keys(c)
                if named:
                    styled += 1
                    styles = styles.copy()
                    styles.update(key_style(k) for k in named)
                if c.result_keys:
                    clean += 1
                    shared = set(c.result_keys) if shared is None else shared & set(c.result_keys)
                    tools.add(c.tool_name or "")
        self._style_all = styles

    def style_norm(self, o: Observation) -> tuple[Counter[str], bool]:
        """Key-style counts over the episode's other clean JSON tool results (any tool): earlier
        ones when there are any, else later ones; and whether the norm came from later results."""
        if not hasattr(self, "_style_before"):
            self._prefix()
        if self._styled_before[o.index]:
            return self._style_before[o.index], False
        total = self._style_all.copy()
        if self._clean(o):
            total.subtract(key_style(k) for k in named_keys(o))
        return +total, True

    def numeric_strings_before(self, o: Observation) -> int:
        """Numbers-as-strings over earlier clean results of any tool."""
        if not hasattr(self, "_style_before"):
            self._prefix()
        return self._num_before[o.index]

    def shared_keys(self, o: Observation) -> set[str]:
        """Keys every earlier clean result carries, when those come from at least two tools (an
        envelope such as ``status``/``request_id`` that the API puts on every answer)."""
        if not hasattr(self, "_style_before"):
            self._prefix()
        shared = self._shared_before[o.index]
        if shared is None or self._clean_before[o.index] < 2 or self._tools_before[o.index] < 2:
            return set()
        return shared

    def same_call_earlier(self, o: Observation) -> Observation | None:
        """An earlier call of the same tool with identical arguments, if the trace records them."""
        if not o.tool_args_digest:
            return None
        for c in self._by_tool.get(o.tool_name or "", []):
            if c.index < o.index and c.tool_args_digest == o.tool_args_digest and self._clean(c):
                return c
        return None

    def ungrounded_steps(self) -> int:
        """LLM steps whose tool arguments carry a value the conversation never mentioned: the
        episode's norm for invented values (a model that habitually fills in values makes this large)."""
        if not hasattr(self, "_ungrounded"):
            self._ungrounded = sum(1 for c in self.obs if c.kind == "llm" and (c.args_ungrounded or 0) > 0)
        return self._ungrounded

    def previous_llm(self, o: Observation) -> Observation | None:
        for c in reversed(self.obs[:o.index]):
            if c.kind == "llm" and c.has_response:
                return c
        return None

    def response_seen_before(self, o: Observation) -> bool:
        """Whether an earlier LLM step already returned o's response id (a replayed response)."""
        if self._first_by_id is None:
            self._first_by_id = {}
            for c in self.obs:
                if c.kind == "llm" and c.response_id:
                    self._first_by_id.setdefault(c.response_id, c.index)
        return bool(o.response_id) and self._first_by_id.get(o.response_id or "", o.index) < o.index

    def next_tool_results(self, o: Observation) -> list[Observation]:
        """Tool steps that ran between o (an LLM step) and the next LLM step."""
        out = []
        for c in self.obs[o.index + 1:]:
            if c.kind == "llm":
                break
            out.append(c)
        return out


    # -- what followed a step ------------------------------------------------------------------
    def failed(self, o: Observation) -> bool:
        """Whether a step's outcome was a failure the agent could see (content-free signals only)."""
        if o.kind == "llm":
            return (o.transport_failed or o.body_error or bool(o.failure) or o.choice_count in (0, -1)
                    or o.message_null or (o.content_length == 0 and not o.tool_call_count)
                    or (bool(o.content_failure) and o.content_failure != "partial"))
        return (o.result_is_error or o.status_error or o.result_empty
                or (o.result_is_json is False and o.result_json_like))

    def retry_of(self, o: Observation) -> Observation | None:
        """The step that repeated o's call: for an LLM call the next request with the same digest
        before any tool ran (an SDK or agent retry); for a tool call the same tool with the same
        arguments within the next ``RETRY_WINDOW`` tool calls."""
        if o.kind == "llm":
            nxt = self.obs[o.index + 1] if o.index + 1 < len(self.obs) else None
            if nxt is None or nxt.kind != "llm":
                return None
            if o.request_digest and nxt.request_digest:
                return nxt if nxt.request_digest == o.request_digest else None
            same = o.request_messages is not None and nxt.request_messages == o.request_messages
            return nxt if same and o.transport_failed else None
        if not o.tool_args_digest:
            return None
        seen = 0
        for c in self.obs[o.index + 1:]:
            if c.kind != "tool":
                continue
            seen += 1
            if seen > RETRY_WINDOW:
                break
            if c.tool_name == o.tool_name and c.tool_args_digest == o.tool_args_digest:
                return c
        return None

    def retry_chain(self, o: Observation) -> list[Observation]:
        """o and every retry of it in turn (bounded)."""
        chain = [o]
        while len(chain) < 9 and (nxt := self.retry_of(chain[-1])) is not None:
            chain.append(nxt)
        return chain

    def _next_llm(self, index: int) -> Observation | None:
        for c in self.obs[index + 1:]:
            if c.kind == "llm":
                return c
        return None

    def effect(self, o: Observation) -> Effect:
        """What followed step o (computed once per step)."""
        got = self._effects.get(o.index)
        if got is None:
            got = self._effect(o)
            self._effects[o.index] = got
        return got

    def _effect(self, o: Observation) -> Effect:
        retry = self.retry_of(o)
        chain = retry
        hops = 0
        while chain is not None and self.failed(chain) and hops < 8:
            chain = self.retry_of(chain)
            hops += 1
        if retry is not None and chain is not None and not self.failed(chain):
            meaning = o.result_failure or o.exception_failure if o.kind == "tool" else ""
            double = (o.kind == "tool" and not chain.suppressed and not self.repeatable(o)
                      and meaning not in _REFUSED_BEFORE_ACTING)
            return Effect(retry.index, chain.index, True, double, "retry")
        if retry is not None:
            return Effect(retry.index, None, False, False, "repeat")
        if o.kind == "llm":
            if o.index == len(self.obs) - 1:
                return Effect(followed_by="end")
            return Effect(followed_by="continue" if o.tool_call_count else "answer")
        nxt = self._next_llm(o.index)
        if nxt is None:
            return Effect(followed_by="end")
        if not nxt.tool_call_count:
            return Effect(followed_by="answer")
        return Effect(followed_by="replan")

    def repeatable(self, o: Observation) -> bool:
        """Whether running o's call again is harmless: as the tool declares (MCP annotations, the
        idempotency guard), else as its name's verb says (RFC 9110 / standard API methods); a
        tool whose name says nothing counts as repeatable (no blame without evidence)."""
        if o.idempotent is not None:
            return o.idempotent
        return vocabulary.method_kind(o.tool_name) != "unsafe"

    # -- latency against the episode's own calls -------------------------------------------------
    @staticmethod
    def _others(values: list[float], own: float) -> list[float]:
        i = bisect.bisect_left(values, own)
        return values[:i] + values[i + 1:] if i < len(values) and values[i] == own else list(values)

    def latency_ratio(self, o: Observation) -> tuple[float, float, int]:
        """(o's duration / median of the episode's other answered LLM calls, / their maximum,
        how many there are): a call is slow only compared with its own episode."""
        others = self._others(self._llm_sorted, o.duration_ms)
        if not others:
            return 0.0, 0.0, 0
        med, top = statistics.median(others), others[-1]
        return (o.duration_ms / med if med > 0 else 0.0), (o.duration_ms / top if top > 0 else 0.0), len(others)
