"""An episode's observations and the comparisons across its steps that rules and features need.

Per-tool norms (what a tool's results normally look like), the latency baseline, earlier
responses and key styles seen so far are computed once per episode (``EpisodeView``), so each
per-step comparison is O(1) rather than a scan of the episode.
"""

from __future__ import annotations

import statistics
from collections import Counter
from dataclasses import dataclass

from agentchaos_otel.records import EpisodeTrace
from diagnosers.key_style import key_style
from diagnosers.observe import Observation, observe_step


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


class EpisodeView:
    """An episode's observations plus the comparisons rules and features need (per-tool norms,
    latency baseline, earlier responses), computed once."""

    def __init__(self, episode: EpisodeTrace):
        self.episode = episode
        self.obs = [observe_step(s, i) for i, s in enumerate(episode.steps)]
        llm = [o.duration_ms for o in self.obs if o.kind == "llm" and not o.transport_failed]
        self.llm_median_ms = statistics.median(llm) if llm else 0.0
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
        shared by all, numbers-as-strings), so per-step comparisons cost O(1) instead of O(n)."""
        self._style_before: list[Counter[str]] = []
        self._shared_before: list[set[str] | None] = []
        self._tools_before: list[int] = []
        self._num_before: list[int] = []
        self._clean_before: list[int] = []
        styles: Counter[str] = Counter()
        shared: set[str] | None = None
        tools: set[str] = set()
        num = clean = 0
        for c in self.obs:
            self._style_before.append(styles.copy())
            self._shared_before.append(None if shared is None else set(shared))
            self._tools_before.append(len(tools))
            self._num_before.append(num)
            self._clean_before.append(clean)
            if c.kind == "tool" and self._clean(c):
                num += c.result_numeric_strings or 0
                if c.result_keys:
                    clean += 1
                    styles.update(key_style(k) for k in c.result_keys)
                    shared = set(c.result_keys) if shared is None else shared & set(c.result_keys)
                    tools.add(c.tool_name or "")
        self._style_all = styles

    def style_norm(self, o: Observation) -> tuple[Counter[str], bool]:
        """Key-style counts over the episode's other clean JSON tool results (any tool): earlier
        ones when there are any, else later ones; and whether the norm came from later results."""
        if not hasattr(self, "_style_before"):
            self._prefix()
        if self._clean_before[o.index]:
            return self._style_before[o.index], False
        total = self._style_all.copy()
        if self._clean(o) and o.result_keys:
            total.subtract(key_style(k) for k in o.result_keys)
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
