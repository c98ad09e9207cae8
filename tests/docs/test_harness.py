"""The docs harness itself can fail: it reads the commands a reader would type, keeps one shell's
state between them, and refuses set-up steps and benchmark runs that are not what they claim."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.support import REPO
from tests.support.doc_commands import Block, commands_of, parts
from tests.support.doc_setup import check, kind
from tests.support.page_shell import PageShell

PAGE = REPO / "README.md"


def test_a_block_gives_its_commands_with_continuations_joined_and_comments_left_out() -> None:
    block = Block("bash", 10, ("# set up", "a --x 1 \\", "    --y 2", "", "b && c  # why"))
    found = commands_of(block, PAGE)
    assert [(c.line, c.text) for c in found] == [(11, "a --x 1 --y 2"), (14, "b && c  # why")]
    assert [p.words for p in parts(found[1].text)] == [("b",), ("c",)]


def test_leading_assignments_are_told_from_the_program() -> None:
    (part,) = parts("AGENTCHAOS_PLAN=bursty AGENTCHAOS_SEED=7 opentelemetry-instrument python agent.py")
    assert part.assignments == ("AGENTCHAOS_PLAN=bursty", "AGENTCHAOS_SEED=7")
    assert part.words[0] == "opentelemetry-instrument"


def test_the_shell_keeps_exports_reports_failures_and_sees_background_jobs(tmp_path: Path) -> None:
    with PageShell(tmp_path, {"PATH": "/usr/bin:/bin"}) as shell:
        assert shell.run("export GREETING=hello", 30).returncode == 0
        assert shell.run('echo "$GREETING"', 30).output.strip() == "hello"
        assert shell.run("false", 30).returncode == 1
        assert shell.run("sleep 60 &", 30).returncode == 0
        assert shell.run("jobs -p", 30).output.strip() != ""
        assert shell.run("sleep 5", 0.5).returncode is None


@pytest.mark.parametrize("line", [
    "pip install requests",
    'pip install "agentchaos-otel[no-such-extra]"',
    "pip install -c no-such-constraints.txt -e .",
    "python -m benchmarks all --no-such-option",
    "python -m benchmarks no_such_benchmark",
    "python -m benchmarks.no_such_module --quick",
    "python tests/support/resolution.py --no-such-option",
])
def test_a_set_up_step_or_benchmark_that_is_not_what_it_claims_fails(line: str) -> None:
    (part,) = parts(line)
    assert kind(part) is not None
    with pytest.raises(AssertionError):
        check(part)


@pytest.mark.parametrize("line", [
    'pip install -q -c constraints.txt -e ".[dev]"',
    "python -m benchmarks all --quick",
    "python -m benchmarks.bench_overhead --calls 300 --rounds 3",
])
def test_a_set_up_step_or_benchmark_as_the_pages_show_it_passes(line: str) -> None:
    (part,) = parts(line)
    check(part)
