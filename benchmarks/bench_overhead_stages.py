"""Where the trace-only time of one LLM call goes: each stage of the per-call path alone, warm.

Run: ``python -m benchmarks.bench_overhead_stages [--iterations 4000]``.

``benchmarks.bench_overhead`` gives the figure that counts (ours against plain httpx over a
loopback connection, side by side). This breaks our part of it down. The reply is the one that
benchmark's SIMULATED model sends (read once from it over loopback); each stage runs on it alone,
many times in a row, and its calling-thread CPU time per call is the best of five runs:

- the request read (body parsed, normalised, request attributes with the episode's
  conversation memory, as ``LLMCall`` does);
- the span's start and end, under the SDK alone and under our processors inside an episode;
- the response read (JSON parse and view), its two digests, its signals (``content_signals``,
  and within it the error-vocabulary reading), and the response attributes as a whole;
- writing the response's and the end's attributes onto a span (the SDK checks every value);
- a 1 KB reply with a few non-ASCII characters, for the signals of a longer answer.

Last, the whole call in process: the same client over an in-memory transport that replays the
reply, ours against plain, CPU per call at p50. Stages run warm (code and data in the CPU caches),
so their sum is below that whole; over a real connection (``bench_overhead``) the gap is larger
again, as other work between calls evicts the caches.
"""

from __future__ import annotations

import argparse
import json
import statistics
import time
from collections.abc import Callable
from typing import Any

LONG_REPLY = "I checked the weather in Paris: it is 21°C and sunny, with a light breeze from the west. " * 12


def _cpu_us(fn: Callable[[], Any], iterations: int) -> float:
    best = float("inf")
    for _ in range(5):
        t0 = time.thread_time()
        for _ in range(iterations):
            fn()
        best = min(best, (time.thread_time() - t0) / iterations)
    return best * 1e6


def _reply() -> tuple[list[tuple[bytes, bytes]], bytes]:
    import httpx2

    from benchmarks.bench_overhead import BODY, loopback_model

    with loopback_model() as base_url:
        response = httpx2.post(f"{base_url}/chat/completions", json=BODY)
    return list(response.headers.raw), response.content


def stages(iterations: int) -> list[tuple[str, float]]:
    """(stage, µs of CPU per call) for each stage, then the whole call in process."""
    import httpx2
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import BatchSpanProcessor

    from agentchaos_otel import attributes as A
    from agentchaos_otel import signals
    from agentchaos_otel.episode_scope import episode
    from agentchaos_otel.inject import wire
    from agentchaos_otel.trace import annotate
    from benchmarks.bench_overhead import BODY, _Discard, _providers

    headers, content = _reply()
    request = httpx2.Request("POST", "http://127.0.0.1:9/v1/chat/completions", json=BODY)
    adapter = wire.for_request(request)
    assert adapter is not None
    conversation = annotate.Conversation()

    def request_read() -> dict[str, Any]:
        req, _ = adapter.parse_request(request)
        return adapter.request_attributes(req, capture=False, conversation=conversation)

    start_attrs = request_read()
    body = json.loads(content)
    view = adapter.view(body)
    response_attrs = annotate.response_attributes(view, None, capture=False)
    end_attrs = {**annotate.original_attributes(view, adapter.digest(body)), **response_attrs,
                 **signals.body_signals(body), A.RESPONSE_BODY_BYTES: len(content), A.RESPONSE_BODY_CHUNKS: 1,
                 A.RESPONSE_STATUS_CODE: 200}
    sdk = TracerProvider()
    sdk.add_span_processor(BatchSpanProcessor(_Discard()))  # type: ignore[arg-type]
    sdk_tracer = sdk.get_tracer("bench")
    _, ours = _providers()
    our_tracer = ours.get_tracer("agentchaos_otel")
    name = f"chat {BODY['model']}"

    def written() -> None:
        span = sdk_tracer.start_span(name, attributes=start_attrs)
        span.set_attributes(end_attrs)
        span.end()

    out = [("request read: parse, normalise, request attributes", _cpu_us(request_read, iterations))]
    sdk_span = _cpu_us(lambda: sdk_tracer.start_span(name, attributes=start_attrs).end(), iterations)
    out.append(("span start + end, SDK alone", sdk_span))
    with episode("stages", plan=None, tracer_provider=ours):
        out.append(("span start + end, with our processors, in an episode",
                    _cpu_us(lambda: our_tracer.start_span(name, attributes=start_attrs).end(), iterations)))
    out.append((f"{len(end_attrs)} response + end attributes written (SDK value checks)",
                _cpu_us(written, iterations) - sdk_span))
    out.append(("response read: JSON parse + view", _cpu_us(lambda: adapter.view(json.loads(content)), iterations)))
    out.append(("response digest of the choices (fault verification)", _cpu_us(lambda: adapter.digest(body),
                                                                                iterations)))
    out.append(("response attributes (annotate.response_attributes), all", _cpu_us(
        lambda: annotate.response_attributes(view, None, capture=False), iterations)))
    out.append(("  of which content signals", _cpu_us(lambda: signals.content_signals(view.text), iterations)))
    out.append(("    of which the error-vocabulary reading", _cpu_us(lambda: signals.read_reply(view.text or ""),
                                                                     iterations)))
    out.append(("body signals (signals.body_signals)", _cpu_us(lambda: signals.body_signals(body), iterations)))
    out.append((f"content signals of a {len(LONG_REPLY.encode())}-byte reply with a few non-ASCII characters",
                _cpu_us(lambda: signals.content_signals(LONG_REPLY), max(1, iterations // 10))))
    whole, floor = _in_process(headers, content, ours, iterations)
    out.append(("transport wrapper alone (a request that is no LLM call), ours - plain httpx (CPU p50)", floor))
    out.append(("whole LLM call in process, ours - plain httpx (CPU p50)", whole))
    ours.shutdown()
    sdk.shutdown()
    return out


def _in_process(headers: list[tuple[bytes, bytes]], content: bytes, ours: Any,
                iterations: int) -> tuple[float, float]:
    """CPU per call at p50, ours minus plain, over an in-memory transport replaying the reply: for the
    LLM call, and for a request to another path (what the wrapper costs a request it lets through)."""
    import httpx2

    from agentchaos_otel.inject.transport import ChaosTransport
    from benchmarks.bench_overhead import _Episodes, _time_sync

    def replay(request: Any) -> Any:
        request.read()
        return httpx2.Response(200, headers=headers, stream=httpx2.ByteStream(content))

    plain = httpx2.Client(transport=httpx2.MockTransport(replay))
    traced = httpx2.Client(transport=ChaosTransport(httpx2.MockTransport(replay), tracer_provider=ours))
    added = []
    for url in ("http://127.0.0.1:9/v1/chat/completions", "http://127.0.0.1:9/v1/other"):
        _time_sync(plain, url, 200, _Episodes(ours, False))
        _time_sync(traced, url, 200, _Episodes(ours, True))
        cpu: dict[str, list[float]] = {"plain": [], "ours": []}
        per_round = max(1, iterations // 10)
        for _ in range(10):  # alternating, as the loopback benchmark does
            cpu["plain"] += [c for _, c in _time_sync(plain, url, per_round, _Episodes(ours, False))]
            cpu["ours"] += [c for _, c in _time_sync(traced, url, per_round, _Episodes(ours, True))]
        added.append((statistics.median(cpu["ours"]) - statistics.median(cpu["plain"])) * 1e6)
    plain.close()
    traced.close()
    return added[0], added[1]


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--iterations", type=int, default=4000, help="calls per timed run (default 4000)")
    args = parser.parse_args(argv)
    print("SIMULATED model's reply; calling-thread CPU time per call, in µs (each stage alone, warm; best of 5)")
    for stage, us in stages(args.iterations):
        print(f"  {stage:88} {us:7.1f}")


if __name__ == "__main__":
    main()
