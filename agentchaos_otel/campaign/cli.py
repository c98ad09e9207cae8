"""``agentchaos campaign ...`` and ``agentchaos report ...``.

The agent adapters live here, not in the runner: the runner is generic over ``run_one`` and the
adapters are the only place that knows how the bundled reference agent and the BFCL harness
are started, which tasks they have and which simulated policy stands in for a model.
"""

from __future__ import annotations

import contextlib
import json
import os
import sys
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated, Any, NoReturn

import typer
from rich.console import Console

from agentchaos_otel.campaign.runner import CLEAN, EpisodeOutcome, EpisodeSpec
from agentchaos_otel.cli.errors import fail, typer_app, usage_error
from agentchaos_otel.inject.schedule import ONCE_CONDITIONS, TOOL_CONDITIONS

app = typer_app(help="Robustness campaigns: tasks x fault conditions x seeds.")
campaign_app = app
# Mounted as ``agentchaos report DB [OPTIONS]``: a group whose callback is the command, with
# options allowed after the file argument (click groups stop parsing options at the first
# positional by default).
report_app = typer_app(help="Robustness report from a trace file.", no_args_is_help=False,
                       context_settings={"allow_interspersed_args": True}, subcommand_metavar="")

# Names that stand for a group of conditions in ``--conditions``.
CATALOG_ALIASES = ("catalog", "agentchaos65")
ONCE_ALIAS = "once"
# Top-k token logprobs asked for when ``--logprobs`` is on: the entropy features of the failure
# predictors read them from the stored LLM spans.
TOP_LOGPROBS = 20
DEFAULT_SUBTASKS = "1-6"


def _fail(message: object) -> NoReturn:
    """One ``agentchaos: error:`` line; an exception given as the message brings its exit code."""
    fail(message)


# --- Parsing -------------------------------------------------------------------------------------

def parse_seeds(text: str) -> list[int]:
    seeds: list[int] = []
    for part in (p.strip() for p in text.split(",")):
        if not part:
            continue
        if "-" in part[1:]:
            lo, hi = part.split("-", 1)
            if not (lo.isdigit() and hi.isdigit()) or int(hi) < int(lo):
                raise usage_error(f"bad seed range {part!r}; use e.g. 0-3")
            seeds.extend(range(int(lo), int(hi) + 1))
        elif part.lstrip("-").isdigit():
            seeds.append(int(part))
        else:
            raise usage_error(f"bad seed {part!r}; use integers like 0,1 or a range 0-3")
    if not seeds:
        raise usage_error("no seeds given")
    return list(dict.fromkeys(seeds))


def parse_conditions(text: str) -> list[str]:
    """Tool-result conditions and/or LLM-fault catalog names; every name is checked now.

    ``catalog`` (or ``agentchaos65``) stands for the 65 catalog faults and puts ``none`` first;
    ``once`` stands for the seven single-fault tool conditions ``once_<kind>``. Aliases mix
    with names, e.g. ``catalog,once``.
    """
    from agentchaos_otel.inject.plan import resolve_plan

    given = list(dict.fromkeys(c.strip() for c in text.split(",") if c.strip()))
    if not given:
        raise usage_error("no conditions given")
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
                raise usage_error(f"condition {c!r}: only tool conditions and catalog names are allowed")
            try:
                resolve_plan(c)
            except ValueError as exc:  # unknown fault (with a did-you-mean): a bad option value
                raise usage_error(str(exc)) from None
    return conds


def parse_subtasks(text: str) -> tuple[int, int]:
    """``MIN-MAX`` (or one number) sub-queries per generated reference task."""
    lo, _, hi = text.strip().partition("-")
    hi = hi or lo
    if not (lo.strip().isdigit() and hi.strip().isdigit()) or not 1 <= int(lo) <= int(hi):
        raise usage_error(f"--subtasks must be MIN-MAX with 1 <= MIN <= MAX, e.g. 1-6 or 12-18; got {text!r}")
    return int(lo), int(hi)


# --- Agents ----------------------------------------------------------------------------------------

@dataclass(frozen=True)
class AgentOptions:
    """How the agents are run, beyond which tasks: shared by every agent adapter.

    ``logprobs`` asks every model call for the top-20 token logprobs (the predictors' entropy
    features); ``perfect`` takes the simulated model's own planned mistakes away, so every
    failure is the faults' doing; ``step_cap`` is the agent's step limit (BFCL: tool-calling
    steps per turn; reference agent: model calls per episode), None for the agent's default.
    """

    logprobs: bool = True
    subtasks: tuple[int, int] = (1, 6)
    perfect: bool = False
    step_cap: int | None = None
    guards: tuple[str, ...] = ()  # guards of the '+guarded' conditions (campaign/guarded.py)


@dataclass
class AgentSetup:
    """What a campaign needs from an agent: its task ids, a policy for the simulated model, and
    a factory making ``run_one`` once the model endpoint is known."""

    name: str
    task_ids: list[str]
    policy: Any
    make_run_one: Callable[[Any, str], Callable[[EpisodeSpec], Any]]
    opens_episode: bool


Tools = dict[str, Callable[..., Any]]


def _tool_injector_wrap(tools: Tools, spec: EpisodeSpec, guard: Any = None) -> Tools:
    """The agent's tools behind the tool-result injector, in every condition.

    Clean and LLM-fault episodes go through it too (condition ``none``) so their tool calls are
    traced like the faulted ones: the retry and abandonment baselines are measured on them.
    Keyed by task id so a (condition, seed) faults the same calls of the same task however the
    campaign schedules episodes.
    """
    from agentchaos_otel.campaign.guarded import split_label
    from agentchaos_otel.inject.tools import ToolFaultInjector

    base, _ = split_label(spec.condition)
    condition = base if base in TOOL_CONDITIONS else CLEAN
    injector = ToolFaultInjector(condition, seed=spec.seed, episode_key=spec.task_id)
    return injector.wrap(dict(tools)) if guard is None else guard.wrap(dict(tools), injector=injector)


# The reference agent's own model-call limit when --step-cap is not given.
REFERENCE_MAX_STEPS = 30
REFERENCE_MISTAKE_RATE = 0.05


def reference_task_id(task_id: str, subtasks: tuple[int, int]) -> str:
    """The stored task id: generated ids say nothing of the sub-query range, so a non-default
    range is appended. Otherwise a long-task campaign written into a file that already holds
    the default short tasks would count them as finished (the resume key is the task id) and skip."""
    return task_id if subtasks == parse_subtasks(DEFAULT_SUBTASKS) else f"{task_id}-k{subtasks[0]}-{subtasks[1]}"


def reference_agent(tasks: str, seed: int = 0, conditions: list[str] | None = None,
                    options: AgentOptions | None = None) -> AgentSetup:
    from agentchaos_otel.sim.reference_agent import ReferencePolicy, run_reference_agent
    from agentchaos_otel.sim.reference_tasks import REFERENCE_TOOLS, reference_tasks

    opts = options or AgentOptions()
    n = 200 if tasks == "all" else _count(tasks)  # generated tasks: "all" = the study's 200
    lo, hi = opts.subtasks
    by_id = {reference_task_id(t.task_id, opts.subtasks): t
             for t in reference_tasks(n, seed, min_subtasks=lo, max_subtasks=hi)}
    request_options = {"logprobs": True, "top_logprobs": TOP_LOGPROBS} if opts.logprobs else None
    max_steps = opts.step_cap or max(REFERENCE_MAX_STEPS, 3 * hi)  # long tasks must not hit the cap clean

    def make(client: Any, model: str) -> Callable[[EpisodeSpec], Any]:
        from agentchaos_otel.campaign.guarded import GuardedClients, idempotency_factory

        clients = GuardedClients(client, opts.guards)

        def run_one(spec: EpisodeSpec) -> EpisodeOutcome:
            task = by_id[spec.task_id]
            use, is_guarded = clients.for_label(spec.condition)
            guard = idempotency_factory()() if is_guarded and "idempotency" in opts.guards else None
            run = run_reference_agent(use, task, model=model, tools=_tool_injector_wrap(REFERENCE_TOOLS, spec, guard),
                                      max_steps=max_steps, request_options=request_options)
            return EpisodeOutcome(bool(run.success), run.error)
        return run_one

    policy = ReferencePolicy(mistake_rate=0.0 if opts.perfect else REFERENCE_MISTAKE_RATE)
    return AgentSetup("reference", list(by_id), policy, make, opens_episode=False)


def bfcl_agent(tasks: str, seed: int = 0, conditions: list[str] | None = None,
               options: AgentOptions | None = None) -> AgentSetup:
    from benchmarks.bfcl import UNAVAILABLE_REASON, bfcl_available

    if not bfcl_available():
        raise ValueError(UNAVAILABLE_REASON)
    from benchmarks.bfcl.agent import DEFAULT_STEP_CAP
    from benchmarks.bfcl.episode import run_bfcl_episode
    from benchmarks.bfcl.sim_policy import BfclSimPolicy, MistakeRates
    from benchmarks.bfcl.tasks import load_tasks, resolve_task_ids

    opts = options or AgentOptions()
    step_cap = opts.step_cap or DEFAULT_STEP_CAP

    every = [t.id for t in load_tasks()]
    ids = every if tasks == "all" else (every[:_count(tasks)] if tasks.isdigit() else resolve_task_ids(tasks))
    unknown = sorted(set(ids) - set(every))
    if unknown:
        raise usage_error(f"unknown BFCL task id(s): {', '.join(unknown[:5])}")

    def make(client: Any, model: str) -> Callable[[EpisodeSpec], Any]:
        from agentchaos_otel.campaign.guarded import GuardedClients, idempotency_factory, split_label

        clients = GuardedClients(client, opts.guards)

        def run_one(spec: EpisodeSpec) -> Any:
            # Tool conditions go to the tool-result injector; anything else names the LLM plan.
            # The condition is passed as the episode's label either way, so an LLM-plan episode
            # is stored under its plan's name, never as the clean baseline.
            base, is_guarded = split_label(spec.condition)
            plan = None if base in TOOL_CONDITIONS else base
            use, _ = clients.for_label(spec.condition)
            extra: dict[str, Any] = {}
            if is_guarded:
                extra = {"label": spec.condition, "guards": opts.guards,
                         "idempotency": idempotency_factory() if "idempotency" in opts.guards else None}
            return run_bfcl_episode(spec.task_id, condition=base, plan=plan, seed=spec.seed,
                                    model=model, client=use, step_cap=step_cap, logprobs=opts.logprobs, **extra)
        return run_one

    policy = BfclSimPolicy(load_tasks(ids=ids), seed=seed, mistakes=MistakeRates() if opts.perfect else None)
    return AgentSetup("bfcl", ids, policy, make, opens_episode=True)


AgentFactory = Callable[[str, int, list[str], AgentOptions], AgentSetup]
AGENTS: dict[str, AgentFactory] = {"reference": reference_agent, "bfcl": bfcl_agent}


def _count(tasks: str) -> int:
    if not tasks.isdigit() or int(tasks) < 1:
        raise usage_error(f"--tasks must be a positive number or 'all', got {tasks!r}")
    return int(tasks)


def endpoint_key(base_url: str | None, model: str | None, api_key_env: str) -> str | None:
    """Check the real-endpoint options up front; the API key when a real endpoint is used."""
    if not base_url:
        return None
    if not model:
        raise usage_error("--model is required with --base-url")
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

    try:
        conds = parse_conditions(conditions)
    except ValueError as exc:
        _fail(exc)
    report = run_sanity(conds, seed)
    for c in report.checks:
        typer.echo(f"{'PASS' if c.passed else 'FAIL'}  {c.name}: {c.detail}")
    if not report.ok:
        _fail(f"{len(report.failures)} sanity check(s) failed")


@app.command("run")
def run_cmd(
    agent: Annotated[str, typer.Option(help="Agent: reference or bfcl.")] = "reference",
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
    executor: Annotated[str, typer.Option(help="local (threads in this process) or ray (episodes on Ray "
                                               "actors; this process writes the trace file).")] = "local",
    ray_address: Annotated[str | None, typer.Option(help="Ray cluster to join (e.g. auto, ray://host:10001); "
                                                         "default: start a local one.")] = None,
    ray_workers: Annotated[int | None, typer.Option(min=1, help="Ray actors (default: the cluster's CPUs); "
                                                                "--workers threads run inside each.")] = None,
) -> None:
    """Run a campaign; episodes already in the trace file are skipped, so re-running resumes."""
    from agentchaos_otel.campaign.runner import CampaignConfig, finished_episodes
    from agentchaos_otel.campaign.sanity import run_sanity
    from agentchaos_otel.store.db import StoreError

    console = Console(stderr=True)
    try:
        if agent not in AGENTS:
            raise usage_error(f"unknown agent {agent!r}; expected one of {', '.join(AGENTS)}")
        if executor not in ("local", "ray"):
            raise usage_error(f"unknown executor {executor!r}; expected local or ray")
        seed_list = parse_seeds(seeds)
        conds = parse_conditions(conditions)
        if agent != "reference" and subtasks != DEFAULT_SUBTASKS:
            raise usage_error("--subtasks applies to --agent reference only")
        if perfect and base_url:
            raise usage_error("--perfect applies to the simulated model only, not to --base-url")
        from agentchaos_otel.campaign.guarded import expand_conditions, parse_guards

        try:
            guards = parse_guards(guard)
        except ValueError as exc:
            raise usage_error(str(exc)) from None
        options = AgentOptions(logprobs=logprobs, subtasks=parse_subtasks(subtasks), perfect=perfect,
                               step_cap=step_cap, guards=guards)
        endpoint_key(base_url, model, api_key_env)
        if db.exists() and db.is_dir():
            raise ValueError(f"--db {db} is a directory")
        report = run_sanity(conds, seed_list[0])
        if not report.ok:
            for c in report.failures:
                typer.echo(f"FAIL  {c.name}: {c.detail}", err=True)
            raise ValueError(f"{len(report.failures)} sanity check(s) failed; the campaign did not start")
        setup = AGENTS[agent](tasks, seed_list[0], conds, options)
        conds = expand_conditions(conds, guards)
        finished_episodes(db)  # an unreadable file fails here, before anything is started
    except typer.Exit:
        raise
    except Exception as exc:
        _fail(exc if str(exc) else type(exc).__name__)
    console.print(f"sanity: {len(report.checks)} checks passed")
    try:
        with model_endpoint(setup.policy, base_url, model, api_key_env, seed_list[0]) as (url, mdl, key, sim):
            config = CampaignConfig(agent=setup.name, tasks=setup.task_ids, conditions=conds, seeds=seed_list,
                                    workers=workers, db=db, simulated=sim,
                                    extra={"base_url": None if sim else url, "model": mdl,
                                           "logprobs": logprobs, "perfect": perfect, "step_cap": step_cap,
                                           **({"guards": list(guards)} if guards else {}),
                                           **({"subtasks": subtasks} if agent == "reference" else {})})
            if executor == "ray":
                from agentchaos_otel.scale.ray_campaign import WorkerSpec, run_campaign_ray

                spec = WorkerSpec(agent=agent, tasks=tasks, seed=seed_list[0], conditions=tuple(conds),
                                  options=options, base_url=url, model=mdl, simulated=sim,
                                  api_key_env=api_key_env, threads=workers)
                result = run_campaign_ray(config, spec, ray_address=ray_address, ray_workers=ray_workers,
                                          console=console, progress=progress)
            else:
                result = execute(config, setup, url, mdl, key, console=console, progress=progress)
    except (ValueError, OSError, StoreError, RuntimeError) as exc:
        _fail(exc if str(exc) else type(exc).__name__)
    label = " (SIMULATED model)" if config.simulated else ""
    typer.echo(json.dumps({"run_id": result.run_id, "simulated": config.simulated, **result.counts}))
    console.print(f"campaign {result.run_id} done{label}: {result.counts}")


def execute(config: Any, setup: AgentSetup, base_url: str, model: str, api_key: str, *,
            console: Console | None = None, progress: bool = True) -> Any:
    """Configure tracing into ``config.db``, run the campaign, flush, shut tracing down."""
    import openai

    import agentchaos_otel
    from agentchaos_otel.campaign.runner import run_campaign

    handle = agentchaos_otel.configure(db=str(config.db), plan=None, seed=config.seeds[0])
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
        _fail(f"no such file: {db}")
    try:
        rows = campaign_runs(db)
    except Exception as exc:
        _fail(str(exc))
    for r in rows:
        typer.echo(json.dumps(r, default=str))


def report_command(
    db: Annotated[Path, typer.Argument(help="A traces.duckdb file.")],
    as_json: Annotated[bool, typer.Option("--json", help="Print the measures as JSON.")] = False,
    html: Annotated[Path | None, typer.Option("--html", help="Write index.html and PNG plots here.")] = None,
    seed: Annotated[int, typer.Option(help="Seed of the bootstrap resampling.")] = 0,
    resamples: Annotated[int, typer.Option(min=1, help="Bootstrap resamples (the study used 2,000-4,000).")]
    = 2000,
    clean: Annotated[str, typer.Option(help="Name of the no-fault condition.")] = CLEAN,
) -> None:
    """Robustness measures of the study from the stored traces: tables, JSON or an HTML page."""
    from agentchaos_otel.campaign import report as R

    try:
        measures = R.build(R.load_corpus(db), seed=seed, resamples=resamples, clean=clean)
        page = None
        if html is not None:
            from agentchaos_otel.campaign.html import write_html

            page = write_html(measures, html)
    except (R.ReportError, OSError) as exc:
        _fail(str(exc))
    if as_json:
        typer.echo(json.dumps(R.to_json(measures), indent=2, default=str))
    else:
        R.render_terminal(measures, Console(width=None if sys.stdout.isatty() else 200))
    if page is not None:
        typer.echo(f"wrote {page}", err=as_json)


report_app.callback(invoke_without_command=True)(report_command)
app.command("report")(report_command)
