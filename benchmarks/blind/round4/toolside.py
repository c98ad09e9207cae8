"""One tool call as the tool's backend answers it, with the episode's planned failure form.

Shared by the MCP server (``mcp_server.py``) and the local tools (``local_tools.py``), so a form
reads the same whichever way the tool is served. Error forms replace the answer (the call did not
happen), ``after`` forms report an error after the call took effect, data forms transform the
real result. A fault with ``times > 1`` also hits the next calls with the same arguments.
"""

from __future__ import annotations

import hashlib
import json
from typing import Any

from benchmarks.blind.round4 import registry, tools
from benchmarks.blind.round4.forms_tool import TOOL_ERROR_FORMS
from benchmarks.blind.round4.tool_data import DATA_FORMS

RAISING_FAMILIES = ("jvm", "dotnet", "go", "node", "python", "powershell", "rabbitmq", "cassandra", "snowflake")


def form_label(name: str) -> tuple[str, str, str]:
    form = TOOL_ERROR_FORMS.get(name) or DATA_FORMS[name]
    return form.label, form.family, form.source


def _pick_fault(script: registry.Script, name: str, args: dict[str, Any]) -> registry.Fault | None:
    occurrence = script.tool_seen.get(name, 0)
    script.tool_seen[name] = occurrence + 1
    key = name + json.dumps(args, sort_keys=True, default=str)
    if key in script.sticky:
        fault, left = script.sticky.pop(key)
        if left > 1:
            script.sticky[key] = (fault, left - 1)
        return fault
    fault = script.tool_faults.get((name, occurrence))
    if fault is not None and fault.times > 1:
        script.sticky[key] = (fault, fault.times - 1)
    return fault


def serve(task_id: str, name: str, args: dict[str, Any]) -> tuple[str, bool, bool]:
    """(text, is_error, raised): what the tool answers; ``raised`` for forms a local tool raises."""
    script = registry.get(task_id)
    ev = script.events[-1]
    assert ev["kind"] == "tool" and ev["name"] == name, (ev, name)
    ev["executed"] = True
    fault = _pick_fault(script, name, args)
    err = TOOL_ERROR_FORMS.get(fault.form) if fault else None
    data_form = DATA_FORMS.get(fault.form) if fault else None
    if fault is not None:
        ev.update(fault=fault.form, role=fault.role)
    svc = str(args.get("service") or args.get("team") or args.get("incident_id") or "ops")
    rid = hashlib.sha1(f"{task_id}{len(script.events)}".encode()).hexdigest()[:8] + "-4c1e-9a7b-" + "0e" * 6

    def error_text() -> tuple[str, bool, bool]:
        text = err.text.replace("{svc}", svc).replace("{rid}", rid)
        return text, True, err.family in RAISING_FAMILIES

    if err is not None and not err.after:
        return error_text()
    try:
        data = tools.run(script.world, name, args)
    except tools.ToolRefused as exc:
        return json.dumps({"error": str(exc)}), True, True
    if err is not None:
        return error_text()
    if data_form is not None:
        if name not in data_form.tools:
            ev["mismatch"] = True
        return data_form.fn(data, script.world, args), False, False
    return json.dumps(data), False, False
