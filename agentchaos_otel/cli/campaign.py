"""``agentchaos campaign run | sanity | runs``: robustness campaigns (``agentchaos report`` reads them).

Agents are found by name through their entry points (``campaign/agents.py``); this module only
parses options, picks the model endpoint and hands episodes to the runner. The campaign modules
are imported inside the commands, so building the command tree stays fast.
"""

from __future__ import annotations

import contextlib
import json
import os
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

from agentchaos_otel.cli.app import choice, typer_app
from agentchaos_otel.cli.choices import Executor
from agentchaos_otel.cli.notes import note_spooled
from agentchaos_otel.errors import UsageError, UserError, no_such_file

if TYPE_CHECKING:
    from rich.console import Console

    from agentchaos_otel.campaign.agents import AgentSetup

app = typer_app(help="Robustness campaigns: tasks x fault conditions x seeds.")

# Names that stand for a group of conditions in ``--conditions``.
CATALOG_ALIASES = ("catalog", "agentchaos65")
ONCE_ALIAS = "once"
DEFAULT_SUBTASKS = "1-6"


# --- Parsing -------------------------------------------------------------------------------------

def parse_seeds(text: str) -> list[int]:
    seeds: list[int] = []
    for part in (p.strip() for p in text.split(",")):
        if not part:
            continue
        if "-" in part[1:]:
            lo, hi = part.split("-", 1)
            if not (lo.isdigit() and hi.isdigit()) or int(hi) < int(lo):
                raise UsageError(f"bad seed range {part!r}; use e.g. 0-3")
            seeds.extend(range(int(lo), int(hi) + 1))
        elif part.lstrip("-").isdigit():
            seeds.append(int(part))
        else:
            raise UsageError(f"bad seed {part!r}; use integers like 0,1 or a range 0-3")
    if not seeds:
        raise UsageError("no seeds given")
    return list(dict.fromkeys(seeds))


def parse_conditions(text: str) -> list[str]:
    """Tool-result conditions and/or LLM-fault catalog names; every name is checked now.

    ``catalog`` (or ``agentchaos65``) stands for the 65 catalog faults and puts ``none`` first;
    ``once`` stands for the seven single-fault tool conditions ``once_<kind>``. Aliases mix
    with names, e.g. ``catalog,once``.
    """
    from agentchaos_otel.campaign.runner import CLEAN
    from agentchaos_otel.plans.plan import resolve_plan
    from agentchaos_otel.plans.schedule import ONCE_CONDITIONS, TOOL_CONDITIONS

    given = list(dict.fromkeys(c.strip() for c in text.split(",") if c.strip()))
    if not given:
        raise UsageError("no conditions given")
    conds: list[str] = []
    for c in given:
        if c in CATALOG_ALIASES:
            from agentchaos_otel.faults.catalog import agentchaos_names

            conds.extend(agentchaos_names())
        elif c == ONCE_ALIAS:
            conds.extend(ONCE_CONDITIONS)
        else:
            conds.append(c)
    if any(c in CATALOG_ALIASES for c in given):
        conds.insert(0, CLEAN)
    conds = list(dict.fromkeys(conds))
    for c in conds:
        if c not in TOOL_CONDITIONS:
            if "," in c or c.endswith((".toml", ".json")):
                raise UsageError(f"condition {c!r}: only tool conditions and catalog names are allowed")
            try:
                resolve_plan(c)
            except ValueError as exc:  # unknown fault (with a did-you-mean): a bad option value
                raise UsageError(str(exc)) from None
    return conds


def parse_subtasks(text: str) -> tuple[int, int]:
    """``MIN-MAX`` (or one number) sub-queries per generated reference task."""
    lo, _, hi = text.strip().partition("-")
    hi = hi or lo
    if not (lo.strip().isdigit() and hi.strip().isdigit()) or not 1 <= int(lo) <= int(hi):
        raise UsageError(f"--subtasks must be MIN-MAX with 1 <= MIN <= MAX, e.g. 1-6 or 12-18; got {text!r}")
    return int(lo), int(hi)


def endpoint_key(base_url: str | None, model: str | None, api_key_env: str) -> str | None:
    """Check the real-endpoint options up front; the API key when a real endpoint is used."""
    if not base_url:
        return None
    if not model:
        raise UsageError("--model is required with --base-url")
    key = os.environ.get(api_key_env)
    if not key:
        raise ValueError(f"environment variable {api_key_env} is not set (needed for --base-url)")
    return key


@contextlib.contextmanager
def model_endpoint(policy: Any, base_url: str | None, model: str | None, api_key_env: str,
                   seed: int) -> Iterator[tuple[str, str, str, bool]]:
    """(base_url, model, api_key, simulated): a real endpoint when given, else the simulated one."""
    key = endpoint_key(base_url, model, api_key_env)
    if base_url and model and key:
        yield base_url, model, key, False
        return
    from agentchaos_otel.sim.server import SimulatedModelServer

    with SimulatedModelServer(policy, seed=seed) as server:
        yield server.base_url, policy.name, "sk-simulated", True


# --- Commands ----------------------------------------------------------------------------------

@app.command("sanity")
def sanity_cmd(
    conditions: Annotated[str, typer.Option(help="Conditions to check (tool conditions / catalog names).")]
    = "none,independent,bursty,persistent",
    seed: Annotated[int, typer.Option(help="Seed of the checks.")] = 0,
) -> None:
    """Run the pre-campaign sanity checks and print each result."""
    from agentchaos_otel.campaign.sanity import run_sanity

    report = run_sanity(parse_conditions(conditions), seed)
    for c in report.checks:
        typer.echo(f"{'PASS' if c.passed else 'FAIL'}  {c.name}: {c.detail}")
    if not report.ok:
        raise UserError(f"{len(report.failures)} sanity check(s) failed")


@app.command("run")
def run_cmd(
    agent: Annotated[str, typer.Option(help="Agent adapter from the entry-point group agentchaos_otel.agents: "
                                            "reference, bfcl, or your own.")] = "reference",
    tasks: Annotated[str,
                     typer.Option(help="Number of tasks, 'all', or (bfcl) ids/ranges like 0-9,17.")] = "10",
    conditions: Annotated[str, typer.Option(help="Comma list of tool conditions (none, independent, bursty, "
                                                 "persistent, once_<kind>) and/or LLM-fault catalog names; "
                                                 "'catalog' = all 65 plus none, 'once' = the 7 once_<kind> "
                                                 "conditions.")]
    = "none,independent,bursty,persistent",
    seeds: Annotated[str, typer.Option(help="Comma list or range of seeds, e.g. 0,1 or 0-3.")] = "0",
    workers: Annotated[int, typer.Option(min=1, max=64, help="Parallel episodes (threads).")] = 4,
    db: Annotated[Path, typer.Option(help="Trace file to write (and resume from).")] = Path("traces.duckdb"),
    base_url: Annotated[str | None, typer.Option(help="OpenAI-compatible endpoint; default: the bundled "
                                                      "simulated model, labelled SIMULATED.")] = None,
    model: Annotated[str | None, typer.Option(help="Model name for --base-url.")] = None,
    api_key_env: Annotated[str, typer.Option(help="Variable holding the API key.")] = "OPENAI_API_KEY",
    progress: Annotated[bool, typer.Option(help="Show a progress bar.")] = True,
    logprobs: Annotated[bool, typer.Option("--logprobs/--no-logprobs",
                                           help="Ask every model call for the top-20 token logprobs "
                                                "(the failure predictors' entropy features).")] = True,
    subtasks: Annotated[str, typer.Option(help="Reference agent: MIN-MAX sub-queries per generated task "
                                               "(e.g. 12-18 for long episodes).")] = DEFAULT_SUBTASKS,
    perfect: Annotated[bool, typer.Option(help="Simulated model: no planned mistakes of its own, so every "
                                               "failure comes from the faults.")] = False,
    step_cap: Annotated[int | None, typer.Option(min=1, help="Agent step limit: BFCL tool-calling steps per "
                                                             "turn (default 20); reference agent model "
                                                             "calls per episode (default max(30, 3 x "
                                                             "max subtasks)).")] = None,
    guard: Annotated[str | None, typer.Option("--guard", help="Also run every condition as "
                                              "'<condition>+guarded' with these guards on: response, "
                                              "idempotency (comma list).")] = None,
    executor: Annotated[Executor, choice(Executor, "--executor", help="local: threads in this process; ray: "
                                         "episodes on Ray actors, this process writes the trace file.")]
    = Executor.local,
    ray_address: Annotated[str | None, typer.Option(help="Ray cluster to join (e.g. auto, ray://host:10001); "
                                                         "default: start a local one.")] = None,
    ray_workers: Annotated[int | None, typer.Option(min=1, help="Ray actors (default: the cluster's CPUs); "
                                                                "--workers threads run inside each.")] = None,
) -> None:
    """Run a campaign; episodes already in the trace file are skipped, so re-running resumes."""
    from agentchaos_otel.campaign.agents import AgentOptions, load_agent
    from agentchaos_otel.campaign.guarded import expand_conditions, parse_guards
    from agentchaos_otel.campaign.runner import CampaignConfig, finished_episodes
    from agentchaos_otel.campaign.sanity import run_sanity
    from agentchaos_otel.terminal import data_console

    console = data_console(stderr=True)
    factory = load_agent(agent)
    seed_list = parse_seeds(seeds)
    conds = parse_conditions(conditions)
    if agent != "reference" and subtasks != DEFAULT_SUBTASKS:
        raise UsageError("--subtasks applies to --agent reference only")
    if perfect and base_url:
        raise UsageError("--perfect applies to the simulated model only, not to --base-url")
    try:
        guards = parse_guards(guard)
    except ValueError as exc:
        raise UsageError(str(exc)) from None
    options = AgentOptions(logprobs=logprobs, subtasks=parse_subtasks(subtasks), perfect=perfect,
                           step_cap=step_cap, guards=guards)
    endpoint_key(base_url, model, api_key_env)
    if db.exists() and db.is_dir():
        raise UserError(f"--db {db} is a directory")
    report = run_sanity(conds, seed_list[0])
    if not report.ok:
        for c in report.failures:
            typer.echo(f"FAIL  {c.name}: {c.detail}", err=True)
        raise UserError(f"{len(report.failures)} sanity check(s) failed; the campaign did not start")
    setup = factory(tasks, seed_list[0], conds, options)
    conds = expand_conditions(conds, guards)
    finished_episodes(db)  # an unreadable file fails here, before anything is started
    console.print(f"sanity: {len(report.checks)} checks passed")
    with model_endpoint(setup.policy, base_url, model, api_key_env, seed_list[0]) as (url, mdl, key, sim):
        config = CampaignConfig(agent=setup.name, tasks=setup.task_ids, conditions=conds, seeds=seed_list,
                                workers=workers, db=db, simulated=sim,
                                extra={"base_url": None if sim else url, "model": mdl,
                                       "logprobs": logprobs, "perfect": perfect, "step_cap": step_cap,
                                       **({"guards": list(guards)} if guards else {}),
                                       **({"subtasks": subtasks} if agent == "reference" else {})})
        if executor == "ray":
            from agentchaos_otel.campaign.ray_executor import WorkerSpec, run_campaign_ray

            spec = WorkerSpec(agent=agent, tasks=tasks, seed=seed_list[0], conditions=tuple(conds),
                              options=options, base_url=url, model=mdl, simulated=sim,
                              api_key_env=api_key_env, threads=workers)
            result = run_campaign_ray(config, spec, ray_address=ray_address, ray_workers=ray_workers,
                                      console=console, progress=progress)
        else:
            result = execute(config, setup, url, mdl, key, console=console, progress=progress)
    label = " (SIMULATED model)" if config.simulated else ""
    typer.echo(json.dumps({"run_id": result.run_id, "simulated": config.simulated, **result.counts}))
    console.print(f"campaign {result.run_id} done{label}: {result.counts}")


def execute(config: Any, setup: AgentSetup, base_url: str, model: str, api_key: str, *,
            console: Console | None = None, progress: bool = True) -> Any:
    """Configure tracing into ``config.db``, run the campaign, flush, shut tracing down."""
    import openai

    import agentchaos_otel
    from agentchaos_otel.campaign.runner import run_campaign

    handle = agentchaos_otel.configure(db=str(config.db), plan="none", seed=config.seeds[0])  # plans per episode
    try:
        client = openai.OpenAI(base_url=base_url, api_key=api_key, max_retries=2, timeout=120.0)
        run_one = setup.make_run_one(client, model)
        return run_campaign(config, run_one, console=console, progress=progress, flush=handle.force_flush,
                            opens_episode=setup.opens_episode, tracer_provider=handle.provider)
    finally:
        handle.shutdown()


@app.command("runs")
def runs_cmd(db: Annotated[Path, typer.Argument(help="A traces.duckdb file.")]) -> None:
    """Every recorded campaign invocation in a trace file, as JSON lines."""
    from agentchaos_otel.campaign.runner import campaign_runs

    if not db.exists():
        raise FileNotFoundError(no_such_file(db))
    for r in campaign_runs(db):
        typer.echo(json.dumps(r, default=str))
    note_spooled(db)
