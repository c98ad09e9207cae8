"""``agentchaos bfcl``: list BFCL multi-turn tasks and run them under tool-result fault conditions.

Without ``--base-url`` episodes run against the bundled simulated BFCL model (labelled simulated
in the output and on every trace); with it, against any OpenAI-compatible endpoint. Bad
arguments end with one ``error:`` line on stderr and exit code 1, never a traceback.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from pathlib import Path
from typing import Annotated, Any

import typer

from benchmarks.bfcl import UNAVAILABLE_REASON, bfcl_available

app = typer.Typer(help="BFCL v4 multi-turn harness: tasks, episodes under tool-result faults, the "
                       "official checker.", no_args_is_help=True, pretty_exceptions_enable=False,
                  add_completion=False)

CONDITIONS = ("none", "independent", "bursty", "persistent")


@contextmanager
def _user_errors() -> Iterator[None]:
    try:
        yield
    except (ValueError, KeyError, OSError) as exc:
        message = exc.args[0] if isinstance(exc, KeyError) and exc.args else exc
        typer.echo(f"error: {' '.join(str(message).split())}", err=True)
        raise typer.Exit(1) from None


def _require_bfcl() -> None:
    if not bfcl_available():
        raise ValueError(UNAVAILABLE_REASON)


def _split(text: str, what: str) -> list[str]:
    items = [p.strip() for p in text.split(",") if p.strip()]
    if not items:
        raise ValueError(f"no {what} given")
    return items


def _seeds(text: str) -> list[int]:
    try:
        return [int(s) for s in _split(text, "seeds")]
    except ValueError:
        raise ValueError(f"seeds must be comma-separated integers, got {text!r}") from None


@app.command("tasks")
def tasks_cmd(
    ids: Annotated[str, typer.Option("--tasks", help="Ids, indices or ranges: '0-9,42' or 'all'.")] = "all",
    as_json: Annotated[bool, typer.Option("--json", help="Print JSON.")] = False,
) -> None:
    """The multi_turn_base tasks: turns, involved API classes, ground-truth call counts."""
    with _user_errors():
        _require_bfcl()
        from benchmarks.bfcl.tasks import load_tasks, resolve_task_ids

        tasks = load_tasks(ids=resolve_task_ids(ids))
        rows = [{"id": t.id, "turns": t.n_turns, "classes": list(t.involved_classes),
                 "ground_truth_calls": sum(len(x) for x in t.ground_truth)} for t in tasks]
    if as_json:
        typer.echo(json.dumps(rows, indent=2))
        return
    for r in rows:
        typer.echo(f"{r['id']}\tturns={r['turns']}\tcalls={r['ground_truth_calls']}\t{','.join(r['classes'])}")
    typer.echo(f"{len(rows)} tasks")


def _summary(results: list[Any]) -> dict[str, dict[str, Any]]:
    out: dict[str, dict[str, Any]] = {}
    for cond in dict.fromkeys(r.condition for r in results):
        rs = [r for r in results if r.condition == cond]
        out[cond] = {"episodes": len(rs), "success_rate": round(sum(r.success for r in rs) / len(rs), 4),
                     "mean_steps": round(sum(r.n_steps for r in rs) / len(rs), 2),
                     "mean_tool_calls": round(sum(r.n_tool_calls for r in rs) / len(rs), 2),
                     "errors": sum(1 for r in rs if r.error)}
    return out


@app.command("run")
def run_cmd(
    tasks: Annotated[str, typer.Option("--tasks", help="Ids, indices or ranges: '0-9,42' or 'all'.")] = "0-9",
    conditions: Annotated[str, typer.Option(help="Tool-result conditions, comma-separated: "
                                                 + ", ".join(CONDITIONS) + ".")] = "none",
    seeds: Annotated[str, typer.Option(help="Seeds, comma-separated.")] = "0",
    db: Annotated[Path | None, typer.Option(help="Write traces to this DuckDB file.")] = None,
    base_url: Annotated[str | None, typer.Option(help="OpenAI-compatible endpoint (default: the simulated "
                                                     "BFCL model on loopback).")] = None,
    model: Annotated[str | None, typer.Option(help="Model name (required with --base-url).")] = None,
    api_key_env: Annotated[str, typer.Option(help="Variable holding the API key.")] = "OPENAI_API_KEY",
    perfect: Annotated[bool, typer.Option(help="Simulated model: no planned mistakes.")] = False,
    workers: Annotated[int, typer.Option(min=1, max=32, help="Episodes run in parallel.")] = 2,
    step_cap: Annotated[int, typer.Option(min=1, help="Tool-calling steps per turn before force-quit.")] = 20,
    logprobs: Annotated[bool | None, typer.Option("--logprobs/--no-logprobs",
                                                  help="Ask for top-20 logprobs (default: only from the "
                                                       "simulated model).")] = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print per-episode results as JSON.")] = False,
) -> None:
    """Run tasks x conditions x seeds, grade each with the official checker, print success rates."""
    with _user_errors():
        _require_bfcl()
        from benchmarks.bfcl.tasks import load_tasks, resolve_task_ids

        selected = load_tasks(ids=resolve_task_ids(tasks))
        conds = _split(conditions, "conditions")
        unknown = [c for c in conds if c not in CONDITIONS]
        if unknown:
            raise ValueError(f"unknown condition(s) {', '.join(unknown)}; expected {', '.join(CONDITIONS)}")
        seed_list = _seeds(seeds)
        if base_url is not None and not model:
            raise ValueError("--model is required with --base-url")
        if db is not None and db.parent and not db.parent.exists():
            raise ValueError(f"directory does not exist: {db.parent}")
        results = _run(selected, conds, seed_list, db=db, base_url=base_url, model=model,
                       api_key=os.environ.get(api_key_env, "sk-unused"), perfect=perfect, workers=workers,
                       step_cap=step_cap, logprobs=base_url is None if logprobs is None else logprobs)
    simulated = base_url is None
    summary = _summary(results)
    if as_json:
        typer.echo(json.dumps({"simulated": simulated, "summary": summary,
                               "episodes": [r.__dict__ for r in results]}, indent=2))
        return
    label = " (simulated model)" if simulated else ""
    typer.echo(f"BFCL multi_turn_base: {len(selected)} tasks x {len(seed_list)} seeds{label}")
    for cond, s in summary.items():
        typer.echo(f"{cond:12s} success {s['success_rate']:.3f}  episodes {s['episodes']}  "
                   f"steps {s['mean_steps']}  tool calls {s['mean_tool_calls']}  errors {s['errors']}")
    if db is not None:
        typer.echo(f"traces written to {db}")


def _run(tasks: list[Any], conditions: list[str], seeds: list[int], *, db: Path | None, base_url: str | None,
         model: str | None, api_key: str, perfect: bool, workers: int, step_cap: int,
         logprobs: bool) -> list[Any]:
    from contextlib import ExitStack

    from benchmarks.bfcl.episode import make_client, run_bfcl_episode

    with ExitStack() as stack:
        if db is not None:
            import agentchaos_otel

            handle = agentchaos_otel.configure(db=str(db), plan=None, seed=seeds[0])
            stack.callback(handle.shutdown)
        if base_url is None:
            from agentchaos_otel.sim.server import SimulatedModelServer
            from benchmarks.bfcl.sim_policy import BfclSimPolicy, MistakeRates

            policy = BfclSimPolicy(mistakes=MistakeRates() if perfect else None)
            server = stack.enter_context(SimulatedModelServer(policy, seed=seeds[0]))
            base_url, model = server.base_url, policy.name
        assert model is not None
        client = make_client(base_url, api_key)
        jobs = [(t, c, s) for c in conditions for s in seeds for t in tasks]

        def one(job: tuple[Any, str, int]) -> Any:
            task, cond, seed = job
            return run_bfcl_episode(task, condition=cond, seed=seed, model=model, client=client,
                                    step_cap=step_cap, logprobs=logprobs)

        with ThreadPoolExecutor(max_workers=workers) as pool:
            return list(pool.map(one, jobs))
