"""The pictures in docs/: Phoenix showing the verdicts of a demo file, and the HTML report of a campaign.

    python -m benchmarks.integration.screenshots [--out docs/images] [--phoenix-python PATH]

Needs an arize-phoenix environment (``.phoenix-venv``, see ``phoenix_server.py``) and a headless
Chromium (Debian: ``apt-get install chromium``). Everything runs on loopback against the bundled
SIMULATED model, seeded, so the pictures show what a reader gets from the same commands:

- ``phoenix-traces.png``: Phoenix's trace list of project ``agentchaos-demo`` after ``agentchaos
  demo``, ``diagnose`` and ``agentchaos traces export --project agentchaos-demo``: the verdict
  leads each failed root's status ("error" column) and the rule diagnosis is a span annotation;
- ``phoenix-span.png``: one blamed span in Phoenix, with its annotation;
- ``report.png`` and ``report-figure.png``: the top of ``agentchaos report --html`` for a 20-task
  campaign of the tool conditions (``none,independent,bursty,persistent,once``), and the page's
  retry and abandonment figure as it wrote it.
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

from rich.console import Console

from agentchaos_otel import attributes as A
from benchmarks.integration.phoenix_server import REPO, PhoenixServer, phoenix_python

PROJECT = "agentchaos-demo"


def chromium() -> str | None:
    for name in ("chromium", "chromium-browser", "google-chrome"):
        if found := shutil.which(name):
            return found
    return None


def screenshot(browser: str, url: str, out: Path, *, width: int, height: int, profile: Path) -> Path:
    """A headless Chromium picture of ``url`` (scripts run until the virtual-time budget is spent)."""
    out.parent.mkdir(parents=True, exist_ok=True)
    subprocess.run([browser, "--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
                    "--disable-component-update", "--no-first-run", "--hide-scrollbars", f"--user-data-dir={profile}",
                    f"--window-size={width},{height}", "--virtual-time-budget=15000", f"--screenshot={out}", url],
                   check=True, capture_output=True, timeout=180)
    return out


def _agentchaos(*args: str) -> None:
    done = subprocess.run([sys.executable, "-m", "agentchaos_otel.cli", *args], capture_output=True, text=True,
                          timeout=1200)
    if done.returncode != 0:
        raise SystemExit(f"agentchaos {' '.join(args)} failed: {done.stderr.strip()[-500:]}")


def main() -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n")[0])
    parser.add_argument("--out", type=Path, default=REPO / "docs" / "images")
    parser.add_argument("--phoenix-python", default=phoenix_python())
    args = parser.parse_args()
    browser = chromium()
    if browser is None or not args.phoenix_python:
        parser.error("needs a headless Chromium and an arize-phoenix environment (.phoenix-venv)")
    console = Console()
    for key in [k for k in os.environ if k.startswith("OTEL_")]:
        del os.environ[key]
    os.environ[A.CAPTURE_CONTENT_ENV] = "true"
    work = Path(tempfile.mkdtemp(prefix="agentchaos-screenshots-"))
    try:
        demo, campaign = work / "demo.duckdb", work / "campaign.duckdb"
        _agentchaos("demo", "--db", str(demo), "--episodes", "16", "--seed", "0")
        _agentchaos("diagnose", str(demo))
        with PhoenixServer(args.phoenix_python, work / "phoenix") as server:
            from agentchaos_otel.phoenix import PhoenixClient
            from agentchaos_otel.traces_export import export_file

            for line in export_file(demo, endpoint=server.url, project=PROJECT):
                console.print(line, markup=False)
            with PhoenixClient(server.url) as px:
                project_id = px.projects()[PROJECT]
                blamed = [a["span_id"] for a in px.span_annotations(PROJECT, [s["context"]["span_id"] for s in
                                                                              px.spans(PROJECT)])
                          if a["identifier"] == "agentchaos:rule:blamed"]
            traces = screenshot(browser, f"{server.url}/projects/{project_id}/traces", args.out / "phoenix-traces.png",
                                width=2400, height=1000, profile=work / "chrome-1")
            span = screenshot(browser, f"{server.url}/redirects/spans/{sorted(blamed)[0]}",
                              args.out / "phoenix-span.png", width=1800, height=1000, profile=work / "chrome-2")
        _agentchaos("campaign", "run", "--tasks", "20", "--conditions", "none,independent,bursty,persistent,once",
                    "--db", str(campaign), "--no-progress", "--workers", "2")
        _agentchaos("report", str(campaign), "--html", str(work / "report"))
        page = (work / "report" / "index.html").as_uri()
        report = screenshot(browser, page, args.out / "report.png", width=1200, height=1300,
                            profile=work / "chrome-3")
        figure = Path(shutil.copyfile(work / "report" / "retry_abandonment.png", args.out / "report-figure.png"))
        for path in (traces, span, report, figure):
            console.print(f"wrote {path} ({path.stat().st_size // 1024} KB)", markup=False)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
