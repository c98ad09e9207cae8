"""Rule-based diagnosis throughput: 10,000 simulated episodes, printed as episodes per second.

Episodes come from ``benchmarks.corpora.synthetic`` (SIMULATED): a pool of distinct episodes over every
configuration is generated once and cycled up to the requested count, because generating is
slower than diagnosing and is not what is measured. Two figures are printed: diagnosis of
in-memory episodes, and (``--store``) the full path of loading them from a DuckDB trace file.

    .venv/bin/python -m benchmarks.bench_diagnose [--episodes 10000] [--pool 600] [--store]

``--accuracy`` instead scores rule-based and learned diagnosis on campaign trace files: the learned
model is trained on a task-id split of the ``--corpus`` files (whole tasks held out) and both
methods are scored on the held-out tasks, on the whole corpus (rule only: it was not fitted) and
on ``--heldout`` files (fault variants never used for training or rule writing):

    .venv/bin/python -m benchmarks.bench_diagnose --accuracy --corpus main_ref.duckdb main_bfcl.duckdb \
        --heldout heldout.duckdb [--model-out diagnoser.skops]

``--misbehaving`` scores every method on the misbehaving-provider corpus (``tests/support/
misbehaving``: failures in real providers' and tools' documented formats, ``plan=None``, a generic
openai-SDK agent, ground truth only in a label file) through the same path as
``diagnose run FILE --evaluate --truth LABELS``: a development split (``--dev-seed``, the one the
rules were fixed on), a held-out split (``--test-seed``, looked at once) with the same forms, and a
split of forms written after the rules were fixed (``forms_heldout``, seed ``--test-seed`` + 100,
never tuned on). The learned model is
trained on the simulated catalog corpus (``benchmarks.corpora.synthetic``, every LLM, HTTP, stream,
connection and tool-result family) plus the development split, and tested on the held-out split:

    .venv/bin/python -m benchmarks.bench_diagnose --misbehaving --episodes 300 --dev-seed 0 --test-seed 1 \
        [--out-dir DIR] [--corpus main_ref.duckdb --heldout heldout.duckdb]
"""

from __future__ import annotations

import argparse
import dataclasses
import tempfile
import time
from pathlib import Path

from benchmarks.corpora import synthetic
from benchmarks.corpora.spans import write_episodes
from diagnosers.base import diagnose_episodes
from diagnosers.baseline import TextOnlyDiagnoser
from diagnosers.estimators import LearnedEstimator
from diagnosers.evaluate import Interval, Scores, evaluate, evaluation_set
from diagnosers.learned import split_by_task
from diagnosers.rules import RuleDiagnoser
from diagnosers.tracefile import load
from diagnosers.truth import read_labels, resolve


def corpus(n: int, pool: int, long: bool) -> list:
    configs = synthetic.all_configs(heldout=True)
    per = max(1, pool // (len(configs) + 1))
    base = synthetic.make_corpus(per, 1, heldout=True, long=long)
    return [dataclasses.replace(base[i % len(base)], trace_id=f"{base[i % len(base)].trace_id}-{i}")
            for i in range(n)]


def _pct(i: Interval) -> str:
    return f"{100 * i.value:.1f} [{100 * i.low:.1f}, {100 * i.high:.1f}]"


def _blame(i: Interval | None, n: int) -> str:
    return "-" if i is None else f"{_pct(i)} of {n}"


def _row(label: str, s: Scores) -> str:
    trunc = "-" if s.truncation_found is None else f"{100 * s.truncation_found:.0f}"
    weak = sorted(((v["accuracy"], t, v["n"]) for t, v in s.per_type.items() if v["accuracy"] < 0.9))
    weak_text = ", ".join(f"{t} {100 * a:.0f}% (n={n})" for a, t, n in weak) or "none below 90%"
    return (f"| {label} | {s.method} | {s.n} | {_pct(s.type_accuracy)} | {_pct(s.step_accuracy)} | "
            f"{_pct(s.joint_accuracy)} | {_blame(s.false_blame_success, s.n_clean_success)} | "
            f"{_blame(s.false_blame_untriggered, s.n_untriggered)} | {trunc} | {weak_text} |")


HEADER = ("| set | method | n | type % [95% CI] | step % [95% CI] | joint % [95% CI] | false blame, clean "
          "successful % | false blame, untriggered % | truncation found % | types below 90% |\n"
          "|---|---|---|---|---|---|---|---|---|---|")


def _families(label: str, s: Scores) -> str:
    return f"{label}, {s.method}, per family (true target): " + "; ".join(
        f"{t} {100 * v['type_accuracy']:.0f}% type / {100 * v['step_accuracy']:.0f}% step (n={int(v['n'])})"
        for t, v in s.per_target.items())


def misbehaving(n: int, dev_seed: int, test_seed: int, out_dir: str | None, n_boot: int, seed: int,
                corpus_files: list[str], heldout_files: list[str]) -> None:
    """Rule, learned and text-only diagnosis on both splits of the misbehaving-provider corpus."""
    from benchmarks.corpora.misbehaving.corpus import run_corpus

    tmp = None
    if out_dir is None:
        tmp = tempfile.TemporaryDirectory()
        out_dir = tmp.name
    Path(out_dir).mkdir(parents=True, exist_ok=True)
    splits = {}
    for name, sd, held_forms in (("dev", dev_seed, False), ("held-out", test_seed, False),
                                 ("held-out forms", test_seed + 100, True)):
        stem = f"misbehaving_{'heldout_forms_' if held_forms else ''}{sd}"
        db, labels = Path(out_dir) / f"{stem}.duckdb", Path(out_dir) / f"{stem}.jsonl"
        if not db.exists():
            counts = run_corpus(db, labels, n, sd, heldout_forms=held_forms)
            print(f"built {db} ({counts})")
        eps = load(db)
        splits[name] = (eps, resolve(eps, read_labels(labels)), db, labels)
    # Learned: the simulated catalog corpus (all families, trace ground truth) + the dev split.
    own = synthetic.make_corpus(6, 1) + synthetic.make_corpus(4, 2, heldout=True)
    # (the campaign files passed with --corpus / --heldout are scored, never trained on)
    dev_eps, dev_truths = splits["dev"][0], splits["dev"][1]
    from diagnosers.evaluate import ground_truth

    truths = {ep.trace_id: ground_truth(ep) for ep in own} | dict(dev_truths)
    learn = [ep for ep in own + dev_eps if ep.trace_id in truths]
    est = LearnedEstimator(seed=seed).fit(learn, [truths[ep.trace_id] for ep in learn])
    model = est.diagnoser_
    classes = [str(c) for c in est.step_classes_]
    print(f"SIMULATED. learned model: {len(learn)} episodes, {est.n_training_steps_} steps, {est.n_faulted_steps_} "
          f"faulted, {len(classes)} classes ({', '.join(classes)})")
    print(HEADER)
    rule, text = RuleDiagnoser(), TextOnlyDiagnoser()
    fam: list[str] = []
    for name, (eps, tr, db, labels) in splits.items():
        methods = [rule, text] + ([model] if name != "dev" else [])
        scores, _ = evaluate(eps, methods, n_boot=n_boot, seed=seed, truths=tr)
        for sc in scores:
            print(_row(f"misbehaving {name} ({db.stem}, --truth)", sc))
            fam.append(_families(f"misbehaving {name}", sc))
        print(f"(rule and text rows above: diagnose run {db} --evaluate --truth {labels})")
    held = [ep for path in heldout_files for ep in load(path)]
    for label, eps in (("own catalog corpus", [ep for path in corpus_files for ep in load(path)]),
                       ("own held-out variants", held)):
        if eps:
            scores, _ = evaluate(eps, [rule, text, model], n_boot=n_boot, seed=seed)
            for sc in scores:
                print(_row(label, sc))
                fam.append(_families(label, sc))
    print()
    for line in fam:
        print(line)
    # Item 5: the held-out split again with OpenInference's OpenAI instrumentation also tracing.
    from openinference.instrumentation.openai import OpenAIInstrumentor

    from diagnosers.base import diagnose_episodes

    both = Path(out_dir) / f"misbehaving_{test_seed}_openinference.duckdb"
    if not both.exists():
        run_corpus(both, Path(out_dir) / f"misbehaving_{test_seed}_openinference.jsonl", n, test_seed,
                   instrumentations=(OpenAIInstrumentor(),))
    for m in (rule, model):
        a = {d.task_id: (d.fault_type, d.step) for d in diagnose_episodes(m, splits["held-out"][0])}
        b = {d.task_id: (d.fault_type, d.step) for d in diagnose_episodes(m, load(both))}
        same = sum(1 for k in a if b.get(k) == a[k])
        print(f"beside OpenInference (openinference-instrumentation-openai also tracing): {m.name} diagnoses "
              f"identical on {same} of {len(a)} held-out episodes")
    if tmp is not None:
        tmp.cleanup()


def accuracy(corpus: list[str], heldout: list[str], test_fraction: float, seed: int, n_boot: int,
             model_out: str | None) -> None:
    """Train on whole tasks of the corpus, score on the others and on the held-out variants."""
    eps = [ep for path in corpus for ep in load(path)]
    train_eps, test_eps = split_by_task(eps, test_fraction, seed)
    est = LearnedEstimator(seed=seed).fit(train_eps)
    model = est.diagnoser_
    if model_out:
        model.save(model_out, trained_on=",".join(corpus), test_fraction=test_fraction, seed=seed)
    print(f"SIMULATED. corpus {', '.join(corpus)}: {len(eps)} episodes, {len(evaluation_set(eps))} failed "
          f"and fault-triggered; learned model trained on {len(train_eps)} episodes of "
          f"{len({e.task_id for e in train_eps})} tasks ({est.n_training_steps_} steps, {est.n_faulted_steps_} "
          f"faulted); test: {len(test_eps)} episodes of {len({e.task_id for e in test_eps})} other tasks")
    print(HEADER)
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
    ap.add_argument("--misbehaving", action="store_true", help="score on the misbehaving-provider corpus")
    ap.add_argument("--dev-seed", type=int, default=0, help="--misbehaving: development split seed")
    ap.add_argument("--test-seed", type=int, default=1, help="--misbehaving: held-out split seed")
    ap.add_argument("--out-dir", default=None, help="--misbehaving: keep the corpus files here")
    args = ap.parse_args()
    if args.misbehaving:
        misbehaving(args.episodes if args.episodes != 10_000 else 300, args.dev_seed, args.test_seed,
                    args.out_dir, args.bootstrap, args.seed, args.corpus, args.heldout)
        return
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
