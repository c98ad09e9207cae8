"""Structural readings of failures and partial answers that no single code row names.

Each reading is a shape a system publishes (a process's exit status beside its output streams, a
map of the call's fields to what is wrong with each, Kubernetes ``ListMeta.remainingItemCount``, a
count beside fewer items, a trailer line saying the output was cut, an Elixir exit report, a
Redis error reply, a sign-in page) and each test also shows the healthy neighbour of the shape,
which must read as nothing.
"""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from agentchaos_otel import attributes as A
from agentchaos_otel import signals, tool_signals
from agentchaos_otel import vocabulary as V


@pytest.mark.parametrize("result,meaning", [
    ({"exit_code": 1, "stdout": "", "stderr": "Error from server (Forbidden): pods is forbidden"}, "auth"),
    ({"returncode": 2, "stdout": "", "stderr": "dial tcp 10.0.0.1:443: connect: connection refused"}, "connection"),
    ({"exitCode": 137, "stdout": "", "stderr": "Killed"}, "error"),
    ({"exit_status": 124, "output": "waiting..."}, "timeout"),
    ({"rc": 127, "stderr": "sh: 1: deploytool: not found"}, "not_found"),
])
def test_a_process_that_exited_non_zero_is_an_error_of_what_it_says(result: dict[str, Any], meaning: str) -> None:
    got = V.read_value(result)
    assert got.is_error and got.meaning == meaning and got.form == "process_result"


@pytest.mark.parametrize("result", [
    {"exit_code": 0, "stdout": "deployment restarted", "stderr": ""},
    {"exit_code": 0, "stdout": "", "stderr": "warning: deprecated flag"},
    {"rc": 1, "changed": False},  # an exit status without output streams is not a process report
])
def test_a_process_that_succeeded_is_not_an_error(result: dict[str, Any]) -> None:
    assert not V.read_value(result).is_error


def test_a_map_of_fields_to_their_problems_is_a_failed_validation() -> None:
    got = V.read_value({"errorMessages": [], "errors": {"priority": "Specify a valid priority.",
                                                         "labels": ["Too many labels."]}})
    assert got.is_error and got.meaning == "invalid_request" and got.evidence == "structure:field_errors"
    # an error object of its own (code, message) is not a map of fields
    assert V.read_value({"errors": {"code": "E1", "message": "backend failed"}}).meaning == "error"
    # a list of error messages says which failure it is by its words
    got = V.read_value({"errorMessages": ["Issue does not exist."], "errors": {}})
    assert got.is_error and got.meaning == "not_found"


@settings(max_examples=80, deadline=None)
@given(shown=st.integers(1, 30), total=st.integers(0, 60), paged=st.booleans())
def test_a_count_above_the_items_shown_is_partial_unless_the_answer_pages(shown: int, total: int,
                                                                          paged: bool) -> None:
    result: dict[str, Any] = {"alerts": [{"id": i} for i in range(shown)], "total": total}
    if paged:
        result["next_page_token"] = "abc"
    got = V.read_value(result)
    if total > shown and not paged:
        assert got.meaning == "partial" and not got.is_error and got.evidence == "count:total"
    else:
        assert not got.found


def test_remaining_items_in_kubernetes_list_metadata_are_partial() -> None:
    base = {"kind": "List", "items": [{"name": "a"}], "metadata": {"continue": "t0k3n", "remainingItemCount": 4}}
    assert V.read_value(base).meaning == "partial"
    base["metadata"] = {"continue": "", "remainingItemCount": 0}
    assert not V.read_value(base).found


def test_a_trailer_line_saying_the_output_was_cut_is_partial() -> None:
    csv = "id,service\n1,api\n2,db\n# export truncated: row limit reached (2 of 9 rows)\n"
    got = V.read_result(csv)
    assert got.meaning == "partial" and not got.is_error and got.form == "trailer"
    assert not V.read_result("id,service\n1,api\n2,db\n").found
    # the word in running text is not a trailer
    assert not V.read_result("id,comment\n1,the truncated log was re-sent\n").found


@pytest.mark.parametrize("text,meaning", [
    ("** (exit) exited in: GenServer.call(Pager, {:page, \"x\"}, 5000)\n    ** (EXIT) time out", "timeout"),
    ("** (RuntimeError) upstream pool exhausted", "error"),
    ("OOM command not allowed when used memory > 'maxmemory'.", "error"),
    ("NOAUTH Authentication required.", "auth"),
    ("WRONGTYPE Operation against a key holding the wrong kind of value", "invalid_request"),
])
def test_beam_exit_reports_and_redis_error_replies(text: str, meaning: str) -> None:
    got = V.read_result(text)
    assert got.is_error and got.meaning == meaning


@pytest.mark.parametrize("text", [
    "NOTE the service is healthy",  # a word in capitals that no system lists as an error kind
    "OK 3 replicas ready",
    "** bold text ** in a note",
])
def test_capitalised_openings_that_are_not_error_kinds_are_not_errors(text: str) -> None:
    assert not V.read_result(text).is_error


def test_a_redis_error_kind_does_not_make_a_model_reply_an_error() -> None:
    assert not V.read_text("BUSY day for the on-call team, but all services are up.", reply=True).is_error


def test_a_sign_in_page_where_data_was_expected_is_an_authorization_failure() -> None:
    page = ("<!DOCTYPE html><html><head><title>Sign In</title></head><body><form action='/login'>"
            "<input name='user' type='text'><input name='pass' type='password'></form></body></html>")
    got = V.read_result(page)
    assert got.is_error and got.meaning == "auth"
    assert not V.read_result("<!DOCTYPE html><html><head><title>Runbook</title></head><body>Restart the pod."
                             "</body></html>").found


def test_a_flagged_error_text_is_read_for_its_words_and_the_parts_of_its_names() -> None:
    got = V.read_flagged_text("Error executing tool get_user: LDAPInvalidCredentialsResult - 49 - bind failed")
    assert got.is_error and got.meaning == "auth"
    assert V.read_flagged_text("Error executing tool get_user: something broke").meaning == V.GENERIC
    attrs = tool_signals.flagged_error_signals(tool_signals.tool_result_signals("Error executing tool x: "
                                                                                "RequestThrottledFault"), "")
    assert attrs[A.TOOL_RESULT_IS_ERROR] is True


def test_an_mcp_style_flagged_result_takes_the_meaning_of_its_text() -> None:
    text = "Error executing tool get_oncall: UpstreamRateLimitedError: slow down"
    attrs = tool_signals.flagged_error_signals(tool_signals.tool_result_signals(text), text)
    assert attrs[A.TOOL_RESULT_FAILURE] == "rate_limit"
    healthy = tool_signals.tool_result_signals(json.dumps({"ok": True}))
    assert A.TOOL_RESULT_FAILURE not in healthy


def test_anthropic_tool_results_ground_the_arguments_that_repeat_them() -> None:
    """Values the conversation holds only in Anthropic ``tool_result`` blocks are grounded."""
    messages = [{"role": "user", "content": "Triage the paging alert."},
                {"role": "assistant", "content": [{"type": "tool_use", "id": "t1", "name": "list_alerts",
                                                    "input": {"team": "payments"}}]},
                {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "t1",
                                              "content": [{"type": "text", "text": '{"service": "ledger-api"}'}]}]}]
    calls = [{"function": {"name": "get_service_status", "arguments": json.dumps({"service": "ledger-api"})}}]
    assert signals.argument_grounding(calls, messages)[A.RESPONSE_TOOL_ARGS_UNGROUNDED] == 0
    invented = [{"function": {"name": "get_service_status", "arguments": json.dumps({"service": "billing"})}}]
    assert signals.argument_grounding(invented, messages)[A.RESPONSE_TOOL_ARGS_UNGROUNDED] == 1


@pytest.mark.parametrize("value", ["ledger-\ufffd\ufffdpi", "led\u2603ger-api"])
def test_garbled_arguments_are_seen_whether_or_not_their_characters_are_escaped(value: str) -> None:
    for raw in (json.dumps({"service": value}), json.dumps({"service": value}, ensure_ascii=False),
                {"service": value}):
        got = signals.tool_call_signals([{"function": {"name": "get_service_status", "arguments": raw}}], None)
        assert got[A.RESPONSE_TOOL_ARGS_ANOMALY] >= 0.02
    city = json.dumps({"city": "S\u00e3o Paulo"})
    clean = signals.tool_call_signals([{"function": {"name": "s", "arguments": city}}], None)
    assert clean[A.RESPONSE_TOOL_ARGS_ANOMALY] == 0


def test_an_amount_named_total_beside_a_list_is_not_a_count() -> None:
    order = {"order_id": "A1", "currency": "EUR", "items": [{"sku": "x"}, {"sku": "y"}], "total": 4200}
    assert not V.read_value(order).found


def test_a_count_beside_data_is_recorded_for_the_store_to_judge_and_never_read_alone() -> None:
    """An order's ``total`` and a search's ``total`` beside its echoed query look alike: the span
    records the count member, and only the tool's answers across a store tell a cut from an amount."""
    order = {"order_id": "A1", "currency": "EUR", "items": [{"sku": "x"}, {"sku": "y"}], "total": 4200}
    assert V.count_above_items(order) == "total"
    assert signals.tool_result_signals(order)[A.TOOL_RESULT_COUNT_ABOVE] == "total"
    # equal counts, several lists, a way to the rest: nothing to record
    assert V.count_above_items({"q": "x", "hits": [1, 2], "total": 2}) == ""
    assert V.count_above_items({"a": [1], "b": [2], "total": 9}) == ""
    assert V.count_above_items({"q": "x", "hits": [], "total": 0}) == ""
    # an empty page beside a count is recorded, and read as partial by the store norm only
    assert V.count_above_items({"hits": [], "total": 9}) == "total" and not V.read_value({"hits": [], "total": 9}).found
    assert V.count_above_items({"q": "x", "hits": [1], "total": 9, "nextPageToken": "t"}) == ""
    assert V.count_above_items({"q": "x", "data": [1], "meta": {"count": 5}}) == "meta.count"
    healthy = signals.tool_result_signals({"q": "x", "hits": [1, 2], "total": 2})
    assert A.TOOL_RESULT_COUNT_ABOVE not in healthy
    # a listing whose count is read as partial on its own needs no second record
    listing = signals.tool_result_signals({"hits": [1], "total": 9})
    assert listing[A.TOOL_RESULT_FAILURE] == "partial" and A.TOOL_RESULT_COUNT_ABOVE not in listing


@pytest.mark.parametrize("text,meaning", [
    # an opening that says an error happened before saying what (Docker, botocore's ClientError)
    ("Error response from daemon: No such image: registry.example/label:7", "not_found"),
    ("An error occurred (ThrottlingException) when calling the Invoke operation (reached max retries: 4): "
     "Rate exceeded", "rate_limit"),
    ("error while reading response body: unexpected EOF", "connection"),
    # a driver's exception in parentheses before its message (SQLAlchemy wrapping a DB-API error)
    ("(pymysql.err.OperationalError) server closed the connection unexpectedly", "connection"),
    ("(sqlite3.IntegrityError) UNIQUE constraint failed: users.email", "invalid_request"),
    # an edge cache's status opening: "Error NNN reason" and "NNN ERROR"
    ("Error 504 Gateway Time-out\n\nVarnish cache server", "timeout"),
    ("503 ERROR\nThe request could not be satisfied.", "error"),
    # a byte-order mark before an XML error or a JSON error object
    ("\ufeff<?xml version=\"1.0\"?><Error><Code>ServerBusy</Code><Message>busy</Message></Error>", "rate_limit"),
    ("\ufeff{\"error\": {\"code\": 404, \"message\": \"gone\"}}", "not_found"),
])
def test_error_openings_of_runtimes_drivers_and_edges(text: str, meaning: str) -> None:
    got = V.read_result(text)
    assert got.is_error and got.meaning == meaning, got


@pytest.mark.parametrize("text", [
    "Error budgets were respected this week: 99.95% availability.",  # a report about errors, no colon soon enough
    "(see the attached summary) all 12 orders shipped",  # parentheses that name no exception
    "503 orders were shipped today",  # a number at the start that is not a status
    "\ufeff{\"orders\": [], \"count\": 0}",  # data behind a byte-order mark
])
def test_openings_that_are_not_errors(text: str) -> None:
    assert not V.read_result(text).is_error


def test_an_error_opening_does_not_make_a_model_reply_an_error() -> None:
    assert not V.read_text("Error handling: I retried the call and it worked, here is the answer.",
                           reply=True).is_error


@pytest.mark.parametrize("obj,meaning", [
    # PayPal's error report: a published code in `name` names the failure, even a generic one
    ({"name": "INTERNAL_SERVER_ERROR", "message": "An internal server error has occurred.", "debug_id": "6159",
      "links": [{"href": "https://developer.paypal.com/api/rest/reference/orders/v2/errors/",
                 "rel": "information_link"}]},
     "error"),
    ({"message": "name resolution failed", "request_id": "9597"}, "connection"),  # Kong, upstream DNS
    ({"message": "Missing Authentication Token"}, "auth"),  # API Gateway
])
def test_report_shaped_objects_are_read_by_their_code_or_words(obj: dict[str, Any], meaning: str) -> None:
    got = V.read_value(obj)
    assert got.is_error and got.meaning == meaning, got


@pytest.mark.parametrize("obj", [
    {"name": "Alice", "message": "Hello there"},  # a name that is no error code
    {"type": "note", "message": "Order shipped"},
    {"name": "Build 42", "message": "An internal server error has occurred."},  # generic words and no code
])
def test_report_shaped_objects_without_a_code_or_specific_words_are_not_errors(obj: dict[str, Any]) -> None:
    assert not V.read_value(obj).is_error


@pytest.mark.parametrize("text,meaning", [
    ("nats: timeout", "timeout"),  # a Go sentinel error behind its package prefix
    ("Unexpected response code: 503 (No cluster leader)", "error"),  # HashiCorp API clients
    ("error code: 522", "timeout"),  # Cloudflare's plain-text status page
    ("KafkaError{code=UNKNOWN_TOPIC_OR_PART,val=3,str=\"Broker: Unknown topic or partition\"}", "not_found"),
    ("Code: 159. DB::Exception: Timeout exceeded: elapsed 30.0 seconds. (TIMEOUT_EXCEEDED)", "timeout"),
    ("pika.exceptions.ConnectionClosedByBroker: (320, 'CONNECTION_FORCED - broker forced connection closure')",
     "connection"),  # a class on no list, known for an exception by its module
    ("Get-Deployment : The term 'Get-Deployment' is not recognized as the name of a cmdlet.\n"
     "At line:1 char:1\n    + CategoryInfo          : ObjectNotFound", "not_found"),  # a PowerShell error record
    ("deploying checkout...\nwaiting for rollout\n[exit status 124]", "timeout"),  # the exit status on the last line
    ('{"__type": "com.amazonaws.sqs#OverLimit", "message": "Too many messages in flight"}', "rate_limit"),
])
def test_runtime_and_client_error_forms(text: str, meaning: str) -> None:
    got = V.read_result(text)
    assert got.is_error and got.meaning == meaning, got


@pytest.mark.parametrize("text", [
    "status: all 3 replicas ready",  # a package-like prefix whose words name no failure
    "note: the rollout finished",
    "deploying checkout...\nrollout finished\n[exit status 0]",  # a process that succeeded
    "Response code: 200 (OK)",
    "Get-Deployment : checkout (3 replicas, healthy)",  # a PowerShell-like line without an error record
])
def test_runtime_like_texts_that_are_not_errors(text: str) -> None:
    assert not V.read_result(text).is_error


@pytest.mark.parametrize("text,meaning", [
    ("An error occurred (ThrottlingException) when calling the InvokeModel operation: Too many requests", "rate_limit"),
    ("error code: 524", "timeout"),
])
def test_a_model_reply_that_is_a_passed_on_error_is_read_as_one(text: str, meaning: str) -> None:
    got = V.read_text(text, reply=True)
    assert got.is_error and got.meaning == meaning, got


def test_a_reply_that_talks_about_an_error_code_is_not_one() -> None:
    assert not V.read_text("The error code 524 means the origin took too long; retry later.", reply=True).is_error


def test_the_object_a_kubernetes_status_is_about_is_data_not_a_code() -> None:
    status = {"kind": "Status", "apiVersion": "v1", "status": "Failure", "reason": "NotFound", "code": 404,
              "message": 'deployments.apps "auth" not found',
              "details": {"name": "auth", "group": "apps", "kind": "deployments"}}  # a service named "auth"
    got = V.read_value(status)
    assert got.is_error and got.meaning == "not_found", got


@pytest.mark.parametrize("result", [
    {"points": [[1, 2]],
     "meta": {"notices": [{"severity": "warning", "text": "Query result truncated: max data points"}]}},
    {"points": [[1, 2]], "status": "incomplete", "warnings": ["query hit max_samples limit; returning 4 of 8 points"]},
    {"data": [{"a": 1}], "rows": 1, "rows_before_limit_at_least": 2, "statistics": {"elapsed": 0.02}},  # ClickHouse
])
def test_warnings_an_answer_carries_about_itself_make_it_partial(result: dict[str, Any]) -> None:
    got = V.read_value(result)
    assert not got.is_error and got.meaning == "partial", got


@pytest.mark.parametrize("result", [
    {"points": [[1, 2]], "warnings": ["parameter step is deprecated"]},  # a warning about something else
    {"task": "write report", "status": "incomplete"},  # a record's own status
    {"data": [{"a": 1}, {"a": 2}], "rows": 2, "rows_before_limit_at_least": 2},  # nothing left out
])
def test_warnings_and_statuses_that_say_nothing_was_cut(result: dict[str, Any]) -> None:
    assert V.read_value(result).meaning != "partial"


def test_a_wrapper_exception_is_read_through_the_text_of_the_system_below_it() -> None:
    message = "pika.exceptions.ConnectionClosedByBroker: (320, 'CONNECTION_FORCED - broker forced connection closure')"
    got = V.read_exception_names(["ToolBackendError"], message)
    assert got.is_error and got.meaning == "connection", got
    assert V.read_exception_names(["TimeoutError"], message).meaning == "timeout"  # the class decides first


@pytest.mark.parametrize("text,meaning", [
    ("[LDAP: error code 32 - No Such Object]; remaining name 'uid=x,ou=people,dc=example'", "not_found"),
    ("LDAPException(resultCode=49 (invalid credentials), errorMessage='80090308: LdapErr')", "auth"),
    ("Database Error in model stg_orders (models/staging/stg_orders.sql)\n  relation \"raw.orders\" does not exist",
     "not_found"),  # dbt
    ("550 5.1.1 <a@example.com>: Recipient address rejected: User unknown in virtual mailbox table", "not_found"),
    ("GuzzleHttp\\Exception\\ClientException: Client error: `GET https://api.example/v1/x` resulted in a "
     "`429 Too Many Requests` response", "rate_limit"),  # a PHP namespaced exception
    ('{"RemoteException": {"exception": "FileNotFoundException", "javaClassName": "java.io.FileNotFoundException",'
     ' "message": "File does not exist: /data/x.csv"}}', "not_found"),  # WebHDFS
    ('{"ErrorNumber": 10, "Type": "ValidationException", "Message": "A validation exception occurred"}',
     "invalid_request"),  # Xero
    ('{"errorCode": "E0000047", "errorSummary": "API call exceeded rate limit due to too many requests."}',
     "rate_limit"),  # Okta
    ('{"error": {"code": "/IWBEP/CM_MGW_RT/020", "message": {"lang": "en", "value": "Resource not found for '
     'segment \'A_Supplier\'"}}}', "not_found"),  # SAP OData v2
])
def test_directory_pipeline_mail_and_erp_error_forms(text: str, meaning: str) -> None:
    got = V.read_result(text)
    assert got.is_error and got.meaning == meaning, got


def test_words_inside_a_url_do_not_name_the_failure() -> None:
    got = V.read_result('Post "http://billing.internal/v1/charge": dial tcp 10.0.0.9:443: connect: connection refused')
    assert got.meaning == "connection", got  # not gRPC INTERNAL from the host name


@pytest.mark.parametrize("text", [
    "Database migrations: 3 applied, 0 pending",  # no "Error in"
    "250 2.1.5 Ok",  # an SMTP success reply
])
def test_pipeline_and_mail_texts_that_are_not_errors(text: str) -> None:
    assert not V.read_result(text).is_error


@pytest.mark.parametrize("text,meaning", [
    ('{"error": {"code": "TooManyRequests", "message": "slow down"}}', "rate_limit"),  # a JSON error object
    ("[LDAP: error code 32 - No Such Object]", "not_found"),
    ("Database Error in model stg_orders (models/stg_orders.sql)\n  relation \"raw.orders\" does not exist",
     "not_found"),
])
def test_a_flagged_error_text_is_read_by_its_own_form_first(text: str, meaning: str) -> None:
    got = V.read_flagged_text(text)
    assert got.is_error and got.meaning == meaning, got


def test_an_odata_inline_count_above_the_results_is_partial_unless_a_next_link_pages() -> None:
    v2 = {"d": {"__count": "12", "results": [{"DocumentNo": f"INV-{i}"} for i in range(6)]}}
    got = V.read_value(v2)  # OData v2: the count is a string, inside the "d" envelope
    assert got.meaning == "partial" and not got.is_error
    v4 = {"@odata.count": 12, "value": [{"id": i} for i in range(6)]}
    assert V.read_value(v4).meaning == "partial"
    assert not V.read_value({**v4, "@odata.nextLink": "https://erp.example/Invoices?$skip=6"}).found
    assert not V.read_value({"d": {"__count": "6", "results": [{"id": i} for i in range(6)]}}).found
    assert not V.read_value({"count": "twelve", "results": [{"id": 1}]}).found


def test_fastapi_validation_detail_is_a_rejected_call() -> None:
    body = {"detail": [{"type": "missing", "loc": ["query", "city"], "msg": "Field required", "input": None}]}
    got = V.read_value(body)
    assert got.is_error and got.meaning == "invalid_request"
    # the error type names the failure, not the words inside it ("forbidden" is not authorization)
    extra = {"detail": [{"type": "extra_forbidden", "loc": ["body", "x"], "msg": "Extra inputs are not permitted"}]}
    assert V.read_value({"error": extra}).meaning == "invalid_request"
    assert V.read_value({"ok": False, "error": "extra_forbidden"}).meaning == "invalid_request"
    # a detail that is a plain list of records is data
    assert not V.read_value({"detail": [{"sku": "A-1", "qty": 2}]}).found


def test_a_soap_faults_typed_detail_names_the_failure() -> None:
    fault = ('<soapenv:Envelope xmlns:soapenv="http://schemas.xmlsoap.org/soap/envelope/"><soapenv:Body>'
             "<soapenv:Fault><faultcode>soapenv:Server.userException</faultcode><faultstring>Only one request "
             "may be made against a session at a time</faultstring><detail><ns1:exceededConcurrentRequestLimitFault "
             'xmlns:ns1="urn:faults.example"><ns1:code>WS_CONCUR_SESSION_DISALLWD</ns1:code>'
             "</ns1:exceededConcurrentRequestLimitFault></detail></soapenv:Fault></soapenv:Body></soapenv:Envelope>")
    got = V.read_text(fault)
    assert got.is_error and got.meaning == "rate_limit"
    plain = fault.replace("exceededConcurrentRequestLimitFault", "userFault")
    assert V.read_text(plain).meaning == "error"


def test_a_go_request_that_met_a_bare_eof_lost_its_connection() -> None:
    got = V.read_text('Post "http://billing.internal/v1/charges": EOF')
    assert got.is_error and got.meaning == "connection"
    assert V.read_text('Get "http://billing.internal/v1/charges": EOF in config file').meaning != "connection"


@pytest.mark.parametrize("result,keys", [
    ([{"b": 1, "a": 2}, {"c": 3}], ["a", "b"]),
    ({"count": 1, "items": [{"id": 1, "name": "x"}]}, ["id", "name"]),
    ({"d": {"__count": "1", "results": [{"DocumentNo": "1"}]}}, ["DocumentNo"]),
    ({"invoice": {"id": "INV-1", "amount": 3}}, ["amount", "id"]),
    ({"a": [{"x": 1}], "b": [{"y": 2}]}, []),  # two lists of records: no single listing
    ({"city": "Oslo", "temp": 3}, []),
    ([1, 2, 3], []),
])
def test_record_keys_are_the_keys_of_the_records_a_result_carries(result: Any, keys: list[str]) -> None:
    assert signals.record_keys(result) == keys
    assert tool_signals.tool_result_signals(json.dumps(result))[A.TOOL_RESULT_RECORD_KEYS] == keys


@pytest.mark.parametrize("text,meaning", [
    # the MCP SDK server's wrapper: the tool's own error is what follows, read in its form
    ('Error executing tool get_fare_rules: {"errors":[{"status":401,"code":38190,"title":"Invalid access token"}]}',
     "auth"),
    ("Error executing tool get_profile: NOAUTH Authentication required.", "auth"),
    ("Error executing tool rebook_flight", "error"),  # a crash: nothing after the prefix
    ("Error executing tool get_traveller: 1 validation error for get_travellerArguments\nid\n  Field required",
     "invalid_request"),
    ("{error,nxdomain}", "connection"),  # Erlang/Elixir error tuples
    ("{:error, :econnrefused}", "connection"),
    ("500 read timeout", "timeout"),  # LWP's own responses: the words say what the status does not
    ("500 Can't connect to rides.internal:443 (Connection refused)", "connection"),
    ("Msg 18456, Level 14, State 1, Server SQL01, Line 1\nLogin failed for user 'app'.", "auth"),
    ("ActivityError: activity error: activity StartToClose timeout (type: StartToClose)", "timeout"),
    ("<h1>Developer Over Qps</h1>", "rate_limit"),
])
def test_wrapped_tuple_and_status_line_error_texts(text: str, meaning: str) -> None:
    got = V.read_text(text)
    assert got.is_error and got.meaning == meaning, got


@pytest.mark.parametrize("text", [
    "Error executing tools is what this guide is about.",
    "500 items found", "<h1>Welcome</h1><p>hello</p>", "3 validation errors were fixed in this release",
    "{ok,connected}",
])
def test_texts_that_only_look_like_those_forms(text: str) -> None:
    assert not V.read_text(text).is_error


@pytest.mark.parametrize("result,meaning", [
    ({"reason": "BadDeviceToken"}, "invalid_request"),  # APNs: a reason alone
    ({"errorName": "accessDenied", "message": "Access denied"}, "auth"),  # Worldpay
    ({"message-count": "1", "messages": [{"status": "4", "error-text": "Bad Credentials"}]}, "auth"),  # a batch of one
    ({"error_message": "The provided API key is invalid.", "routes": [], "status": "REQUEST_DENIED"}, "auth"),
    ({"code": 7, "message": "caller lacks permission", "details": []}, "auth"),  # google.rpc.Status
])
def test_vendor_report_shapes(result: dict[str, Any], meaning: str) -> None:
    got = V.read_value(result)
    assert got.is_error and got.meaning == meaning, got


def test_healthy_neighbours_of_the_vendor_report_shapes() -> None:
    assert not V.read_value({"reason": "because the customer asked"}).found
    assert not V.read_value({"message-count": "1", "messages": [{"status": "0", "message-id": "m1"}]}).found
    assert not V.read_value({"routes": [], "status": "ZERO_RESULTS"}).found
    # a small number in `code` beside a vendor's own members is not a gRPC status
    assert V.read_value({"errors": [{"code": 2, "description": "Request not allowed", "parameter": "x"}]}).evidence \
        != "grpc:UNKNOWN"


def test_a_count_under_meta_above_the_items_is_partial_unless_a_next_link_pages() -> None:
    base = {"origin": "OSL", "flights": [{"id": 1}], "meta": {"count": 4, "links": {"self": "https://x/1"}}}
    assert V.read_value(base).meaning == "partial"
    assert not V.read_value({**base, "meta": {"count": 4, "links": {"self": "s", "next": "n"}}}).found
    assert not V.read_value({**base, "meta": {"count": 1}}).found


def test_a_one_element_list_holding_an_error_is_an_error_body() -> None:
    body = [{"error": {"code": 429, "message": "Resource has been exhausted", "status": "RESOURCE_EXHAUSTED"}}]
    out = signals.body_signals(body)
    assert out[A.RESPONSE_FAILURE] == "rate_limit"
    assert A.RESPONSE_FAILURE not in signals.body_signals([{"id": 1}])


def test_a_longer_published_text_is_not_read_again_by_the_phrases_inside_it() -> None:
    hidden = {"errorMessages": ["Issue does not exist or you do not have permission to see it."], "errors": {}}
    assert V.read_value(hidden).meaning == "not_found"  # a 404 that hides a forbidden target
    refused = {"errorMessages": ["You do not have permission to create issues in this project."], "errors": {}}
    assert V.read_value(refused).meaning == "auth"


def _x12(ak9: str, st: str = "999") -> str:
    """An X12 acknowledgment interchange: a fixed-length ISA segment (``*`` between elements,
    ``~`` ending segments), then the group whose acceptance AK9 reports."""
    isa = ("ISA*00*          *00*          *ZZ*CARRIER        *ZZ*SHIPPER        *261206*0025*^*00501*"
           "000000905*0*P*:~")
    assert len(isa) == 106
    return isa + f"GS*FA*CARRIER*SHIPPER*20261206*0025*905*X*005010X231A1~ST*{st}*0001~AK1*SM*1208~{ak9}~SE*4*0001~"


@pytest.mark.parametrize("ak9,meaning", [("AK9*R*1*1*0", "invalid_request"), ("AK9*M*1*1*0", "invalid_request"),
                                         ("AK9*P*2*2*1", "partial")])
def test_an_x12_acknowledgment_that_rejects_the_group_is_a_rejected_call(ak9: str, meaning: str) -> None:
    got = V.read_result(_x12(ak9))
    assert got.meaning == meaning and got.form == "x12_ack"
    assert got.is_error == (meaning != "partial")


def test_an_accepted_x12_acknowledgment_and_other_x12_reads_as_nothing() -> None:
    assert not V.read_result(_x12("AK9*A*1*1*1")).found
    assert not V.read_result(_x12("AK9*E*1*1*1")).found  # accepted, errors noted
    assert not V.read_result(_x12("AK9*R*1*1*0", st="850")).found  # a purchase order, not an acknowledgment
    assert not V.read_result("ISA is the interchange header of an X12 file").found


def test_aspnet_web_api_http_errors_and_minimax_status_envelopes_are_error_reports() -> None:
    got = V.read_value({"Message": "An error has occurred.", "ExceptionMessage": "The operation has timed out.",
                        "ExceptionType": "System.TimeoutException", "StackTrace": None})
    assert got.is_error and got.meaning == "timeout"
    got = V.read_value({"Message": "Too many requests", "ExceptionMessage": "You have exceeded the rate limit"})
    assert got.is_error and got.meaning == "rate_limit"
    got = V.read_value({"base_resp": {"status_code": 1004,
                                      "status_msg": "login fail: Please carry the API secret key"}})
    assert got.is_error and got.meaning == "auth"
    # the same envelope on every healthy reply, and a record's own message, are nothing
    assert not V.read_value({"id": "r1", "choices": [{"message": {"content": "hi"}}],
                             "base_resp": {"status_code": 0, "status_msg": "success"}}).found
    assert not V.read_value({"Message": "Order shipped", "OrderId": 12}).found


def test_chinese_and_japanese_published_texts_are_found_inside_unsegmented_sentences() -> None:
    text = "系统检测到输入或生成内容可能包含不安全或敏感内容，请您避免输入。"
    got = V.read_value({"error": {"code": "1301", "message": text}})
    assert got.is_error and got.meaning == "content_filter"
    assert not V.read_value({"summary": "内容已发送", "status": "ok"}).found


def test_a_2xx_model_body_with_no_answer_and_a_status_envelope_is_a_body_error() -> None:
    """MiniMax answers failures with 200 and ``base_resp``; a body that answers is not read further."""
    failed = {"id": "r1", "base_resp": {"status_code": 1002, "status_msg": "rate limit exceeded(RPM)"}}
    for out in (signals.messages_body_signals(failed), signals.body_signals(dict(failed, choices=None))):
        assert out[A.RESPONSE_BODY_ERROR] is True and out[A.RESPONSE_FAILURE] == "rate_limit"
    healthy = {"base_resp": {"status_code": 1002, "status_msg": "rate limit exceeded(RPM)"},
               "content": [{"type": "text", "text": "Here you are."}]}
    assert signals.messages_body_signals(healthy) == {}
    assert A.RESPONSE_BODY_ERROR not in signals.body_signals({"choices": [], "usage": {"total_tokens": 0}})


@pytest.mark.parametrize("text,meaning,healthy", [
    # an Erlang/Elixir error term is an error report, not broken JSON (its atoms are not quoted keys)
    ('{error,{failed_connect,[{to_address,{"billing.internal",443}},{inet,[inet],nxdomain}]}}', "connection",
     '{"error_count": 0, "connected": true}'),
    # an XHTML error page behind its XML declaration (Varnish's "Guru Mediation" page)
    ('<?xml version="1.0" encoding="utf-8"?>\n<html><head><title>503 Backend is unhealthy</title></head><body>'
     '<h1>Error 503 Backend is unhealthy</h1></body></html>', "error",
     '<?xml version="1.0"?><order><id>7</id></order>'),
    # an XML error about one of the call's fields (Recurly API v2)
    ('<?xml version="1.0" encoding="UTF-8"?>\n<errors><error field="transaction.amount_in_cents" '
     'symbol="greater_than_invoice">is greater than the invoice total</error></errors>', "invalid_request",
     '<?xml version="1.0"?><refund><field>amount</field></refund>'),
    # a first line that says an error occurred, the platform's code below it (Vercel)
    ("An error occurred with your deployment\n\nFUNCTION_INVOCATION_TIMEOUT\n\niad1::k9x2v-1765000000000", "timeout",
     "An overview of error handling in deployments\n\nSee the guide below."),
])
def test_error_forms_of_runtimes_edges_and_billing_apis(text: str, meaning: str, healthy: str) -> None:
    got = tool_signals.tool_result_signals(text)
    assert got[A.TOOL_RESULT_IS_ERROR] and got[A.TOOL_RESULT_FAILURE] == meaning, got
    assert not tool_signals.tool_result_signals(healthy)[A.TOOL_RESULT_IS_ERROR]


def test_a_field_map_reads_as_validation_whatever_the_field_is_called() -> None:
    """Laravel's 422 keys messages by field, and a field may be called ``status``; a report's own
    ``status`` holds a string, never a list of messages."""
    said = "The selected status is invalid."
    got = V.read_value({"message": said, "errors": {"status": [said]}})
    assert got.is_error and got.meaning == "invalid_request" and "field_errors" in got.evidence
    assert V.read_value({"errors": {"status": "open", "code": "E1"}}).meaning != "invalid_request"


@pytest.mark.parametrize("result,meaning,healthy", [
    # a GraphQL root field resolved to an error type of its union (Dagster's GraphQL API)
    ({"data": {"launchRun": {"__typename": "UnauthorizedError", "message": "Viewer does not have permission."}}},
     "auth", {"data": {"launchRun": {"__typename": "LaunchRunSuccess", "run": {"runId": "r1"}}}}),
    # a `...OrError` field is a union: its member's type name decides, not the field's name
    ({"data": {"runOrError": {"__typename": "RunNotFoundError", "message": "Run r9 could not be found."}}},
     "not_found", {"data": {"runOrError": {"__typename": "Run", "runId": "r1", "status": "FAILURE"}}}),
    # dbt Cloud's status envelope on every answer
    ({"status": {"code": 429, "is_success": False, "user_message": "Request was throttled."}, "data": None},
     "rate_limit", {"status": {"code": 200, "is_success": True, "user_message": "Success!"}, "data": {"id": 1}}),
    # Airbyte's job with its FailureReason
    ({"jobId": 5, "status": "failed", "failureReason": {"failureOrigin": "source", "failureType": "system_error",
                                                        "externalMessage": "Something went wrong in the connector."}},
     "error", {"jobId": 5, "status": "succeeded", "failureReason": None}),
])
def test_graphql_unions_and_job_envelopes_of_data_platforms(result: dict[str, Any], meaning: str,
                                                            healthy: dict[str, Any]) -> None:
    got = V.read_value(result)
    assert got.is_error and got.meaning == meaning, got
    assert not V.read_value(healthy).found


def test_a_broker_answer_flagged_partial_is_partial_not_an_error() -> None:
    """Pinot's broker keeps the rows of the servers that answered and says so."""
    got = V.read_value({"resultTable": {"rows": [[0]]}, "partialResult": True, "numServersResponded": 2,
                        "exceptions": [{"errorCode": 427, "message": "1 servers [s3] not responded"}]})
    assert not got.is_error and got.meaning == "partial"
    assert not V.read_value({"resultTable": {"rows": [[0]]}, "partialResult": False}).found


def test_an_operation_outcome_broad_code_is_refined_by_its_diagnostics() -> None:
    """HAPI FHIR reports an unknown resource as ``processing``; the specific codes decide alone."""
    def outcome(code: str, diagnostics: str) -> dict[str, Any]:
        return {"resourceType": "OperationOutcome",
                "issue": [{"severity": "error", "code": code, "diagnostics": diagnostics}]}
    assert V.read_value(outcome("processing", "Resource Patient/9 is not known")).meaning == "not_found"
    assert V.read_value(outcome("exception", "java.net.SocketTimeoutException: Read timed out")).meaning == "timeout"
    assert V.read_value(outcome("security", "Patient/9 not found in the compartment")).meaning == "auth"
    # an error issue beside informational ones fails the call; a successful delete's outcome does not
    mixed = outcome("throttled", "Too many requests")
    mixed["issue"].insert(0, {"severity": "information", "code": "informational", "diagnostics": "ok"})
    assert V.read_value(mixed).meaning == "rate_limit"
    assert not V.read_value({"resourceType": "OperationOutcome", "issue": [
        {"severity": "information", "code": "informational", "diagnostics": "Successfully deleted 1 resource"}]}).found


def test_an_hl7_acknowledgment_that_did_not_accept_the_message_is_an_error() -> None:
    """MSA-1 AE/AR (CE/CR) is a negative acknowledgment; its ERR code or its text says why."""
    head = "MSH|^~\\&|ADT|CLINIC|DESK|CLINIC|20261214083014||ACK^A19^ACK|ACK1|P|2.5.1\r"
    got = V.read_text(head + "MSA|AE|MSG1\rERR||PID^1^3|204^Unknown key identifier^HL70357|E")
    assert got.is_error and got.meaning == "not_found" and got.evidence == "hl7:204"
    said = V.read_text(head + "MSA|AE|MSG2|Timeout waiting for response from destination 'Scheduling'")
    assert said.is_error and said.meaning == "timeout"
    assert V.read_text(head + "MSA|AR|MSG3").meaning == "error"
    assert not V.read_text(head + "MSA|AA|MSG4").found  # accepted
