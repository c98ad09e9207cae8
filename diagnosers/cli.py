"""`diagnose`: name the fault type and step of every failed episode in a trace store.

``diagnose FILE`` (or ``diagnose run FILE``) diagnoses; ``diagnose train FILE`` fits the learned
diagnoser. Mounted as ``agentchaos diagnose``; the standalone ``diagnose`` behaves the same: one
``agentchaos: error:`` line on stderr, exit 2 for a bad command line, 1 for a file or model that
cannot be used.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer
from rich.console import Console
from typer.core import TyperGroup

from agentchaos_otel.cli.errors import entry, fail, typer_app, usage
from agentchaos_otel.parallel.processes import processes_per_core
from agentchaos_otel.parallel.ray_session import RayUnavailable
from agentchaos_otel.records import EpisodeTrace
from diagnosers.base import CONFIDENCE_MIN, Diagnoser
from diagnosers.baseline import TextOnlyDiagnoser
from diagnosers.driver import EXECUTORS, diagnose_store, is_simulated
from diagnosers.estimators import LearnedEstimator
from diagnosers.evaluate import evaluate, evaluation_set
from diagnosers.learned import LearnedDiagnoser, ModelFileError, split_by_task
from diagnosers.render import diagnoses_json, diagnoses_table, print_scores, scores_json
from diagnosers.rules import RuleDiagnoser
from diagnosers.tracefile import DiagnoseError, load, write_diagnoses
from diagnosers.truth import read_labels, resolve

if TYPE_CHECKING:  # the LLM diagnoser (and the openai SDK) is imported only for --method llm
    from diagnosers.llm import LLMDiagnoser

METHODS = ("rule", "llm", "learned", "text")


class _DefaultToRun(TyperGroup):
    """Lets ``diagnose FILE`` mean ``diagnose run FILE`` while ``diagnose train`` stays a command."""

    def parse_args(self, ctx: Any, args: list[str]) -> list[str]:
        if args and args[0] not in self.commands and args[0] not in ("--help", "-h"):
            args = ["run", *args]
        return super().parse_args(ctx, args)


app = typer_app(cls=_DefaultToRun,
                help="Diagnose failed agent episodes: fault type, step and evidence. "
                     "`diagnose FILE ...` is short for `diagnose run FILE ...`.")


def _simulated(episodes: list[EpisodeTrace]) -> bool:
    return is_simulated(episodes)


def _build(method: str, *, file: Path, model_file: Path | None, base_url: str | None, model: str | None,
           api_key_env: str, concurrency: int, token_budget: int) -> tuple[Diagnoser, LLMDiagnoser | None]:
    if method == "rule":
        return RuleDiagnoser(), None
    if method == "text":
        return TextOnlyDiagnoser(), None
    if method == "learned":
        if model_file is None:
            usage("--method learned needs --model-file "
                  "(train one with `diagnose train FILE --out model.skops`)")
        return LearnedDiagnoser.load(model_file), None  # type: ignore[arg-type]
    if not base_url or not model:
        usage("--method llm needs --base-url and --model")
    from diagnosers.llm import LLMDiagnoser

    llm = LLMDiagnoser(str(base_url), str(model), api_key=os.environ.get(api_key_env), cache_path=str(file),
                       concurrency=concurrency, token_budget=token_budget)
    return llm, llm


@app.command("run")
def run(
    file: Annotated[Path, typer.Argument(help="trace store (traces.duckdb)")],
    method: Annotated[str, typer.Option("--method", "-m", help="rule | llm | learned | text")] = "rule",
    json_out: Annotated[bool, typer.Option("--json", help="print JSON instead of a table")] = False,
    do_evaluate: Annotated[bool, typer.Option("--evaluate", help="score against ground truth")] = False,
    truth: Annotated[Path | None, typer.Option("--truth", help="with --evaluate: your labels (JSONL or CSV "
                                               "keyed by task_id or trace_id; fault_type; step or span_id)")]
    = None,
    min_confidence: Annotated[float, typer.Option("--min-confidence", min=0.0, max=1.0,
                                                  help="below this confidence the answer is none_found")]
    = CONFIDENCE_MIN,
    task: Annotated[list[str] | None, typer.Option("--task", help="only these task ids")] = None,
    condition: Annotated[list[str] | None, typer.Option("--condition", help="only these conditions")] = None,
    trace_id: Annotated[list[str] | None, typer.Option("--trace", help="only these trace ids")] = None,
    include_success: Annotated[bool, typer.Option("--all", help="diagnose successful episodes too "
                                                  "(default: failed or unknown outcome)")] = False,
    limit: Annotated[int | None, typer.Option("--limit", min=1, help="show at most N diagnoses")] = None,
    write: Annotated[bool, typer.Option("--write/--no-write", help="store rows in `diagnoses`")] = True,
    model_file: Annotated[Path | None, typer.Option("--model-file", help="learned model (.skops)")] = None,
    base_url: Annotated[str | None, typer.Option("--base-url", help="OpenAI-compatible endpoint")] = None,
    model: Annotated[str | None, typer.Option("--model", help="model name for --method llm")] = None,
    api_key_env: Annotated[str, typer.Option("--api-key-env", help="env var holding the API key")]
    = "OPENAI_API_KEY",
    concurrency: Annotated[int, typer.Option("--concurrency", min=1, help="parallel LLM calls")] = 4,
    token_budget: Annotated[int, typer.Option("--token-budget", min=200, help="trace tokens per prompt")]
    = 3000,
    bootstrap: Annotated[int, typer.Option("--bootstrap", min=0, help="bootstrap resamples")] = 2000,
    seed: Annotated[int, typer.Option("--seed", help="bootstrap seed")] = 0,
    executor: Annotated[str, typer.Option("--executor", help="local | ray: map episode chunks over Ray "
                                          "workers (each reads FILE itself)")] = "local",
    ray_address: Annotated[str | None, typer.Option("--ray-address", help="Ray cluster to join (default: "
                                                    "start a local one)")] = None,
    workers: Annotated[int | None, typer.Option("--workers", min=1, help="local processes to map episode "
                                                "chunks over (default: one per core, at most 4)")] = None,
) -> None:
    """Diagnose every failed episode (or score the diagnosers against ground truth with --evaluate)."""
    if method not in METHODS:
        usage(f"unknown method {method!r}; choose one of {', '.join(METHODS)}")
    console = Console(soft_wrap=False, width=200 if not sys.stdout.isatty() else None)
    if executor not in EXECUTORS:
        usage(f"unknown executor {executor!r}; choose one of {', '.join(EXECUTORS)}")
    try:
        diagnoser, llm = _build(method, file=file, model_file=model_file, base_url=base_url, model=model,
                                api_key_env=api_key_env, concurrency=concurrency, token_budget=token_budget)
        if truth is not None and not do_evaluate:
            usage("--truth is used with --evaluate")
        if do_evaluate:
            episodes = load(file, tasks=task or (), conditions=condition or (), trace_ids=trace_id or None)
            simulated = _simulated(episodes)
            methods: list[Diagnoser] = [diagnoser]
            if method != "text":
                methods.append(TextOnlyDiagnoser())
            truths = resolve(episodes, read_labels(truth), source=str(truth)) if truth is not None else None
            scores, _ = evaluate(episodes, methods, n_boot=bootstrap, seed=seed, truths=truths,
                                 min_confidence=min_confidence)
            n_eval = (len(evaluation_set(episodes)) if truths is None else
                      sum(1 for ep in episodes if ep.success is False and truths.get(ep.trace_id) is not None))
            extra: dict[str, Any] = {"file": str(file), "episodes": len(episodes), "evaluated": n_eval,
                                     "truth": str(truth) if truth else "trace", "simulated": simulated}
            if json_out:
                typer.echo(scores_json(scores, extra))
            elif not extra["evaluated"]:
                console.print(f"nothing to score: none of the {len(episodes)} episode(s) failed after a "
                              "fault that changed what the agent saw (ground truth: "
                              f"{truth if truth else 'agentchaos.fault.*'})")
            else:
                console.print(f"{extra['evaluated']} failed, fault-triggered episodes of {len(episodes)}")
                print_scores(console, scores, simulated=simulated)
            if llm is not None:
                typer.echo(llm.usage.line(llm.model), err=json_out)
            return
        # Unknown outcomes (traces from other instrumentations carry none) are diagnosed too.
        # Streamed chunk by chunk: memory holds one chunk of episodes, not the store.
        result = diagnose_store(file, diagnoser, tasks=task or (), conditions=condition or (),
                                trace_ids=trace_id or None, include_success=include_success,
                                executor=executor, ray_address=ray_address, min_confidence=min_confidence,
                                workers=processes_per_core() if workers is None else workers)
        diagnoses, simulated = result.diagnoses, result.simulated
        if write and diagnoses:
            write_diagnoses(file, diagnoses)
        shown = diagnoses[:limit] if limit else diagnoses
        if json_out:
            typer.echo(diagnoses_json(shown))
        else:
            title = f"{method} diagnosis of {len(diagnoses)} episode(s)" + (
                f", first {len(shown)} shown" if len(shown) < len(diagnoses) else "")
            console.print(diagnoses_table(shown, simulated=simulated, title=title))
        if llm is not None:
            typer.echo(llm.usage.line(llm.model), err=json_out)
    except (DiagnoseError, ModelFileError, RayUnavailable) as exc:
        fail(exc)


@app.command("train")
def train_cmd(
    file: Annotated[Path, typer.Argument(help="trace store with labelled (fault-injected) episodes")],
    out: Annotated[Path, typer.Option("--out", "-o", help="where to save the model")]
    = Path("diagnoser.skops"),
    test_fraction: Annotated[float, typer.Option("--test-fraction", min=0.0, max=0.9,
                                                 help="share of task ids held out")] = 0.3,
    seed: Annotated[int, typer.Option("--seed", help="split and model seed")] = 0,
    json_out: Annotated[bool, typer.Option("--json", help="print the test scores as JSON")] = False,
    bootstrap: Annotated[int, typer.Option("--bootstrap", min=0)] = 2000,
    truth: Annotated[Path | None, typer.Option("--truth", help="labels to learn from instead of the trace's "
                                               "ground truth (JSONL or CSV, as for run --truth)")] = None,
) -> None:
    """Train the learned diagnoser on one side of a task-id split and score it on the other."""
    console = Console(soft_wrap=False, width=200 if not sys.stdout.isatty() else None)
    try:
        episodes = load(file)
        truths = resolve(episodes, read_labels(truth), source=str(truth)) if truth is not None else None
        train_eps, test_eps = split_by_task(episodes, test_fraction, seed)
        labelled = (any(ep.triggered for ep in train_eps) if truths is None
                    else any(truths.get(ep.trace_id) is not None for ep in train_eps))
        if not labelled:
            fail(f"{file}: no fault-injected episodes to learn from")
        if truths is not None:  # a label file names the episodes to learn from and their root causes
            train_eps = [ep for ep in train_eps if ep.trace_id in truths]
        estimator = LearnedEstimator(seed=seed)
        try:
            estimator.fit(train_eps, None if truths is None else [truths[ep.trace_id] for ep in train_eps])
        except ValueError as exc:
            fail(f"{file}: {exc}")
            return
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
            console.print(f"saved {out}: trained on {len(train_eps)} episodes ({estimator.n_training_steps_} steps, "
                          f"{estimator.n_faulted_steps_} faulted); test split by task id: {len(test_eps)} episodes")
            print_scores(console, scores, simulated=bool(extra["simulated"]), details=False)
    except (DiagnoseError, ModelFileError, OSError) as exc:
        fail(exc)


main = entry(app, "diagnose")
