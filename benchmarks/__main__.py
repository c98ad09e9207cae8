"""``python -m benchmarks all [--quick]``: every benchmark, each figure beside its baseline of the same run.

Writes ``benchmarks/results.json`` (every row, plus the command, machine and load) and
``benchmarks/RESULTS.md`` (a table per benchmark with whether each target holds). Benchmarks are
modules with ``run(quick: bool = False) -> list[dict]`` returning rows with the keys figure,
value, unit, baseline, baseline_value, ratio, target, holds; those not present in this checkout
are listed as skipped. ``python -m benchmarks NAME [NAME ...]`` runs only some and keeps the other
benchmarks' last figures in both files.
"""

from __future__ import annotations

import argparse
import datetime
import importlib
import json
import os
import platform
import shlex
import sys
import time
import traceback
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
# (name, module, what it measures); all run in this order.
BENCHMARKS: tuple[tuple[str, str, str], ...] = (
    ("export", "benchmarks.bench_export", "DuckDB exporter vs a JSON-lines dump of the same spans"),
    ("receiver", "benchmarks.bench_receiver", "OTLP receiver spans/s with 1, 4 and 20 senders"),
    ("analysis", "benchmarks.bench_analysis", "diagnose / features / report at growing episode counts"),
    ("overhead", "benchmarks.bench_overhead", "trace-only per-call overhead against plain httpx and OTel's httpx "
     "instrumentation: raw httpx2 sync and async (p50/p99), then through the openai SDK: sync, async, stream"),
    ("ray", "benchmarks.bench_ray", "Ray campaign speed-up, 1 vs 2 workers"),
    ("import", "benchmarks.bench_import", "traces import peak memory on a 1 MB .gz (125 MB of JSON Lines)"),
    ("mcp", "benchmarks.bench_mcp", "per-call cost of a traced MCP tool call vs the same call untraced"),
    ("root_span", "benchmarks.bench_root_span",
     "cost of a root span without LLM or tool steps under our processors vs the plain SDK"),
)
KEYS = ("figure", "value", "unit", "baseline", "baseline_value", "ratio", "target", "holds")


def _load() -> float | None:
    try:
        return os.getloadavg()[0]
    except OSError:
        return None


def _fmt(v: Any) -> str:
    if v is None:
        return "–"
    if isinstance(v, bool):
        return "yes" if v else "**no**"
    if isinstance(v, float):
        return f"{v:,.3g}" if abs(v) < 1000 else f"{v:,.0f}"
    return str(v)


def run_all(names: list[str], quick: bool) -> dict[str, Any]:
    out: dict[str, Any] = {"benchmarks": {}}
    for name, module, about in BENCHMARKS:
        if names and name not in names:
            continue
        entry: dict[str, Any] = {"module": module, "about": about}
        try:
            mod = importlib.import_module(module)
        except ModuleNotFoundError as exc:
            if exc.name != module:
                raise
            entry["skipped"] = f"{module} is not in this checkout"
            out["benchmarks"][name] = entry
            print(f"== {name}: skipped ({entry['skipped']})")
            continue
        print(f"== {name}: {about}", flush=True)
        load0, t0 = _load(), time.perf_counter()
        try:
            rows = mod.run(quick=quick)
        except Exception as exc:  # one broken benchmark must not lose the others' figures
            entry["error"] = f"{type(exc).__name__}: {exc}"
            traceback.print_exc()
            rows = []
        entry.update(rows=rows, seconds=round(time.perf_counter() - t0, 1), load_before=load0, load_after=_load())
        for r in rows:
            base = ("" if r.get("baseline_value") is None
                    else f" | baseline {_fmt(r['baseline_value'])} ({r['baseline']})")
            ratio = "" if r.get("ratio") is None else f" | {_fmt(r['ratio'])}x"
            holds = "" if r.get("holds") is None else f" | target {r['target']}: {'holds' if r['holds'] else 'MISSED'}"
            print(f"  {r['figure']}: {_fmt(r['value'])} {r['unit']}{base}{ratio}{holds}", flush=True)
        out["benchmarks"][name] = entry
    return out


def markdown(result: dict[str, Any]) -> str:
    meta = result["meta"]
    lines = ["# Benchmark results", "",
             f"Last written by `{meta['command']}` on {meta['date']} ({meta['machine']}, {meta['cpus']} CPUs, "
             f"Python {meta['python']}); each section names the command and time of its own run.", ""]
    if meta.get("note"):
        lines += [meta["note"], ""]
    lines += ["Every figure is measured beside its baseline in the same run; models and episodes are "
              "SIMULATED (loopback simulated model, `benchmarks.corpora.synthetic` episodes), so absolute times say "
              "nothing about real providers. Load average (1 min) before/after each benchmark is given "
              "because the machine may be shared.", ""]
    for name, entry in result["benchmarks"].items():
        lines.append(f"## {name}: {entry['about']}")
        lines.append("")
        if entry.get("skipped"):
            lines += [f"Skipped: {entry['skipped']}.", ""]
            continue
        if entry.get("error"):
            lines += [f"Failed: `{entry['error']}`.", ""]
        lines.append(f"`{entry.get('command', meta['command'])}` ({entry.get('date', meta['date'])}"
                     f"{', quick' if entry.get('quick') else ''}): `{entry['module']}`, {entry['seconds']} s, "
                     f"load {_fmt(entry.get('load_before'))} → {_fmt(entry.get('load_after'))}.")
        lines.append("")
        lines.append("| figure | value | unit | baseline | baseline value | ratio | target | holds |")
        lines.append("|---|---|---|---|---|---|---|---|")
        for r in entry.get("rows", []):
            lines.append("| " + " | ".join(_fmt(r.get(k)) for k in KEYS) + " |")
        lines.append("")
    holds = [r for e in result["benchmarks"].values() for r in e.get("rows", []) if r.get("holds") is not None]
    lines.append(f"Targets: {sum(r['holds'] for r in holds)} of {len(holds)} hold.")
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> None:
    argv = sys.argv[1:] if argv is None else argv
    ap = argparse.ArgumentParser(prog="python -m benchmarks", description=__doc__.splitlines()[0])
    ap.add_argument("names", nargs="+", help="all, or benchmark names: " + ", ".join(n for n, _, _ in BENCHMARKS))
    ap.add_argument("--quick", action="store_true", help="small sizes and few calls: a fast check")
    ap.add_argument("--out", default=str(HERE), help="directory for results.json and RESULTS.md")
    ap.add_argument("--note", default="", help="a line for RESULTS.md (e.g. that the machine was shared)")
    args = ap.parse_args(argv)
    names = [] if args.names == ["all"] else args.names
    unknown = sorted(set(names) - {n for n, _, _ in BENCHMARKS})
    if unknown:
        ap.error(f"unknown benchmark(s): {', '.join(unknown)}")
    command = "python -m benchmarks " + shlex.join(argv)
    now = datetime.datetime.now(datetime.UTC).strftime("%Y-%m-%d %H:%M UTC")
    result = run_all(names, args.quick)
    for entry in result["benchmarks"].values():
        entry.update(command=command, date=now, quick=args.quick)
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    previous = out / "results.json"
    if names and previous.exists():  # a partial run updates its benchmarks and keeps the others
        kept = json.loads(previous.read_text()).get("benchmarks", {})
        result["benchmarks"] = {n: result["benchmarks"].get(n, kept.get(n)) for n, _, _ in BENCHMARKS
                                if n in result["benchmarks"] or n in kept}
    result["meta"] = {
        "command": command, "date": now,
        "machine": f"{platform.system()} {platform.machine()}", "cpus": os.cpu_count(),
        "python": platform.python_version(), "quick": args.quick, "note": args.note,
    }
    (out / "results.json").write_text(json.dumps(result, indent=2, default=str))
    (out / "RESULTS.md").write_text(markdown(result))
    print(f"wrote {out / 'results.json'} and {out / 'RESULTS.md'}")


if __name__ == "__main__":
    main()
