"""``agentchaos report DB``: the robustness measures of a campaign's trace file."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Annotated

import typer

from agentchaos_otel.cli.notes import note_spooled


def report_cmd(
    db: Annotated[Path, typer.Argument(help="A traces.duckdb file (or a directory of Parquet spans).",
                                       show_default=False)],
    as_json: Annotated[bool, typer.Option("--json", help="Print the measures as JSON.")] = False,
    html: Annotated[Path | None, typer.Option("--html", help="Write index.html and PNG plots here.")] = None,
    seed: Annotated[int, typer.Option(help="Seed of the bootstrap resampling.")] = 0,
    resamples: Annotated[int, typer.Option(min=1, help="Bootstrap resamples (the study used 2,000-4,000).")]
    = 2000,
    clean: Annotated[str | None, typer.Option(help="Name of the no-fault condition (default: none).",
                                              show_default=False)] = None,
    metrics_port: Annotated[int | None, typer.Option("--metrics-port", min=0, max=65535, show_default=False,
                                                     help="Serve the file's episode and fault counts on "
                                                          "127.0.0.1:PORT/metrics until Prometheus has "
                                                          "collected them.")] = None,
    metrics_otlp: Annotated[bool, typer.Option("--metrics-otlp", help="Push the counts to the OTLP metrics "
                                                                      "endpoint of the OTEL_EXPORTER_OTLP_* "
                                                                      "variables.")] = False,
    metrics_wait: Annotated[float, typer.Option("--metrics-wait", min=0.0, help="Seconds to wait for "
                                                                                "Prometheus to collect the "
                                                                                "counts.")] = 60.0,
) -> None:
    """Robustness measures of the study from the stored traces: tables, JSON or an HTML page."""
    from agentchaos_otel.campaign import report as R
    from agentchaos_otel.campaign.runner import CLEAN
    from agentchaos_otel.terminal import data_console

    corpus = R.load_corpus(db)
    measures = R.build(corpus, seed=seed, resamples=resamples, clean=clean or CLEAN)
    note_spooled(db)
    page = None
    if html is not None:
        from agentchaos_otel.campaign.html import write_html

        page = write_html(measures, html)
    if as_json:
        typer.echo(json.dumps(R.to_json(measures), indent=2, default=str))
    else:
        R.render_terminal(measures, data_console(width=None if sys.stdout.isatty() else 200))
    if page is not None:
        typer.echo(f"wrote {page}", err=as_json)
    if metrics_port is not None or metrics_otlp:
        from agentchaos_otel.metrics_setup import describe, publish_corpus

        published = publish_corpus(corpus, prometheus_port=metrics_port, otlp=metrics_otlp, wait_s=metrics_wait,
                                   on_ready=lambda url: typer.echo(f"serving counts on {url}", err=True))
        typer.echo(describe(published, metrics_wait), err=True)
        if published.failed:
            raise typer.Exit(1)
