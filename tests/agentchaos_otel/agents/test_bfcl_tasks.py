"""BFCL task loading, tool schemas, call strings and fresh API instances."""

from __future__ import annotations

import pytest

from agentchaos_otel.agents.bfcl import UNAVAILABLE_REASON, bfcl_available

pytestmark = pytest.mark.skipif(not bfcl_available(), reason=UNAVAILABLE_REASON)

if bfcl_available():
    from agentchaos_otel.agents.bfcl.env import BfclEnv, render_result
    from agentchaos_otel.agents.bfcl.grade import cached_instance_count, grade
    from agentchaos_otel.agents.bfcl.tasks import (
        PYTHON_HINT,
        BfclTask,
        call_string,
        get_task,
        load_tasks,
        parse_call,
        resolve_task_ids,
        to_openai_tools,
    )


def test_all_200_base_tasks_load_with_answers_and_tools() -> None:
    tasks = load_tasks()
    assert len(tasks) == 200
    assert len({t.id for t in tasks}) == 200
    for task in tasks:
        assert task.n_turns == len(task.ground_truth) >= 1
        assert task.involved_classes
        names = [t["function"]["name"] for t in task.tools_at(0)]
        assert len(names) == len(set(names)) > 0
    assert sum(len(turn) for t in tasks for turn in t.ground_truth) == 1142


def test_tools_follow_bfcl_openai_conversion() -> None:
    task = get_task("multi_turn_base_0")
    tools = {t["function"]["name"]: t["function"] for t in task.tools_at(0)}
    assert all(t["type"] == "function" for t in task.tools_at(0))
    cd = tools["cd"]
    assert cd["description"].endswith(PYTHON_HINT)
    assert cd["parameters"]["type"] == "object"  # BFCL's "dict" root becomes "object"
    assert cd["parameters"]["properties"]["folder"]["type"] == "string"
    # Floats become numbers with a format and a hint, as BFCL's _cast_to_openai_type does.
    trading = {t["function"]["name"]: t["function"] for t in get_task("multi_turn_base_100").tools_at(0)}
    floats = [p for f in trading.values() for p in f["parameters"]["properties"].values()
              if p.get("format") == "float"]
    assert floats and all(p["type"] == "number" and "float type value" in p["description"] for p in floats)
    assert not any(p["type"] in ("dict", "float", "list", "tuple", "any")
                   for f in trading.values() for p in f["parameters"]["properties"].values())


def test_tool_names_with_dots_are_rewritten_and_inputs_left_untouched() -> None:
    doc = {"name": "a.b", "description": "d", "parameters": {"type": "dict", "properties": {
        "x": {"type": "float", "description": "x"},
        "y": {"type": "array", "items": {"type": "dict", "properties": {"z": {"type": "tuple"}}}}}}}
    tools = to_openai_tools([doc])
    fn = tools[0]["function"]
    assert fn["name"] == "a_b"
    assert fn["parameters"]["properties"]["y"]["items"]["type"] == "object"
    assert fn["parameters"]["properties"]["y"]["items"]["properties"]["z"]["type"] == "array"
    assert doc["parameters"]["type"] == "dict" and doc["parameters"]["properties"]["x"]["type"] == "float"


def test_missed_function_docs_are_held_out_until_their_turn() -> None:
    base = get_task("multi_turn_base_0")
    held = base.functions[0]
    task = BfclTask(id="t", category="multi_turn_miss_func", questions=((), ()), initial_config={},
                    involved_classes=base.involved_classes, ground_truth=((), ()),
                    functions=base.functions[1:], missed_function={1: (held,)})
    assert held["name"] not in [t["function"]["name"] for t in task.tools_at(0)]
    assert held["name"] in [t["function"]["name"] for t in task.tools_at(1)]
    assert task.turn_messages(1)[0]["content"].startswith("I have updated some more functions")


def test_positional_ground_truth_arguments_get_parameter_names() -> None:
    call = parse_call("sort('final_report.pdf')", ("GorillaFileSystem",))
    assert call.name == "sort" and call.args == {"file_name": "final_report.pdf"}
    call = parse_call("mv(source='a', destination='b')")
    assert call.args == {"source": "a", "destination": "b"}
    with pytest.raises(ValueError):
        parse_call("__import__('os').system('true')")
    assert call_string("mv", {"source": "a", "n": 2, "f": True}) == "mv(source='a',n=2,f=True)"


def test_task_id_specs() -> None:
    assert resolve_task_ids("0-2,7") == [f"multi_turn_base_{i}" for i in (0, 1, 2, 7)]
    assert len(resolve_task_ids("all")) == 200
    with pytest.raises(KeyError):
        load_tasks(ids=["multi_turn_base_999"])


def test_ground_truth_replayed_through_the_env_passes_the_official_checker() -> None:
    """Our execution path and call-string format agree with what the checker replays."""
    for task in load_tasks():
        env = BfclEnv(task)
        executed = []
        for turn in range(task.n_turns):
            steps = []
            for call in task.ground_truth_calls(turn):
                env.execute(call.name, call.args)
                steps.append([call_string(call.name, call.args)])
            executed.append(steps)
        assert grade(task, executed).valid, task.id
    assert cached_instance_count() == 0


def test_each_env_has_its_own_instances() -> None:
    task = get_task("multi_turn_base_0")
    first, second = BfclEnv(task), BfclEnv(task)
    before = second.state()
    assert first.execute("mkdir", {"dir_name": "only_in_first"}) is None
    assert second.state() == before
    assert "only_in_first" in repr(first.state()["GorillaFileSystem"])
    assert "only_in_first" not in repr(BfclEnv(task).state()["GorillaFileSystem"])


def test_env_turns_bad_calls_into_bfcl_error_strings() -> None:
    env = BfclEnv(get_task("multi_turn_base_0"))
    assert env.execute("no_such_tool", {}).startswith("Error during execution: ")
    assert env.execute("cd", {"wrong": 1}).startswith("Error during execution: ")
    assert not env.has("__init__") and env.has("cd")
    assert render_result({"a": 1}) == '{"a": 1}'
    assert render_result("cut {") == "cut {"
    assert render_result(None) == "null"
