"""Peak memory of ``agentchaos traces import`` on a small ``.gz`` that decompresses a hundredfold.

Run: ``python -m benchmarks.bench_import [--quick] [--lines 4000] [--json FILE]``

The file is what a Collector's file exporter writes, gzipped: JSON Lines, one OTLP/JSON request of
50 spans per line (trace ids differ, the rest repeats, so gzip packs it tightly): 4,000 lines are
about 1 MB on disk and 125 MB decompressed, 200,000 spans. The command runs in a fresh process
(``python -m agentchaos_otel.cli.main``-equivalent entry) and its peak resident set size is read
from ``getrusage(RUSAGE_CHILDREN)``; the baseline is a fresh process that imports the same modules
and opens an empty store the same way (the floor no import can go below). The figure is the peak
beside that floor and their ratio; a second row gives the same at three times the lines, to show
the peak does not follow the file.
"""

from __future__ import annotations

import argparse
import gzip
import json
import resource
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

SPANS_PER_LINE = 50
TARGET_RATIO = 4.0  # peak at most 4x the floor process, at both sizes

_IMPORT = ("import sys; sys.argv = ['agentchaos', 'traces', 'import', sys.argv[1], '--db', sys.argv[2]]; "
           "from agentchaos_otel.cli.main import main; main()")
_FLOOR = ("import sys; import agentchaos_otel.cli.main; "
          "from agentchaos_otel.store.importers import trace_files; "
          "from agentchaos_otel.store.database.connect import connect; "
          "c = connect(sys.argv[2], read_only=False); "
          "c.execute(f\"SET memory_limit = '{trace_files.IMPORT_MEMORY}'\"); c.close()")


def _line(i: int) -> str:
    spans = [{"traceId": f"{i:032x}", "spanId": f"{j + 1:016x}", "name": f"chat {j}", "kind": 3,
              "startTimeUnixNano": str(1_700_000_000_000_000_000 + j),
              "endTimeUnixNano": str(1_700_000_000_000_100_000 + j),
              "attributes": [{"key": "gen_ai.operation.name", "value": {"stringValue": "chat"}},
                             {"key": "gen_ai.request.model", "value": {"stringValue": "gpt-x"}},
                             {"key": "attr.pad", "value": {"stringValue": "x" * 200}}],
              "status": {"code": 0}} for j in range(SPANS_PER_LINE)]
    return json.dumps({"resourceSpans": [{
        "resource": {"attributes": [{"key": "service.name", "value": {"stringValue": "bench"}}]},
        "scopeSpans": [{"scope": {"name": "bench"}, "spans": spans}]}]})


def write_file(path: Path, lines: int) -> Path:
    with gzip.open(path, "wt", compresslevel=9) as f:
        for i in range(lines):
            f.write(_line(i) + "\n")
    return path


def _peak_kib(code: str, *args: str) -> int:
    """Peak RSS (KiB) of a fresh Python process running ``code``: getrusage of the children."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    done = subprocess.run([sys.executable, "-c", code, *args], capture_output=True, text=True)
    if done.returncode != 0:
        raise RuntimeError(f"import failed: {done.stderr.strip()[-300:]}")
    after = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    if after <= before:  # ru_maxrss of children is the largest child so far: run the bigger ones later
        raise RuntimeError("peak of this child hidden by an earlier, larger one; run sizes in growing order")
    return after


def measure(lines: int, tmp: Path) -> dict[str, Any]:
    gz = write_file(tmp / f"fleet-{lines}.jsonl.gz", lines)
    peak = _peak_kib(_IMPORT, str(gz), str(tmp / f"import-{lines}.duckdb"))
    return {"lines": lines, "spans": lines * SPANS_PER_LINE, "gz_bytes": gz.stat().st_size, "peak_mib": peak / 1024}


def run(quick: bool = False, *, lines: int | None = None) -> list[dict[str, Any]]:
    """Benchmark rows for ``python -m benchmarks all``: the import's peak beside the floor process."""
    lines = lines or (1000 if quick else 4000)
    rows = []
    with tempfile.TemporaryDirectory(prefix="bench-import-") as tmp:
        floor_mib = _peak_kib(_FLOOR, "", str(Path(tmp) / "floor.duckdb")) / 1024  # smallest child first
        for n in (lines, 3 * lines):
            m = measure(n, Path(tmp))
            ratio = m["peak_mib"] / floor_mib
            rows.append({
                "figure": f"traces import peak RSS, {m['gz_bytes'] / 1e6:.2f} MB .gz of {m['spans']:,} spans",
                "value": round(m["peak_mib"]), "unit": "MiB",
                "baseline": "fresh process with the same modules and an empty store",
                "baseline_value": round(floor_mib), "ratio": round(ratio, 2),
                "target": f"<= {TARGET_RATIO:g}x the floor", "holds": ratio <= TARGET_RATIO})
    return rows


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--lines", type=int)
    ap.add_argument("--json", type=Path)
    args = ap.parse_args()
    rows = run(args.quick, lines=args.lines)
    for r in rows:
        print(f"{r['figure']}: {r['value']} {r['unit']} (floor {r['baseline_value']} {r['unit']}, "
              f"ratio {r['ratio']}, target {r['target']}: {'holds' if r['holds'] else 'does not hold'})")
    if args.json:
        args.json.write_text(json.dumps(rows, indent=1))


if __name__ == "__main__":
    main()
