"""Per-step cost of the live failure predictor, against the same pipeline without it.

Runs identical synthetic episodes (LLM span + tool span per turn, with the attributes our
annotators set, including logprob entropy) through a real OTel SDK pipeline twice: once with the
episode processor and an exporter only, once with ``LivePredictorProcessor`` added. Runs are
interleaved, timed in process CPU time (so other processes on a busy machine do not count) and
the median of several repeats is reported. Prints the per-step cost of each, the overhead per
step and their ratio. The baseline is the cheapest possible pipeline (no HTTP, no annotation, an
exporter that drops spans), so the ratio is an upper bound of the relative cost in a real agent,
where a step also pays for an LLM call or a tool.

    .venv/bin/python -m benchmarks.bench_live_predictor --episodes 200 --turns 10 --repeats 5
"""

from __future__ import annotations

import argparse
import random
import statistics
import time
from collections.abc import Sequence
from typing import Any

from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor, SpanExporter, SpanExportResult

from agentchaos_otel import attributes as A
from agentchaos_otel.episode_scope import Episode
from agentchaos_otel.trace.processors import EpisodeSpanProcessor
from predictors.features import FEATURE_SETS, FeatureState
from predictors.live import LivePredictorProcessor
from predictors.model import FailurePredictor


class _NullExporter(SpanExporter):
    """Stands in for a real exporter so the benchmark measures span handling, not I/O."""

    def export(self, spans: Sequence[ReadableSpan]) -> SpanExportResult:
        return SpanExportResult.SUCCESS


def random_predictor(seed: int, feature_set: str = "both") -> FailurePredictor:
    """Scoring cost does not depend on coefficient values, so seeded random ones will do."""
    rng = random.Random(seed)
    names = FEATURE_SETS[feature_set]
    return FailurePredictor(feature_set, names, [rng.random() for _ in names],
                            [0.5 + rng.random() for _ in names], [rng.gauss(0, 1) for _ in names], -1.0, 0.9)


def turn_attributes(rng: random.Random, turn: int) -> tuple[dict[str, Any], dict[str, Any]]:
    args = f"{rng.randrange(50):08x}"
    llm = {A.GEN_AI_OPERATION_NAME: A.OP_CHAT, A.GEN_AI_REQUEST_MODEL: "bench",
           A.GEN_AI_PROVIDER_NAME: "openai",
           A.GEN_AI_RESPONSE_FINISH_REASONS: ("tool_calls",), A.GEN_AI_USAGE_INPUT_TOKENS: 400 + 100 * turn,
           A.GEN_AI_USAGE_OUTPUT_TOKENS: 30, A.RESPONSE_CONTENT_LENGTH: 0, A.RESPONSE_TOOL_CALL_COUNT: 1,
           A.RESPONSE_TOOL_NAMES: ("get_weather",), A.RESPONSE_TOOL_ARGS_DIGEST: args,
           A.RESPONSE_ERROR_MARKER: "", A.LOGPROBS_ENTROPY_MEAN: rng.random() * 0.1,
           A.LOGPROBS_ENTROPY_MAX: rng.random(), A.LOGPROBS_ENTROPY_LAST: rng.random() * 0.1,
           A.LOGPROBS_TOP_MASS: 0.9999, A.LOGPROBS_TOKENS: 30}
    tool = {A.GEN_AI_OPERATION_NAME: A.OP_EXECUTE_TOOL, A.GEN_AI_TOOL_NAME: "get_weather",
            A.TOOL_ARGS_DIGEST: args, A.TOOL_RESULT_IS_ERROR: rng.random() < 0.15,
            A.TOOL_RESULT_EMPTY: False, A.TOOL_RESULT_LENGTH: 120}
    return llm, tool


def run(with_predictor: bool, episodes: int, turns: int, seed: int) -> float:
    """CPU seconds per step for the whole workload."""
    provider = TracerProvider()
    provider.add_span_processor(EpisodeSpanProcessor())
    if with_predictor:
        provider.add_span_processor(LivePredictorProcessor(random_predictor(seed)))
    provider.add_span_processor(SimpleSpanProcessor(_NullExporter()))
    tracer = provider.get_tracer("bench")
    rng = random.Random(seed)
    workload = [[turn_attributes(rng, t) for t in range(turns)] for _ in range(episodes)]
    start = time.process_time()
    for i, ep in enumerate(workload):
        with Episode(f"task{i}", tracer_provider=provider, agent_name="bench"):
            for llm, tool in ep:
                tracer.start_span("chat bench", attributes=llm).end()
                tracer.start_span("execute_tool get_weather", attributes=tool).end()
    elapsed = time.process_time() - start
    provider.shutdown()
    return elapsed / (episodes * turns * 2)


def scoring_only(steps: int, seed: int) -> float:
    """CPU seconds per step of span-to-step conversion, FeatureState.update and scoring, no OTel."""
    from agentchaos_otel.store.read.live_steps import step_from_span
    from predictors.features import OBSERVED_KEYS

    provider = TracerProvider()
    tracer = provider.get_tracer("bench")
    rng = random.Random(seed)
    spans = []
    for t in range(steps // 2):
        llm, tool = turn_attributes(rng, t % 20)
        for name, attrs in (("chat bench", llm), ("execute_tool get_weather", tool)):
            span = tracer.start_span(name, attributes=attrs)
            span.end()
            spans.append(span)
    predictor = random_predictor(seed)
    state = FeatureState()
    start = time.process_time()
    for i, span in enumerate(spans):
        record = step_from_span(span, i, keys=OBSERVED_KEYS)
        if record is not None:
            state.update(record)
            predictor.score_state(state)
    return (time.process_time() - start) / len(spans)


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--episodes", type=int, default=200)
    parser.add_argument("--turns", type=int, default=10, help="LLM + tool span pairs per episode")
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)
    base: list[float] = []
    live: list[float] = []
    run(False, 20, args.turns, args.seed)  # warm-up: imports, first-call caches
    for r in range(args.repeats):
        order = (False, True) if r % 2 == 0 else (True, False)
        for flag in order:
            (live if flag else base).append(run(flag, args.episodes, args.turns, args.seed + r))
    b, w = statistics.median(base), statistics.median(live)
    only = statistics.median(scoring_only(2 * args.turns * 20, args.seed) for _ in range(args.repeats))
    steps = args.episodes * args.turns * 2
    print(f"steps per run: {steps} ({args.episodes} episodes x {args.turns} turns x LLM+tool), "
          f"median of {args.repeats} interleaved repeats")
    print(f"baseline pipeline (episode processor + exporter): {b * 1e6:8.1f} us/step")
    print(f"with live predictor ('both' feature set):          {w * 1e6:8.1f} us/step")
    print(f"overhead: {(w - b) * 1e6:.1f} us/step; ratio with/without = {w / b:.2f}x")
    print(f"feature update + scoring alone:                     {only * 1e6:8.1f} us/step")
    print("(process CPU time; the baseline has no HTTP, annotation or export I/O, so the ratio is an upper "
          "bound)")


if __name__ == "__main__":
    main()
