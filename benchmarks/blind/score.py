"""Score ``diagnose`` on a blind round: one command from a corpus and its label file to the figures.

``python -m benchmarks.blind.score --db blind/round1.duckdb --labels blind/round1.jsonl``

Runs ``diagnose FILE --all --json --no-write`` (the installed command, as a user would) and compares
its verdicts with the label file, which the corpus's authors wrote without reading the rules. The
scoring reads only the command's JSON and the labels, so it does not depend on how the diagnosers
work:

- over ``faulted_failure`` episodes: type, step and joint (both) accuracy, with 95% bootstrap
  intervals, per label and per family;
- false blame (a fault named where the label says there is none), separately for clean
  successes, successes with benign errors, and failures with no fault.

A label's ``none``, ``none_found`` or empty type means no root cause; the diagnosis's
``none_found`` likewise. Types are compared as the taxonomy's vocabulary does (side left apart).
"""

from __future__ import annotations

import argparse
import json
import random
import subprocess
import sys
from collections import Counter, defaultdict
from collections.abc import Sequence
from pathlib import Path
from typing import Any

CLEAN = frozenset({"", "none", "none_found", "clean", "null"})
FALSE_BLAME_CATEGORIES = ("clean_success", "benign_success", "unfaulted_failure")


def read_jsonl(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def run_diagnose(db: Path, diagnose: str, extra: Sequence[str] = ()) -> list[dict[str, Any]]:
    """The verdict of every episode of ``db``, from the ``diagnose`` command's JSON."""
    out = subprocess.run([diagnose, str(db), "--all", "--json", "--no-write", *extra],
                         capture_output=True, text=True, check=False)
    if out.returncode != 0:
        raise SystemExit(f"diagnose failed ({out.returncode}): {out.stderr.strip()}")
    return json.loads(out.stdout)


def _named(fault_type: Any) -> str | None:
    value = str(fault_type or "").strip().lower()
    return None if value in CLEAN else value


def _interval(hits: list[bool], seed: int, n_boot: int) -> tuple[float, float, float]:
    if not hits:
        return (float("nan"),) * 3
    rng = random.Random(seed)
    n = len(hits)
    stats = sorted(sum(hits[rng.randrange(n)] for _ in range(n)) / n for _ in range(n_boot))
    return sum(hits) / n, stats[int(0.025 * n_boot)], stats[min(n_boot - 1, int(0.975 * n_boot))]


def score(labels: list[dict[str, Any]], diagnoses: list[dict[str, Any]], *, seed: int = 0,
          n_boot: int = 2000) -> dict[str, Any]:
    by_task = {str(d.get("task_id")): d for d in diagnoses}
    faulted: list[tuple[dict[str, Any], dict[str, Any] | None]] = []
    blame: dict[str, list[bool]] = defaultdict(list)
    missing = 0
    for row in labels:
        d = by_task.get(str(row["task_id"]))
        category = row.get("category") or ("faulted_failure" if _named(row.get("fault_type")) else "unknown")
        if d is None:
            missing += 1
        if category == "faulted_failure":
            faulted.append((row, d))
        elif category in FALSE_BLAME_CATEGORIES:
            blame[category].append(d is not None and _named(d.get("fault_type")) is not None)
    type_hits, step_hits, joint_hits = [], [], []
    per_label: dict[str, list[bool]] = defaultdict(list)
    per_family: dict[str, list[bool]] = defaultdict(list)
    confusion: Counter[tuple[str, str]] = Counter()
    for row, d in faulted:
        truth = _named(row.get("fault_type"))
        said = _named(d.get("fault_type")) if d else None
        t_ok = said == truth
        s_ok = d is not None and d.get("step") is not None and int(d["step"]) == int(row["step"])
        type_hits.append(t_ok)
        step_hits.append(s_ok)
        joint_hits.append(t_ok and s_ok)
        per_label[str(truth)].append(t_ok)
        per_family[str(row.get("family", "?"))].append(t_ok)
        if not t_ok:
            confusion[(str(truth), said or "none_found")] += 1
    return {
        "faulted_failures": len(faulted),
        "type": _interval(type_hits, seed, n_boot),
        "step": _interval(step_hits, seed + 1, n_boot),
        "joint": _interval(joint_hits, seed + 2, n_boot),
        "false_blame": {c: (sum(v), len(v)) for c, v in blame.items()},
        "per_label": {k: (sum(v), len(v)) for k, v in sorted(per_label.items())},
        "per_family": {k: (sum(v), len(v)) for k, v in sorted(per_family.items())},
        "confusions": [(t, s, n) for (t, s), n in confusion.most_common()],
        "episodes_without_a_verdict": missing,
    }


def render(result: dict[str, Any], title: str) -> str:
    def pct(x: tuple[float, float, float]) -> str:
        return f"{100 * x[0]:.1f}% [{100 * x[1]:.1f}, {100 * x[2]:.1f}]"

    lines = [f"## {title}", "",
             f"Over {result['faulted_failures']} failed episodes with a labelled root cause:", "",
             "| type | step | joint |", "|---|---|---|",
             f"| {pct(result['type'])} | {pct(result['step'])} | {pct(result['joint'])} |", "",
             "False blame (a fault named where the label has none):", "",
             "| category | blamed |", "|---|---|"]
    for c in FALSE_BLAME_CATEGORIES:
        k, n = result["false_blame"].get(c, (0, 0))
        lines.append(f"| {c} | {k} of {n} ({100 * k / n:.1f}%) |" if n else f"| {c} | none in the corpus |")
    lines += ["", "Type accuracy per label:", "", "| label | right |", "|---|---|"]
    lines += [f"| {k} | {a} of {n} |" for k, (a, n) in result["per_label"].items()]
    lines += ["", "Type accuracy per family:", "", "| family | right |", "|---|---|"]
    lines += [f"| {k} | {a} of {n} |" for k, (a, n) in result["per_family"].items()]
    lines += ["", "Most frequent confusions (label → said):", ""]
    lines += [f"- {t} → {s}: {n}" for t, s, n in result["confusions"][:15]]
    if result["episodes_without_a_verdict"]:
        lines += ["", f"{result['episodes_without_a_verdict']} labelled episodes got no verdict."]
    return "\n".join(lines) + "\n"


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--db", type=Path, required=True)
    parser.add_argument("--labels", type=Path, required=True)
    parser.add_argument("--diagnoses", type=Path, help="a saved `diagnose --all --json` output instead of running it")
    parser.add_argument("--diagnose", default=str(Path(sys.executable).with_name("diagnose")),
                        help="the diagnose command to run (default: the one beside this interpreter)")
    parser.add_argument("--title", default="blind round")
    parser.add_argument("--json", action="store_true", help="print the figures as JSON")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)
    diagnoses = (json.loads(args.diagnoses.read_text()) if args.diagnoses
                 else run_diagnose(args.db, args.diagnose))
    result = score(read_jsonl(args.labels), diagnoses, seed=args.seed)
    sys.stdout.write(json.dumps(result, indent=1) + "\n" if args.json else render(result, args.title))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
