"""`diagnose`: name the fault type and step of every failed episode in a trace store.

``diagnose run FILE`` (or just ``diagnose FILE``) diagnoses; ``diagnose evaluate FILE`` scores a
diagnoser against ground truth (``diagnose run FILE --evaluate`` is the same); ``diagnose train
FILE`` fits the learned diagnoser. Mounted as ``agentchaos diagnose`` through the
``agentchaos_otel.commands`` entry point; the standalone ``diagnose`` behaves the same: one
``agentchaos: error:`` line on stderr, exit 2 for a bad command line, 1 for a file or model that
cannot be used. The diagnosers themselves are imported inside the commands, so building the
command tree (``agentchaos --help``) does not load scikit-learn.
"""

from __future__ import annotations

import enum
import os
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

from agentchaos_otel.cli.app import Group, choice, typer_app
from agentchaos_otel.cli.choices import Executor
from agentchaos_otel.cli.errors import entry
from agentchaos_otel.cli.notes import note_spooled
from agentchaos_otel.errors import UsageError, UserError
from diagnosers.base import CONFIDENCE_MIN

if TYPE_CHECKING:  # the LLM diagnoser (and the openai SDK) is imported only for --method llm
    from rich.console import Console

    from agentchaos_otel.records import EpisodeTrace
    from diagnosers.base import Diagnoser
    from diagnosers.llm import LLMDiagnoser
    from diagnosers.norms import ToolNorms



class Method(enum.StrEnum):
    """The diagnosers ``--method`` chooses from."""

    rule = "rule"
    llm = "llm"
    learned = "learned"
    text = "text"


METHODS = tuple(m.value for m in Method)


class _DefaultToRun(Group):
    """Lets ``diagnose FILE`` mean ``diagnose run FILE`` while ``train`` and ``evaluate`` stay commands."""

    def parse_args(self, ctx: Any, args: list[str]) -> list[str]:
        own = {opt for p in self.get_params(ctx) for opt in (*p.opts, *p.secondary_opts)}
        if args and args[0] not in self.commands and args[0] not in own:
            args = ["run", *args]
        return super().parse_args(ctx, args)


app = typer_app(cls=_DefaultToRun, add_completion=True,
                help="Diagnose failed agent episodes: fault type, step and evidence. 'diagnose FILE ...' is "
                     "short for 'diagnose run FILE ...'.")

FileArg = Annotated[Path, typer.Argument(help="Trace store (traces.duckdb, or a directory of Parquet spans).",
                                         show_default=False)]
MethodOpt = Annotated[Method, choice(Method, "--method", "-m", help="Diagnoser to run.")]
JsonOpt = Annotated[bool, typer.Option("--json", help="Print JSON instead of a table.")]
TruthOpt = Annotated[Path | None, typer.Option("--truth", help="Your labels to score against (JSONL or CSV keyed "
                                               "by task_id or trace_id; fault_type; step or span_id); default: "
                                               "the recorded agentchaos.fault.* ground truth.")]
MinConfidenceOpt = Annotated[float, typer.Option("--min-confidence", min=0.0, max=1.0,
                                                 help="Below this confidence the answer is none_found.")]
TaskOpt = Annotated[list[str] | None, typer.Option("--task", help="Only these task ids (repeatable).")]
ConditionOpt = Annotated[list[str] | None, typer.Option("--condition", help="Only these conditions "
                                                        "(repeatable).")]
TraceOpt = Annotated[list[str] | None, typer.Option("--trace", help="Only these trace ids (repeatable).")]
ModelFileOpt = Annotated[Path | None, typer.Option("--model-file", help="Learned model (.skops) for --method "
                                                   "learned.")]
BaseUrlOpt = Annotated[str | None, typer.Option("--base-url", help="OpenAI-compatible endpoint for --method llm.")]
ModelOpt = Annotated[str | None, typer.Option("--model", help="Model name for --method llm.")]
ApiKeyEnvOpt = Annotated[str, typer.Option("--api-key-env", help="Environment variable holding the API key.")]
ConcurrencyOpt = Annotated[int, typer.Option("--concurrency", min=1, help="Parallel LLM calls.")]
TokenBudgetOpt = Annotated[int, typer.Option("--token-budget", min=200, help="Trace tokens per LLM prompt.")]
BootstrapOpt = Annotated[int, typer.Option("--bootstrap", min=0, help="Bootstrap resamples for the intervals.")]
SeedOpt = Annotated[int, typer.Option("--seed", help="Bootstrap seed.")]


def _console() -> Console:
    from agentchaos_otel.terminal import data_console

    return data_console(soft_wrap=False, width=200 if not sys.stdout.isatty() else None)


def _norms(file: Path) -> ToolNorms | None:
    """What each tool answers across this store: the norm a tool's first answer is read against
    (a missing file is reported by the command itself)."""
    from diagnosers.norms import ToolNorms

    return ToolNorms.from_store(file) if file.exists() else None


def _build(method: Method, *, file: Path, model_file: Path | None, base_url: str | None, model: str | None,
           api_key_env: str, concurrency: int, token_budget: int) -> tuple[Diagnoser, LLMDiagnoser | None]:
    if method == Method.rule:
        from diagnosers.rules import RuleDiagnoser

        return RuleDiagnoser(norms=_norms(file)), None
    if method == Method.text:
        from diagnosers.baseline import TextOnlyDiagnoser

        return TextOnlyDiagnoser(), None
    if method == Method.learned:
        if model_file is None:
            raise UsageError("--method learned needs --model-file (train one with 'diagnose train FILE --out "
                             "model.skops')")
        from diagnosers.learned import LearnedDiagnoser

        return LearnedDiagnoser.load(model_file), None
    if not base_url or not model:
        raise UsageError("--method llm needs --base-url and --model")
    from diagnosers.llm import LLMDiagnoser

    llm = LLMDiagnoser(str(base_url), str(model), api_key=os.environ.get(api_key_env), cache_path=str(file),
                       concurrency=concurrency, token_budget=token_budget, norms=_norms(file))
    return llm, llm


def _check_conditions(file: Path, conditions: list[str] | None) -> None:
    """``--condition typo`` names the store's conditions instead of printing an empty table."""
    if conditions and file.exists():
        from agentchaos_otel.store.read.summary import check_conditions

        check_conditions(file, conditions)


def _simulated(episodes: list[EpisodeTrace]) -> bool:
    from diagnosers.driver import is_simulated

    return is_simulated(episodes)


def _score(file: Path, diagnoser: Diagnoser, method: Method, *, truth: Path | None, json_out: bool,
           bootstrap: int, seed: int, min_confidence: float, tasks: list[str], conditions: list[str],
           trace_ids: list[str] | None) -> None:
    """Score ``diagnoser`` (and the text-only baseline) on the failed, fault-triggered episodes."""
    from diagnosers.baseline import TextOnlyDiagnoser
    from diagnosers.evaluate import evaluate, evaluation_set
    from diagnosers.render import print_scores, scores_json
    from diagnosers.tracefile import load
    from diagnosers.truth import read_labels, resolve, resolve_categories

    episodes = load(file, tasks=tasks, conditions=conditions, trace_ids=trace_ids)
    note_spooled(file)
    simulated = _simulated(episodes)
    methods: list[Diagnoser] = [diagnoser]
    if method != Method.text:
        methods.append(TextOnlyDiagnoser())
    rows = read_labels(truth) if truth is not None else None
    truths = resolve(episodes, rows, source=str(truth)) if rows is not None else None
    categories = resolve_categories(episodes, rows, source=str(truth)) if rows is not None else None
    scores, _ = evaluate(episodes, methods, n_boot=bootstrap, seed=seed, truths=truths, categories=categories,
                         min_confidence=min_confidence)
    n_eval = scores[0].n if scores else len(evaluation_set(episodes))
    extra: dict[str, Any] = {"file": str(file), "episodes": len(episodes), "evaluated": n_eval,
                             "truth": str(truth) if truth else "trace", "simulated": simulated}
    if json_out:
        typer.echo(scores_json(scores, extra))
        return
    console = _console()
    if not extra["evaluated"]:
        console.print(f"nothing to score: none of the {len(episodes)} episode(s) failed after a fault that "
                      f"changed what the agent saw (ground truth: {truth if truth else 'agentchaos.fault.*'})")
    else:
        console.print(f"{extra['evaluated']} failed, fault-triggered episodes of {len(episodes)}")
        print_scores(console, scores, simulated=simulated)


@app.command("run")
def run(
    file: FileArg,
    method: MethodOpt = Method.rule,
    json_out: JsonOpt = False,
    do_evaluate: Annotated[bool, typer.Option("--evaluate", help="Score against ground truth instead (the same "
                                              "as 'diagnose evaluate FILE').")] = False,
    truth: TruthOpt = None,
    min_confidence: MinConfidenceOpt = CONFIDENCE_MIN,
    task: TaskOpt = None,
    condition: ConditionOpt = None,
    trace_id: TraceOpt = None,
    include_success: Annotated[bool, typer.Option("--all", help="Diagnose successful episodes too (default: "
                                                  "failed or unknown outcome).")] = False,
    limit: Annotated[int | None, typer.Option("--limit", min=1, help="Show at most N diagnoses.")] = None,
    write: Annotated[bool, typer.Option("--write/--no-write", help="Store the rows in the diagnoses table.")]
    = True,
    model_file: ModelFileOpt = None,
    base_url: BaseUrlOpt = None,
    model: ModelOpt = None,
    api_key_env: ApiKeyEnvOpt = "OPENAI_API_KEY",
    concurrency: ConcurrencyOpt = 4,
    token_budget: TokenBudgetOpt = 3000,
    bootstrap: BootstrapOpt = 2000,
    seed: SeedOpt = 0,
    executor: Annotated[Executor, choice(Executor, "--executor", help="local: processes on this machine; ray: "
                                         "episode chunks on Ray workers (each reads FILE itself).")]
    = Executor.local,
    ray_address: Annotated[str | None, typer.Option("--ray-address", help="Ray cluster to join (default: "
                                                    "start a local one).")] = None,
    workers: Annotated[int | None, typer.Option("--workers", min=1, help="Local processes to map episode "
                                                "chunks over (default: one per core, at most 4).")] = None,
    phoenix: Annotated[str | None, typer.Option("--phoenix", show_default=False, help="Phoenix's URL: also put "
                                                "each diagnosis on its blamed span and episode root there, as "
                                                "span annotations (the spans must have been exported).")] = None,
    metrics_port: Annotated[int | None, typer.Option("--metrics-port", min=0, max=65535, show_default=False,
                                                     help="Serve the diagnoses by fault type and method on "
                                                          "127.0.0.1:PORT/metrics until Prometheus has "
                                                          "collected them.")] = None,
    metrics_otlp: Annotated[bool, typer.Option("--metrics-otlp", help="Push those counts to the OTLP metrics "
                                                                      "endpoint of the OTEL_EXPORTER_OTLP_* "
                                                                      "variables.")] = False,
    metrics_wait: Annotated[float, typer.Option("--metrics-wait", min=0.0, help="Seconds to wait for "
                                                                                "Prometheus to collect the "
                                                                                "counts.")] = 60.0,
) -> None:
    """Diagnose every failed episode (or, with --evaluate, score the diagnoser against ground truth)."""
    diagnoser, llm = _build(method, file=file, model_file=model_file, base_url=base_url, model=model,
                            api_key_env=api_key_env, concurrency=concurrency, token_budget=token_budget)
    if truth is not None and not do_evaluate:
        raise UsageError("--truth is used with --evaluate")
    _check_conditions(file, condition)
    if do_evaluate:
        _score(file, diagnoser, method, truth=truth, json_out=json_out, bootstrap=bootstrap, seed=seed,
               min_confidence=min_confidence, tasks=task or [], conditions=condition or [],
               trace_ids=trace_id or None)
        if llm is not None:
            typer.echo(llm.usage.line(llm.model), err=json_out)
        return
    from agentchaos_otel.parallel.processes import processes_per_core
    from diagnosers.driver import diagnose_store
    from diagnosers.render import diagnoses_json, diagnoses_table
    from diagnosers.tracefile import write_diagnoses

    # Unknown outcomes (traces from other instrumentations carry none) are diagnosed too.
    # Streamed chunk by chunk: memory holds one chunk of episodes, not the store.
    result = diagnose_store(file, diagnoser, tasks=task or (), conditions=condition or (),
                            trace_ids=trace_id or None, include_success=include_success,
                            executor=executor.value, ray_address=ray_address, min_confidence=min_confidence,
                            workers=processes_per_core() if workers is None else workers)
    diagnoses, simulated = result.diagnoses, result.simulated
    note_spooled(file)
    if write and diagnoses:
        write_diagnoses(file, diagnoses)
    shown = diagnoses[:limit] if limit else diagnoses
    if json_out:
        typer.echo(diagnoses_json(shown))
    else:
        title = f"{method} diagnosis of {len(diagnoses)} episode(s)" + (
            f", first {len(shown)} shown" if len(shown) < len(diagnoses) else "")
        _console().print(diagnoses_table(shown, simulated=simulated, title=title))
    if llm is not None:
        typer.echo(llm.usage.line(llm.model), err=json_out)
    if phoenix is not None and diagnoses:
        from agentchaos_otel.traces_export import annotate_store

        posted = annotate_store(file, [d.to_dict() for d in diagnoses], phoenix)
        typer.echo(f"Phoenix {phoenix}: {posted.stored} span annotations stored"
                   + (f", {posted.queued} queued (their spans were not in Phoenix yet)" if posted.queued else ""),
                   err=json_out)
    if metrics_port is not None or metrics_otlp:
        from agentchaos_otel.metrics_setup import describe, publish_diagnoses

        published = publish_diagnoses([(d.fault_type, d.method) for d in diagnoses], prometheus_port=metrics_port,
                                      otlp=metrics_otlp, wait_s=metrics_wait,
                                      on_ready=lambda url: typer.echo(f"serving counts on {url}", err=True))
        typer.echo(describe(published, metrics_wait), err=True)
        if published.failed:
            raise typer.Exit(1)


@app.command("evaluate")
def evaluate_cmd(
    file: FileArg,
    method: MethodOpt = Method.rule,
    truth: TruthOpt = None,
    json_out: JsonOpt = False,
    min_confidence: MinConfidenceOpt = CONFIDENCE_MIN,
    task: TaskOpt = None,
    condition: ConditionOpt = None,
    trace_id: TraceOpt = None,
    model_file: ModelFileOpt = None,
    base_url: BaseUrlOpt = None,
    model: ModelOpt = None,
    api_key_env: ApiKeyEnvOpt = "OPENAI_API_KEY",
    concurrency: ConcurrencyOpt = 4,
    token_budget: TokenBudgetOpt = 3000,
    bootstrap: BootstrapOpt = 2000,
    seed: SeedOpt = 0,
) -> None:
    """Score a diagnoser (and the text-only baseline) on failed, fault-triggered episodes against ground truth."""
    diagnoser, llm = _build(method, file=file, model_file=model_file, base_url=base_url, model=model,
                            api_key_env=api_key_env, concurrency=concurrency, token_budget=token_budget)
    _check_conditions(file, condition)
    _score(file, diagnoser, method, truth=truth, json_out=json_out, bootstrap=bootstrap, seed=seed,
           min_confidence=min_confidence, tasks=task or [], conditions=condition or [], trace_ids=trace_id or None)
    if llm is not None:
        typer.echo(llm.usage.line(llm.model), err=json_out)


@app.command("train")
def train_cmd(
    file: Annotated[Path, typer.Argument(help="Trace store with labelled (fault-injected) episodes.",
                                         show_default=False)],
    out: Annotated[Path, typer.Option("--out", "-o", help="Where to save the model.")] = Path("diagnoser.skops"),
    test_fraction: Annotated[float, typer.Option("--test-fraction", min=0.0, max=0.9,
                                                 help="Share of task ids held out.")] = 0.3,
    seed: Annotated[int, typer.Option("--seed", help="Split and model seed.")] = 0,
    json_out: Annotated[bool, typer.Option("--json", help="Print the test scores as JSON.")] = False,
    bootstrap: BootstrapOpt = 2000,
    truth: Annotated[Path | None, typer.Option("--truth", help="Labels to learn from instead of the trace's "
                                               "ground truth (JSONL or CSV, as for evaluate --truth).")] = None,
) -> None:
    """Train the learned diagnoser on one side of a task-id split and score it on the other."""
    from diagnosers.estimators import LearnedEstimator
    from diagnosers.evaluate import evaluate
    from diagnosers.learned import split_by_task
    from diagnosers.render import print_scores, scores_json
    from diagnosers.rules import RuleDiagnoser
    from diagnosers.tracefile import load
    from diagnosers.truth import read_labels, resolve

    episodes = load(file)
    note_spooled(file)
    truths = resolve(episodes, read_labels(truth), source=str(truth)) if truth is not None else None
    train_eps, test_eps = split_by_task(episodes, test_fraction, seed)
    labelled = (any(ep.triggered for ep in train_eps) if truths is None
                else any(truths.get(ep.trace_id) is not None for ep in train_eps))
    if not labelled:
        raise UserError(f"{file}: no fault-injected episodes to learn from")
    if truths is not None:  # a label file names the episodes to learn from and their root causes
        train_eps = [ep for ep in train_eps if ep.trace_id in truths]
    estimator = LearnedEstimator(seed=seed)
    try:
        estimator.fit(train_eps, None if truths is None else [truths[ep.trace_id] for ep in train_eps])
    except ValueError as exc:
        raise UserError(f"{file}: {exc}") from None
    model = estimator.diagnoser_
    model.save(out, trained_on=str(file), episodes=len(train_eps), test_fraction=test_fraction, seed=seed)
    scores, _ = evaluate(test_eps, [model, RuleDiagnoser()], n_boot=bootstrap, seed=seed, truths=truths)
    extra = {"model": str(out), "train_episodes": len(train_eps), "test_episodes": len(test_eps),
             "train_steps": estimator.n_training_steps_, "faulted_steps": estimator.n_faulted_steps_,
             "classes": [str(c) for c in estimator.step_classes_],
             "simulated": _simulated(episodes)}
    if json_out:
        typer.echo(scores_json(scores, extra))
    else:
        console = _console()
        console.print(f"saved {out}: trained on {len(train_eps)} episodes ({estimator.n_training_steps_} steps, "
                      f"{estimator.n_faulted_steps_} faulted); test split by task id: {len(test_eps)} episodes")
        print_scores(console, scores, simulated=bool(extra["simulated"]), details=False)


main = entry(app, "diagnose")
