from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from matplotlib.figure import Figure
from rich.console import Console

from agentchaos_otel.campaign import html as H
from agentchaos_otel.campaign import plots
from agentchaos_otel.campaign import report as R
from agentchaos_otel.campaign.measures import StudyMeasures
from agentchaos_otel.records import EpisodeTrace
from tests.agentchaos_otel.campaign.test_report_corpus import episode, llm, synthetic_study, tool

PNG_MAGIC = b"\x89PNG\r\n\x1a\n"


@pytest.fixture(scope="module")
def simulated() -> StudyMeasures:
    return R.build(synthetic_study(n_tasks=30, simulated=True), resamples=100)


@pytest.fixture(scope="module")
def measured() -> StudyMeasures:
    return R.build(synthetic_study(n_tasks=30), resamples=100)


def _render(m: StudyMeasures) -> str:
    console = Console(record=True, width=250)
    R.render_terminal(m, console)
    return console.export_text()


def _titles(fig: Figure) -> list[str]:
    return [fig.get_suptitle()] + [ax.get_title() for ax in fig.axes]


def test_every_terminal_table_of_a_simulated_corpus_says_simulated(simulated: StudyMeasures) -> None:
    text = _render(simulated)
    flat = " ".join(text.split())  # titles may wrap to the table's width
    for heading in ("Success by condition", "Per-type contribution", "Retry within 3 moves",
                    "Measured burst structure"):
        assert re.search(re.escape(heading) + r"[^┏]*— SIMULATED ┏", flat), heading
    assert "29.5%" in text and "-14.5 [-24.3, -7.5]" in text  # published figures sit alongside


def test_real_corpus_is_not_labelled_simulated(measured: StudyMeasures) -> None:
    assert "SIMULATED" not in _render(measured)
    assert R.to_json(measured)["label"] == "measured"


def test_every_plot_of_a_simulated_corpus_says_simulated(simulated: StudyMeasures) -> None:
    for name, build in plots.FIGURES.items():
        fig = build(simulated)
        assert fig is not None, name
        titles = _titles(fig)
        assert titles[0].startswith("SIMULATED"), (name, titles)
        measured_panels = [t for t in titles[1:] if "published" not in t]
        assert measured_panels and all("SIMULATED" in t for t in measured_panels), (name, titles)
        assert any("published" in t for t in titles[1:]), name  # the published figure is next to it


def test_json_carries_measures_and_published_figures(simulated: StudyMeasures) -> None:
    data = json.loads(json.dumps(R.to_json(simulated)))
    assert data["label"] == "SIMULATED" and data["simulated"] is True
    assert set(data["conditions"]) == {"none", "independent", "bursty"}
    assert data["paired"]["bursty"]["difference"]["value"] < 0
    assert data["published"]["type_contribution"]["rate_limit"]["value"] == -14.5
    assert data["published"]["retry_rate"]["unfaulted"]["value"] == 4.7


def test_html_page_with_plots(tmp_path: Path, simulated: StudyMeasures) -> None:
    page = H.write_html(simulated, tmp_path / "out")
    html = page.read_text()
    assert "SIMULATED" in html and html.count("<img") == len(plots.FIGURES)
    for name in plots.FIGURES:
        png = tmp_path / "out" / f"{name}.png"
        assert png.read_bytes()[:8] == PNG_MAGIC
        assert f"src='{name}.png'" in html


def test_html_escapes_trace_content(tmp_path: Path) -> None:
    eps = [episode("<script>alert(1)</script>", "none", 0, None, [llm(0)], error="<b>boom</b>"),
           episode("t2", "bursty", 0, False, [llm(), tool(fault="timeout"), llm(0)])]
    html = H.write_html(R.build(eps, resamples=20), tmp_path).read_text()
    assert "<script>alert" not in html and "&lt;script&gt;" in html
    assert "<b>boom" not in html


@pytest.mark.parametrize("corpus", [
    [],
    [episode("t", "none", 0, True, [llm(0)])],
    [episode("t", "bursty", 0, True, [llm(), tool(), llm(0)])],
    [episode("t", "bursty", 0, None, [llm(0)])],
])
def test_degenerate_corpora_give_messages_not_crashes(tmp_path: Path, corpus: list[EpisodeTrace]) -> None:
    m = R.build(corpus, resamples=20)
    assert m.warnings
    text = _render(m)
    assert "note:" in text
    page = H.write_html(m, tmp_path / "h").read_text()
    assert "note:" in page
    json.dumps(R.to_json(m))


def test_missing_and_foreign_files_raise_one_line_errors(tmp_path: Path) -> None:
    with pytest.raises(R.ReportError, match="no such trace file"):
        R.load_corpus(tmp_path / "nope.duckdb")
    junk = tmp_path / "junk.duckdb"
    junk.write_bytes(b"not a database at all" * 100)
    with pytest.raises(R.ReportError) as err:
        R.load_corpus(junk)
    assert "\n" not in str(err.value)
    with pytest.raises(R.ReportError, match="directory"):
        R.load_corpus(tmp_path)


def test_html_refuses_a_file_as_output_directory(tmp_path: Path, measured: StudyMeasures) -> None:
    f = tmp_path / "file"
    f.write_text("x")
    with pytest.raises(R.ReportError):
        H.write_html(measured, f)
