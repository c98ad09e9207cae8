"""Ground truth of our own injected corpora: the root cause among the faults the injector recorded.

The injector records every fault that changed what the agent saw (``agentchaos.fault.*``). The
taxonomy (docs/taxonomy.md, "Root cause by effect") says which of them is the root cause of a
failure: not a fault the agent or its SDK absorbed. This module applies that rule to the
injector's records, so a campaign file is scored against what the taxonomy asks a diagnoser to
name. It reads only facts the trace records (which steps a fault changed, request and argument
digests, whether a call raised or returned an error status, what a tool declares about itself),
never a diagnoser's findings, so the truth stays independent of the rules it scores.

- An LLM fault is absorbed when the next step repeated the same request (same request digest:
  an SDK retry, or the agent asking again) and that repeat, or a repeat of it in turn, came back
  with no fault and no error.
- A tool fault is absorbed when, within the next ``RETRY_WINDOW`` tool calls, the same tool was
  called with the same arguments and that call answered with no fault and no error; unless the
  tool is not idempotent and the repeat ran: our tool injector lets the tool execute and replaces
  only what the agent is shown, so a repeat of a call that is not idempotent applied it twice.
- A delay (``latency``) the agent waited out is absorbed: the slow call answered and the agent
  went on with what it answered. It is the root cause only when the agent gave up on it: the call
  failed (the agent's own deadline), or the episode ended there with the tool calls it asked for
  never run.
- A fault whose repeats met a fault of another type to the end went away on retry; the one that
  persisted is what mattered.

The root cause is the first changed fault that was not absorbed; an episode whose changed faults
were all absorbed has none (a failure then is an ``unfaulted_failure``).
"""

from __future__ import annotations

from agentchaos_otel import attributes as A
from agentchaos_otel import vocabulary
from agentchaos_otel.records import EpisodeTrace, FaultLabel, StepRecord
from diagnosers.observe import declared_idempotent

LATENCY = "latency"
RETRY_WINDOW = 3  # tool calls within which the same call counts as a retry (docs/taxonomy.md)
_MAX_HOPS = 8


def _changed(s: StepRecord) -> bool:
    return bool(s.get(A.FAULT_INJECTED)) and bool(s.get(A.FAULT_CHANGED, True))


def _failed(s: StepRecord) -> bool:
    """The call raised or came back with a failed HTTP status."""
    status = s.get(A.RESPONSE_STATUS_CODE)
    return s.status_code == "ERROR" or (isinstance(status, int) and status >= 400)


def _answered(s: StepRecord) -> bool:
    """The call came back with no fault and no error."""
    return not _changed(s) and not _failed(s)


def _tool_name(s: StepRecord) -> str:
    return str(s.get(A.GEN_AI_TOOL_NAME) or s.name.split(" ")[-1])


def _repeat_of(steps: tuple[StepRecord, ...], i: int) -> int | None:
    """The index of the step that repeated step i's call, if one did."""
    s = steps[i]
    if s.kind == "llm":
        digest = s.get(A.REQUEST_DIGEST)
        nxt = steps[i + 1] if i + 1 < len(steps) else None
        if digest and nxt is not None and nxt.kind == "llm" and nxt.get(A.REQUEST_DIGEST) == digest:
            return i + 1
        return None
    args = s.get(A.TOOL_ARGS_DIGEST)
    if not args:
        return None
    name, seen = _tool_name(s), 0
    for j in range(i + 1, len(steps)):
        c = steps[j]
        if c.kind != "tool":
            continue
        seen += 1
        if seen > RETRY_WINDOW:
            break
        if c.get(A.TOOL_ARGS_DIGEST) == args and _tool_name(c) == name:
            return j
    return None


def _repeatable(s: StepRecord) -> bool:
    """Whether running the tool's call again is harmless: as the tool declares, else as its name's
    verb says by the published method semantics; a name that says nothing counts as repeatable."""
    declared = declared_idempotent(s.attributes)
    if declared is not None:
        return declared
    return vocabulary.method_kind(_tool_name(s)) != "unsafe"


def absorbed(episode: EpisodeTrace, index: int) -> bool:
    """Whether the changed fault at ``episode.steps[index]`` was absorbed (module docstring)."""
    steps = episode.steps
    first = steps[index]
    if first.get(A.FAULT_TYPE) == LATENCY:  # waited out: it answered and the agent went on with it
        abandoned = index + 1 == len(steps) and bool(first.get(A.RESPONSE_TOOL_CALL_COUNT))
        return not _failed(first) and not abandoned
    j, hops = _repeat_of(steps, index), 0
    last = None
    while j is not None and hops < _MAX_HOPS:
        last = j
        if _answered(steps[j]):
            if first.kind == "tool" and not _repeatable(first) and not steps[j].get(A.GUARD_SUPPRESSED):
                return False  # the call took effect twice
            return True
        j, hops = _repeat_of(steps, j), hops + 1
    if last is None:
        return False
    end = steps[last]
    # Repeated to the end without an answer: a different fault that persisted is what mattered.
    return _changed(end) and end.get(A.FAULT_TYPE) != first.get(A.FAULT_TYPE)


def root_faults(episode: EpisodeTrace) -> list[FaultLabel]:
    """The changed faults that were not absorbed, in step order (needs an unblinded episode)."""
    faults = episode.faults()
    if not faults:
        return []
    index = {s.span_id: i for i, s in enumerate(episode.steps)}
    return [f for f in faults if f.span_id not in index or not absorbed(episode, index[f.span_id])]


def ground_truth(episode: EpisodeTrace) -> FaultLabel | None:
    """The root cause of an unblinded episode: its first changed fault that was not absorbed."""
    roots = root_faults(episode)
    return min(roots, key=lambda f: f.step) if roots else None
