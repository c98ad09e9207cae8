"""``agentchaos demo``: the reference agent under a spread of faults, into a trace file.

With no ``--base-url`` the bundled simulated model answers (in-process, on loopback); every
episode and the printed summary are then labelled simulated.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

from agentchaos_otel.errors import UsageError, UserError

if TYPE_CHECKING:
    from rich.console import Console

# One condition per episode, cycled: the LLM-response faults of both targets, compound, positional,
# real HTTP, streaming, and tool-result conditions, plus clean episodes to compare against.
DEMO_CONDITIONS: tuple[str, ...] = (
    "none", "llm_error_single", "tool_error_single", "llm_timeout_single", "tool_timeout_single",
    "llm_empty_single", "tool_empty_single", "llm_truncate_single", "tool_truncate_single",
    "llm_corrupt_single", "tool_corrupt_single", "llm_schema_single", "tool_schema_single",
    "compound_content_filter", "compound_stale_cache", "compound_wrong_entity", "compound_proxy_html",
    "llm_error_pos_mid", "http_429", "http_503", "http_connect_error", "stream_cut", "stream_truncate",
    "none", "independent", "bursty",
)
STREAMED = frozenset(c for c in DEMO_CONDITIONS if c.startswith("stream_"))


def _client(base_url: str, api_key: str) -> Any:
    import openai

    return openai.OpenAI(base_url=base_url, api_key=api_key, max_retries=2, timeout=60)


def run_episode(client: Any, task: Any, condition: str, *, seed: int, model: str, simulated: bool,
                logprobs: bool) -> dict[str, Any]:
    from agentchaos_otel.episode_scope import episode
    from agentchaos_otel.inject.tools import ToolFaultInjector
    from agentchaos_otel.plans.schedule import TOOL_CONDITIONS
    from agentchaos_otel.sim.reference_agent import run_reference_agent
    from agentchaos_otel.sim.reference_tasks import REFERENCE_TOOLS

    with episode(task.task_id, plan=condition, seed=seed, condition=condition, agent_name="reference-agent",
                 simulated=simulated) as ep:
        tools = ToolFaultInjector(condition if condition in TOOL_CONDITIONS else "none").wrap(REFERENCE_TOOLS)
        run = run_reference_agent(client, task, model=model, tools=tools, stream=condition in STREAMED,
                                  request_options={"logprobs": True, "top_logprobs": 20} if logprobs else None)
        ep.set_outcome(success=run.success, error=run.error)
    return {"condition": condition, "success": run.success, "faults": sum(r.changed for r in ep.fault_log)}


def check_reachable(base_url: str, api_key: str, timeout_s: float = 10.0) -> None:
    """Refuse an endpoint that does not answer, before anything is deleted or started.

    Without this, every episode fails on its first call and the demo reports a success rate of 0
    as if the agent had been tried. Any HTTP answer counts as reachable, except a refused key.
    """
    import httpx

    url = base_url.rstrip("/") + "/models"
    try:
        response = httpx.get(url, headers={"Authorization": f"Bearer {api_key}"}, timeout=timeout_s)
    except (httpx.InvalidURL, httpx.UnsupportedProtocol) as exc:
        raise UsageError(f"--base-url {base_url!r} is not an http(s) URL ({exc})") from None
    except httpx.HTTPError as exc:
        raise UserError(f"{base_url} is unreachable ({type(exc).__name__}: {exc}); nothing was run") from None
    if response.status_code in (401, 403):
        raise UserError(f"{base_url} refused the API key (HTTP {response.status_code}); nothing was run")


def prepare_db(db: Path, overwrite: bool, console: Console) -> None:
    """Keep an existing file unless asked: it may be a trace store with runs, or not ours at all."""
    if db.is_dir():
        raise UserError(f"--db {db} is a directory")
    stale = [p for p in (db, Path(f"{db}.wal")) if p.exists()]
    if stale and not overwrite:
        raise UserError(f"{db} exists; pass --overwrite to replace it, or choose another --db")
    for p in stale:
        console.print(f"replacing existing {p}")
        p.unlink()


def run_demo(*, db: Path, episodes: int, seed: int, workers: int, base_url: str | None, model: str | None,
             api_key_env: str, console: Console, logprobs: bool = True, overwrite: bool = False) -> dict[str, Any]:
    from concurrent.futures import ThreadPoolExecutor, as_completed

    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeRemainingColumn
    from rich.text import Text

    import agentchaos_otel
    from agentchaos_otel.cli.render import print_summary
    from agentchaos_otel.sim.reference_agent import ReferencePolicy
    from agentchaos_otel.sim.reference_tasks import reference_tasks
    from agentchaos_otel.sim.server import SimulatedModelServer
    from agentchaos_otel.store.read.summary import summarize

    if base_url is not None and not model:
        raise UsageError("--model is required with --base-url")
    api_key = os.environ.get(api_key_env, "") if base_url else "sim-key"
    if base_url and not api_key:
        raise ValueError(f"environment variable {api_key_env} is empty; set it or pass --api-key-env")
    if base_url:
        check_reachable(base_url, api_key)
    prepare_db(db, overwrite, console)
    server = None
    if base_url is None:
        server = SimulatedModelServer(ReferencePolicy(), seed=seed).start()
        base_url, model = server.base_url, ReferencePolicy().name
    simulated = server is not None
    handle = agentchaos_otel.configure(db=db, plan="none", seed=seed,  # each episode brings its plan
                                       service_name="agentchaos-demo")
    tasks = reference_tasks(episodes, seed, min_subtasks=1, max_subtasks=6)
    jobs = [(task, DEMO_CONDITIONS[i % len(DEMO_CONDITIONS)]) for i, task in enumerate(tasks)]
    label = "SIMULATED model" if simulated else f"model {model} at {base_url}"
    results: list[dict[str, Any]] = []
    try:
        client = _client(base_url, api_key)
        columns = (TextColumn("{task.description}", style="bold"), BarColumn(), MofNCompleteColumn(),
                   TimeRemainingColumn())
        with Progress(*columns, console=console) as progress, ThreadPoolExecutor(max_workers=workers) as pool:
            bar = progress.add_task(f"reference agent ({label})", total=len(jobs))
            futures = [pool.submit(run_episode, client, task, cond, seed=seed, model=str(model),
                                   simulated=simulated, logprobs=logprobs) for task, cond in jobs]
            for future in as_completed(futures):
                results.append(future.result())
                progress.advance(bar)
    finally:
        handle.shutdown()
        if server is not None:
            server.stop()
    summary = summarize(str(db))
    print_summary(console, summary, title=f"agentchaos demo → {db}")
    console.print(f"Query it: agentchaos traces sql {db} \"select * from episodes\"  (views: llm_calls, "
                  "tool_calls, steps, episodes, injected_faults)")
    if simulated:
        console.print(Text("All responses came from the bundled SIMULATED model: the numbers show the "
                           "pipeline working, not how a real model behaves.", style="yellow"))
    return summary


def demo_cmd(
    db: Annotated[Path, typer.Option(help="Where to write traces.")] = Path("traces.duckdb"),
    episodes: Annotated[int, typer.Option(min=1, help="Number of episodes.")] = 40,
    seed: Annotated[int, typer.Option(help="Seed of every random choice.")] = 0,
    workers: Annotated[int, typer.Option(min=1, max=64, help="Episodes run at once (threads).")] = 8,
    base_url: Annotated[str | None, typer.Option(help="OpenAI-compatible endpoint (default: the bundled "
                                                     "simulated model).")] = None,
    model: Annotated[str | None, typer.Option(help="Model name for --base-url.")] = None,
    api_key_env: Annotated[str, typer.Option(help="Environment variable holding the API key.")] = "OPENAI_API_KEY",
    overwrite: Annotated[bool, typer.Option("--overwrite", help="Replace --db if it exists.")] = False,
) -> None:
    """Run the reference agent under a spread of faults into a trace file and summarise it."""
    from agentchaos_otel.terminal import data_console

    run_demo(db=db, episodes=episodes, seed=seed, workers=workers, base_url=base_url, model=model,
             api_key_env=api_key_env, console=data_console(), overwrite=overwrite)
