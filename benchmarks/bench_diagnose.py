"""Rule-based diagnosis throughput: 10,000 simulated episodes, printed as episodes per second.

Episodes come from ``agentchaos_otel.diagnosers.synthetic`` (SIMULATED): a pool of distinct episodes over every
configuration is generated once and cycled up to the requested count, because generating is
slower than diagnosing and is not what is measured. Two figures are printed: diagnosis of
in-memory episodes, and (``--store``) the full path of loading them from a DuckDB trace file.

    .venv/bin/python -m benchmarks.bench_diagnose [--episodes 10000] [--pool 600] [--store]

``--accuracy`` instead scores rule-based and learned diagnosis on campaign trace files: the learned
model is trained on a task-id split of the ``--corpus`` files (whole tasks held out) and both
methods are scored on the held-out tasks, on the whole corpus (rule only: it was not fitted) and
on ``--heldout`` files (fault variants never used for training or rule writing):

    .venv/bin/python -m benchmarks.bench_diagnose --accuracy --corpus main_ref.duckdb main_bfcl.duckdb \
        --heldout heldout.duckdb [--model-out diagnoser.joblib]
"""

from __future__ import annotations

import argparse
import dataclasses
import tempfile
import time
from pathlib import Path

from agentchaos_otel.diagnosers import synthetic
from agentchaos_otel.diagnosers.base import diagnose_episodes
from agentchaos_otel.diagnosers.baseline import TextOnlyDiagnoser
from agentchaos_otel.diagnosers.evaluate import Interval, Scores, evaluate, evaluation_set
from agentchaos_otel.diagnosers.learned import split_by_task, train
from agentchaos_otel.diagnosers.rules import RuleDiagnoser
from agentchaos_otel.diagnosers.spans import write_episodes
from agentchaos_otel.diagnosers.tracefile import load


def corpus(n: int, pool: int, long: bool) -> list:
    configs = synthetic.all_configs(heldout=True)
    per = max(1, pool // (len(configs) + 1))
    base = synthetic.make_corpus(per, 1, heldout=True, long=long)
    return [dataclasses.replace(base[i % len(base)], trace_id=f"{base[i % len(base)].trace_id}-{i}")
            for i in range(n)]


def _pct(i: Interval) -> str:
    return f"{100 * i.value:.1f} [{100 * i.low:.1f}, {100 * i.high:.1f}]"


def _row(label: str, s: Scores) -> str:
    trunc = "-" if s.truncation_found is None else f"{100 * s.truncation_found:.0f}"
    weak = sorted(((v["accuracy"], t, v["n"]) for t, v in s.per_type.items() if v["accuracy"] < 0.9))
    weak_text = ", ".join(f"{t} {100 * a:.0f}% (n={n})" for a, t, n in weak) or "none below 90%"
    return (f"| {label} | {s.method} | {s.n} | {_pct(s.type_accuracy)} | {_pct(s.step_accuracy)} | "
            f"{_pct(s.joint_accuracy)} | {trunc} | {weak_text} |")


def accuracy(corpus: list[str], heldout: list[str], test_fraction: float, seed: int, n_boot: int,
             model_out: str | None) -> None:
    """Train on whole tasks of the corpus, score on the others and on the held-out variants."""
    eps = [ep for path in corpus for ep in load(path)]
    train_eps, test_eps = split_by_task(eps, test_fraction, seed)
    model, report = train(train_eps, seed=seed)
    if model_out:
        model.save(model_out, trained_on=",".join(corpus), test_fraction=test_fraction, seed=seed)
    print(f"SIMULATED. corpus {', '.join(corpus)}: {len(eps)} episodes, {len(evaluation_set(eps))} failed "
          f"and fault-triggered; learned model trained on {len(train_eps)} episodes of "
          f"{len({e.task_id for e in train_eps})} tasks ({report.steps} steps, {report.faulted_steps} "
          f"faulted); test: {len(test_eps)} episodes of {len({e.task_id for e in test_eps})} other tasks")
    print("| set | method | n | type % [95% CI] | step % [95% CI] | joint % [95% CI] | truncation found % "
          "| types below 90% |")
    print("|---|---|---|---|---|---|---|---|")
    rule = RuleDiagnoser()
    sets = [("test tasks", test_eps, [rule, model]), ("whole corpus", eps, [rule])]
    if heldout:
        sets.append(("held-out variants", [ep for path in heldout for ep in load(path)], [rule, model]))
    for label, episodes, methods in sets:
        scores, _ = evaluate(episodes, methods, n_boot=n_boot, seed=seed)
        for sc in scores:
            print(_row(label, sc))


def _timed(diagnoser: object, eps: list) -> tuple[list, float, float]:
    t0, c0 = time.perf_counter(), time.process_time()
    out = diagnose_episodes(diagnoser, eps)
    return out, time.perf_counter() - t0, time.process_time() - c0


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--episodes", type=int, default=10_000)
    ap.add_argument("--pool", type=int, default=600, help="distinct simulated episodes generated")
    ap.add_argument("--long", action="store_true", help="15-30 LLM calls per episode")
    ap.add_argument("--store", action="store_true", help="also time loading from a DuckDB trace file")
    ap.add_argument("--accuracy", action="store_true", help="score accuracy on campaign trace files instead")
    ap.add_argument("--corpus", nargs="*", default=[], help="--accuracy: labelled campaign trace files")
    ap.add_argument("--heldout", nargs="*", default=[], help="--accuracy: held-out variant trace files")
    ap.add_argument("--test-fraction", type=float, default=0.3, help="--accuracy: share of task ids held out")
    ap.add_argument("--seed", type=int, default=0, help="--accuracy: split, model and bootstrap seed")
    ap.add_argument("--bootstrap", type=int, default=2000, help="--accuracy: bootstrap resamples")
    ap.add_argument("--model-out", default=None, help="--accuracy: save the trained model here")
    args = ap.parse_args()
    if args.accuracy:
        if not args.corpus:
            ap.error("--accuracy needs --corpus FILE [FILE ...]")
        accuracy(args.corpus, args.heldout, args.test_fraction, args.seed, args.bootstrap, args.model_out)
        return
    t0 = time.perf_counter()
    eps = corpus(args.episodes, args.pool, args.long)
    steps = sum(len(e.steps) for e in eps)
    print(f"SIMULATED corpus: {len(eps)} episodes, {steps} steps "
          f"({steps / len(eps):.1f} per episode), generated in {time.perf_counter() - t0:.1f} s")
    # Baseline side by side: the text-only diagnoser pays for the same blinding and iteration but
    # looks at one step, so the ratio is the cost of the rules themselves.
    baseline_out, base_dt, _ = _timed(TextOnlyDiagnoser(), eps)
    diagnoser = RuleDiagnoser()
    out, dt, cpu = _timed(diagnoser, eps)
    found = sum(d.found for d in out)
    print(f"rule-based, in memory: {len(out)} episodes in {dt:.2f} s = {len(out) / dt:,.0f} episodes/s "
          f"({steps / dt:,.0f} steps/s; CPU time {cpu:.2f} s = {len(out) / cpu:,.0f} episodes/s per core); "
          f"{found} with a diagnosis")
    print(f"baseline (text-only diagnoser, same episodes): {len(baseline_out) / base_dt:,.0f} episodes/s; "
          f"rule-based takes {dt / base_dt:.1f}x its time")
    if args.store:
        with tempfile.TemporaryDirectory() as tmp:
            path = Path(tmp) / "bench.duckdb"
            t0 = time.perf_counter()
            write_episodes(eps, path)
            print(f"wrote {len(eps)} episodes as spans in {time.perf_counter() - t0:.1f} s")
            t0 = time.perf_counter()
            loaded = load(path)
            t1 = time.perf_counter()
            diagnose_episodes(diagnoser, loaded)
            t2 = time.perf_counter()
            print(f"rule-based from the trace file: load {t1 - t0:.2f} s + diagnose {t2 - t1:.2f} s = "
                  f"{len(loaded) / (t2 - t0):,.0f} episodes/s")


if __name__ == "__main__":
    main()
