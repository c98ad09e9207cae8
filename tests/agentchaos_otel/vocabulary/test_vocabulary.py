"""Every row of the published error vocabulary, read back in the form its system writes it.

Each row is checked twice where something outside this project can vouch for it: against the
Python runtime (errno names, strerror texts, HTTP statuses), grpcio's status codes and the
exception hierarchies of the installed clients (httpx, requests, urllib3, openai, anthropic); and
by building a representative error of the row's kind (a JSON error object, an exception line, a
SOAP fault, a status line) and reading its meaning with the classifier.
"""

from __future__ import annotations

import errno as errno_module
import http
import importlib
import json
import os
import re
import sys
import tomllib
from importlib import resources
from typing import Any

import pytest

from agentchaos_otel import vocabulary as V
from agentchaos_otel.vocabulary import read as R
from agentchaos_otel.vocabulary.table import MEANINGS, build

with resources.files("agentchaos_otel.vocabulary").joinpath("errors.toml").open("rb") as _fh:
    DATA: dict[str, Any] = tomllib.load(_fh)


def rows(ns: str) -> list[dict[str, Any]]:
    return DATA[ns]


def _id(row: dict[str, Any]) -> str:
    return str(row.get("name") or row.get("value") or row.get("text") or row.get("part") or row.get("key")
               or row.get("verb") or row.get("code"))


# --- the file itself ---------------------------------------------------------------------------------

def test_every_row_has_a_known_meaning_and_a_source() -> None:
    assert DATA["schema"] == 1 and re.fullmatch(r"\d{4}\.\d+\.\d+", DATA["version"])
    for ns, lst in DATA.items():
        if not isinstance(lst, list):
            continue
        for row in lst:
            assert str(row.get("source", "")).startswith("https://"), (ns, row)
            if ns != "method":
                assert row["meaning"] in MEANINGS, (ns, row)
    assert {r["kind"] for r in rows("method")} == {"safe", "idempotent", "unsafe"}


def test_a_row_with_an_unknown_meaning_is_refused() -> None:
    with pytest.raises(ValueError, match="unknown meaning"):
        build({"http": [{"code": 400, "phrase": "x", "meaning": "bad", "source": "https://x"}]})


def test_names_that_mean_two_things_are_not_read_alone() -> None:
    t = build({"code": [{"value": "Ambig", "system": "a", "meaning": "timeout", "source": "https://a"},
                        {"value": "ambig", "system": "b", "meaning": "auth", "source": "https://b"}]})
    assert "ambig" not in t.tokens


# --- outside authorities -----------------------------------------------------------------------------

@pytest.mark.parametrize("row", [r for r in rows("http") if "rfc-editor.org/rfc/rfc9110" in r["source"]
                                 or "rfc6585" in r["source"]], ids=_id)
def test_http_rows_are_statuses_python_knows(row: dict[str, Any]) -> None:
    assert http.HTTPStatus(row["code"]).value == row["code"]


@pytest.mark.parametrize("row", rows("grpc"), ids=_id)
def test_grpc_rows_match_grpcio(row: dict[str, Any]) -> None:
    grpc = pytest.importorskip("grpc")
    assert grpc.StatusCode[row["name"]].value[0] == row["code"]


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="numbers and texts are Linux/glibc's")
@pytest.mark.parametrize("row", [r for r in rows("errno") if "number" in r], ids=_id)
def test_errno_rows_match_the_c_library(row: dict[str, Any]) -> None:
    assert errno_module.errorcode[row["number"]] == row["name"]
    assert os.strerror(row["number"]) == row["message"]


def _python_class(name: str) -> type | None:
    module, _, attr = name.rpartition(".")
    try:
        obj: Any = importlib.import_module(module) if module else __builtins__
    except ImportError:
        return None
    if isinstance(obj, dict):
        return obj.get(attr)
    return getattr(obj, attr, None)


@pytest.mark.parametrize("row", [r for r in rows("exception") if r["runtime"] == "python"], ids=_id)
def test_python_exception_rows_exist_with_their_parents(row: dict[str, Any]) -> None:
    cls = _python_class(row["name"])
    if cls is None:
        pytest.skip(f"{row['name']}: module not installed here")
    assert isinstance(cls, type) and issubclass(cls, BaseException)
    for parent in row.get("parents", []):
        p = _python_class(parent)
        if p is not None:
            assert issubclass(cls, p), (row["name"], parent)
    # a live instance's class hierarchy is read the same way
    names = [f"{c.__module__}.{c.__qualname__}".removeprefix("builtins.") for c in cls.__mro__]
    assert V.read_exception_names(names).meaning == row["meaning"]


# --- every row, read back ------------------------------------------------------------------------------

def _expect(reading: V.Reading, row: dict[str, Any]) -> None:
    assert reading.meaning == row["meaning"], (reading, row)
    if row["meaning"] != "partial":
        assert reading.is_error, (reading, row)


@pytest.mark.parametrize("row", rows("http"), ids=_id)
def test_http_status_in_an_error_object_and_a_status_line(row: dict[str, Any]) -> None:
    _expect(V.read_value({"status": row["code"], "message": "request failed"}), row)
    _expect(V.read_text(f"HTTP {row['code']}: request failed"), row)
    assert V.http_status_meaning(row["code"]).meaning == row["meaning"]  # type: ignore[union-attr]


def _camel(name: str) -> str:
    return "".join(p.capitalize() for p in name.split("_"))


@pytest.mark.parametrize("row", rows("grpc"), ids=_id)
def test_grpc_code_in_a_status_object_a_go_error_and_a_python_repr(row: dict[str, Any]) -> None:
    _expect(V.read_value({"error": {"code": row["code"], "message": "call failed", "details": []}}), row)
    _expect(V.read_value({"error": {"code": 400 if row["code"] == 3 else 500, "message": "call failed",
                                    "status": row["name"]}}) if row["meaning"] not in ("error",) else
            V.read_value({"error": {"status": row["name"], "message": "call failed"}}), row)
    _expect(V.read_text(f"rpc error: code = {_camel(row['name'])} desc = call failed"), row)
    _expect(V.read_text(f"StatusCode.{row['name']}: call failed"), row)


@pytest.mark.parametrize("row", rows("errno"), ids=_id)
def test_errno_names_and_texts(row: dict[str, Any]) -> None:
    _expect(V.read_text(f"Error: connect {row['name']} 10.0.0.1:443"), row)
    _expect(V.read_value({"ok": False, "error": {"code": row["name"], "message": "call failed"}}), row)
    if "number" in row:
        _expect(V.read_exception(OSError(row["number"], row["message"])), row)
        _expect(V.read_text(f"OSError: [Errno {row['number']}] {row['message']}"), row)
        _expect(V.read_text(row["message"]), row)


@pytest.mark.parametrize("row", rows("winsock"), ids=_id)
def test_winsock_codes(row: dict[str, Any]) -> None:
    _expect(V.read_text(f"OSError: [WinError {row['code']}] call failed"), row)
    _expect(V.read_value({"error": {"code": row["name"], "message": "call failed"}}), row)


@pytest.mark.parametrize("row", rows("exception"), ids=_id)
def test_exception_lines_and_recorded_exception_types(row: dict[str, Any]) -> None:
    _expect(V.read_text(f"{row['name']}: call failed"), row)
    _expect(V.read_text(f"Traceback (most recent call last):\n  File \"x.py\", line 1\n{row['name']}: call failed"),
            row)
    _expect(V.read_exception_names([row["name"]], "call failed"), row)
    _expect(V.read_value({"error": {"type": row["name"], "message": "call failed"}}), row)


@pytest.mark.parametrize("row", rows("sqlstate"), ids=_id)
def test_sqlstate_classes_and_conditions(row: dict[str, Any]) -> None:
    code = row["code"] if len(row["code"]) == 5 else row["code"] + "000"
    _expect(V.read_text(f"ERROR: statement failed (SQLSTATE {code})"), row)
    _expect(V.read_value({"code": code, "severity": "ERROR", "message": "statement failed"}), row)
    _expect(V.read_value({"error": {"sqlstate": code, "message": "statement failed"}}), row)


@pytest.mark.parametrize("row", rows("code"), ids=_id)
def test_vendor_codes_in_error_objects(row: dict[str, Any]) -> None:
    _expect(V.read_value({"error": {"code": row["value"], "message": "call failed"}}), row)
    _expect(V.read_value({"ok": False, "error": row["value"]}), row)
    assert V.code_meaning(row["value"]).meaning == row["meaning"]  # type: ignore[union-attr]


@pytest.mark.parametrize("row", rows("number"), ids=_id)
def test_vendor_numbers_beside_their_marker(row: dict[str, Any]) -> None:
    if row["system"] == "exit":  # a process result: the status beside its output streams
        _expect(V.read_value({"exit_code": row["code"], "stdout": "", "stderr": ""}), row)
        return
    text = {"curl": f"curl: ({row['code']}) call failed", "mysql": f"ERROR {row['code']} (HY000): call failed",
            "ldap": f"[LDAP: error code {row['code']} - call failed]",
            "mssql": f"Msg {row['code']}, Level 16, State 1, Line 1\ncall failed",
            "hl7": f"MSH|^~\\&|A|B|C|D|20260101||ACK|1|P|2.5.1\rMSA|AE|7\rERR||PID^1^3|{row['code']}^x^HL70357|E"}
    _expect(V.read_text(text[row["system"]]), row)


@pytest.mark.parametrize("row", rows("jsonrpc"), ids=_id)
def test_jsonrpc_and_mcp_codes(row: dict[str, Any]) -> None:
    _expect(V.read_value({"jsonrpc": "2.0", "id": 3, "error": {"code": row["code"], "message": "call failed"}}), row)


@pytest.mark.parametrize("row", rows("soap"), ids=_id)
def test_soap_fault_codes(row: dict[str, Any]) -> None:
    soap11 = ('<?xml version="1.0"?><soap:Envelope xmlns:soap="http://schemas.xmlsoap.org/soap/envelope/">'
              f'<soap:Body><soap:Fault><faultcode>soap:{row["value"]}</faultcode><faultstring>call failed'
              '</faultstring></soap:Fault></soap:Body></soap:Envelope>')
    soap12 = ('<env:Envelope xmlns:env="http://www.w3.org/2003/05/soap-envelope"><env:Body><env:Fault><env:Code>'
              f'<env:Value>env:{row["value"]}</env:Value></env:Code><env:Reason><env:Text xml:lang="en">call failed'
              '</env:Text></env:Reason></env:Fault></env:Body></env:Envelope>')
    _expect(V.read_text(soap11), row)
    _expect(V.read_text(soap12), row)


@pytest.mark.parametrize("row", rows("finish_reason"), ids=_id)
def test_finish_reasons(row: dict[str, Any]) -> None:
    assert V.finish_reason_meaning(row["value"]).meaning == row["meaning"]  # type: ignore[union-attr]


@pytest.mark.parametrize("row", rows("phrase"), ids=_id)
def test_published_error_texts(row: dict[str, Any]) -> None:
    _expect(V.read_text(f"Error: {row['text']}"), row)
    _expect(V.read_value({"error": {"message": f"call failed: {row['text']}"}}), row)


@pytest.mark.parametrize("row", rows("name_part"), ids=_id)
def test_names_not_on_a_list_are_read_by_their_parts(row: dict[str, Any]) -> None:
    name = f"Acme{row['part'].capitalize()}Failure"
    _expect(V.read_value({"error": {"code": name, "message": "call failed"}}), row)
    _expect(V.read_exception_names([f"com.acme.{name}"]), row)


@pytest.mark.parametrize("row", rows("flag"), ids=_id)
def test_in_band_flags(row: dict[str, Any]) -> None:
    got = V.read_value({row["key"]: row["value"]})
    _expect(got, row)
    if row.get("with_data"):
        assert V.read_value({row["key"]: row["value"], "items": [1, 2]}).meaning == row["with_data"]
    assert not V.read_value({row["key"]: not row["value"], "items": [1, 2]}).found


@pytest.mark.parametrize("row", rows("status_word"), ids=_id)
def test_status_words_of_a_call_report(row: dict[str, Any]) -> None:
    _expect(V.read_value({"status": row["value"], "message": "call report"}), row)


@pytest.mark.parametrize("row", rows("fhir_issue"), ids=_id)
def test_fhir_issue_types_of_an_operation_outcome(row: dict[str, Any]) -> None:
    """Each IssueType code read from an error issue, in JSON and as the tool's text; the same
    issue as a warning or information is no failure."""
    outcome = {"resourceType": "OperationOutcome",
               "issue": [{"severity": "error", "code": row["code"], "diagnostics": "see the issue"}]}
    _expect(V.read_value(outcome), row)
    _expect(V.read_text(json.dumps(outcome)), row)
    for severity in ("warning", "information"):
        outcome["issue"][0]["severity"] = severity
        assert not V.read_value(outcome).is_error


@pytest.mark.parametrize("row", rows("method"), ids=_id)
def test_method_verbs(row: dict[str, Any]) -> None:
    assert V.method_kind(f"{row['verb']}_record") == row["kind"]
    assert V.method_kind(f"{row['verb']}Record") == row["kind"]


# --- structure ---------------------------------------------------------------------------------------

@pytest.mark.parametrize("value", [
    {"city": "Oslo", "temperature": 3.5, "conditions": "rain"},
    {"flights": [{"id": 1, "status": "failed"}, {"id": 2, "status": "on time"}], "count": 2},
    {"order": 17, "status": "denied"},  # a record's own status, not a failed call
    {"status": "ok", "errors": [], "error": None, "timed_out": False, "_shards": {"failed": 0}},
    {"message": "Order shipped", "order_id": "A-1"},
    {"code": 0, "msg": "success", "data": {"n": 1}},
    [{"id": 1}, {"id": 2}],
    {"items": [], "has_more": True},
])
def test_healthy_results_are_not_errors(value: Any) -> None:
    assert V.read_value(value) == V.NOTHING


@pytest.mark.parametrize("text", [
    "Here is a summary: the service was fast and nothing timed out.",
    "500 items found in the archive",
    "Error handling is described in chapter 3 of the manual, which the user asked about " * 3,
])
def test_prose_is_not_an_error_reply(text: str) -> None:
    assert not V.read_text(text, reply=True).is_error


def test_an_error_member_anywhere_in_the_object_and_an_error_at_the_end_of_a_text() -> None:
    obj = {"request_id": "r1", "took": 3, "data": None, "result": {"error": {"code": "DEADLINE_EXCEEDED"}}}
    assert V.read_value(obj).meaning == "timeout"
    text = "connecting to db...\nrunning query 1 of 3\n" + "row\n" * 50 + "ERROR: canceling statement due to " \
        "statement timeout"
    got = V.read_text(text)
    assert got.is_error and got.meaning == "timeout" and got.form == "log_line"


def test_an_error_text_is_an_error_not_broken_json() -> None:
    got = V.read_result('{"error": "upstream timed out"')  # cut JSON that is an error message
    assert not got.found or got.meaning != ""  # never claimed as valid data
    got = V.read_result("psql: error: connection to server failed: Connection refused")
    assert got.is_error and got.meaning == "connection"


def test_partial_answers_are_told_from_empty_timeouts() -> None:
    got = V.read_value({"timed_out": True, "hits": [{"id": 1}]})
    assert (got.is_error, got.meaning, got.form) == (False, "partial", "flag")
    assert V.read_value({"timed_out": True}).meaning == "timeout"
    assert V.read_value({"status": "partial", "message": "2 of 5 shards", "items": [1]}).meaning == "partial"


def test_meaning_follows_the_most_specific_evidence() -> None:
    # a 503 whose words say rate limit; a generic JSON-RPC internal error whose words say timeout
    assert V.read_value({"status": 503, "message": "Rate limit exceeded, slow down"}).meaning == "rate_limit"
    assert V.read_value({"jsonrpc": "2.0", "error": {"code": -32603, "message": "Request timed out"}}).meaning \
        == "timeout"
    # Stripe: an invalid_request_error whose code is rate_limit
    got = V.read_value({"error": {"type": "invalid_request_error", "code": "rate_limit", "message": "Too many"}})
    assert got.meaning == "rate_limit"


def test_exceptions_are_read_through_their_hierarchy_and_cause() -> None:
    class VendorTimeout(TimeoutError):
        pass

    assert V.read_exception(VendorTimeout("slow")).meaning == "timeout"
    try:
        try:
            raise ConnectionRefusedError(111, "Connection refused")
        except OSError as inner:
            raise RuntimeError("fetch failed") from inner
    except RuntimeError as outer:
        assert V.read_exception(outer).meaning == "connection"


@pytest.mark.parametrize("value", [
    {"a": {"b": {"c": {"d": {"e": {"f": {"g": {"error": "x" * 100_000}}}}}}}},
    {1: "x", None: [1, 2, {"error": {"code": float("nan")}}]},
    "x" * 1_000_000,
    b"\xff\xfe" * 10_000,
    [[[[[[[[[[[]]]]]]]]]]] * 100,
])
def test_readers_never_raise_and_stay_bounded(value: Any) -> None:
    V.read_result(value)
    V.read_value(value)
    V.read_text(str(value)[:200_000])


def test_a_deep_error_walk_stops_at_its_node_budget() -> None:
    wide = {"error": [{"message": "fine"} for _ in range(10 * R.MAX_NODES)]}
    assert V.read_value(wide).is_error
