"""``agentchaos bfcl``: task listing and one-line errors; episodes are run by ``campaign run``."""

from __future__ import annotations

import json

import pytest
from typer.testing import CliRunner

from agentchaos_otel.agents.bfcl import UNAVAILABLE_REASON, bfcl_available
from agentchaos_otel.cli.bfcl import app

pytestmark = pytest.mark.skipif(not bfcl_available(), reason=UNAVAILABLE_REASON)

runner = CliRunner()


def test_tasks_lists_all_200() -> None:
    res = runner.invoke(app, ["tasks", "--json"])
    assert res.exit_code == 0, res.output
    rows = json.loads(res.output)
    assert len(rows) == 200 and rows[0]["id"] == "multi_turn_base_0"
    assert rows[0]["turns"] >= 1 and rows[0]["ground_truth_calls"] >= 1 and rows[0]["classes"]
    res = runner.invoke(app, ["tasks", "--tasks", "3-4"])
    assert res.exit_code == 0 and res.output.strip().endswith("2 tasks")
    assert [line.split("\t")[0] for line in res.output.strip().splitlines()[:2]] == ["multi_turn_base_3",
                                                                                    "multi_turn_base_4"]


def test_unknown_task_is_a_one_line_error() -> None:
    res = runner.invoke(app, ["tasks", "--tasks", "nope"])
    assert res.exit_code == 1
    assert "unknown BFCL task" in res.output and "Traceback" not in res.output
    assert len(res.output.strip().splitlines()) == 1


def test_run_is_gone_in_favour_of_campaign_run() -> None:
    """``bfcl run`` duplicated ``campaign run --agent bfcl``; only the listing stays here."""
    res = runner.invoke(app, ["run", "--tasks", "1"])
    assert res.exit_code != 0 and "No such command" in res.output
    help_text = runner.invoke(app, ["--help"]).output
    assert "tasks" in help_text and "campaign" in help_text
