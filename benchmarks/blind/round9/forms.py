"""Failure forms: how real systems answer when something goes wrong, each with its public source.

A form is one way one system reports one failure (or one way a result goes wrong), with the
taxonomy label it carries by meaning. Tool forms are shown in place of a tool's result (an error
body, a client library's exception, a changed or cut result); LLM forms are what the loopback
provider server sends instead of the scripted model's reply.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import botocore.exceptions
import requests
import urllib3.exceptions

ANY = ()
READS = ("search_patients", "get_patient", "check_eligibility", "find_slots", "list_appointments")
WRITES = ("book_appointment", "charge_copay", "send_patient_message", "submit_prior_auth", "create_referral",
          "cancel_appointment")
FHIR = ("search_patients", "get_patient", "find_slots", "list_appointments", "book_appointment",
        "cancel_appointment", "create_referral")
ELIG = ("check_eligibility", "submit_prior_auth")
PAY = ("charge_copay",)
MSG = ("send_patient_message",)
DOCS = ("create_referral", "submit_prior_auth")


@dataclass(frozen=True)
class Form:
    """One failure form; ``label``/``target`` follow docs/taxonomy.md."""

    name: str
    family: str
    label: str
    target: str
    source: str
    kind: str
    body: str = ""
    status: int = 200
    ops: tuple[str, ...] = ANY
    exc: Callable[[], BaseException] | None = None
    acted: bool = False
    data: str = ""
    finish: str = ""
    provider: str = ""

    @property
    def side(self) -> str:
        return "tool" if self.target == "tool_result" else "llm"

    def render_tool(self, op: str, result: Any, run: Any) -> str:
        if self.kind == "raise":
            assert self.exc is not None
            raise self.exc()
        if self.kind == "data":
            return mutate(self.data, op, result, run)
        return self.body


def _oo(code: str, diag: str, severity: str = "error") -> str:
    return json.dumps({"resourceType": "OperationOutcome", "issue": [
        {"severity": severity, "code": code, "diagnostics": diag}]})


def _g(code: int, status: str, message: str) -> str:
    return json.dumps({"error": {"code": code, "message": message, "status": status}})


def _trace(head: str, frames: list[str], cause: str = "") -> str:
    out = head + "".join(f"\n\tat {f}" for f in frames)
    return out + (f"\nCaused by: {cause}\n\t... 42 more" if cause else "")


HAPI_FRAMES = ["ca.uhn.fhir.rest.server.method.BaseMethodBinding.invokeServerMethod(BaseMethodBinding.java:265)",
               "ca.uhn.fhir.rest.server.method.SearchMethodBinding.invokeServer(SearchMethodBinding.java:265)",
               "ca.uhn.fhir.rest.server.RestfulServer.handleRequest(RestfulServer.java:1198)",
               "jakarta.servlet.http.HttpServlet.service(HttpServlet.java:527)"]
HAPI_DOC = "https://hapifhir.io/hapi-fhir/docs/server_plain/rest_operations.html"
FHIR_OO = "https://hl7.org/fhir/R4/valueset-issue-type.html"
EPIC = "https://fhir.epic.com/Documentation?docId=errorhandling"
CERNER = "https://docs.oracle.com/en/industries/health/millennium-platform-apis/fhir-r4-overview/"
AZURE = "https://learn.microsoft.com/en-us/azure/healthcare-apis/fhir/fhir-service-resource-manager-template"
GCP = "https://cloud.google.com/healthcare-api/docs/how-tos/fhir-resources#error_handling"
SMART = "https://datatracker.ietf.org/doc/html/rfc6750#section-3.1"
STEDI = "https://www.stedi.com/docs/healthcare/api-reference/post-healthcare-eligibility"
X12 = "https://x12.org/codes/reject-reason-codes"
HL7 = "https://www.hl7.eu/HL7v2x/v251/std251/ch02.html#Heading59"
MIRTH = "https://docs.nextgen.com/bundle/Mirth_User_Guide_41/page/connect/connect/topics/c_Response_Settings.html"

TOOL_FORMS: list[Form] = [
    # FHIR OperationOutcome, as HAPI FHIR, Epic, Oracle Health, Azure and Google Cloud write it.
    Form("hapi_not_known", "fhir_hapi", "not_found", "tool_result", HAPI_DOC, "text",
         _oo("processing", "HAPI-2001: Resource Patient/4471020 is not known"), 404, FHIR),
    Form("hapi_invalid_date", "fhir_hapi", "invalid_request", "tool_result", HAPI_DOC, "text",
         _oo("processing", "HAPI-1883: Invalid date/time format: \"2026-12-1\": Expected character '-' at index 7"),
         400, ("find_slots", "search_patients")),
    Form("hapi_version_conflict", "fhir_hapi", "invalid_request", "tool_result", HAPI_DOC, "text",
         _oo("conflict", "HAPI-0989: Resource version conflict, expected version 3 but found 4"), 409,
         ("book_appointment", "cancel_appointment")),
    Form("hapi_internal", "fhir_hapi", "error", "tool_result", HAPI_DOC, "text",
         _oo("exception", "HAPI-0389: Failed to call access method: java.lang.NullPointerException: Cannot invoke "
             "\"org.hl7.fhir.r4.model.Reference.getReference()\" because \"theSubject\" is null"), 500, FHIR),
    Form("hapi_access_denied", "fhir_hapi", "auth", "tool_result", HAPI_DOC, "text",
         _oo("security", "HAPI-0333: Access denied by rule: Deny all requests that do not match a patient compartment"),
         403, FHIR),
    Form("fhir_throttled", "fhir_issue_type", "rate_limit", "tool_result", FHIR_OO, "text",
         _oo("throttled", "Too many requests from this client; retry after 30 seconds"), 429, FHIR),
    Form("fhir_issue_timeout", "fhir_issue_type", "timeout", "tool_result", FHIR_OO, "text",
         _oo("timeout", "The search did not complete within the time allowed by the server"), 200, READS),
    Form("fhir_transient", "fhir_issue_type", "error", "tool_result", FHIR_OO, "text",
         _oo("transient", "Backend database is temporarily unavailable, please resubmit"), 503, FHIR),
    Form("fhir_login_expired", "fhir_issue_type", "auth", "tool_result", FHIR_OO, "text",
         _oo("expired", "User session expired; log in again"), 401, FHIR),
    Form("fhir_multiple_matches", "fhir_issue_type", "invalid_request", "tool_result", FHIR_OO, "text",
         _oo("multiple-matches", "Conditional create matched 2 resources; precondition failed"), 412,
         ("book_appointment", "create_referral")),
    Form("epic_not_authorized", "fhir_epic", "auth", "tool_result", EPIC, "text", json.dumps(
        {"resourceType": "OperationOutcome", "issue": [{"severity": "fatal", "code": "forbidden", "details": {
            "coding": [{"system": "urn:oid:1.2.840.114350.1.13.0.1.7.2.657369", "code": "4118",
                        "display": "User not authorized for request."}], "text": "User not authorized for request."},
            "diagnostics": "Client not authorized for Coverage.Search"}]}), 403, FHIR),
    Form("epic_invalid_param", "fhir_epic", "invalid_request", "tool_result", EPIC, "text", json.dumps(
        {"resourceType": "OperationOutcome", "issue": [{"severity": "fatal", "code": "value", "details": {
            "coding": [{"system": "urn:oid:1.2.840.114350.1.13.0.1.7.2.657369", "code": "59159",
                        "display": "Search request contains invalid parameters."}]},
            "expression": ["birthdate"]}]}), 400, ("search_patients", "find_slots")),
    Form("epic_invalid_id", "fhir_epic", "not_found", "tool_result", EPIC, "text", json.dumps(
        {"resourceType": "OperationOutcome", "issue": [{"severity": "fatal", "code": "not-found", "details": {
            "coding": [{"system": "urn:oid:1.2.840.114350.1.13.0.1.7.2.657369", "code": "4102",
                        "display": "The read resource request contained an invalid ID."}]}}]}), 404,
        ("get_patient", "list_appointments", "cancel_appointment")),
    Form("cerner_too_many", "fhir_oracle_health", "rate_limit", "tool_result", CERNER, "text", json.dumps(
        {"resourceType": "OperationOutcome", "issue": [{"severity": "error", "code": "throttled",
         "diagnostics": "Request rate exceeds the limit for client 9a8c1e2f; retry after 1 s"}]}), 429, FHIR),
    Form("cerner_unauthorized", "fhir_oracle_health", "auth", "tool_result", CERNER, "text", json.dumps(
        {"resourceType": "OperationOutcome", "issue": [{"severity": "error", "code": "security",
         "details": {"text": "Bearer token is invalid or has expired"}}]}), 401, FHIR),
    Form("cerner_unavailable", "fhir_oracle_health", "error", "tool_result", CERNER, "text", json.dumps(
        {"resourceType": "OperationOutcome", "issue": [{"severity": "fatal", "code": "exception",
         "diagnostics": "Millennium service unavailable (HTTP 503); please retry"}]}), 503, FHIR),
    Form("azure_throttled", "fhir_azure", "rate_limit", "tool_result", AZURE, "text", json.dumps(
        {"resourceType": "OperationOutcome", "id": "6f1c3a0d2c0e4b44a3f5", "issue": [{"severity": "error",
         "code": "throttled", "diagnostics": "The request rate exceeded the provisioned throughput. "
         "x-ms-retry-after-ms: 1120"}]}), 429, FHIR),
    Form("azure_forbidden", "fhir_azure", "auth", "tool_result", AZURE, "text", json.dumps(
        {"resourceType": "OperationOutcome", "id": "b2c9", "issue": [{"severity": "error", "code": "forbidden",
         "diagnostics": "Authorization failed."}]}), 403, FHIR),
    Form("azure_not_found", "fhir_azure", "not_found", "tool_result", AZURE, "text", json.dumps(
        {"resourceType": "OperationOutcome", "id": "77e0", "issue": [{"severity": "error", "code": "not-found",
         "diagnostics": "Resource type 'Patient' with id '4471020' couldn't be found."}]}), 404, FHIR),
    Form("gcp_not_found", "gcp_healthcare", "not_found", "tool_result", GCP, "text",
         _g(404, "NOT_FOUND", "resource not found: Patient/4471020"), 404, FHIR),
    Form("gcp_quota", "gcp_healthcare", "rate_limit", "tool_result", GCP, "text",
         _g(429, "RESOURCE_EXHAUSTED", "Quota exceeded for quota metric 'FHIR read requests' and limit "
            "'FHIR read requests per minute per region' of service 'healthcare.googleapis.com'"), 429, FHIR),
    Form("gcp_unavailable", "gcp_healthcare", "error", "tool_result", GCP, "text",
         _g(503, "UNAVAILABLE", "The service is currently unavailable."), 503, FHIR),
    Form("gcp_permission", "gcp_healthcare", "auth", "tool_result", GCP, "text",
         _g(403, "PERMISSION_DENIED", "Permission 'healthcare.fhirResources.get' denied on resource "
            "'projects/clinic-prod/locations/us/datasets/ehr/fhirStores/main' (or it may not exist)."), 403, FHIR),
    Form("gcp_deadline", "gcp_healthcare", "timeout", "tool_result", GCP, "text",
         _g(504, "DEADLINE_EXCEEDED", "Deadline expired before operation could complete."), 504, READS),
    # SMART on FHIR / OAuth 2.0 bearer-token errors.
    Form("smart_invalid_token", "smart_oauth", "auth", "tool_result", SMART, "text",
         json.dumps({"error": "invalid_token", "error_description": "The access token expired"}), 401, ANY),
    Form("smart_insufficient_scope", "smart_oauth", "auth", "tool_result", SMART, "text",
         json.dumps({"error": "insufficient_scope", "error_description": "scope user/Coverage.read is required",
                     "scope": "user/Coverage.read"}), 403, ANY),
    Form("smart_invalid_grant", "smart_oauth", "auth", "tool_result",
         "https://datatracker.ietf.org/doc/html/rfc6749#section-5.2", "text",
         json.dumps({"error": "invalid_grant", "error_description": "Refresh token is expired or revoked"}), 400, ANY),
    Form("smart_www_authenticate", "smart_oauth", "auth", "tool_result", SMART, "text",
         'HTTP/1.1 401 Unauthorized\nWWW-Authenticate: Bearer realm="fhir", error="invalid_token", '
         'error_description="The access token expired"', 401, ANY),
    Form("smart_temporarily_unavailable", "smart_oauth", "error", "tool_result",
         "https://datatracker.ietf.org/doc/html/rfc6749#section-4.1.2.1", "text",
         json.dumps({"error": "temporarily_unavailable", "error_description":
                     "The authorization server is currently unable to handle the request"}), 503, ANY),
    # X12 271 AAA rejects, as eligibility clearinghouse JSON APIs return them.
    Form("x12_aaa_42", "x12_271_aaa", "error", "tool_result", X12, "text", json.dumps(
        {"status": "complete", "errors": [{"code": "42", "description": "Unable to Respond at Current Time",
         "followupAction": "Resubmission Allowed", "location": "Loop 2100A"}]}), 200, ELIG),
    Form("x12_aaa_72", "x12_271_aaa", "invalid_request", "tool_result", X12, "text", json.dumps(
        {"errors": [{"code": "72", "description": "Invalid/Missing Subscriber/Insured ID",
         "followupAction": "Please Correct and Resubmit", "location": "Loop 2100C"}]}), 200, ELIG),
    Form("x12_aaa_75", "x12_271_aaa", "not_found", "tool_result", X12, "text", json.dumps(
        {"errors": [{"code": "75", "description": "Subscriber/Insured Not Found",
         "followupAction": "Please Correct and Resubmit", "location": "Loop 2100C"}]}), 200, ELIG),
    Form("x12_aaa_41", "x12_271_aaa", "auth", "tool_result", X12, "text", json.dumps(
        {"errors": [{"code": "41", "description": "Authorization/Access Restrictions",
         "followupAction": "Do Not Resubmit; We Will Hold Your Request and Respond Again Shortly"}]}), 200, ELIG),
    Form("x12_aaa_80", "x12_271_aaa", "timeout", "tool_result", X12, "text", json.dumps(
        {"errors": [{"code": "80", "description": "No Response received - Transaction Terminated",
         "followupAction": "Resubmission Allowed"}]}), 200, ELIG),
    Form("x12_raw_271_42", "x12_271_aaa", "error", "tool_result", X12, "text",
         "ISA*00*          *00*          *ZZ*CLEARHOUSE     *ZZ*FRONTDESK      *261214*0830*^*00501*000000905*0*P*:~"
         "GS*HB*CLEARHOUSE*FRONTDESK*20261214*0830*905*X*005010X279A1~ST*271*0001*005010X279A1~"
         "BHT*0022*11*10001234*20261214*0830~HL*1**20*1~NM1*PR*2*PAYER*****PI*60054~AAA*Y**42*R~SE*6*0001~",
         200, ELIG),
    Form("stedi_payer_unavailable", "clearinghouse_json", "error", "tool_result", STEDI, "text", json.dumps(
        {"code": "payer_unavailable", "message": "The payer's system did not respond successfully. "
         "Please try again later.", "errors": [{"code": "42", "description": "Unable to Respond at Current Time"}]}),
         200, ELIG),
    Form("availity_communication_error", "clearinghouse_json", "timeout", "tool_result",
         "https://developer.availity.com/partner/documentation#c_coverages_references", "text", json.dumps(
             {"id": "7712044", "statusCode": "7", "status": "Communication Error",
              "failureReason": "The payer did not respond in time"}), 200, ELIG),
    Form("availity_validation", "clearinghouse_json", "invalid_request", "tool_result",
         "https://developer.availity.com/partner/documentation#c_coverages_references", "text", json.dumps(
             {"userMessage": "The request could not be processed", "validationMessages": [
                 {"field": "memberId", "errorMessage": "Member ID must be 2-80 alphanumeric characters"}]}),
         400, ELIG),
    Form("apigee_quota", "clearinghouse_json", "rate_limit", "tool_result",
         "https://docs.apigee.com/api-platform/reference/policies/quota-policy#errorreference", "text",
         json.dumps({"fault": {"faultstring": "Rate limit quota violation. Quota limit  exceeded. Identifier : "
                    "eligibility-app", "detail": {"errorcode": "policies.ratelimit.QuotaViolation"}}}), 429, ELIG),
    Form("apigee_invalid_token", "clearinghouse_json", "auth", "tool_result",
         "https://docs.apigee.com/api-platform/reference/policies/oauthv2-policy#runtime-errors", "text",
         json.dumps({"fault": {"faultstring": "Invalid access token",
                    "detail": {"errorcode": "oauth.v2.InvalidAccessToken"}}}), 401, ELIG),
    # HL7v2 acknowledgements and Mirth Connect.
    Form("hl7_ae_table_value", "hl7v2_ack", "invalid_request", "tool_result", HL7, "text",
         "MSH|^~\\&|SCHED|CLINIC|FRONTDESK|CLINIC|20261214083012||ACK^S12^ACK|ACK4471|P|2.5.1\r"
         "MSA|AE|MSG00042\rERR||SCH^1^7|103^Table value not found^HL70357|E||||Unknown appointment reason code", 200,
         ("book_appointment", "cancel_appointment", "create_referral")),
    Form("hl7_ar_internal", "hl7v2_ack", "error", "tool_result", HL7, "text",
         "MSH|^~\\&|SCHED|CLINIC|FRONTDESK|CLINIC|20261214083013||ACK^S12^ACK|ACK4472|P|2.5.1\r"
         "MSA|AR|MSG00043\rERR|||207^Application internal error^HL70357|E", 200,
         ("book_appointment", "cancel_appointment", "create_referral")),
    Form("hl7_ae_unknown_key", "hl7v2_ack", "not_found", "tool_result", HL7, "text",
         "MSH|^~\\&|ADT|CLINIC|FRONTDESK|CLINIC|20261214083014||ACK^A19^ACK|ACK4473|P|2.5.1\r"
         "MSA|AE|MSG00044\rERR||PID^1^3|204^Unknown key identifier^HL70357|E", 200,
         ("get_patient", "list_appointments", "cancel_appointment")),
    Form("hl7_ae_required_missing", "hl7v2_ack", "invalid_request", "tool_result", HL7, "text",
         "MSH|^~\\&|SCHED|CLINIC|FRONTDESK|CLINIC|20261214083015||ACK^S12^ACK|ACK4474|P|2.5.1\r"
         "MSA|AE|MSG00045\rERR||AIL^1^3|101^Required field missing^HL70357|E", 200,
         ("book_appointment", "create_referral")),
    Form("mirth_connect_refused", "mirth_connect", "connection", "tool_result", MIRTH, "text",
         "ERROR: Error connecting to web service.\ncom.mirth.connect.connectors.ws.WebServiceDispatcherException: "
         "java.net.ConnectException: Connection refused (Connection refused)", 200, WRITES),
    Form("mirth_queue_timeout", "mirth_connect", "timeout", "tool_result", MIRTH, "text",
         "MSH|^~\\&|MIRTH|CLINIC|FRONTDESK|CLINIC|20261214083016||ACK|ACK4475|P|2.5.1\r"
         "MSA|AE|MSG00046|Timeout waiting for response from destination 'Scheduling HL7 Sender'", 200,
         ("book_appointment", "create_referral", "cancel_appointment")),
    # Scheduling APIs.
    Form("gcal_rate_limit", "google_calendar", "rate_limit", "tool_result",
         "https://developers.google.com/calendar/api/guides/errors#403_rate_limit_exceeded", "text", json.dumps(
             {"error": {"errors": [{"domain": "usageLimits", "reason": "rateLimitExceeded",
              "message": "Rate Limit Exceeded"}], "code": 403, "message": "Rate Limit Exceeded"}}), 403,
         ("find_slots", "book_appointment", "cancel_appointment")),
    Form("gcal_not_found", "google_calendar", "not_found", "tool_result",
         "https://developers.google.com/calendar/api/guides/errors#404_not_found", "text", json.dumps(
             {"error": {"errors": [{"domain": "global", "reason": "notFound", "message": "Not Found"}],
              "code": 404, "message": "Not Found"}}), 404, ("find_slots", "cancel_appointment")),
    Form("gcal_auth", "google_calendar", "auth", "tool_result",
         "https://developers.google.com/calendar/api/guides/errors#401_invalid_credentials", "text", json.dumps(
             {"error": {"errors": [{"domain": "global", "reason": "authError", "message": "Invalid Credentials",
              "locationType": "header", "location": "Authorization"}], "code": 401,
              "message": "Invalid Credentials"}}), 401, ("find_slots", "book_appointment")),
    Form("gcal_backend", "google_calendar", "error", "tool_result",
         "https://developers.google.com/calendar/api/guides/errors#500_backend_error", "text", json.dumps(
             {"error": {"errors": [{"domain": "global", "reason": "backendError", "message": "Backend Error"}],
              "code": 500, "message": "Backend Error"}}), 500, ("find_slots", "book_appointment")),
    Form("gcal_conflict", "google_calendar", "invalid_request", "tool_result",
         "https://developers.google.com/calendar/api/guides/errors#409_the_requested_identifier_already_exists",
         "text", json.dumps({"error": {"errors": [{"domain": "global", "reason": "duplicate",
                            "message": "The requested identifier already exists."}], "code": 409,
                            "message": "The requested identifier already exists."}}), 409, ("book_appointment",)),
    Form("calendly_not_found", "calendly", "not_found", "tool_result",
         "https://developer.calendly.com/api-docs/ZG9jOjM2MzE2MDM4-errors", "text", json.dumps(
             {"title": "Resource Not Found", "message": "The server could not find the requested resource.",
              "details": []}), 404, ("find_slots", "cancel_appointment")),
    Form("calendly_too_many", "calendly", "rate_limit", "tool_result",
         "https://developer.calendly.com/api-docs/ZG9jOjM2MzE2MDM4-errors", "text", json.dumps(
             {"title": "Too Many Requests", "message": "You have exceeded the rate limit. Please try again later."}),
         429, ("find_slots", "book_appointment")),
    Form("calendly_invalid", "calendly", "invalid_request", "tool_result",
         "https://developer.calendly.com/api-docs/ZG9jOjM2MzE2MDM4-errors", "text", json.dumps(
             {"title": "Invalid Argument", "message": "The supplied parameters are invalid.",
              "details": [{"parameter": "start_time", "message": "must be a valid time in the future"}]}), 400,
         ("find_slots", "book_appointment")),
    Form("zoom_invalid_token", "zoom_api", "auth", "tool_result",
         "https://developers.zoom.us/docs/api/rest/other-references/error-definitions/", "text",
         json.dumps({"code": 124, "message": "Invalid access token."}), 401, ("book_appointment",)),
    Form("zoom_meeting_missing", "zoom_api", "not_found", "tool_result",
         "https://developers.zoom.us/docs/api/rest/other-references/error-definitions/", "text",
         json.dumps({"code": 3001, "message": "Meeting does not exist: 81234567890."}), 404,
         ("book_appointment", "cancel_appointment")),
    Form("zoom_rate_limit", "zoom_api", "rate_limit", "tool_result",
         "https://developers.zoom.us/docs/api/rest/rate-limits/", "text", json.dumps(
             {"code": 429, "message": "You have reached the maximum per-second rate limit for this API. "
              "Try again later."}), 429, ("book_appointment",)),
    Form("calcom_booking_conflict", "cal_com", "invalid_request", "tool_result",
         "https://cal.com/docs/api-reference/v2/bookings/create-a-booking", "text", json.dumps(
             {"status": "error", "timestamp": "2026-12-14T08:30:12.114Z", "path": "/v2/bookings", "error": {
                 "code": "BadRequestException",
                 "message": "User either already has booking at this time or is not available"}}), 400,
         ("book_appointment",)),
    Form("calcom_internal", "cal_com", "error", "tool_result",
         "https://cal.com/docs/api-reference/v2/introduction", "text", json.dumps(
             {"status": "error", "timestamp": "2026-12-14T08:30:13.020Z", "path": "/v2/slots", "error": {
                 "code": "InternalServerErrorException", "message": "Internal server error"}}), 500,
         ("find_slots", "book_appointment")),
    # Payments.
    Form("square_rate_limited", "square_payments", "rate_limit", "tool_result",
         "https://developer.squareup.com/reference/square/objects/Error", "text", json.dumps(
             {"errors": [{"category": "RATE_LIMIT_ERROR", "code": "RATE_LIMITED",
              "detail": "Rate limited. Please retry in a few seconds."}]}), 429, PAY),
    Form("square_unauthorized", "square_payments", "auth", "tool_result",
         "https://developer.squareup.com/reference/square/enums/ErrorCode", "text", json.dumps(
             {"errors": [{"category": "AUTHENTICATION_ERROR", "code": "UNAUTHORIZED",
              "detail": "This request could not be authorized."}]}), 401, PAY),
    Form("square_invalid_value", "square_payments", "invalid_request", "tool_result",
         "https://developer.squareup.com/reference/square/enums/ErrorCode", "text", json.dumps(
             {"errors": [{"category": "INVALID_REQUEST_ERROR", "code": "INVALID_VALUE",
              "detail": "Invalid location_id.", "field": "location_id"}]}), 400, PAY),
    Form("square_service_unavailable", "square_payments", "error", "tool_result",
         "https://developer.squareup.com/reference/square/enums/ErrorCode", "text", json.dumps(
             {"errors": [{"category": "API_ERROR", "code": "SERVICE_UNAVAILABLE",
              "detail": "The service is temporarily unavailable."}]}), 503, PAY),
    Form("square_gateway_timeout_charged", "square_payments", "timeout", "tool_result",
         "https://developer.squareup.com/docs/build-basics/common-api-patterns/idempotency", "text", json.dumps(
             {"errors": [{"category": "API_ERROR", "code": "GATEWAY_TIMEOUT",
              "detail": "Gateway timed out waiting for the payment processor."}]}), 504, PAY, acted=True),
    Form("square_card_not_found", "square_payments", "not_found", "tool_result",
         "https://developer.squareup.com/reference/square/enums/ErrorCode", "text", json.dumps(
             {"errors": [{"category": "INVALID_REQUEST_ERROR", "code": "NOT_FOUND",
              "detail": "Card with id ccof:7Gh2 not found.", "field": "source_id"}]}), 404, PAY),
    Form("adyen_validation", "adyen", "invalid_request", "tool_result",
         "https://docs.adyen.com/development-resources/error-codes/", "text", json.dumps(
             {"status": 422, "errorCode": "137", "message": "Invalid amount specified", "errorType": "validation",
              "pspReference": "QFQTPCQ8HXSKGK82"}), 422, PAY),
    Form("adyen_security", "adyen", "auth", "tool_result",
         "https://docs.adyen.com/development-resources/error-codes/", "text", json.dumps(
             {"status": 401, "errorCode": "000", "message": "HTTP Status Response - Unauthorized",
              "errorType": "security"}), 401, PAY),
    Form("adyen_internal", "adyen", "error", "tool_result",
         "https://docs.adyen.com/development-resources/error-codes/", "text", json.dumps(
             {"status": 500, "errorCode": "901", "message": "Internal error", "errorType": "internal",
              "pspReference": "V4HZ4RBFJGXXGN82"}), 500, PAY),
    Form("authnet_auth_failed", "authorize_net", "auth", "tool_result",
         "https://developer.authorize.net/api/reference/responseCodes.html?code=E00007", "text", json.dumps(
             {"messages": {"resultCode": "Error", "message": [{"code": "E00007", "text":
              "User authentication failed due to invalid authentication values."}]}}), 200, PAY),
    Form("authnet_general_error", "authorize_net", "error", "tool_result",
         "https://developer.authorize.net/api/reference/responseCodes.html?code=E00001", "text", json.dumps(
             {"messages": {"resultCode": "Error", "message": [{"code": "E00001", "text":
              "An error occurred during processing. Please try again."}]}}), 200, PAY),
    Form("authnet_xml_not_found", "authorize_net", "not_found", "tool_result",
         "https://developer.authorize.net/api/reference/responseCodes.html?code=E00040", "text",
         '<?xml version="1.0" encoding="utf-8"?><ErrorResponse xmlns="AnetApi/xml/v1/schema/AnetApiSchema.xsd">'
         "<messages><resultCode>Error</resultCode><message><code>E00040</code><text>The record cannot be found."
         "</text></message></messages></ErrorResponse>", 200, PAY),
    Form("plaid_item_login", "plaid", "auth", "tool_result", "https://plaid.com/docs/errors/item/#item_login_required",
         "text", json.dumps({"display_message": None, "error_code": "ITEM_LOGIN_REQUIRED", "error_message":
                             "the login details of this item have changed (credentials, MFA, or required user "
                             "action) and a user login is required to update this information.",
                             "error_type": "ITEM_ERROR", "request_id": "HNTDNrA8F1shFEW"}), 400, PAY),
    Form("plaid_rate_limit", "plaid", "rate_limit", "tool_result", "https://plaid.com/docs/errors/rate-limit-exceeded/",
         "text", json.dumps({"display_message": None, "error_code": "RATE_LIMIT", "error_message":
                             "rate limit exceeded for attempts to access this item. please try again later",
                             "error_type": "RATE_LIMIT_EXCEEDED", "request_id": "Qm1kYj4wRm9aZ2V"}), 429, PAY),
    Form("plaid_institution_down", "plaid", "error", "tool_result",
         "https://plaid.com/docs/errors/institution/#institution_down", "text", json.dumps(
             {"display_message": "This financial institution is not currently responding to requests.",
              "error_code": "INSTITUTION_DOWN", "error_message": "this institution is not currently responding to "
              "this request. please try again soon", "error_type": "INSTITUTION_ERROR",
              "request_id": "9BfkQ2kR1zTQs3d"}), 400, PAY),
    Form("checkout_request_invalid", "checkout_com", "invalid_request", "tool_result",
         "https://www.checkout.com/docs/developer-resources/codes/error-codes", "text", json.dumps(
             {"request_id": "0HL80RJLS76I7", "error_type": "request_invalid",
              "error_codes": ["amount_invalid", "currency_required"]}), 422, PAY),
    Form("braintree_unavailable", "braintree", "error", "tool_result",
         "https://developer.paypal.com/braintree/docs/reference/general/exceptions/python#service-unavailable-error",
         "raise", ops=PAY, exc=lambda: RuntimeError(
             "braintree.exceptions.service_unavailable_error.ServiceUnavailableError: 503 Service Unavailable")),
    # Documents, e-signature and fax.
    Form("docusign_auth_failed", "docusign", "auth", "tool_result",
         "https://developers.docusign.com/docs/esign-rest-api/esign101/error-codes/", "text", json.dumps(
             {"errorCode": "USER_AUTHENTICATION_FAILED", "message":
              "One or both of Username and Password are invalid. Invalid access token"}), 401, DOCS),
    Form("docusign_hourly_limit", "docusign", "rate_limit", "tool_result",
         "https://developers.docusign.com/platform/account/rules-and-limits/", "text", json.dumps(
             {"errorCode": "HOURLY_APIINVOCATION_LIMIT_EXCEEDED", "message":
              "The maximum number of hourly API invocations has been exceeded. Hourly Limit: 3000"}), 400, DOCS),
    Form("docusign_envelope_missing", "docusign", "not_found", "tool_result",
         "https://developers.docusign.com/docs/esign-rest-api/esign101/error-codes/", "text", json.dumps(
             {"errorCode": "ENVELOPE_DOES_NOT_EXIST", "message":
              "The envelope specified either does not exist or you have no rights to it."}), 400, DOCS),
    Form("box_not_found", "box", "not_found", "tool_result",
         "https://developer.box.com/reference/resources/client-error/", "text", json.dumps(
             {"type": "error", "status": 404, "code": "not_found", "context_info": {"errors": []},
              "help_url": "http://developers.box.com/docs/#errors", "message": "Not Found",
              "request_id": "abcdef123456"}), 404, DOCS),
    Form("box_rate_limit", "box", "rate_limit", "tool_result",
         "https://developer.box.com/guides/api-calls/permissions-and-errors/rate-limits/", "text", json.dumps(
             {"type": "error", "status": 429, "code": "rate_limit_exceeded",
              "help_url": "http://developers.box.com/docs/#errors", "message": "Request rate limit exceeded, "
              "please try again later", "request_id": "0c8a8a4b2d"}), 429, DOCS),
    Form("box_unavailable", "box", "error", "tool_result",
         "https://developer.box.com/reference/resources/client-error/", "text", json.dumps(
             {"type": "error", "status": 503, "code": "unavailable", "message": "Unavailable",
              "request_id": "8f0a99b1c4"}), 503, DOCS),
    Form("dropbox_path_not_found", "dropbox", "not_found", "tool_result",
         "https://www.dropbox.com/developers/documentation/http/documentation#error-handling", "text", json.dumps(
             {"error_summary": "path/not_found/..", "error": {".tag": "path", "path": {".tag": "not_found"}}}),
         409, DOCS),
    Form("dropbox_too_many_writes", "dropbox", "rate_limit", "tool_result",
         "https://www.dropbox.com/developers/documentation/http/documentation#error-handling", "text", json.dumps(
             {"error_summary": "too_many_write_operations/..", "error": {"reason": {
                 ".tag": "too_many_write_operations"}, "retry_after": 1}}), 429, DOCS),
    Form("dropbox_expired_token", "dropbox", "auth", "tool_result",
         "https://www.dropbox.com/developers/documentation/http/documentation#error-handling", "text", json.dumps(
             {"error_summary": "expired_access_token/..", "error": {".tag": "expired_access_token"}}), 401, DOCS),
    Form("phaxio_invalid_number", "fax_api", "invalid_request", "tool_result",
         "https://www.phaxio.com/docs/api/v2.1/faxes/create_and_send_fax", "text", json.dumps(
             {"success": False, "message": "Phone number is not formatted correctly or invalid. Please check the "
              "number and try again."}), 422, DOCS),
    # Messaging.
    Form("twilio_rate_limited", "twilio_messaging", "rate_limit", "tool_result",
         "https://www.twilio.com/docs/api/errors/20429", "text", json.dumps(
             {"code": 20429, "message": "Too Many Requests", "more_info": "https://www.twilio.com/docs/errors/20429",
              "status": 429}), 429, MSG),
    Form("twilio_auth", "twilio_messaging", "auth", "tool_result",
         "https://www.twilio.com/docs/api/errors/20003", "text", json.dumps(
             {"code": 20003, "message": "Authenticate", "more_info": "https://www.twilio.com/docs/errors/20003",
              "status": 401}), 401, MSG),
    Form("twilio_invalid_to", "twilio_messaging", "invalid_request", "tool_result",
         "https://www.twilio.com/docs/api/errors/21211", "text", json.dumps(
             {"code": 21211, "message": "The 'To' number +1555 is not a valid phone number.",
              "more_info": "https://www.twilio.com/docs/errors/21211", "status": 400}), 400, MSG),
    # Python client libraries' exceptions, raised as they raise them.
    Form("requests_connection_refused", "python_requests", "connection", "tool_result",
         "https://requests.readthedocs.io/en/latest/api/#requests.ConnectionError", "raise", ops=ANY,
         exc=lambda: requests.exceptions.ConnectionError(urllib3.exceptions.MaxRetryError(
             None, "/fhir/r4/Patient", urllib3.exceptions.NewConnectionError(
                 None, "Failed to establish a new connection: [Errno 111] Connection refused")))),
    Form("requests_read_timeout", "python_requests", "timeout", "tool_result",
         "https://requests.readthedocs.io/en/latest/api/#requests.ReadTimeout", "raise", ops=ANY,
         exc=lambda: requests.exceptions.ReadTimeout(
             "HTTPSConnectionPool(host='fhir.clinic.example', port=443): Read timed out. (read timeout=10)")),
    Form("requests_http_503", "python_requests", "error", "tool_result",
         "https://requests.readthedocs.io/en/latest/api/#requests.Response.raise_for_status", "raise", ops=ANY,
         exc=lambda: requests.exceptions.HTTPError(
             "503 Server Error: Service Unavailable for url: https://fhir.clinic.example/r4/Slot?schedule=84")),
    Form("requests_http_429", "python_requests", "rate_limit", "tool_result",
         "https://requests.readthedocs.io/en/latest/api/#requests.Response.raise_for_status", "raise", ops=ANY,
         exc=lambda: requests.exceptions.HTTPError(
             "429 Client Error: Too Many Requests for url: https://api.payer.example/eligibility/v3")),
    Form("requests_http_401", "python_requests", "auth", "tool_result",
         "https://requests.readthedocs.io/en/latest/api/#requests.Response.raise_for_status", "raise", ops=ANY,
         exc=lambda: requests.exceptions.HTTPError(
             "401 Client Error: Unauthorized for url: https://fhir.clinic.example/r4/Patient/4471020")),
    Form("requests_http_404", "python_requests", "not_found", "tool_result",
         "https://requests.readthedocs.io/en/latest/api/#requests.Response.raise_for_status", "raise",
         ops=("get_patient", "list_appointments", "cancel_appointment"),
         exc=lambda: requests.exceptions.HTTPError(
             "404 Client Error: Not Found for url: https://fhir.clinic.example/r4/Patient/4471020")),
    Form("urllib3_remote_disconnected", "python_requests", "connection", "tool_result",
         "https://urllib3.readthedocs.io/en/stable/reference/urllib3.exceptions.html", "raise", ops=ANY,
         exc=lambda: requests.exceptions.ConnectionError(
             "('Connection aborted.', RemoteDisconnected('Remote end closed connection without response'))")),
    Form("aiohttp_connector", "python_aiohttp", "connection", "tool_result",
         "https://docs.aiohttp.org/en/stable/client_reference.html#aiohttp.ClientConnectorError", "text",
         "aiohttp.client_exceptions.ClientConnectorError: Cannot connect to host payer-gw.example:443 "
         "ssl:default [Connect call failed ('10.20.0.7', 443)]", ops=ELIG + MSG),
    Form("aiohttp_disconnected", "python_aiohttp", "connection", "tool_result",
         "https://docs.aiohttp.org/en/stable/client_reference.html#aiohttp.ServerDisconnectedError", "text",
         "aiohttp.client_exceptions.ServerDisconnectedError: Server disconnected", ops=ELIG + MSG),
    Form("aiohttp_response_429", "python_aiohttp", "rate_limit", "tool_result",
         "https://docs.aiohttp.org/en/stable/client_reference.html#aiohttp.ClientResponseError", "text",
         "aiohttp.client_exceptions.ClientResponseError: 429, message='Too Many Requests', "
         "url='https://api.portal.example/v1/messages'", ops=MSG + ELIG),
    Form("asyncio_timeout", "python_aiohttp", "timeout", "tool_result",
         "https://docs.python.org/3/library/exceptions.html#TimeoutError", "raise", ops=ANY,
         exc=lambda: TimeoutError("Timeout on reading data from socket")),
    Form("boto_throttling", "botocore", "rate_limit", "tool_result",
         "https://docs.aws.amazon.com/boto3/latest/guide/error-handling.html", "raise", ops=DOCS + MSG,
         exc=lambda: botocore.exceptions.ClientError(
             {"Error": {"Code": "ThrottlingException", "Message": "Rate exceeded"},
              "ResponseMetadata": {"HTTPStatusCode": 400, "MaxAttemptsReached": True, "RetryAttempts": 4}},
             "SendMessage")),
    Form("boto_access_denied", "botocore", "auth", "tool_result",
         "https://docs.aws.amazon.com/boto3/latest/guide/error-handling.html", "raise", ops=DOCS + MSG,
         exc=lambda: botocore.exceptions.ClientError(
             {"Error": {"Code": "AccessDeniedException", "Message": "User: arn:aws:sts::123456789012:assumed-role/"
              "frontdesk/agent is not authorized to perform: healthlake:ReadResource"}}, "ReadResource")),
    Form("boto_no_such_key", "botocore", "not_found", "tool_result",
         "https://docs.aws.amazon.com/AmazonS3/latest/API/ErrorResponses.html", "raise", ops=DOCS,
         exc=lambda: botocore.exceptions.ClientError(
             {"Error": {"Code": "NoSuchKey", "Message": "The specified key does not exist.",
              "Key": "referrals/4471020/letter.pdf"}}, "GetObject")),
    Form("boto_service_unavailable", "botocore", "error", "tool_result",
         "https://docs.aws.amazon.com/AmazonS3/latest/API/ErrorResponses.html", "raise", ops=DOCS + MSG,
         exc=lambda: botocore.exceptions.ClientError(
             {"Error": {"Code": "ServiceUnavailable", "Message": "Service is unable to handle request."}},
             "PutObject")),
    Form("boto_endpoint_connection", "botocore", "connection", "tool_result",
         "https://botocore.amazonaws.com/v1/documentation/api/latest/reference/exceptions.html", "raise",
         ops=DOCS + MSG, exc=lambda: botocore.exceptions.EndpointConnectionError(
             endpoint_url="https://healthlake.us-east-1.amazonaws.com/datastore/8c2f/r4/Patient")),
    Form("boto_read_timeout", "botocore", "timeout", "tool_result",
         "https://botocore.amazonaws.com/v1/documentation/api/latest/reference/exceptions.html", "raise",
         ops=DOCS + MSG, exc=lambda: botocore.exceptions.ReadTimeoutError(
             endpoint_url="https://sns.us-east-1.amazonaws.com/")),
    Form("grpc_unavailable", "grpc", "connection", "tool_result", "https://grpc.io/docs/guides/status-codes/", "text",
         "<_InactiveRpcError of RPC that terminated with:\n\tstatus = StatusCode.UNAVAILABLE\n\tdetails = \"failed "
         "to connect to all addresses; last error: UNKNOWN: ipv4:10.2.0.4:50051: Failed to connect to remote host: "
         "Connection refused\"\n\tdebug_error_string = \"UNKNOWN:Error received from peer  {grpc_status:14}\"\n>",
         ops=READS),
    Form("grpc_deadline", "grpc", "timeout", "tool_result", "https://grpc.io/docs/guides/status-codes/", "text",
         "<_InactiveRpcError of RPC that terminated with:\n\tstatus = StatusCode.DEADLINE_EXCEEDED\n\tdetails = "
         "\"Deadline Exceeded\"\n\tdebug_error_string = \"UNKNOWN:Deadline Exceeded {grpc_status:4}\"\n>",
         ops=READS),
    Form("grpc_permission", "grpc", "auth", "tool_result", "https://grpc.io/docs/guides/status-codes/", "text",
         "<_InactiveRpcError of RPC that terminated with:\n\tstatus = StatusCode.PERMISSION_DENIED\n\tdetails = "
         "\"caller does not have permission scheduling.slots.list\"\n>", ops=("find_slots",)),
    Form("grpc_resource_exhausted", "grpc", "rate_limit", "tool_result", "https://grpc.io/docs/guides/status-codes/",
         "text", "<_InactiveRpcError of RPC that terminated with:\n\tstatus = StatusCode.RESOURCE_EXHAUSTED\n\t"
         "details = \"Quota exceeded for slots.list\"\n>", ops=("find_slots", "search_patients")),
    Form("psycopg_connection", "psycopg", "connection", "tool_result",
         "https://www.psycopg.org/psycopg3/docs/api/errors.html", "text",
         "psycopg.OperationalError: connection failed: connection to server at \"10.0.3.12\", port 5432 failed: "
         "Connection refused\n\tIs the server running on that host and accepting TCP/IP connections?", ops=ANY),
    Form("psycopg_statement_timeout", "psycopg", "timeout", "tool_result",
         "https://www.postgresql.org/docs/current/errcodes-appendix.html", "text",
         "psycopg.errors.QueryCanceled: canceling statement due to statement timeout", ops=READS),
    Form("psycopg_unique_violation", "psycopg", "invalid_request", "tool_result",
         "https://www.postgresql.org/docs/current/errcodes-appendix.html", "text",
         "psycopg.errors.UniqueViolation: duplicate key value violates unique constraint \"appointment_slot_key\"\n"
         "DETAIL:  Key (slot_id)=(slot-84a-141000) already exists.", ops=("book_appointment",)),
    Form("psycopg_undefined_table", "psycopg", "not_found", "tool_result",
         "https://www.postgresql.org/docs/current/errcodes-appendix.html", "text",
         "psycopg.errors.UndefinedTable: relation \"coverage_v2\" does not exist\nLINE 1: SELECT payer_id FROM "
         "coverage_v2 WHERE patient_id = $1", ops=("get_patient",)),
    Form("psycopg_serialization", "psycopg", "error", "tool_result",
         "https://www.postgresql.org/docs/current/errcodes-appendix.html", "text",
         "psycopg.errors.SerializationFailure: could not serialize access due to concurrent update",
         ops=WRITES),
    Form("redis_connection", "redis_py", "connection", "tool_result",
         "https://redis.readthedocs.io/en/stable/exceptions.html", "text",
         "redis.exceptions.ConnectionError: Error 111 connecting to session-cache:6379. Connection refused.", ops=ANY),
    Form("redis_timeout", "redis_py", "timeout", "tool_result",
         "https://redis.readthedocs.io/en/stable/exceptions.html", "text",
         "redis.exceptions.TimeoutError: Timeout reading from socket", ops=READS),
    Form("redis_oom", "redis_py", "error", "tool_result", "https://redis.io/docs/latest/operate/rs/databases/memory-performance/eviction-policy/",
         "text", "redis.exceptions.ResponseError: OOM command not allowed when used memory > 'maxmemory'.", ops=ANY),
    Form("redis_auth", "redis_py", "auth", "tool_result", "https://redis.readthedocs.io/en/stable/exceptions.html",
         "text", "redis.exceptions.AuthenticationError: invalid username-password pair or user is disabled.",
         ops=ANY),
    Form("gapi_deadline", "google_api_core", "timeout", "tool_result",
         "https://googleapis.dev/python/google-api-core/latest/exceptions.html", "text",
         "google.api_core.exceptions.DeadlineExceeded: 504 Deadline Exceeded", ops=READS),
    Form("gapi_too_many", "google_api_core", "rate_limit", "tool_result",
         "https://googleapis.dev/python/google-api-core/latest/exceptions.html", "text",
         "google.api_core.exceptions.TooManyRequests: 429 Quota exceeded for quota metric 'Requests' and limit "
         "'Requests per minute' of service 'healthcare.googleapis.com'", ops=READS),
    Form("gapi_permission", "google_api_core", "auth", "tool_result",
         "https://googleapis.dev/python/google-api-core/latest/exceptions.html", "text",
         "google.api_core.exceptions.PermissionDenied: 403 Permission 'healthcare.fhirStores.searchResources' "
         "denied on resource (or it may not exist).", ops=READS),
    Form("gapi_not_found", "google_api_core", "not_found", "tool_result",
         "https://googleapis.dev/python/google-api-core/latest/exceptions.html", "text",
         "google.api_core.exceptions.NotFound: 404 Resource not found (resource=Patient/4471020).",
         ops=("get_patient", "list_appointments")),
    Form("fhirclient_unauthorized", "fhirclient", "auth", "tool_result",
         "https://github.com/smart-on-fhir/client-py/blob/main/fhirclient/server.py", "text",
         "fhirclient.server.FHIRUnauthorizedException: <Response [401]>", ops=FHIR),
    Form("fhirclient_not_found", "fhirclient", "not_found", "tool_result",
         "https://github.com/smart-on-fhir/client-py/blob/main/fhirclient/server.py", "text",
         "fhirclient.server.FHIRNotFoundException: <Response [404]>", ops=("get_patient", "list_appointments")),
    # Java stack traces from Java FHIR servers.
    Form("java_hapi_internal", "java_stacktrace", "error", "tool_result", HAPI_DOC, "text", _trace(
        "ca.uhn.fhir.rest.server.exceptions.InternalErrorException: HAPI-1361: Failed to call access method: "
        "java.lang.NullPointerException", HAPI_FRAMES), ops=FHIR),
    Form("java_hapi_not_found", "java_stacktrace", "not_found", "tool_result", HAPI_DOC, "text", _trace(
        "ca.uhn.fhir.rest.server.exceptions.ResourceNotFoundException: HAPI-2001: Resource Patient/4471020 is not "
        "known", HAPI_FRAMES[:2]), ops=("get_patient", "list_appointments")),
    Form("java_hikari_timeout", "java_stacktrace", "timeout", "tool_result",
         "https://github.com/brettwooldridge/HikariCP#frequently-used", "text", _trace(
             "org.springframework.transaction.CannotCreateTransactionException: Could not open JPA EntityManager for "
             "transaction",
             ["org.springframework.orm.jpa.JpaTransactionManager.doBegin(JpaTransactionManager.java:466)"],
             "java.sql.SQLTransientConnectionException: HikariPool-1 - Connection is not available, request timed "
             "out after 30000ms."), ops=FHIR),
    Form("java_socket_timeout", "java_stacktrace", "timeout", "tool_result",
         "https://docs.oracle.com/en/java/javase/17/docs/api/java.base/java/net/SocketTimeoutException.html", "text",
         _trace("java.net.SocketTimeoutException: Read timed out", [
             "java.base/sun.nio.ch.NioSocketImpl.timedRead(NioSocketImpl.java:288)",
             "java.base/java.net.Socket$SocketInputStream.read(Socket.java:966)"]), ops=ANY),
    Form("java_connect_refused", "java_stacktrace", "connection", "tool_result",
         "https://docs.oracle.com/en/java/javase/17/docs/api/java.base/java/net/ConnectException.html", "text",
         _trace("java.net.ConnectException: Connection refused", [
             "java.base/sun.nio.ch.Net.pollConnect(Native Method)",
             "org.apache.http.impl.conn.DefaultHttpClientConnectionOperator.connect(DefaultHttpClientConnectionOperator.java:142)"]),
         ops=ANY),
    Form("java_hapi_invalid", "java_stacktrace", "invalid_request", "tool_result", HAPI_DOC, "text", _trace(
        "ca.uhn.fhir.rest.server.exceptions.InvalidRequestException: HAPI-1821: Failed to parse request body as "
        "JSON resource. Error was: HAPI-1861: Failed to parse JSON encoded FHIR content", HAPI_FRAMES[:2]),
        ops=("book_appointment", "create_referral")),
    Form("java_oom", "java_stacktrace", "error", "tool_result",
         "https://docs.oracle.com/en/java/javase/17/troubleshoot/troubleshooting-memory-leaks.html", "text",
         "Exception in thread \"http-nio-8080-exec-7\" java.lang.OutOfMemoryError: Java heap space", ops=FHIR),
    # Gateway pages and gateway JSON in front of the tools' services.
    Form("nginx_502_page", "gateway_page", "error", "tool_result",
         "https://nginx.org/en/docs/http/ngx_http_proxy_module.html", "text",
         "<html>\r\n<head><title>502 Bad Gateway</title></head>\r\n<body>\r\n<center><h1>502 Bad Gateway</h1>"
         "</center>\r\n<hr><center>nginx</center>\r\n</body>\r\n</html>", 502, ANY),
    Form("nginx_504_page", "gateway_page", "timeout", "tool_result",
         "https://nginx.org/en/docs/http/ngx_http_proxy_module.html#proxy_read_timeout", "text",
         "<html>\r\n<head><title>504 Gateway Time-out</title></head>\r\n<body>\r\n<center><h1>504 Gateway Time-out"
         "</h1></center>\r\n<hr><center>nginx</center>\r\n</body>\r\n</html>", 504, ANY),
    Form("haproxy_503", "gateway_page", "error", "tool_result",
         "https://docs.haproxy.org/2.8/configuration.html#4-errorfile", "text",
         "<html><body><h1>503 Service Unavailable</h1>\nNo server is available to handle this request.\n"
         "</body></html>", 503, ANY),
    Form("envoy_reset", "gateway_page", "connection", "tool_result",
         "https://www.envoyproxy.io/docs/envoy/latest/configuration/http/http_conn_man/response_code_details",
         "text", "upstream connect error or disconnect/reset before headers. reset reason: connection termination",
         503, ANY),
    Form("envoy_upstream_timeout", "gateway_page", "timeout", "tool_result",
         "https://www.envoyproxy.io/docs/envoy/latest/faq/configuration/timeouts", "text",
         "upstream request timeout", 504, ANY),
    Form("aws_apigw_timeout", "gateway_json", "timeout", "tool_result",
         "https://docs.aws.amazon.com/apigateway/latest/developerguide/supported-gateway-response-types.html",
         "text", json.dumps({"message": "Endpoint request timed out"}), 504, ANY),
    Form("aws_apigw_forbidden", "gateway_json", "auth", "tool_result",
         "https://docs.aws.amazon.com/apigateway/latest/developerguide/supported-gateway-response-types.html",
         "text", json.dumps({"message": "Forbidden"}), 403, ANY),
    Form("azure_apim_rate", "gateway_json", "rate_limit", "tool_result",
         "https://learn.microsoft.com/en-us/azure/api-management/rate-limit-policy", "text",
         json.dumps({"statusCode": 429, "message": "Rate limit is exceeded. Try again in 12 seconds."}), 429, ANY),
    Form("kong_rate_tool", "gateway_json", "rate_limit", "tool_result",
         "https://developer.konghq.com/plugins/rate-limiting/", "text",
         json.dumps({"message": "API rate limit exceeded"}), 429, ANY),
    Form("kong_no_key_tool", "gateway_json", "auth", "tool_result",
         "https://developer.konghq.com/plugins/key-auth/", "text",
         json.dumps({"message": "No API key found in request"}), 401, ANY),
    # Results that are well formed but wrong, cut, renamed or empty.
    Form("fhir_wrong_patient_id", "wrong_value", "wrong_value", "tool_result", "https://hl7.org/fhir/R4/patient.html",
         "data", ops=("search_patients",), data="wrong_patient"),
    Form("coverage_member_shifted", "wrong_value", "wrong_value", "tool_result", "https://hl7.org/fhir/R4/coverage.html",
         "data", ops=("get_patient",), data="wrong_member"),
    Form("copay_amount_shifted", "wrong_value", "wrong_value", "tool_result", STEDI, "data",
         ops=("check_eligibility",), data="wrong_copay"),
    Form("slot_ids_swapped", "wrong_value", "wrong_value", "tool_result", "https://hl7.org/fhir/R4/slot.html",
         "data", ops=("find_slots",), data="wrong_slot"),
    Form("appointment_start_shifted", "wrong_value", "wrong_value", "tool_result",
         "https://hl7.org/fhir/R4/appointment.html", "data", ops=("book_appointment",), data="wrong_start"),
    Form("stale_appointment_id", "stale_data", "wrong_value", "tool_result", "https://hl7.org/fhir/R4/appointment.html",
         "data", ops=("list_appointments",), data="stale_appointment"),
    Form("stale_coverage_payer", "stale_data", "wrong_value", "tool_result", "https://hl7.org/fhir/R4/coverage.html",
         "data", ops=("get_patient",), data="stale_payer"),
    Form("bundle_cut_with_total", "truncated", "truncated", "tool_result",
         "https://hl7.org/fhir/R4/bundle-definitions.html#Bundle.total", "data", ops=("search_patients", "find_slots"),
         data="cut_total"),
    Form("bundle_subsetted", "truncated", "truncated", "tool_result",
         "https://hl7.org/fhir/R4/search.html#summary", "data", ops=("find_slots", "list_appointments"),
         data="cut_subsetted"),
    Form("patient_keys_camel", "key_rename", "key_rename", "tool_result", "https://hl7.org/fhir/R4/patient.html",
         "data", ops=("get_patient",), data="rename_coverage"),
    Form("bundle_entry_renamed", "key_rename", "key_rename", "tool_result", "https://hl7.org/fhir/R4/bundle.html",
         "data", ops=("search_patients", "find_slots", "list_appointments"), data="rename_entry"),
    Form("copay_key_renamed", "key_rename", "key_rename", "tool_result", STEDI, "data",
         ops=("check_eligibility",), data="rename_copay"),
    Form("empty_object", "empty_result", "empty", "tool_result", "https://hl7.org/fhir/R4/http.html#read", "data",
         ops=("get_patient", "check_eligibility"), data="empty_object"),
    Form("empty_array", "empty_result", "empty", "tool_result", "https://hl7.org/fhir/R4/http.html#search", "data",
         ops=("search_patients", "find_slots", "list_appointments"), data="empty_array"),
    Form("empty_null", "empty_result", "empty", "tool_result", "https://hl7.org/fhir/R4/http.html#search", "data",
         ops=READS, data="empty_null"),
    Form("json_cut", "malformed_json", "malformed_json", "tool_result", "https://www.rfc-editor.org/rfc/rfc8259",
         "data", ops=READS, data="cut_json"),
]


def _render_wrong(kind: str, op: str, res: dict[str, Any], run: Any) -> Any:
    if kind == "wrong_patient":
        others = [r[0] for r in run.db.execute("select id from patient order by id")]
        for e in res.get("entry", []):
            pid = e["resource"]["id"]
            e["resource"]["id"] = next((o for o in others if o > pid), others[0])
    elif kind == "wrong_member":
        m = res["coverage"]["member_id"]
        res["coverage"]["member_id"] = m[:-2] + str((int(m[-2:]) + 1) % 100).zfill(2)
    elif kind == "stale_payer":
        res["coverage"]["payer_id"] = "87726" if res["coverage"]["payer_id"] != "87726" else "62308"
    elif kind == "wrong_copay":
        res["copay"]["amount"] = round(res["copay"]["amount"] * 1.08, 2)
    elif kind == "wrong_slot":
        ents = res.get("entry", [])
        ids = [e["resource"]["id"] for e in ents]
        for n, e in enumerate(ents):
            e["resource"]["id"] = ids[(n + 1) % len(ids)]
    elif kind == "wrong_start":
        h = int(res["start"][11:13])
        res["start"] = res["start"][:11] + f"{h + 1:02d}" + res["start"][13:]
    elif kind == "stale_appointment":
        for e in res.get("entry", []):
            a = e["resource"]["id"]
            e["resource"]["id"] = a[:-1] + str((int(a[-1]) + 3) % 10)
    return res


def mutate(kind: str, op: str, res: Any, run: Any) -> str:
    """The changed result a data form shows in place of ``res``."""
    if kind.startswith(("wrong_", "stale_")):
        return json.dumps(_render_wrong(kind, op, res, run))
    if kind == "cut_total":
        keep = [e for e in res["entry"] if run.items_match(e) is False][: max(1, len(res["entry"]) // 2)]
        res["entry"] = keep
        return json.dumps(res)
    if kind == "cut_subsetted":
        res["entry"] = [e for e in res["entry"] if run.items_match(e) is False][:1]
        res["meta"] = {"tag": [{"system": "http://terminology.hl7.org/CodeSystem/v3-ObservationValue",
                                "code": "SUBSETTED"}]}
        return json.dumps(res)
    if kind == "rename_coverage":
        res["Coverage"] = {"payerId": res["coverage"]["payer_id"], "memberId": res["coverage"]["member_id"]}
        del res["coverage"]
        return json.dumps(res)
    if kind == "rename_entry":
        res["entries"] = res.pop("entry")
        res["total"] = str(res["total"])
        return json.dumps(res)
    if kind == "rename_copay":
        res["copayAmount"] = str(res.pop("copay")["amount"])
        return json.dumps(res)
    if kind == "empty_object":
        return "{}"
    if kind == "empty_array":
        return "[]"
    if kind == "empty_null":
        return "null"
    if kind == "cut_json":
        text = json.dumps(res)
        return text[: len(text) * 2 // 5]
    raise ValueError(kind)
