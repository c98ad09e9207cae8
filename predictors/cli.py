"""``agentchaos predict``: train, evaluate and apply failure predictors on a traces.duckdb file.

Every command reads episodes blinded (no ground truth) through the store loader. Bad arguments
and unusable files end with one ``agentchaos: error:`` line on stderr (exit 2 for a bad command
line, 1 for a file that cannot be used), never a traceback. Mounted as ``agentchaos predict``
through the ``agentchaos_otel.commands`` entry point; numpy and the predictors are imported inside
the commands, so building the command tree stays fast.
"""

from __future__ import annotations

import enum
import hashlib
import json
import time
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

from agentchaos_otel.cli.app import choice, typer_app
from agentchaos_otel.cli.notes import note_spooled
from agentchaos_otel.errors import no_such_file
from agentchaos_otel.terminal import printable

if TYPE_CHECKING:
    from agentchaos_otel.records import EpisodeTrace
    from predictors.model import FailurePredictor

app = typer_app(help="Early failure warning from external signals and logprob entropy.")

DEFAULT_FALSE_ALARM = 0.05  # predictors.model.DEFAULT_FALSE_ALARM (a test keeps the two equal)


class FeatureSet(enum.StrEnum):
    """The feature sets of ``predictors.features.FEATURE_SETS`` (a test keeps the two equal)."""

    external = "external"
    entropy = "entropy"
    both = "both"

DbArg = Annotated[Path, typer.Argument(help="A traces.duckdb file.", show_default=False)]
SeedOpt = Annotated[int, typer.Option(help="Seed of the task split and the bootstrap.")]
FalseAlarmOpt = Annotated[float, typer.Option(help="Share of successful validation episodes allowed to "
                                                   "alarm.")]


def _echo(text: str) -> None:
    """A human-readable line; task ids and notes come from the traces, so control characters are escaped."""
    typer.echo(printable(text))


def _load(db: Path) -> list[EpisodeTrace]:
    """Every episode, blind, its steps carrying only what predictors read (``extract.STEP_KEYS``):
    the whole file is held at once, and a full step is kilobytes the features never look at."""
    from agentchaos_otel.store.read.episodes import load_episodes
    from predictors.extract import STEP_KEYS
    from predictors.model import PredictorDataError

    if not db.exists():
        raise PredictorDataError(no_such_file(db))
    episodes = load_episodes(db, blind=True, step_keys=STEP_KEYS)
    note_spooled(db)
    if not episodes:
        raise PredictorDataError(f"{db}: no episodes stored")
    return episodes


def _fmt(v: float | None, digits: int = 3) -> str:
    return "n/a" if v is None else f"{v:.{digits}f}"


@app.command("train")
def train_cmd(
    db: DbArg,
    features: Annotated[FeatureSet, choice(FeatureSet, "--features", help="Feature set.")] = FeatureSet.external,
    out: Annotated[Path, typer.Option(help="Where to save the predictor (JSON).")] = Path("predictor.json"),
    seed: SeedOpt = 0,
    false_alarm: FalseAlarmOpt = DEFAULT_FALSE_ALARM,
) -> None:
    """Fit on the training tasks, set the alarm threshold on validation tasks, save one file."""
    from predictors.estimator import train
    from predictors.evaluate import compute_metrics, is_simulated, score_episodes

    features = features.value
    episodes = _load(db)
    predictor, split = train(episodes, features, seed=seed, false_alarm=false_alarm)
    predictor.meta["source"] = str(db)
    predictor.meta["simulated"] = is_simulated(episodes)
    predictor.save(out)
    s = split.summary()
    m = compute_metrics(score_episodes(predictor, split.test), predictor.threshold)
    label = " (SIMULATED corpus)" if predictor.meta["simulated"] else ""
    _echo(f"trained {features} predictor on {s['train']['episodes']} episodes / {s['train']['tasks']} "
               f"tasks{label}")
    _echo(f"threshold {predictor.threshold:.4f}: {predictor.meta['validation_false_alarm']:.1%} false "
               f"alarms on {predictor.meta['validation_normals']} successful validation episodes")
    _echo(f"held-out test ({s['test']['episodes']} episodes): AUROC {_fmt(m.auroc)}, detection "
               f"{_fmt(m.detection, 2)}, median lead {_fmt(m.median_lead_steps, 1)} steps")
    for note in m.notes:
        _echo(f"note: {note}")
    _echo(f"saved {out}")


@app.command("features")
def features_cmd(
    db: DbArg,
    features: Annotated[FeatureSet, choice(FeatureSet, "--features", help="Feature set.")] = FeatureSet.both,
    out: Annotated[Path, typer.Option(help="Parquet file to write the rows to.")] = Path("features.parquet"),
    workers: Annotated[int | None, typer.Option("--workers", min=1, help="Local processes to spread the "
                                                "store over (default: one per core, at most 4).")] = None,
) -> None:
    """Write the features of every step prefix of every episode, one row per prefix, to Parquet.

    The rows the predictors train on, for a model of your own: trace_id, task_id, success (the
    episode's outcome), step, simulated, then one column per feature. No ground truth.
    """
    from agentchaos_otel.parallel.processes import processes_per_core
    from predictors.feature_file import write_store_features
    from predictors.model import PredictorDataError

    features = features.value
    if not db.exists():
        raise PredictorDataError(no_such_file(db))
    written = write_store_features(db, out, features, workers=processes_per_core() if workers is None else workers)
    note_spooled(db)
    if not written.episodes:
        raise PredictorDataError(f"{db}: no episodes stored")
    label = " (SIMULATED corpus: the 'simulated' column says which episodes)" if written.simulated else ""
    _echo(f"wrote {written.rows} prefix rows of {written.episodes} episodes, {len(written.names)} "
               f"{features} features, to {out}{label}")


@app.command("evaluate")
def evaluate_cmd(
    db: DbArg,
    seed: SeedOpt = 0,
    bootstrap: Annotated[int, typer.Option(min=0, help="Bootstrap resamples for intervals.")] = 2000,
    false_alarm: FalseAlarmOpt = DEFAULT_FALSE_ALARM,
    model: Annotated[Path | None, typer.Option(help="Evaluate this saved predictor on every episode of "
                                                    "the file instead of comparing feature sets.")] = None,
    plots: Annotated[Path | None, typer.Option(help="Directory for roc.png and lead_time.png.")] = None,
    json_out: Annotated[Path | None, typer.Option("--json", help="Also write the report as JSON.")] = None,
) -> None:
    """The three feature sets side by side with the published figures, or one saved predictor."""
    from predictors.evaluate import compare_feature_sets, evaluate_predictor, is_simulated, render_text
    from predictors.model import FailurePredictor

    episodes = _load(db)
    if model is not None:
        predictor = FailurePredictor.load(model)
        source = predictor.meta.get("source")
        held_out = set(predictor.meta.get("test_tasks") or [])
        if source and Path(source).resolve() == db.resolve() and held_out:
            episodes = [e for e in episodes if str(e.task_id) in held_out]
            _echo(f"{db} is the file this predictor was trained on: evaluating only its "
                       f"{len(held_out)} held-out test tasks")
        ev = evaluate_predictor(predictor, episodes, n_boot=bootstrap, seed=seed)
        report: dict[str, Any] = {"simulated": is_simulated(episodes), **ev.to_dict()}
        _print_single(ev, report["simulated"], model)
    else:
        cmp = compare_feature_sets(episodes, seed=seed, n_boot=bootstrap, false_alarm=false_alarm)
        report = cmp.to_dict()
        _echo(render_text(cmp))
        if plots is not None:
            from predictors.plots import plot_lead_histogram, plot_roc

            plots.mkdir(parents=True, exist_ok=True)
            _echo(f"wrote {plot_roc(cmp, plots / 'roc.png')}")
            _echo(f"wrote {plot_lead_histogram(cmp, plots / 'lead_time.png')}")
    if json_out is not None:
        json_out.write_text(json.dumps(report, indent=1, default=str))
        _echo(f"wrote {json_out}")


def _print_single(ev: Any, simulated: bool, model: Path) -> None:
    m = ev.metrics
    ci = ev.intervals
    label = " on a SIMULATED corpus" if simulated else ""
    _echo(f"{model} ({ev.feature_set}){label}: {m.episodes} episodes, {m.failures} failed")

    def with_ci(v: float | None, key: str, digits: int = 3) -> str:
        rng = ci.get(key)
        return _fmt(v, digits) + (f" ({rng[0]:.{digits}f}..{rng[1]:.{digits}f})" if rng else "")

    _echo(f"AUROC {with_ci(m.auroc, 'auroc')}, detection {with_ci(m.detection, 'detection', 2)}, "
               f"false alarm {_fmt(m.false_alarm, 2)}, median lead {_fmt(m.median_lead_steps, 1)} steps "
               f"/ {_fmt(m.median_lead_llm_calls, 1)} LLM calls")
    for note in m.notes:
        _echo(f"note: {note}")


def write_predictions(db: Path, predictor: FailurePredictor, episodes: list[EpisodeTrace], model_name: str,
                      model_digest: str) -> tuple[int, int]:
    """Replace this model's rows in the ``predictions`` table with one row per step prefix.

    Returns (rows written, episodes that alarm).
    """
    from agentchaos_otel.store.database.connect import connect
    from agentchaos_otel.store.database.schema import PREDICTIONS_DDL

    cols: dict[str, list[Any]] = {k: [] for k in ("trace_id", "task_id", "step", "span_id", "score", "alarm")}
    alarmed = 0
    for ep in episodes:
        if not ep.steps:
            continue
        steps = sorted(ep.steps, key=lambda s: s.step)
        scores = predictor.score_prefixes(ep)
        alarmed += any(predictor.alarms(v) for v in scores)
        for s, score in zip(steps, scores, strict=True):
            cols["trace_id"].append(ep.trace_id)
            cols["task_id"].append(ep.task_id)
            cols["step"].append(s.step)
            cols["span_id"].append(s.span_id)
            cols["score"].append(score)
            cols["alarm"].append(predictor.alarms(score))
    now = time.time_ns()
    conn = connect(db, read_only=False)
    try:
        conn.execute(PREDICTIONS_DDL)
        conn.execute("BEGIN TRANSACTION")
        conn.execute("DELETE FROM predictions WHERE model_digest = ?", [model_digest])
        if cols["trace_id"]:
            conn.execute(
                "INSERT INTO predictions SELECT unnest(?::VARCHAR[]), unnest(?::VARCHAR[]), "
                "unnest(?::INTEGER[]), unnest(?::VARCHAR[]), unnest(?::DOUBLE[]), unnest(?::BOOLEAN[]), "
                "?, ?, ?, ?, ?",
                [*cols.values(), predictor.threshold, predictor.feature_set, model_name, model_digest, now])
        conn.execute("COMMIT")
    finally:
        conn.close()
    return len(cols["trace_id"]), alarmed


@app.command("score")
def score_cmd(
    db: DbArg,
    model: Annotated[Path, typer.Option(help="A predictor saved by 'train'.", show_default=False)],
) -> None:
    """Write the score of every step prefix to the predictions table (replacing this model's rows)."""
    from predictors.model import FailurePredictor

    predictor = FailurePredictor.load(model)
    episodes = _load(db)
    digest = hashlib.sha256(model.read_bytes()).hexdigest()[:16]
    n, alarmed = write_predictions(db, predictor, episodes, model.name, digest)
    _echo(f"wrote {n} step scores for {len(episodes)} episodes to {db}:predictions "
               f"({predictor.feature_set}, threshold {predictor.threshold:.4f}); {alarmed} episodes alarm")
