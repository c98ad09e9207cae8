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
import os
import tempfile
import time
from pathlib import Path
from typing import Any

from agentchaos_otel.records import EpisodeTrace
from benchmarks.corpora import synthetic
from benchmarks.corpora.spans import write_episodes
from diagnosers.base import diagnose_episodes
from diagnosers.baseline import TextOnlyDiagnoser
from diagnosers.estimators import LearnedEstimator
from diagnosers.evaluate import BLAME_CATEGORIES, Interval, Scores, evaluate, evaluation_set
from diagnosers.learned import split_by_task
from diagnosers.norms import ToolNorms
from diagnosers.rules import RuleDiagnoser
from diagnosers.tracefile import load
from diagnosers.truth import read_labels, resolve, resolve_categories


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
    blame = " | ".join(_blame(s.false_blame.get(c), s.n_by_category.get(c, 0)) for c in BLAME_CATEGORIES)
    hidden = ", ".join(f"{c.split('_')[0]} {_blame(s.false_blame_hidden.get(c), s.n_by_category.get(c, 0))}"
                       for c in ("clean_success", "benign_success") if c in s.false_blame_hidden) or "-"
    return (f"| {label} | {s.method} | {s.n} | {_pct(s.type_accuracy)} | {_pct(s.step_accuracy)} | "
            f"{_pct(s.joint_accuracy)} | {blame} | {hidden} | {trunc} | {weak_text} |")


HEADER = ("| set | method | n | type % [95% CI] | step % [95% CI] | joint % [95% CI] | false blame, clean "
          "successes % | false blame, benign successes % | false blame, failures with no fault % | false blame, "
          "successes with the outcome hidden % | truncation found % | types below 90% |\n"
          "|---|---|---|---|---|---|---|---|---|---|---|---|")


def _families(label: str, s: Scores) -> str:
    return f"{label}, {s.method}, per family (true target): " + "; ".join(
        f"{t} {100 * v['type_accuracy']:.0f}% type / {100 * v['step_accuracy']:.0f}% step (n={int(v['n'])})"
        for t, v in s.per_target.items())


SPLIT_NOTES = {"dev": "development data",
               "held-out": "same forms as dev, other tasks and positions",
               "held-out forms": "written after the rules of their time; fixed against since: no longer held out"}


def rule_for(episodes: list[EpisodeTrace]) -> RuleDiagnoser:
    """The rule diagnoser with the tool norms of these episodes, as ``diagnose`` builds them from
    the store it reads (``diagnosers/norms.py``)."""
    return RuleDiagnoser(norms=ToolNorms.from_episodes(episodes))


def misbehaving(n: int, dev_seed: int, test_seed: int, out_dir: str | None, n_boot: int, seed: int,
                corpus_files: list[str], heldout_files: list[str],
                blind: list[tuple[str, str, str]] = ()) -> None:  # type: ignore[assignment]
    """Rule, learned and text-only diagnosis on the splits of the misbehaving-provider corpus, the
    campaign files given, and blind rounds (``--blind NAME=DB:LABELS``: a label file with categories)."""
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
        rows = read_labels(labels)
        splits[name] = (eps, resolve(eps, rows), db, labels, resolve_categories(eps, rows))
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
    text = TextOnlyDiagnoser()
    fam: list[str] = []
    for name, (eps, tr, db, labels, cats) in splits.items():
        methods = [rule_for(eps), text] + ([model] if name != "dev" else [])
        scores, _ = evaluate(eps, methods, n_boot=n_boot, seed=seed, truths=tr, categories=cats)
        for sc in scores:
            print(_row(f"misbehaving {name} ({db.stem}; {SPLIT_NOTES[name]})", sc))
            fam.append(_families(f"misbehaving {name}", sc))
        print(f"(rule and text rows above: diagnose run {db} --evaluate --truth {labels})")
    for name, db_path, labels_path in blind:
        eps = load(db_path)
        rows = read_labels(labels_path)
        scores, _ = evaluate(eps, [rule_for(eps), text, model], n_boot=n_boot, seed=seed, truths=resolve(eps, rows),
                             categories=resolve_categories(eps, rows))
        for sc in scores:
            print(_row(name, sc))
            fam.append(_families(name, sc))
        print(f"(rule and text rows above: diagnose run {db_path} --evaluate --truth {labels_path})")
    held = [ep for path in heldout_files for ep in load(path)]
    for label, eps in (("own catalog corpus", [ep for path in corpus_files for ep in load(path)]),
                       ("own held-out variants", held)):
        if eps:
            scores, _ = evaluate(eps, [rule_for(eps), text, model], n_boot=n_boot, seed=seed)
            for sc in scores:
                print(_row(label, sc))
                fam.append(_families(label, sc))
    print()
    for line in fam:
        print(line)
    # Item 5: the held-out split again with OpenInference's OpenAI instrumentation also tracing.
    from openinference.instrumentation.openai import OpenAIInstrumentor

    both = Path(out_dir) / f"misbehaving_{test_seed}_openinference.duckdb"
    if not both.exists():
        run_corpus(both, Path(out_dir) / f"misbehaving_{test_seed}_openinference.jsonl", n, test_seed,
                   instrumentations=(OpenAIInstrumentor(),))
    alone, beside = splits["held-out"][0], load(both)
    for m, n in ((rule_for(alone), rule_for(beside)), (model, model)):
        a = {d.task_id: (d.fault_type, d.step) for d in diagnose_episodes(m, alone)}
        b = {d.task_id: (d.fault_type, d.step) for d in diagnose_episodes(n, beside)}
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
    rule = rule_for(eps)  # the norms of every file given, as ``diagnose`` reads each store's
    sets = [("test tasks", test_eps, [rule, model]), ("whole corpus", eps, [rule])]
    if heldout:
        held = [ep for path in heldout for ep in load(path)]
        sets.append(("held-out variants", held, [rule_for(held), model]))
    for label, episodes, methods in sets:
        scores, _ = evaluate(episodes, methods, n_boot=n_boot, seed=seed)
        for sc in scores:
            print(_row(label, sc))


DEMO_CACHE = Path(tempfile.gettempdir()) / "agentchaos-bench-diagnose-demo"


def demo_store(n: int, cache: Path = DEMO_CACHE) -> Path:
    """A trace file of ``n`` episodes copied from the demo's traces (``agentchaos demo``: the
    reference agent under a spread of faults against the simulated model; SIMULATED), grown in
    SQL the way the analysis benchmark grows its files. Cached per size."""
    import subprocess
    import sys

    from benchmarks.analysis_corpus import grow

    cache.mkdir(parents=True, exist_ok=True)
    pool = cache / "traces.duckdb"
    if not pool.exists():
        env = {k: v for k, v in os.environ.items() if not k.startswith(("OTEL_", "AGENTCHAOS_"))}
        subprocess.run([sys.executable, "-m", "agentchaos_otel.cli", "demo", "--episodes", "100", "--workers",
                        "8", "--seed", "1"], cwd=cache, env=env, check=True, capture_output=True)
    out = cache / f"demo_{n}.duckdb"
    if not out.exists():
        tmp = cache / f"demo_{n}.tmp.duckdb"
        grow(pool, tmp, n)
        tmp.rename(out)
    return out


def demo_speed(sizes: tuple[int, ...]) -> None:
    """``agentchaos diagnose FILE --all --no-write --json`` as a whole process (interpreter start,
    store open, every episode loaded and diagnosed, JSON written) on demo-shaped files, beside a
    DuckDB ``fetchall`` of every span of the same file, each run by a fresh launcher process
    (``bench_analysis.measured``: wall time, CPU time, peak RSS)."""
    import sys

    from benchmarks.bench_analysis import measured

    print("SIMULATED: episodes copied from `agentchaos demo` traces (reference agent, simulated model)")
    per_episode = {}
    for n in sizes:
        path = demo_store(n)
        diag = measured([sys.executable, "-m", "agentchaos_otel.cli", "diagnose", str(path), "--all", "--no-write",
                         "--json"])
        base = measured([sys.executable, "-m", "benchmarks.analysis_jobs", "baseline", str(path)])
        per_episode[n] = diag["cpu_seconds"] / n
        print(f"diagnose --all, {n:,} demo-shaped episodes: {diag['seconds']:.2f} s = {n / diag['seconds']:,.0f} "
              f"episodes/s (CPU {diag['cpu_seconds']:.2f} s over its processes, peak RSS {diag['rss_mb']:.0f} MB); "
              f"fetchall of every span: {base['seconds']:.2f} s, peak RSS {base['rss_mb']:.0f} MB; "
              f"ratio {diag['seconds'] / base['seconds']:.1f}x")
    if len(sizes) >= 2:
        small, large = sorted(sizes)[:2]
        print(f"CPU time per episode, {large:,} vs {small:,}: {per_episode[large] / per_episode[small]:.2f}x "
              "(1.0 = linear)")
    print(f"load average (1 min) now: {os.getloadavg()[0]:.2f}")


def vocabulary_cost(rounds: int = 3, n: int = 20_000) -> None:
    """What the span-time signals cost per call in the agent's process: ``tool_result_signals`` and
    ``content_signals`` on healthy and failed results and replies, beside a baseline of
    ``json.loads`` + ``json.dumps`` of the same result (what any instrumentation that looks at a
    result pays), and the error reader alone. Median of ``rounds`` runs of ``n`` calls each."""
    import json
    import statistics

    from agentchaos_otel import signals, vocabulary

    healthy = {"order_id": "ORD-10482", "status": "shipped", "currency": "EUR", "total": 129.5,
               "items": [{"sku": f"TR-{i}", "qty": 1 + i % 3, "price": 19.9 + i} for i in range(6)],
               "placed_at": "2026-03-14T09:00:00Z"}
    inputs = {
        "healthy JSON result (6 items)": json.dumps(healthy),
        "error object (gRPC status)": json.dumps({"error": {"code": 4, "message": "Deadline expired", "details": []}}),
        "text error (Go dial refused)": 'Get "http://10.0.0.7/v1": dial tcp 10.0.0.7:80: connect: connection refused',
        "traceback (12 lines)": "Traceback (most recent call last):\n" + "  File \"a.py\", line 1, in f\n" * 10
                                + "KeyError: 'data'",
    }
    reply = "Here is what I found: " + "the order shipped on time and the refund was issued. " * 20

    def per_call(fn: Any, arg: Any) -> float:
        times = []
        for _ in range(rounds):
            t0 = time.perf_counter()
            for _ in range(n):
                fn(arg)
            times.append((time.perf_counter() - t0) / n * 1e6)
        return statistics.median(times)

    print(f"per call, median of {rounds} x {n:,} calls (µs)")
    for name, text in inputs.items():
        sig = per_call(signals.tool_result_signals, text)
        reader = per_call(vocabulary.read_result, text)
        line = f"tool result, {name}: tool_result_signals {sig:.1f} µs (error reader alone {reader:.1f} µs)"
        if text[:1] in "{[":
            base = per_call(lambda t: json.dumps(json.loads(t)), text)
            line += f"; baseline json.loads+dumps {base:.1f} µs; ratio {sig / base:.1f}x"
        print(line)
    sig = per_call(signals.content_signals, reply)
    reader = per_call(lambda t: vocabulary.read_text(t, reply=True), reply)
    base = per_call(lambda t: t.strip().count("\n"), reply)
    print(f"reply text ({len(reply)} chars): content_signals {sig:.1f} µs (error reader alone {reader:.1f} µs); "
          f"baseline one pass over the text {base:.2f} µs")


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
    ap.add_argument("--blind", nargs="*", default=[], metavar="NAME=DB:LABELS",
                    help="--misbehaving: also score these blind rounds (label files with categories)")
    ap.add_argument("--demo", action="store_true",
                    help="time `diagnose --all` as a whole process on demo-shaped episodes (--sizes)")
    ap.add_argument("--sizes", default="4000,40000", help="--demo: episode counts")
    ap.add_argument("--vocabulary", action="store_true",
                    help="per-call cost of the span-time signals and the error reader")
    args = ap.parse_args()
    if args.misbehaving:
        blind = []
        for spec in args.blind:
            name, _, files = spec.partition("=")
            db, _, labels = files.partition(":")
            if not (name and db and labels):
                ap.error(f"--blind {spec!r}: expected NAME=DB:LABELS")
            blind.append((name, db, labels))
        misbehaving(args.episodes if args.episodes != 10_000 else 300, args.dev_seed, args.test_seed,
                    args.out_dir, args.bootstrap, args.seed, args.corpus, args.heldout, blind)
        return
    if args.demo:
        demo_speed(tuple(int(x) for x in args.sizes.split(",")))
        return
    if args.vocabulary:
        vocabulary_cost()
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
