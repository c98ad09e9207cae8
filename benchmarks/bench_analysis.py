"""Analysis over growing trace files: diagnose, feature extraction and report at 1k, 10k, 100k episodes.

Run: ``python -m benchmarks.bench_analysis [--quick] [--sizes 1000,10000,100000] [--json OUT]``

Each job is its own process, timed by wall clock, with its peak resident memory read from the
kernel (``os.wait4`` rusage, ``ru_maxrss``). Linux counts the memory of the process that forked a
job in the job's peak, and the driver may be large (``python -m benchmarks all`` runs the export
and receiver benchmarks in it first), so every job is started and measured by a fresh launcher
process (``--measure``), whose own peak is the floor of every figure (``launcher_rss_mb``):

- ``diagnose``: ``agentchaos diagnose FILE --no-write --json`` (rule-based, failed episodes; as the
  command runs by default, one process per core, and the CPU time counts all of them);
- ``features``: ``agentchaos predict features FILE --features both --out ...parquet`` (step-prefix
  feature rows of every episode, written to Parquet; one process per core, as by default);
- ``report``: ``agentchaos report FILE --json --resamples 200`` (200 bootstrap resamples instead
  of 2,000: the regression bootstrap's cost is resamples x episodes, and is not loading);
- baseline, in the same run on the same file: every column of every span read into Python by
  DuckDB ``fetchall`` (``benchmarks.analysis_jobs baseline``).

Files are SIMULATED episodes built by ``benchmarks.analysis_corpus`` (real exporter for a pool,
grown in SQL) and cached under the temp directory. Linearity is judged on time per episode at
the largest size against the middle one.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

FULL_SIZES = (1_000, 10_000, 100_000)
QUICK_SIZES = (1_000, 4_000)
REPORT_RESAMPLES = 200
TARGET_10K_S = 10.0  # each of diagnose, features and report at 10k episodes (issue 12)
LINEAR_SLACK = 1.5  # time per episode may grow by this factor from the middle to the largest size
CACHE = Path(tempfile.gettempdir()) / "agentchaos-bench-analysis"


def _commands(path: Path) -> dict[str, list[str]]:
    py = sys.executable
    return {
        "baseline": [py, "-m", "benchmarks.analysis_jobs", "baseline", str(path)],
        "diagnose": [py, "-m", "agentchaos_otel.cli", "diagnose", str(path), "--no-write", "--json"],
        "features": [py, "-m", "agentchaos_otel.cli", "predict", "features", str(path), "--features", "both",
                     "--out", str(path.with_suffix(".features.parquet"))],
        "report": [py, "-m", "agentchaos_otel.cli", "report", str(path), "--json",
                   "--resamples", str(REPORT_RESAMPLES)],
    }


def measured(cmd: list[str]) -> dict[str, float]:
    """``measure(cmd)``, run by a fresh launcher process so that the driver's size stays out of it."""
    out = subprocess.run([sys.executable, "-m", "benchmarks.bench_analysis", "--measure", json.dumps(cmd)],
                         check=True, capture_output=True, text=True, cwd=Path(__file__).resolve().parent.parent)
    return json.loads(out.stdout.strip().splitlines()[-1])


def measure(cmd: list[str]) -> dict[str, float]:
    """Wall seconds, CPU seconds and peak RSS (MB) of one command run to completion, and this
    process's own peak RSS (the floor the kernel includes in the command's)."""
    t0 = time.perf_counter()
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                            cwd=Path(__file__).resolve().parent.parent)
    _, status, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - t0
    err = proc.stderr.read().decode(errors="replace") if proc.stderr else ""
    proc.returncode = os.waitstatus_to_exitcode(status)
    if proc.returncode != 0:
        raise RuntimeError(f"{' '.join(cmd)} exited {proc.returncode}: {err.strip()[-500:]}")
    return {"seconds": wall, "cpu_seconds": usage.ru_utime + usage.ru_stime, "rss_mb": usage.ru_maxrss / 1024,
            "launcher_rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024}


def _row(figure: str, value: float, unit: str, baseline: str, baseline_value: float | None,
         target: str, holds: bool | None, **extra: Any) -> dict[str, Any]:
    ratio = value / baseline_value if baseline_value else None
    return {"figure": figure, "value": round(value, 3), "unit": unit, "baseline": baseline,
            "baseline_value": None if baseline_value is None else round(baseline_value, 3),
            "ratio": None if ratio is None else round(ratio, 2), "target": target, "holds": holds, **extra}


def _label(n: int) -> str:
    return f"{n // 1000}k" if n % 1000 == 0 else str(n)


def run(quick: bool = False, sizes: tuple[int, ...] | None = None, cache: Path = CACHE) -> list[dict[str, Any]]:
    sizes = sizes or (QUICK_SIZES if quick else FULL_SIZES)
    results: dict[int, dict[str, dict[str, float]]] = {}
    rows: list[dict[str, Any]] = []
    for n in sizes:
        code = ("from pathlib import Path; from benchmarks.analysis_corpus import build; "
                f"build(Path({str(cache)!r}), {n})")
        subprocess.run([sys.executable, "-c", code], check=True, cwd=Path(__file__).resolve().parent.parent)
        path = cache / f"episodes_{n}.duckdb"
        results[n] = {job: measured(cmd) for job, cmd in _commands(path).items()}
        base = results[n]["baseline"]
        for job in ("diagnose", "features", "report"):
            m = results[n][job]
            target, holds = "linear in episodes", None
            if n == 10_000:
                target, holds = f"< {TARGET_10K_S:.0f} s", m["seconds"] < TARGET_10K_S
            note = f" ({REPORT_RESAMPLES} resamples)" if job == "report" else ""
            rows.append(_row(f"{job}{note}, {_label(n)} episodes: time", m["seconds"], "s",
                             "read every span via DuckDB fetchall", base["seconds"], target, holds,
                             cpu_seconds=round(m["cpu_seconds"], 2), episodes=n, simulated=True,
                             launcher_rss_mb=round(m["launcher_rss_mb"])))
            rows.append(_row(f"{job}{note}, {_label(n)} episodes: peak RSS", m["rss_mb"], "MB",
                             "read every span via DuckDB fetchall", base["rss_mb"], "bounded / linear", None,
                             episodes=n, simulated=True))
    if len(sizes) >= 2:
        small, large = sorted(sizes)[-2:]
        for job in ("baseline", "diagnose", "features", "report"):
            per_small = results[small][job]["cpu_seconds"] / small
            per_large = results[large][job]["cpu_seconds"] / large
            growth = per_large / per_small
            # The baseline is not ours to hold linear: its growth is shown for comparison only.
            target, holds = ((f"<= {LINEAR_SLACK} (linear)", growth <= LINEAR_SLACK) if job != "baseline"
                             else ("informational: the baseline holds every span in memory at once", None))
            rows.append(_row(f"{job}: CPU time per episode, {_label(large)} vs {_label(small)}", growth,
                             "x", f"{_label(small)} episodes, same job", 1.0, target, holds, simulated=True))
    return rows


def print_rows(rows: list[dict[str, Any]]) -> None:
    for r in rows:
        base = "" if r["baseline_value"] is None else f"   baseline {r['baseline_value']} ({r['baseline']})"
        ratio = "" if r["ratio"] is None else f"   ratio {r['ratio']}x"
        holds = "" if r["holds"] is None else f"   target {r['target']}: {'holds' if r['holds'] else 'MISSED'}"
        print(f"{r['figure']}: {r['value']} {r['unit']}{base}{ratio}{holds}")


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help=f"sizes {QUICK_SIZES} instead of {FULL_SIZES}")
    ap.add_argument("--sizes", default=None, help="comma list of episode counts")
    ap.add_argument("--json", default=None, help="also write the rows here")
    ap.add_argument("--measure", default=None, metavar="JSON_COMMAND",
                    help="(internal) run one command given as a JSON list and print its measures as JSON")
    args = ap.parse_args(argv)
    if args.measure:
        print(json.dumps(measure(json.loads(args.measure))))
        return
    sizes = tuple(int(s) for s in args.sizes.split(",")) if args.sizes else None
    print("SIMULATED episodes (benchmarks.corpora.synthetic); times are wall clock on this machine")
    rows = run(args.quick, sizes)
    print_rows(rows)
    if args.json:
        Path(args.json).write_text(json.dumps(rows, indent=2))


if __name__ == "__main__":
    main()
