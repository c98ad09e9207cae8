from __future__ import annotations

import json
import re
from dataclasses import replace
from pathlib import Path

import pytest
from matplotlib.axes import Axes
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.colors import to_hex
from matplotlib.figure import Figure
from matplotlib.text import Text
from rich.console import Console

from agentchaos_otel import published as P
from agentchaos_otel.campaign import html as H
from agentchaos_otel.campaign import plots
from agentchaos_otel.campaign import report as R
from agentchaos_otel.campaign.measures import StudyMeasures
from agentchaos_otel.records import EpisodeTrace
from tests.agentchaos_otel.campaign.test_report_corpus import episode, llm, synthetic_study, tool
from tests.support import REPO

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


def _legend(ax: Axes) -> list[str]:
    legend = ax.get_legend()
    return [t.get_text() for t in legend.get_texts()] if legend is not None else []


def test_every_plot_of_a_simulated_corpus_says_simulated(simulated: StudyMeasures) -> None:
    for name, build in plots.FIGURES.items():
        fig = build(simulated)
        assert fig is not None, name
        assert fig.get_suptitle().startswith("SIMULATED"), name
        for ax in fig.axes:
            legend = _legend(ax)
            assert "measured: SIMULATED model" in legend, (name, legend)
            assert any(t.startswith("published") for t in legend), (name, legend)  # compared on this axis


def _colors(ax: Axes) -> set[str]:
    found = {to_hex(p.get_facecolor()) for p in ax.patches}
    found |= {to_hex(line.get_color()) for line in ax.get_lines()}
    return found


def test_measured_and_published_share_one_axis_and_one_row_order(simulated: StudyMeasures) -> None:
    for name, build in plots.FIGURES.items():
        fig = build(simulated)
        assert fig is not None
        for ax in fig.axes:  # both sources drawn in the same axes: one scale by construction
            assert {plots.MEASURED_COLOR, plots.PUBLISHED_COLOR} <= _colors(ax), name
    fig = plots.retry_and_abandonment(simulated)
    assert fig is not None
    retry, abandon = ([t.get_text().split("\n")[0] for t in ax.get_xticklabels()] for ax in fig.axes)
    shared = [t for t in retry if t in abandon]
    assert shared == [t for t in abandon if t in retry] and len(shared) >= 2  # one fault-type order
    assert retry[-1] == "unfaulted" and abandon[-1] == "clean"  # the references last in both
    fig = plots.contributions(simulated)
    assert fig is not None
    rows = [t.get_text().split("\n")[0] for t in fig.axes[0].get_yticklabels()]  # as set: top row first
    published = [t for t in P.TYPE_CONTRIBUTION]
    assert [r for r in rows if r in published] == [t for t in published if t in rows]


def _overlaps(fig: Figure) -> list[tuple[str, str]]:
    """Pairs of visible, non-empty texts whose drawn boxes intersect (the renderer's own extents)."""
    canvas = FigureCanvasAgg(fig)
    canvas.draw()
    renderer = canvas.get_renderer()
    texts = [t for t in fig.findobj(Text) if t.get_visible() and t.get_text().strip()]
    boxes = [(t.get_text(), t.get_window_extent(renderer)) for t in texts]
    return [(a, b) for i, (a, box_a) in enumerate(boxes) for b, box_b in boxes[i + 1:]
            if box_a.x0 < box_b.x1 - 1 and box_b.x0 < box_a.x1 - 1 and box_a.y0 < box_b.y1 - 1
            and box_b.y0 < box_a.y1 - 1]


@pytest.fixture(scope="module")
def wide() -> StudyMeasures:
    """66 conditions with the catalog's names (the widest report a campaign makes), plus two `$` names."""
    from agentchaos_otel.faults.catalog import agentchaos_names

    base = synthetic_study(n_tasks=6, simulated=True)
    names = [*agentchaos_names(), r"$\undefined$", "cost $5 or $10"]
    faulted = [e for e in base if e.condition == "independent"]
    eps = [e for e in base if e.condition == "none"]
    eps += [replace(e, condition=c) for c in names for e in faulted]
    return R.build(eps, resamples=20)


@pytest.mark.parametrize("corpus", ["simulated", "wide"])
def test_no_two_labels_of_a_figure_overlap(corpus: str, request: pytest.FixtureRequest) -> None:
    m = request.getfixturevalue(corpus)
    for name, build in plots.FIGURES.items():
        fig = build(m)
        if fig is not None:
            assert not _overlaps(fig), (name, _overlaps(fig)[:3])


def test_condition_names_are_text_never_mathtext(tmp_path: Path, wide: StudyMeasures) -> None:
    H.write_html(wide, tmp_path / "h")  # `$\undefined$` read as mathtext fails to draw
    fig = plots.success_by_condition(wide)
    assert fig is not None
    labels = [t.get_text().split("\n")[0] for t in fig.axes[0].get_xticklabels()]
    assert r"\$\undefined\$" in labels and r"cost \$5 or \$10" in labels
    assert (tmp_path / "h" / "success_by_condition.png").read_bytes()[:8] == PNG_MAGIC


def test_empty_tables_are_said_in_words(tmp_path: Path, measured: StudyMeasures) -> None:
    assert not measured.crashes
    html = H.write_html(measured, tmp_path / "h").read_text()
    assert "No episode crashed." in html
    for table in re.findall(r"<table>.*?</table>", html, flags=re.S):
        assert "<td>" in table  # no table is only a header


def test_the_page_names_no_file_outside_the_repository(tmp_path: Path, simulated: StudyMeasures) -> None:
    html = H.write_html(simulated, tmp_path / "h").read_text()
    for ref in set(re.findall(r"[\w./-]+\.(?:md|py|json|toml|txt)\b", html)):
        assert (REPO / ref).exists(), ref


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
    with pytest.raises(R.ReportError, match="no such file"):
        R.load_corpus(tmp_path / "nope.duckdb")
    junk = tmp_path / "junk.duckdb"
    junk.write_bytes(b"not a database at all" * 100)
    with pytest.raises(R.ReportError) as err:
        R.load_corpus(junk)
    assert "\n" not in str(err.value)
    with pytest.raises(R.ReportError, match="no Parquet span files"):  # as every reader words it
        R.load_corpus(tmp_path)


def test_html_refuses_a_file_as_output_directory(tmp_path: Path, measured: StudyMeasures) -> None:
    f = tmp_path / "file"
    f.write_text("x")
    with pytest.raises(R.ReportError):
        H.write_html(measured, f)
