from __future__ import annotations

from agentchaos_otel.campaign.sanity import Check, SanityReport, run_sanity

TOOL_CONDITIONS = ["none", "independent", "bursty", "persistent"]


def test_tool_conditions_pass_every_check() -> None:
    report = run_sanity(TOOL_CONDITIONS, seed=0)
    assert report.ok, report.failures
    names = [c.name for c in report.checks]
    assert "tool schedule: rate 1 faults every step" in names
    assert "tool schedule: rate 0 faults no step" in names
    for cond in ("independent", "bursty", "persistent"):
        assert f"tool schedule '{cond}': equal seeds give identical fault logs" in names
    rate_one = next(c for c in report.checks if c.name.startswith("tool schedule: rate 1"))
    assert rate_one.detail.startswith("60/60")


def test_llm_plans_pass_every_check_including_positional_ones() -> None:
    report = run_sanity(["none", "llm_error_single", "tool_truncate_burst", "llm_timeout_pos_late",
                         "compound_stale_cache"], seed=3)
    assert report.ok, report.failures
    names = [c.name for c in report.checks]
    for plan in ("llm_error_single", "tool_truncate_burst", "llm_timeout_pos_late"):
        assert f"LLM plan '{plan}': probability 1 faults every eligible call" in names
        assert f"LLM plan '{plan}': probability 0 faults no call" in names
        assert f"LLM plan '{plan}': equal seeds give identical fault logs" in names
    assert "LLM scheduler: a different seed changes intermittent firings" in names
    every = next(c for c in report.checks if c.name.startswith("LLM plan 'llm_error_single': probability 1"))
    assert every.detail.startswith("60/60")


def test_tool_only_campaign_still_probes_the_llm_scheduler() -> None:
    report = run_sanity(["none", "bursty"])
    assert any(c.name.startswith("LLM plan 'llm_error_intermittent'") for c in report.checks)


def test_unknown_plan_is_a_failed_check_not_an_exception() -> None:
    report = run_sanity(["none", "llm_eror_single"])
    assert not report.ok
    assert report.failures[0].name == "LLM plan 'llm_eror_single': resolves"
    assert "llm_error_single" in report.failures[0].detail  # the catalog's suggestion


def test_a_check_that_raises_or_returns_false_fails_the_report() -> None:
    report = SanityReport()
    report.add("fine", lambda: (True, "ok"))
    assert report.ok

    def broken() -> tuple[bool, str]:
        raise ZeroDivisionError("division by zero")

    report.add("broken", broken)
    report.add("wrong", lambda: (False, "3/60 steps faulted"))
    assert not report.ok
    assert report.failures == [Check("broken", False, "ZeroDivisionError: division by zero"),
                               Check("wrong", False, "3/60 steps faulted")]


def test_once_conditions_pass_their_checks() -> None:
    from agentchaos_otel.plans.schedule import ONCE_CONDITIONS

    report = run_sanity(["none", *ONCE_CONDITIONS], seed=0)
    assert report.ok, report.failures
    names = [c.name for c in report.checks]
    for cond in ONCE_CONDITIONS:
        assert f"tool schedule '{cond}': equal seeds give identical fault logs" in names
        assert f"tool injector '{cond}': equal seeds give identical fault logs" in names
        once = next(c for c in report.checks if c.name.startswith(f"tool schedule '{cond}': one fault"))
        assert once.detail.startswith(f"one {cond.removeprefix('once_')} per episode at steps")
    # Tool-only conditions: no LLM plan is mistaken for one of them.
    assert not any(c.name.startswith("LLM plan 'once_") for c in report.checks)


def test_once_check_fails_a_schedule_that_is_not_single_fault() -> None:
    from agentchaos_otel.campaign.sanity import _once_check

    assert _once_check("once_empty", 0)[0]
    passed, detail = _once_check("persistent", 0)  # faults every step from its start: not "once"
    assert not passed and "expected one" in detail
