"""The failure forms: how real systems answer when they fail, each with the label its meaning takes.

Tool forms (``side='tool'``) are what a CRM, messaging, identity, search, cache, database, edge,
runtime or billing API returns; model forms (``side='llm'``) are how the providers imitated by the
loopback server fail. Every form names the public page its shape comes from (``source``).
Placeholders: ``$rid`` a request id, ``$arg`` the call's first argument.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

CRM = ("get_customer", "get_ticket", "update_ticket")
MSG_EMAIL = ("send_email",)
MSG_SMS = ("send_sms",)
PAGE = ("page_oncall",)
KB = ("search_kb",)
BILL = ("issue_refund", "apply_credit", "get_subscription")
DATA = ("lookup_order", "get_subscription", "get_customer")
ANY = ("get_customer", "lookup_order", "get_subscription", "update_ticket", "get_ticket", "search_kb",
       "send_email", "schedule_csat")


@dataclass(frozen=True)
class Form:
    id: str
    family: str
    label: str
    side: str                              # tool | llm
    mech: str                              # tool: text | wrong_value | key_rename | truncated | malformed | empty
    source: str                            # llm: http | disconnect | read_timeout | body200 | stream_error |
    tools: tuple[str, ...] = ()            #      content200 | finish | cut | corrupt | empty | stale |
    payload: str = ""                      #      args_empty | args_schema | latency
    opts: dict[str, Any] = field(default_factory=dict)


FORMS: list[Form] = []


def _t(id_: str, family: str, label: str, tools: tuple[str, ...], payload: str, source: str) -> None:
    FORMS.append(Form(id_, family, label, "tool", "text", source, tools, payload))


def _d(id_: str, family: str, label: str, mech: str, tools: tuple[str, ...], source: str, **opts: Any) -> None:
    FORMS.append(Form(id_, family, label, "tool", mech, source, tools, "", opts))


def _l(id_: str, family: str, label: str, mech: str, source: str, payload: str = "", **opts: Any) -> None:
    FORMS.append(Form(id_, family, label, "llm", mech, source, (), payload, opts))


SF = "https://developer.salesforce.com/docs/atlas.en-us.api_rest.meta/api_rest/errorcodes.htm"
SFC = "https://developer.salesforce.com/docs/atlas.en-us.api_rest.meta/api_rest/resources_composite_composite.htm"
_t("sf_request_limit", "crm_salesforce", "rate_limit", CRM,
   '[{"message":"TotalRequests Limit exceeded.","errorCode":"REQUEST_LIMIT_EXCEEDED"}]', SF)
_t("sf_invalid_session", "crm_salesforce", "auth", CRM,
   '[{"message":"Session expired or invalid","errorCode":"INVALID_SESSION_ID"}]', SF)
_t("sf_not_found", "crm_salesforce", "not_found", CRM,
   '[{"errorCode":"NOT_FOUND","message":"The requested resource does not exist"}]', SF)
_t("sf_required_field", "crm_salesforce", "invalid_request", ("update_ticket",),
   '[{"message":"Required fields are missing: [Status]","errorCode":"REQUIRED_FIELD_MISSING","fields":["Status"]}]',
   SF)
_t("sf_composite_unknown_exception", "crm_salesforce", "error", CRM,
   '{"compositeResponse":[{"body":[{"errorCode":"UNKNOWN_EXCEPTION","message":"An unexpected error occurred. '
   'Please include this ErrorId if you contact support: 1837025151-71183 (-1240178447)"}],"httpHeaders":{},'
   '"httpStatusCode":500,"referenceId":"refCase"}]}', SFC)
ZD = "https://developer.zendesk.com/api-reference/introduction/responses/"
_t("zd_record_not_found", "crm_zendesk", "not_found", CRM, '{"error":"RecordNotFound","description":"Not found"}', ZD)
_t("zd_record_invalid", "crm_zendesk", "invalid_request", ("update_ticket",),
   '{"error":"RecordInvalid","description":"Record validation errors","details":{"status":[{"description":'
   '"Status: closed prevents ticket update","error":"ClosedPrevents"}]}}', ZD)
_t("zd_forbidden", "crm_zendesk", "auth", CRM,
   '{"error":"Forbidden","description":"You do not have access to this page. Please contact the account owner '
   'of this help desk for further help."}', ZD)
_t("zd_ticket_update_rate", "crm_zendesk", "rate_limit", ("update_ticket",),
   '{"error":{"title":"Too Many Requests","message":"Rate limit for ticket updates exceeded, please wait '
   'before updating this ticket again"}}', "https://developer.zendesk.com/api-reference/introduction/rate-limits/")
HS = "https://developers.hubspot.com/docs/api/error-handling"
_t("hs_rate", "crm_hubspot", "rate_limit", CRM,
   '{"status":"error","message":"You have reached your secondly limit.","errorType":"RATE_LIMIT",'
   '"correlationId":"$rid","policyName":"SECONDLY","groupName":"cos_apps"}', HS)
_t("hs_object_not_found", "crm_hubspot", "not_found", CRM,
   '{"status":"error","message":"resource not found","correlationId":"$rid","category":"OBJECT_NOT_FOUND"}', HS)
_t("hs_validation", "crm_hubspot", "invalid_request", ("update_ticket",),
   '{"status":"error","message":"Property values were not valid: [{\\"isValid\\":false,\\"message\\":\\"'
   'pending was not one of the allowed options\\",\\"error\\":\\"INVALID_OPTION\\",\\"name\\":\\"hs_pipeline_stage'
   '\\"}]","correlationId":"$rid","category":"VALIDATION_ERROR"}', HS)
_t("hs_missing_scopes", "crm_hubspot", "auth", CRM,
   '{"status":"error","message":"This app hasn\'t been granted all required scopes to make this call.",'
   '"correlationId":"$rid","category":"MISSING_SCOPES"}', HS)
IC = "https://developers.intercom.com/docs/references/rest-api/errors/error-codes"
_t("ic_unauthorized", "crm_intercom", "auth", CRM,
   '{"type":"error.list","request_id":"$rid","errors":[{"code":"unauthorized","message":"Access Token Invalid"}]}', IC)
_t("ic_not_found", "crm_intercom", "not_found", CRM,
   '{"type":"error.list","request_id":"$rid","errors":[{"code":"not_found","message":"User Not Found"}]}', IC)
_t("ic_rate_limited", "crm_intercom", "rate_limit", CRM,
   '{"type":"error.list","request_id":"$rid","errors":[{"code":"rate_limit_exceeded","message":"Exceeded rate '
   'limit of 1000 in 60 seconds"}]}', IC)
_t("ic_server_error", "crm_intercom", "error", CRM,
   '{"type":"error.list","request_id":"$rid","errors":[{"code":"server_error","message":"Server Error"}]}', IC)
FD = "https://developers.freshdesk.com/api/#error"
_t("fd_validation", "crm_freshdesk", "invalid_request", ("update_ticket",),
   '{"description":"Validation failed","errors":[{"field":"status","message":"It should be one of these values: '
   '\'2,3,4,5,6,7\'","code":"invalid_value"}]}', FD)
_t("fd_access_denied", "crm_freshdesk", "auth", CRM,
   '{"code":"access_denied","message":"You are not authorized to perform this action."}', FD)
SN = "https://docs.servicenow.com/bundle/washingtondc-api-reference/page/integrate/inbound-rest/concept/c_TableAPI.html"
_t("sn_no_record", "itsm_servicenow", "not_found", CRM,
   '{"error":{"message":"No Record found","detail":"Record doesn\'t exist or ACL restricts the record retrieval"},'
   '"status":"failure"}', SN)
_t("sn_not_authenticated", "itsm_servicenow", "auth", CRM,
   '{"error":{"message":"User Not Authenticated","detail":"Required to provide Auth information"},"status":"failure"}',
   SN)
_t("sn_transaction_cancelled", "itsm_servicenow", "timeout", CRM,
   '{"error":{"message":"Transaction cancelled: maximum execution time exceeded","detail":"Transaction cancelled: '
   'maximum execution time exceeded Check logs for error trace or enable glide.rest.debug property to verify REST '
   'request processing"},"status":"failure"}', SN)
JIRA = "https://developer.atlassian.com/cloud/jira/platform/rest/v3/intro/#status-codes"
_t("jira_issue_missing", "itsm_jira", "not_found", CRM,
   '{"errorMessages":["Issue does not exist or you do not have permission to see it."],"errors":{}}', JIRA)
_t("jira_field_not_on_screen", "itsm_jira", "invalid_request", ("update_ticket",),
   '{"errorMessages":[],"errors":{"customfield_10010":"Field \'customfield_10010\' cannot be set. It is not on the '
   'appropriate screen, or unknown."}}', JIRA)
_t("zoho_invalid_oauth", "crm_zoho", "auth", CRM,
   '{"errorCode":"INVALID_OAUTH","message":"The OAuth Token you provided is invalid."}',
   "https://desk.zoho.com/DeskAPIDocument#ErrorCodes")
_t("zoho_resource_not_found", "crm_zoho", "not_found", CRM,
   '{"errorCode":"RESOURCE_NOT_FOUND","message":"The requested resource does not exist."}',
   "https://desk.zoho.com/DeskAPIDocument#ErrorCodes")

TW = "https://www.twilio.com/docs/api/errors"
_t("tw_21211_invalid_to", "msg_twilio", "invalid_request", MSG_SMS,
   '{"code":21211,"message":"Invalid \'To\' Phone Number: $arg","more_info":"https://www.twilio.com/docs/errors/21211",'
   '"status":400}', TW + "/21211")
_t("tw_20429_too_many", "msg_twilio", "rate_limit", MSG_SMS,
   '{"code":20429,"message":"Too Many Requests","more_info":"https://www.twilio.com/docs/errors/20429","status":429}',
   TW + "/20429")
_t("tw_20003_auth", "msg_twilio", "auth", MSG_SMS,
   '{"code":20003,"message":"Authenticate","more_info":"https://www.twilio.com/docs/errors/20003","status":401}',
   TW + "/20003")
_t("tw_21610_unsubscribed", "msg_twilio", "invalid_request", MSG_SMS,
   '{"code":21610,"message":"Attempt to send to unsubscribed recipient","more_info":'
   '"https://www.twilio.com/docs/errors/21610","status":400}', TW + "/21610")
SG = "https://www.twilio.com/docs/sendgrid/api-reference/how-to-use-the-sendgrid-v3-api/errors"
_t("sg_unauthorized", "msg_sendgrid", "auth", MSG_EMAIL,
   '{"errors":[{"message":"The provided authorization grant is invalid, expired, or revoked","field":null,'
   '"help":null}]}', SG)
_t("sg_invalid_address", "msg_sendgrid", "invalid_request", MSG_EMAIL,
   '{"errors":[{"message":"Does not contain a valid address.","field":"personalizations.0.to.0.email","help":'
   '"http://sendgrid.com/docs/API_Reference/Web_API_v3/Mail/errors.html#message.personalizations.to"}]}', SG)
_t("sg_too_many", "msg_sendgrid", "rate_limit", MSG_EMAIL, '{"errors":[{"field":null,"message":"too many requests"}]}',
   SG)
MG = "https://documentation.mailgun.com/docs/mailgun/api-reference/#api-responses"
_t("mg_domain_not_found", "msg_mailgun", "not_found", MSG_EMAIL, '{"message":"Domain not found: mg.example-desk.com"}',
   MG)
_t("mg_invalid_to", "msg_mailgun", "invalid_request", MSG_EMAIL,
   '{"message":"to parameter is not a valid address. please check documentation"}', MG)
_t("mg_invalid_key", "msg_mailgun", "auth", MSG_EMAIL, "Forbidden", MG)
PM = "https://postmarkapp.com/developer/api/overview#error-codes"
_t("pm_406_inactive", "msg_postmark", "invalid_request", MSG_EMAIL,
   '{"ErrorCode":406,"Message":"You tried to send to recipient(s) that have been marked as inactive. Found '
   'inactive addresses: $arg. Inactive recipients are ones that have generated a hard bounce, a spam complaint, '
   'or a manual suppression."}', PM)
_t("pm_10_no_token", "msg_postmark", "auth", MSG_EMAIL,
   '{"ErrorCode":10,"Message":"No Account or Server API tokens were supplied in the HTTP headers. Please add a '
   'header for either X-Postmark-Server-Token or X-Postmark-Account-Token."}', PM)
VN = "https://developer.vonage.com/en/messaging/sms/guides/troubleshooting-sms"
_t("vn_throughput", "msg_vonage", "rate_limit", MSG_SMS,
   '{"message-count":"1","messages":[{"status":"1","error-text":"Throughput Rate Exceeded - please wait [ 1000 ] '
   'and retry"}]}', VN)
_t("vn_bad_credentials", "msg_vonage", "auth", MSG_SMS,
   '{"message-count":"1","messages":[{"status":"4","error-text":"Bad Credentials"}]}', VN)
SL = "https://api.slack.com/methods/chat.postMessage#errors"
_t("slack_ratelimited", "msg_slack", "rate_limit", PAGE, '{"ok":false,"error":"ratelimited"}',
   "https://api.slack.com/docs/rate-limits")
_t("slack_channel_not_found", "msg_slack", "not_found", PAGE,
   '{"ok":false,"error":"channel_not_found","response_metadata":{"messages":[]}}', SL)
_t("slack_invalid_auth", "msg_slack", "auth", PAGE, '{"ok":false,"error":"invalid_auth"}', SL)
_t("slack_fatal_error", "msg_slack", "error", PAGE, '{"ok":false,"error":"fatal_error"}', SL)
GR = "https://learn.microsoft.com/en-us/graph/errors"
_t("graph_too_many", "msg_graph", "rate_limit", MSG_EMAIL,
   '{"error":{"code":"TooManyRequests","message":"Too many requests","innerError":{"date":"2026-12-06T03:41:07",'
   '"request-id":"$rid","client-request-id":"$rid"}}}', "https://learn.microsoft.com/en-us/graph/throttling")
_t("graph_resource_not_found", "msg_graph", "not_found", MSG_EMAIL,
   '{"error":{"code":"ResourceNotFound","message":"Resource could not be discovered.","innerError":{"request-id":'
   '"$rid"}}}', GR)
_t("graph_invalid_token", "msg_graph", "auth", MSG_EMAIL,
   '{"error":{"code":"InvalidAuthenticationToken","message":"Access token has expired or is not yet valid.",'
   '"innerError":{"request-id":"$rid"}}}', GR)
_t("graph_service_unavailable", "msg_graph", "error", MSG_EMAIL,
   '{"error":{"code":"serviceNotAvailable","message":"The service is temporarily unavailable for maintenance or is '
   'overloaded. You may repeat the request after a delay."}}', GR)
GM = "https://developers.google.com/gmail/api/guides/handle-errors"
_t("gmail_user_rate", "msg_gmail", "rate_limit", MSG_EMAIL,
   '{"error":{"code":429,"message":"User-rate limit exceeded.","errors":[{"domain":"usageLimits","reason":'
   '"rateLimitExceeded","message":"User-rate limit exceeded."}],"status":"RESOURCE_EXHAUSTED"}}', GM)
_t("gmail_backend_error", "msg_gmail", "error", MSG_EMAIL,
   '{"error":{"code":500,"message":"Backend Error","errors":[{"domain":"global","reason":"backendError","message":'
   '"Backend Error"}]}}', GM)
PD = "https://developer.pagerduty.com/docs/ZG9jOjExMDI5NTYz-errors"
_t("pd_invalid_input", "ops_pagerduty", "invalid_request", PAGE,
   '{"error":{"message":"Invalid Input Provided","code":2001,"errors":["Service must be a valid service reference."]}}',
   PD)
_t("pd_events_invalid", "ops_pagerduty", "invalid_request", PAGE,
   '{"status":"invalid event","message":"Event object is invalid","errors":["\'routing_key\' is missing or blank"]}',
   "https://developer.pagerduty.com/docs/events-api-v2/trigger-events/")
_t("pd_rate_limit", "ops_pagerduty", "rate_limit", PAGE, '{"error":{"message":"Rate Limit Exceeded","code":2020}}',
   "https://developer.pagerduty.com/docs/72d3b724589e3-rest-api-rate-limits")
OG = "https://docs.opsgenie.com/docs/response"
_t("og_too_many", "ops_opsgenie", "rate_limit", PAGE,
   '{"message":"You are making too many requests! To avoid errors, we recommend you limit requests.","took":0.003,'
   '"requestId":"$rid"}', "https://docs.opsgenie.com/docs/api-rate-limiting")
_t("og_team_missing", "ops_opsgenie", "not_found", PAGE,
   '{"message":"No team exists with name [desk-oncall]","took":0.004,"requestId":"$rid"}', OG)
_t("og_auth", "ops_opsgenie", "auth", PAGE, '{"message":"Could not authenticate","took":0.001,"requestId":"$rid"}', OG)

OK_ = "https://developer.okta.com/docs/reference/error-codes/"
_t("okta_e0000011", "id_okta", "auth", ("get_customer", "get_subscription"),
   '{"errorCode":"E0000011","errorSummary":"Invalid token provided","errorLink":"E0000011","errorId":"oae$rid",'
   '"errorCauses":[]}', OK_)
_t("okta_e0000047", "id_okta", "rate_limit", ("get_customer", "get_subscription"),
   '{"errorCode":"E0000047","errorSummary":"API call exceeded rate limit due to too many requests.","errorLink":'
   '"E0000047","errorId":"oae$rid","errorCauses":[]}', OK_)
_t("okta_e0000007", "id_okta", "not_found", ("get_customer",),
   '{"errorCode":"E0000007","errorSummary":"Not found: Resource not found: $arg (User)","errorLink":"E0000007",'
   '"errorId":"oae$rid","errorCauses":[]}', OK_)
_t("okta_e0000006", "id_okta", "auth", ("get_customer", "get_subscription"),
   '{"errorCode":"E0000006","errorSummary":"You do not have permission to perform the requested action",'
   '"errorLink":"E0000006","errorId":"oae$rid","errorCauses":[]}', OK_)
A0 = "https://auth0.com/docs/troubleshoot/customer-support/common-errors"
_t("auth0_too_many", "id_auth0", "rate_limit", ("get_customer",),
   '{"statusCode":429,"error":"Too Many Requests","message":"Global limit has been reached","errorCode":'
   '"too_many_requests"}', "https://auth0.com/docs/troubleshoot/customer-support/operational-policies/rate-limit-policy")
_t("auth0_expired_token", "id_auth0", "auth", ("get_customer",),
   '{"statusCode":401,"error":"Unauthorized","message":"Expired token received for JSON Web Token validation",'
   '"attributes":{"error":"Expired token received for JSON Web Token validation"}}', A0)
_t("keycloak_invalid_grant", "id_keycloak", "auth", ("get_customer", "get_subscription"),
   '{"error":"invalid_grant","error_description":"Token is not active"}',
   "https://www.keycloak.org/docs/latest/server_admin/#_oidc-token-errors")

AL = "https://www.algolia.com/doc/guides/scaling/servers-clusters/#errors"
_t("algolia_index_missing", "search_algolia", "not_found", KB, '{"message":"Index does not exist","status":404}',
   "https://www.algolia.com/doc/rest-api/search/#errors")
_t("algolia_quota", "search_algolia", "rate_limit", KB, '{"message":"Too many requests","status":429}', AL)
_t("algolia_bad_key", "search_algolia", "auth", KB, '{"message":"Invalid Application-ID or API key","status":403}',
   "https://www.algolia.com/doc/rest-api/search/#errors")
_t("typesense_bad_field", "search_typesense", "invalid_request", KB,
   '{"message":"Could not find a field named `tagz` in the schema."}', "https://typesense.org/docs/latest/api/api-errors.html")
MEI = "https://www.meilisearch.com/docs/reference/errors/error_codes"
_t("meili_index_not_found", "search_meilisearch", "not_found", KB,
   '{"message":"Index `kb_articles` not found.","code":"index_not_found","type":"invalid_request","link":'
   '"https://docs.meilisearch.com/errors#index_not_found"}', MEI)
_t("meili_invalid_filter", "search_meilisearch", "invalid_request", KB,
   '{"message":"Attribute `locale` is not filterable. This index does not have configured filterable attributes.",'
   '"code":"invalid_search_filter","type":"invalid_request","link":"https://docs.meilisearch.com/errors#'
   'invalid_search_filter"}', MEI)
QD = "https://api.qdrant.tech/api-reference"
_t("qdrant_collection_missing", "search_vector", "not_found", KB,
   '{"status":{"error":"Not found: Collection `kb_articles` doesn\'t exist!"},"time":0.000021}', QD)
_t("pinecone_read_units", "search_vector", "rate_limit", KB,
   '{"code":8,"message":"Request failed. You\'ve reached your read unit limit for the current month. To continue '
   'reading data, upgrade your plan.","details":[]}', "https://docs.pinecone.io/troubleshooting/handle-rate-limits")
_t("weaviate_deadline", "search_vector", "timeout", KB,
   '{"data":{"Get":{"Article":null}},"errors":[{"locations":[{"column":6,"line":1}],"message":"explorer: get class:'
   ' vector search: object vector search at index article: shard article_x8Kq: context deadline exceeded","path":'
   '["Get","Article"]}]}', "https://weaviate.io/developers/weaviate/api/graphql")
ES = "https://www.elastic.co/guide/en/elasticsearch/reference/current/common-options.html"
_t("es_index_not_found", "search_elasticsearch", "not_found", KB,
   '{"error":{"root_cause":[{"type":"index_not_found_exception","reason":"no such index [kb]","index":"kb"}],'
   '"type":"index_not_found_exception","reason":"no such index [kb]","index":"kb"},"status":404}', ES)
_t("es_circuit_breaking", "search_elasticsearch", "rate_limit", KB,
   '{"error":{"root_cause":[{"type":"circuit_breaking_exception","reason":"[parent] Data too large, data for '
   '[<http_request>] would be [1020591248/973.3mb], which is larger than the limit of [1003493785/957mb]",'
   '"bytes_wanted":1020591248,"bytes_limit":1003493785,"durability":"TRANSIENT"}],"type":"circuit_breaking_exception",'
   '"reason":"[parent] Data too large"},"status":429}',
   "https://www.elastic.co/guide/en/elasticsearch/reference/current/circuit-breaker-errors.html")
_t("es_all_shards_failed", "search_elasticsearch", "error", KB,
   '{"error":{"root_cause":[],"type":"search_phase_execution_exception","reason":"all shards failed","phase":'
   '"query","grouped":true,"failed_shards":[]},"status":503}', ES)

RD = "https://redis.io/docs/latest/develop/reference/protocol-spec/#simple-errors"
_t("redis_loading", "cache_redis", "error", DATA, "-LOADING Redis is loading the dataset in memory", RD)
_t("redis_busy", "cache_redis", "error", DATA,
   "-BUSY Redis is busy running a script. You can only call SCRIPT KILL or SHUTDOWN NOSCRIPT.", RD)
_t("redis_oom", "cache_redis", "error", DATA, "-OOM command not allowed when used memory > 'maxmemory'.", RD)
_t("redis_readonly", "cache_redis", "error", ("update_ticket",),
   "-READONLY You can't write against a read only replica.", RD)
_t("redis_py_conn_refused", "cache_redis", "connection", DATA,
   "redis.exceptions.ConnectionError: Error 111 connecting to cache.internal:6379. Connection refused.",
   "https://redis.readthedocs.io/en/stable/exceptions.html")
_t("redis_py_timeout", "cache_redis", "timeout", DATA, "redis.exceptions.TimeoutError: Timeout reading from socket",
   "https://redis.readthedocs.io/en/stable/exceptions.html")
_t("memcached_server_error", "cache_memcached", "error", DATA, "SERVER_ERROR out of memory storing object",
   "https://github.com/memcached/memcached/blob/master/doc/protocol.txt")
_t("etcd_request_timeout", "coord_etcd", "timeout", DATA,
   '{"error":"etcdserver: request timed out","code":14,"message":"etcdserver: request timed out"}',
   "https://etcd.io/docs/v3.5/learning/api_guarantees/")
_t("consul_no_leader", "coord_consul", "error", DATA, "Unexpected response code: 500 (No cluster leader)",
   "https://developer.hashicorp.com/consul/docs/troubleshoot/common-errors")
_t("vault_sealed", "coord_vault", "error", BILL, '{"errors":["Vault is sealed"]}',
   "https://developer.hashicorp.com/vault/api-docs#error-response")
_t("vault_permission_denied", "coord_vault", "auth", BILL,
   '{"errors":["1 error occurred:\\n\\t* permission denied\\n\\n"]}',
   "https://developer.hashicorp.com/vault/api-docs#error-response")

ORA = "https://docs.oracle.com/en/error-help/db/"
_t("ora_00060_deadlock", "db_oracle", "error", ("lookup_order", "issue_refund"),
   "ORA-00060: deadlock detected while waiting for resource", ORA + "ora-00060/")
_t("ora_12170_connect_timeout", "db_oracle", "timeout", ("lookup_order", "get_subscription"),
   "ORA-12170: TNS:Connect timeout occurred", ORA + "ora-12170/")
_t("ora_01017_logon", "db_oracle", "auth", ("lookup_order", "get_subscription"),
   "ORA-01017: invalid username/password; logon denied", ORA + "ora-01017/")
_t("ora_00942_no_table", "db_oracle", "not_found", ("lookup_order",), "ORA-00942: table or view does not exist",
   ORA + "ora-00942/")
_t("ora_12541_no_listener", "db_oracle", "connection", ("lookup_order", "get_subscription"),
   "ORA-12541: TNS:no listener", ORA + "ora-12541/")
MS = "https://learn.microsoft.com/en-us/sql/relational-databases/errors-events/database-engine-events-and-errors"
_t("mssql_1205_deadlock", "db_sqlserver", "error", ("lookup_order", "apply_credit"),
   "Msg 1205, Level 13, State 51, Line 1\nTransaction (Process ID 61) was deadlocked on lock resources with another "
   "process and has been chosen as the deadlock victim. Rerun the transaction.", MS)
_t("mssql_18456_login", "db_sqlserver", "auth", ("lookup_order", "get_subscription"),
   "Msg 18456, Level 14, State 1, Server DESKSQL01, Line 1\nLogin failed for user 'desk_ro'.", MS)
_t("mssql_execution_timeout", "db_sqlserver", "timeout", ("lookup_order", "get_subscription"),
   "Microsoft.Data.SqlClient.SqlException (0x80131904): Execution Timeout Expired.  The timeout period elapsed prior "
   "to completion of the operation or the server is not responding.", MS)
MY = "https://dev.mysql.com/doc/mysql-errors/8.0/en/server-error-reference.html"
_t("mysql_1040_too_many_conn", "db_mysql", "connection", ("lookup_order", "get_subscription"),
   "ERROR 1040 (08004): Too many connections", MY)
_t("mysql_1205_lock_wait", "db_mysql", "timeout", ("issue_refund", "apply_credit"),
   "ERROR 1205 (HY000): Lock wait timeout exceeded; try restarting transaction", MY)
_t("mysql_2013_lost", "db_mysql", "connection", ("lookup_order", "get_subscription"),
   "ERROR 2013 (HY000): Lost connection to MySQL server during query",
   "https://dev.mysql.com/doc/mysql-errors/8.0/en/client-error-reference.html")
_t("snowflake_000604_cancel", "db_warehouse", "timeout", ("get_subscription",),
   "000604 (57014): SQL execution was cancelled by the client due to a timeout. Error message received from the "
   "server: SQL execution canceled", "https://docs.snowflake.com/en/user-guide/python-connector-api#label-python-connector-exceptions")
BQ = "https://cloud.google.com/bigquery/docs/error-messages"
_t("bq_rate_limit_403", "db_warehouse", "rate_limit", ("get_subscription", "lookup_order"),
   '{"error":{"code":403,"message":"Exceeded rate limits: too many table update operations for this table.",'
   '"errors":[{"message":"Exceeded rate limits: too many table update operations for this table.","domain":'
   '"global","reason":"rateLimitExceeded"}],"status":"PERMISSION_DENIED"}}', BQ)
_t("bq_not_found", "db_warehouse", "not_found", ("get_subscription", "lookup_order"),
   '{"error":{"code":404,"message":"Not found: Table desk-prod:crm.orders was not found in location US","errors":'
   '[{"message":"Not found: Table desk-prod:crm.orders was not found in location US","domain":"global","reason":'
   '"notFound"}],"status":"NOT_FOUND"}}', BQ)

LAM = "https://docs.aws.amazon.com/lambda/latest/dg/python-exceptions.html"
_t("lambda_task_timed_out", "edge_aws", "timeout", ANY,
   '{"errorMessage":"2026-12-06T03:41:07.112Z $rid Task timed out after 3.00 seconds"}',
   "https://docs.aws.amazon.com/lambda/latest/dg/troubleshooting-invocation.html")
_t("lambda_unhandled_typeerror", "edge_aws", "error", ANY,
   '{"errorType":"TypeError","errorMessage":"Cannot read properties of undefined (reading \'total\')","trace":'
   '["TypeError: Cannot read properties of undefined (reading \'total\')","    at Runtime.handler '
   '(/var/task/index.js:14:27)"]}', LAM)
APIGW = "https://docs.aws.amazon.com/apigateway/latest/developerguide/supported-gateway-response-types.html"
_t("apigw_too_many", "edge_aws", "rate_limit", ANY, '{"message":"Too Many Requests"}', APIGW)
_t("apigw_endpoint_timeout", "edge_aws", "timeout", ANY, '{"message": "Endpoint request timed out"}', APIGW)
_t("apigw_missing_token", "edge_aws", "auth", ANY, '{"message":"Missing Authentication Token"}', APIGW)
VC = "https://vercel.com/docs/errors"
_t("vercel_invocation_timeout", "edge_vercel", "timeout", ANY,
   "An error occurred with your deployment\n\nFUNCTION_INVOCATION_TIMEOUT\n\niad1::k9x2v-1765000000000-$rid",
   VC + "/FUNCTION_INVOCATION_TIMEOUT")
_t("vercel_invocation_failed", "edge_vercel", "error", ANY,
   "A server error has occurred\n\nFUNCTION_INVOCATION_FAILED\n\niad1::p2m8c-1765000000000-$rid",
   VC + "/FUNCTION_INVOCATION_FAILED")
_t("akamai_access_denied", "edge_cdn", "auth", ANY,
   '<HTML><HEAD>\n<TITLE>Access Denied</TITLE>\n</HEAD><BODY>\n<H1>Access Denied</H1>\n \nYou don\'t have '
   'permission to access "http&#58;&#47;&#47;api&#46;desk&#46;example&#47;v2&#47;" on this server.<P>\nReference'
   '&#32;&#35;18&#46;6f2d3e17&#46;1765000000&#46;2a9b1c\n</BODY>\n</HTML>', "https://techdocs.akamai.com/property-mgr/docs/access-denied")
_t("fastly_backend_unhealthy", "edge_cdn", "error", ANY,
   '<?xml version="1.0" encoding="utf-8"?>\n<html><head><title>503 Backend is unhealthy</title></head><body>'
   '<h1>Error 503 Backend is unhealthy</h1><p>Backend is unhealthy</p><h3>Guru Mediation:</h3><p>Details: '
   'cache-iad-kiad7000071-IAD 1765000000 2119432191</p><hr><p>Varnish cache server</p></body></html>',
   "https://www.fastly.com/documentation/guides/concepts/errors/")
_t("kong_rate_limit", "edge_gateway", "rate_limit", ANY, '{"message":"API rate limit exceeded"}',
   "https://docs.konghq.com/hub/kong-inc/rate-limiting/")
_t("kong_no_route", "edge_gateway", "not_found", ANY, '{"message":"no Route matched with those values"}',
   "https://docs.konghq.com/gateway/latest/production/troubleshooting/")
APG = "https://cloud.google.com/apigee/docs/api-platform/reference/policies/"
_t("apigee_quota_violation", "edge_gateway", "rate_limit", ANY,
   '{"fault":{"faultstring":"Rate limit quota violation. Quota limit  exceeded. Identifier : _default","detail":'
   '{"errorcode":"policies.ratelimit.QuotaViolation"}}}', APG + "quota-policy")
_t("apigee_invalid_api_key", "edge_gateway", "auth", ANY,
   '{"fault":{"faultstring":"Invalid ApiKey","detail":{"errorcode":"oauth.v2.InvalidApiKey"}}}',
   APG + "verify-api-key-policy")
_t("apigee_gateway_timeout", "edge_gateway", "timeout", ANY,
   '{"fault":{"faultstring":"Gateway Timeout","detail":{"errorcode":"messaging.adaptors.http.flow.GatewayTimeout"}}}',
   "https://cloud.google.com/apigee/docs/api-platform/troubleshoot/runtime/504-gateway-timeout")
_t("traefik_bad_gateway", "edge_gateway", "error", ANY, "Bad Gateway",
   "https://doc.traefik.io/traefik/routing/services/")
_t("nginx_504_page", "edge_gateway", "timeout", ANY,
   "<html>\r\n<head><title>504 Gateway Time-out</title></head>\r\n<body>\r\n<center><h1>504 Gateway Time-out</h1>"
   "</center>\r\n<hr><center>nginx/1.25.3</center>\r\n</body>\r\n</html>\r\n", "https://nginx.org/en/docs/http/ngx_http_proxy_module.html")
_t("nginx_413_page", "edge_gateway", "invalid_request", ("update_ticket", "send_email"),
   "<html>\r\n<head><title>413 Request Entity Too Large</title></head>\r\n<body>\r\n<center><h1>413 Request Entity Too"
   " Large</h1></center>\r\n<hr><center>nginx</center>\r\n</body>\r\n</html>\r\n",
   "https://nginx.org/en/docs/http/ngx_http_core_module.html#client_max_body_size")

_t("ruby_faraday_timeout", "rt_ruby", "timeout", ANY,
   "#<Faraday::TimeoutError: Net::ReadTimeout with #<TCPSocket:(closed)>>",
   "https://lostisland.github.io/faraday/#/middleware/included/raising-errors")
_t("ruby_faraday_conn_failed", "rt_ruby", "connection", ANY,
   "Faraday::ConnectionFailed: Failed to open TCP connection to crm-internal:443 (Connection refused - connect(2) "
   'for "crm-internal" port 443)', "https://ruby-doc.org/3.3/exts/net/Net/HTTP.html")
_t("elixir_mint_econnrefused", "rt_beam", "connection", ANY,
   "{:error, %Mint.TransportError{reason: :econnrefused}}", "https://hexdocs.pm/mint/Mint.TransportError.html")
_t("elixir_httpoison_timeout", "rt_beam", "timeout", ANY, "{:error, %HTTPoison.Error{id: nil, reason: :timeout}}",
   "https://hexdocs.pm/httpoison/HTTPoison.Error.html")
_t("erlang_nxdomain", "rt_beam", "connection", ANY,
   '{error,{failed_connect,[{to_address,{"billing.internal",443}},{inet,[inet],nxdomain}]}}',
   "https://www.erlang.org/doc/apps/inets/httpc.html")
_t("go_context_deadline", "rt_go", "timeout", ANY,
   'Post "http://orders.internal/v1/lookup": context deadline exceeded (Client.Timeout exceeded while awaiting '
   'headers)', "https://pkg.go.dev/net/http#Client")
_t("go_conn_reset", "rt_go", "connection", ANY,
   "read tcp 10.0.3.7:51234->10.0.8.2:443: read: connection reset by peer", "https://pkg.go.dev/syscall#ECONNRESET")
_t("go_no_such_host", "rt_go", "connection", ANY, "dial tcp: lookup ledger.internal on 10.0.0.2:53: no such host",
   "https://pkg.go.dev/net#DNSError")
_t("guzzle_curl_28", "rt_php", "timeout", ANY,
   "GuzzleHttp\\Exception\\ConnectException: cURL error 28: Operation timed out after 5001 milliseconds with 0 bytes"
   " received (see https://curl.haxx.se/libcurl/c/libcurl-errors.html)",
   "https://docs.guzzlephp.org/en/stable/quickstart.html#exceptions")
_t("laravel_server_error", "rt_php", "error", ANY, '{"message":"Server Error"}',
   "https://laravel.com/docs/11.x/errors")
_t("laravel_validation", "rt_php", "invalid_request", ("issue_refund", "apply_credit", "update_ticket"),
   '{"message":"The selected status is invalid.","errors":{"status":["The selected status is invalid."]}}',
   "https://laravel.com/docs/11.x/validation#validation-error-response-format")
_t("laravel_throttle", "rt_php", "rate_limit", ANY, '{"message":"Too Many Attempts."}',
   "https://laravel.com/docs/11.x/routing#rate-limiting")
_t("okhttp_socket_timeout", "rt_jvm", "timeout", ANY,
   "java.net.SocketTimeoutException: timeout\n\tat okhttp3.internal.http2.Http2Stream$StreamTimeout.newTimeoutException"
   "(Http2Stream.kt:675)\n\tat okhttp3.internal.http2.Http2Stream$StreamTimeout.exitAndThrowIfTimedOut"
   "(Http2Stream.kt:684)",
   "https://square.github.io/okhttp/4.x/okhttp/okhttp3/-ok-http-client/-builder/read-timeout/")
_t("okhttp_unknown_host", "rt_jvm", "connection", ANY,
   'java.net.UnknownHostException: Unable to resolve host "api.desk-billing.net": No address associated with hostname',
   "https://docs.oracle.com/en/java/javase/17/docs/api/java.base/java/net/UnknownHostException.html")
_t("java_npe_trace", "rt_jvm", "error", ANY,
   'Exception in thread "http-nio-8080-exec-7" java.lang.NullPointerException: Cannot invoke "com.desk.crm.Account.'
   'getTier()" because "account" is null\n\tat com.desk.crm.AccountService.lookup(AccountService.java:88)',
   "https://docs.oracle.com/en/java/javase/17/docs/api/java.base/java/lang/NullPointerException.html")
NSU = "https://developer.apple.com/documentation/foundation/1508628-url_loading_system_error_codes"
_t("nsurl_-1001_timeout", "rt_swift", "timeout", ANY,
   'Error Domain=NSURLErrorDomain Code=-1001 "The request timed out." UserInfo={NSLocalizedDescription=The request '
   "timed out.}", NSU)
_t("nsurl_-1004_cannot_connect", "rt_swift", "connection", ANY,
   'Error Domain=NSURLErrorDomain Code=-1004 "Could not connect to the server." UserInfo={NSLocalizedDescription='
   "Could not connect to the server.}", NSU)
_t("python_keyerror_trace", "rt_python", "error", ANY,
   'Traceback (most recent call last):\n  File "/srv/desk/handlers/refunds.py", line 88, in create\n    currency = '
   "order['currency_code']\nKeyError: 'currency_code'", "https://docs.python.org/3/library/exceptions.html#KeyError")

CB = "https://apidocs.chargebee.com/docs/api/error-handling"
_t("chargebee_rate", "pay_chargebee", "rate_limit", BILL,
   '{"message":"Sorry, we couldn\'t process your request due to too many requests. Please try again later.","type":'
   '"invalid_request","api_error_code":"api_request_limit_exceeded","error_code":"api_request_limit_exceeded",'
   '"error_msg":"too many requests","http_status_code":429}', CB)
_t("chargebee_invalid_amount", "pay_chargebee", "invalid_request", ("issue_refund", "apply_credit"),
   '{"message":"amount : cannot be greater than the refundable amount","type":"invalid_request","api_error_code":'
   '"invalid_request","param":"amount","error_code":"param_out_of_range","http_status_code":400}', CB)
_t("recurly_not_found", "pay_recurly", "not_found", BILL,
   '{"error":{"type":"not_found","message":"Couldn\'t find Account with code = $arg","params":[]}}',
   "https://recurly.com/developers/api/v2021-02-25/index.html#section/Getting-Started/Errors")
_t("recurly_v2_xml", "pay_recurly", "invalid_request", ("issue_refund", "apply_credit"),
   '<?xml version="1.0" encoding="UTF-8"?>\n<errors>\n  <error field="transaction.amount_in_cents" symbol='
   '"greater_than_invoice">is greater than the invoice total</error>\n</errors>',
   "https://recurly.com/developers/api-v2/v2.29/#section/Errors")
_t("paddle_not_found", "pay_paddle", "not_found", BILL,
   '{"error":{"type":"request_error","code":"not_found","detail":"Entity txn_01h8bkrrb9ya4x5akd8k3m2f0e not found",'
   '"documentation_url":"https://developer.paddle.com/errors/shared/not_found"},"meta":{"request_id":"$rid"}}',
   "https://developer.paddle.com/errors/overview")
_t("zuora_not_found", "pay_zuora", "not_found", BILL,
   '{"success":false,"processId":"$rid","reasons":[{"code":50000040,"message":'
   '"Cannot find entity by key: \'$arg\'."}]}',
   "https://developer.zuora.com/docs/guides/error-handling/")

# ---- data faults: well-formed answers that are wrong, renamed, partial, broken or empty -------------------
DOC = "https://developer.salesforce.com/docs/atlas.en-us.api_rest.meta/api_rest/dome_query.htm"
_d("wv_order_total_shift", "data_wrong_value", "wrong_value", "wrong_value", ("lookup_order",),
   "https://shopify.dev/docs/api/admin-rest/latest/resources/order", field="total_cents", how="shift")
_d("wv_customer_email_neighbour", "data_wrong_value", "wrong_value", "wrong_value", ("get_customer",),
   "https://developers.hubspot.com/docs/api/crm/contacts", field="email", how="neighbour")
_d("wv_customer_phone_stale", "data_wrong_value", "wrong_value", "wrong_value", ("get_customer",),
   "https://developers.intercom.com/docs/references/rest-api/api.intercom.io/contacts", field="phone", how="neighbour")
_d("wv_customer_tier_stale", "data_wrong_value", "wrong_value", "wrong_value", ("get_customer",),
   "https://developer.zendesk.com/api-reference/ticketing/organizations/organizations/", field="tier", how="tier")
_d("wv_subscription_price_stale", "data_wrong_value", "wrong_value", "wrong_value", ("get_subscription",),
   "https://apidocs.chargebee.com/docs/api/subscriptions", field="monthly_cents", how="shift")
_d("wv_kb_article_id_neighbour", "data_wrong_value", "wrong_value", "wrong_value", KB,
   "https://www.algolia.com/doc/api-reference/api-methods/search/", field="article_id", how="neighbour")
_d("wv_ticket_order_neighbour", "data_wrong_value", "wrong_value", "wrong_value", ("get_ticket",),
   "https://developer.zendesk.com/api-reference/ticketing/tickets/tickets/", field="order_id", how="neighbour")
_d("wv_ticket_months_shift", "data_wrong_value", "wrong_value", "wrong_value", ("get_ticket",),
   "https://developer.zendesk.com/api-reference/ticketing/tickets/tickets/", field="months_affected", how="shift")
_d("wv_ticket_service_swapped", "data_wrong_value", "wrong_value", "wrong_value", ("get_ticket",),
   "https://developer.servicenow.com/dev.do#!/reference/api/latest/rest/c_TableAPI", field="service", how="neighbour")
_d("wv_ticket_requester_swapped", "data_wrong_value", "wrong_value", "wrong_value", ("get_ticket",),
   "https://developers.freshdesk.com/api/#tickets", field="requester_email", how="neighbour")
_d("kr_salesforce_custom_fields", "data_key_rename", "key_rename", "key_rename", ("get_customer", "get_ticket"),
   "https://developer.salesforce.com/docs/atlas.en-us.object_reference.meta/object_reference/custom_fields.htm",
   style="sf")
_d("kr_camel_case", "data_key_rename", "key_rename", "key_rename", ("lookup_order", "get_subscription", "get_ticket"),
   "https://developers.hubspot.com/docs/api/crm/properties", style="camel")
_d("kr_hubspot_properties", "data_key_rename", "key_rename", "key_rename", ("get_customer",),
   "https://developers.hubspot.com/docs/api/crm/contacts", style="hs")
_d("kr_hits_to_results", "data_key_rename", "key_rename", "key_rename", KB,
   "https://typesense.org/docs/latest/api/search.html", style="results")
_d("kr_numbers_as_strings_and_renamed", "data_key_rename", "key_rename", "key_rename", ("lookup_order", "apply_credit",
                                                                                         "issue_refund"),
   "https://www.zuora.com/developer/api-references/api/overview/", style="pascal")
_d("tr_hits_total_above_items", "data_truncated", "truncated", "truncated", KB,
   "https://www.meilisearch.com/docs/reference/api/search#response", how="hits")
_d("tr_es_timed_out_partial", "data_truncated", "truncated", "truncated", KB,
   "https://www.elastic.co/guide/en/elasticsearch/reference/current/search-your-data.html#search-timeout", how="es")
_d("tr_typesense_search_cutoff", "data_truncated", "truncated", "truncated", KB,
   "https://typesense.org/docs/latest/api/search.html#search-cutoff-ms", how="typesense")
_d("tr_object_half_keys", "data_truncated", "truncated", "truncated", ("get_ticket",),
   "https://developers.freshdesk.com/api/#tickets", how="half")
_d("tr_text_output_cut", "data_truncated", "truncated", "truncated", ("get_customer", "get_ticket"),
   "https://docs.aws.amazon.com/lambda/latest/dg/gettingstarted-limits.html", how="trailer")
_d("mj_cut_midway", "data_malformed", "malformed_json", "malformed", ("get_customer", "lookup_order",
                                                                       "get_subscription", "get_ticket"),
   "https://www.rfc-editor.org/rfc/rfc8259", how="cut")
_d("mj_unbalanced", "data_malformed", "malformed_json", "malformed", KB + ("get_ticket",),
   "https://www.rfc-editor.org/rfc/rfc8259", how="unbalanced")
_d("em_empty_object", "data_empty", "empty", "empty", ("get_customer", "lookup_order", "get_subscription"),
   "https://developer.zendesk.com/api-reference/introduction/responses/", value="{}")
_d("em_empty_array", "data_empty", "empty", "empty", KB, "https://www.algolia.com/doc/api-reference/api-methods/search/",
   value="[]")
_d("em_null", "data_empty", "empty", "empty", ("lookup_order", "get_ticket"),
   "https://docs.aws.amazon.com/lambda/latest/dg/python-handler.html", value="null")
_d("em_empty_string", "data_empty", "empty", "empty", ("get_ticket", "get_customer"),
   "https://modelcontextprotocol.io/specification/2025-06-18/server/tools#tool-result", value="")

# ---- the model API: providers' own failures ---------------------------------------------------------------
GQ = "https://console.groq.com/docs/errors"
_l("groq_429_tpm", "llm_groq", "rate_limit", "http", "https://console.groq.com/docs/rate-limits",
   '{"error":{"message":"Rate limit reached for model `llama-3.3-70b-versatile` in organization `org_01hv9x` service '
   'tier `on_demand` on tokens per minute (TPM): Limit 6000, Used 5876, Requested 1203. Please try again in 10.79s.",'
   '"type":"tokens","code":"rate_limit_exceeded"}}', status=429)
_l("groq_400_tool_use_failed", "llm_groq", "invalid_request", "http", GQ,
   '{"error":{"message":"Failed to call a function. Please adjust your prompt. See \'failed_generation\' for more '
   'details.","type":"invalid_request_error","code":"tool_use_failed","failed_generation":"<function=update_ticket>'
   '{\\"ticket_id\\": \\"T-1\\"</function>"}}', status=400)
_l("groq_503_over_capacity", "llm_groq", "http_error", "http", GQ,
   '{"error":{"message":"llama-3.3-70b-versatile is currently over capacity. Please try again and back off '
   'exponentially. Visit https://groqstatus.com to see if there is an active incident.","type":"internal_server_error"'
   '}}', status=503)
_l("groq_stream_error_event", "llm_groq", "error", "stream_error", GQ,
   '{"error":{"message":"Internal Server Error","type":"internal_server_error"}}')
TG = "https://docs.together.ai/docs/error-codes"
_l("together_524_origin_timeout", "llm_together", "http_error", "http", TG,
   "<!DOCTYPE html><html><head><title>api.together.xyz | 524: A timeout occurred</title></head><body><h1>A timeout "
   "occurred</h1><span>Error code 524</span><p>Cloudflare Ray ID: 8c1e2f3a4b5c6d7e</p></body></html>", status=524,
   ctype="text/html")
_l("together_429_rate", "llm_together", "rate_limit", "http", TG,
   '{"id":"$rid","error":{"message":"You have reached the rate limit specific to this model meta-llama/Llama-3.3-70B-'
   'Instruct-Turbo. The maximum rate limit for this model is 60.0 queries per minute.","type":"model_rate_limit",'
   '"param":null,"code":null}}', status=429)
_l("together_500_body_in_200", "llm_together", "error", "body200", TG,
   '{"id":"$rid","error":{"message":"Internal server error","type":"server_error","param":null,"code":null}}')
FW = "https://docs.fireworks.ai/troubleshooting/status_error_codes/inference"
_l("fireworks_404_model", "llm_fireworks", "not_found", "http", FW,
   '{"error":{"object":"error","type":"invalid_request_error","message":"Model not found, inaccessible, and/or not '
   'deployed"}}', status=404, first_turn=True)
_l("fireworks_length_tool_args", "llm_fireworks", "truncate", "finish", "https://docs.fireworks.ai/api-reference/post-chatcompletions",
   finish="length")
_l("fireworks_empty_arguments", "llm_fireworks", "error", "args_empty", "https://docs.fireworks.ai/guides/function-calling")
MI = "https://docs.mistral.ai/api/#tag/chat/operation/chat_completion_v1_chat_completions_post"
_l("mistral_model_length", "llm_mistral", "truncate", "finish", MI, finish="model_length")
_l("mistral_422_extra_forbidden", "llm_mistral", "invalid_request", "http", MI,
   '{"object":"error","message":{"detail":[{"type":"extra_forbidden","loc":["body","tools",0,"function","strict"],'
   '"msg":"Extra inputs are not permitted","input":true}]},"type":"invalid_request_error","param":null,"code":null}',
   status=422)
_l("mistral_finish_error", "llm_mistral", "error", "finish", MI, finish="error")
XA = "https://docs.x.ai/docs/key-information/debugging"
_l("xai_403_team_permission", "llm_xai", "auth", "http", XA,
   '{"code":"The caller does not have permission to execute the specified operation","error":"Your team does not '
   'have permission to use model grok-3. Please contact your team administrator."}', status=403, first_turn=True)
_l("xai_error_json_as_content", "llm_xai", "schema", "content200", XA,
   '{"code":"Some requested entity was not found","error":"The model grok-3 does not support tool parallelism"}')
GEM = "https://ai.google.dev/gemini-api/docs/troubleshooting"
_l("gemini_429_list_body", "llm_gemini", "rate_limit", "http", GEM,
   '[{"error":{"code":429,"message":"Resource has been exhausted (e.g. check quota).","status":"RESOURCE_EXHAUSTED"}}]',
   status=429)
_l("gemini_503_overloaded", "llm_gemini", "http_error", "http", GEM,
   '[{"error":{"code":503,"message":"The model is overloaded. Please try again later.","status":"UNAVAILABLE"}}]',
   status=503)
_l("gemini_empty_candidate", "llm_gemini", "empty", "empty", "https://ai.google.dev/gemini-api/docs/openai")
_l("gemini_args_camel_case", "llm_gemini", "schema", "args_schema", "https://ai.google.dev/gemini-api/docs/openai")
_l("gemini_504_deadline", "llm_gemini", "timeout", "http", GEM,
   '[{"error":{"code":504,"message":"Deadline expired before operation could complete.",'
   '"status":"DEADLINE_EXCEEDED"}}]',
   status=504)
AZ = "https://learn.microsoft.com/en-us/azure/ai-services/openai/concepts/content-filter"
_l("azure_finish_content_filter", "llm_azure", "content_filter", "finish", AZ, finish="content_filter")
_l("azure_400_content_filter", "llm_azure", "content_filter", "http", AZ,
   '{"error":{"message":"The response was filtered due to the prompt triggering Azure OpenAI\'s content management '
   'policy. Please modify your prompt and retry.","type":null,"param":"prompt","code":"content_filter","status":400,'
   '"innererror":{"code":"ResponsibleAIPolicyViolation","content_filter_result":{"hate":{"filtered":false,"severity":'
   '"safe"},"violence":{"filtered":true,"severity":"medium"}}}}}', status=400)
_l("azure_429_token_rate", "llm_azure", "rate_limit", "http",
   "https://learn.microsoft.com/en-us/azure/ai-services/openai/quotas-limits",
   '{"error":{"code":"429","message":"Requests to the ChatCompletions_Create Operation under Azure OpenAI API version '
   '2024-10-21 have exceeded token rate limit of your current OpenAI S0 pricing tier. Please retry after 6 seconds."}}',
   status=429)
_l("azure_408_timeout", "llm_azure", "timeout", "http", "https://learn.microsoft.com/en-us/azure/ai-services/openai/reference",
   '{"error":{"code":"Timeout","message":"The operation was timeout."}}', status=408)
CE = "https://inference-docs.cerebras.ai/support/error"
_l("cerebras_429_token_quota", "llm_cerebras", "rate_limit", "http", CE,
   '{"message":"Tokens per minute limit exceeded - too many tokens processed.","type":"too_many_tokens_error",'
   '"param":"quota","code":"token_quota_exceeded"}', status=429)
_l("cerebras_500_server_error", "llm_cerebras", "http_error", "http", CE,
   '{"message":"Encountered a server error, please try again.","type":"server_error","param":"","code":"500"}',
   status=500)
SN_ = "https://docs.sambanova.ai/cloud/api-reference/errors"
_l("sambanova_timeout_body_in_200", "llm_sambanova", "timeout", "body200", SN_,
   '{"error":{"code":null,"message":"Request timed out waiting for the model","param":null,"type":"timeout_error"}}')
_l("sambanova_stream_cut", "llm_sambanova", "stream_cut", "cut", SN_, variant="no_done")
NIM = "https://docs.nvidia.com/nim/large-language-models/latest/api-reference.html"
_l("nim_400_context_length", "llm_nim", "invalid_request", "http", NIM,
   '{"object":"error","message":"This model\'s maximum context length is 8192 tokens. However, you requested 8431 '
   'tokens (6383 in the messages, 2048 in the completion). Please reduce the length of the messages or completion.",'
   '"type":"BadRequestError","param":null,"code":400}', status=400)
_l("nim_stream_done_without_finish", "llm_nim", "stream_cut", "cut", NIM, variant="done_no_finish")
DBX = "https://docs.databricks.com/en/machine-learning/model-serving/score-foundation-models.html"
_l("databricks_429_request_limit", "llm_databricks", "rate_limit", "http", DBX,
   '{"error_code":"REQUEST_LIMIT_EXCEEDED","message":"REQUEST_LIMIT_EXCEEDED: Exceeded workspace rate limit for '
   'serving endpoint databricks-meta-llama-3-3-70b-instruct."}', status=429)
_l("databricks_503_unavailable", "llm_databricks", "http_error", "http", DBX,
   '{"error_code":"TEMPORARILY_UNAVAILABLE","message":"The service at /serving-endpoints/databricks-meta-llama-3-3-'
   '70b-instruct/invocations is temporarily unavailable. Please try again later."}', status=503)
_l("databricks_403_permission", "llm_databricks", "auth", "http", DBX,
   '{"error_code":"PERMISSION_DENIED","message":"User does not have permission \'CAN_QUERY\' on serving endpoint '
   'databricks-meta-llama-3-3-70b-instruct."}', status=403, first_turn=True)
OL = "https://github.com/ollama/ollama/blob/main/docs/openai.md"
_l("ollama_404_model_not_pulled", "llm_ollama", "not_found", "http", OL,
   '{"error":{"message":"model \\"llama3.1:8b\\" not found, try pulling it first","type":"api_error","param":null,'
   '"code":null}}', status=404, first_turn=True)
_l("ollama_500_runner_killed", "llm_ollama", "http_error", "http", OL,
   '{"error":{"message":"llama runner process has terminated: signal: killed","type":"api_error","param":null,'
   '"code":null}}', status=500)
VL = "https://docs.vllm.ai/en/latest/serving/openai_compatible_server.html"
_l("vllm_400_tool_choice", "llm_vllm", "invalid_request", "http", VL,
   '{"object":"error","message":"\\"auto\\" tool choice requires --enable-auto-tool-choice and --tool-call-parser '
   'to be set","type":"BadRequestError","param":null,"code":400}', status=400, first_turn=True)
_l("vllm_connection_reset", "llm_vllm", "connection", "disconnect", VL)
_l("vllm_stale_prefix_cache_repeat", "llm_vllm", "stale", "stale", "https://docs.vllm.ai/en/latest/features/automatic_prefix_caching.html")
LC = "https://github.com/ggml-org/llama.cpp/blob/master/tools/server/README.md"
_l("llamacpp_503_loading_model", "llm_llamacpp", "http_error", "http", LC,
   '{"error":{"code":503,"message":"Loading model","type":"unavailable_error"}}', status=503)
_l("llamacpp_args_replacement_chars", "llm_llamacpp", "corrupt", "corrupt", LC, variant="replacement")
_l("llamacpp_stream_stall", "llm_llamacpp", "stream_cut", "cut", LC, variant="stall")
TGI = "https://huggingface.co/docs/text-generation-inference/en/reference/api_reference"
_l("tgi_stream_error_generation", "llm_tgi", "error", "stream_error", TGI,
   '{"error":"Request failed during generation: Server error: CUDA out of memory. Tried to allocate 20.00 MiB",'
   '"error_type":"generation"}')
_l("tgi_429_overloaded", "llm_tgi", "rate_limit", "http", TGI,
   '{"error":"Model is overloaded","error_type":"overloaded"}',
   status=429)
_l("tgi_422_validation", "llm_tgi", "invalid_request", "http", TGI,
   '{"error":"Input validation error: `inputs` tokens + `max_new_tokens` must be <= 4096. Given: 3790 `inputs` tokens '
   'and 512 `max_new_tokens`","error_type":"validation"}', status=422)
LMS = "https://lmstudio.ai/docs/app/api/endpoints/openai"
_l("lmstudio_symbols_in_args", "llm_lmstudio", "corrupt", "corrupt", LMS, variant="symbols")
_l("lmstudio_stream_empty", "llm_lmstudio", "stream_cut", "cut", LMS, variant="empty")
GW = "https://nginx.org/en/docs/http/ngx_http_proxy_module.html"
_l("proxy_502_html_status", "llm_gateway", "http_error", "http", GW,
   "<html>\r\n<head><title>502 Bad Gateway</title></head>\r\n<body>\r\n<center><h1>502 Bad Gateway</h1></center>\r\n"
   "<hr><center>nginx</center>\r\n</body>\r\n</html>\r\n", status=502, ctype="text/html")
_l("proxy_504_page_as_content", "llm_gateway", "timeout", "content200", GW,
   "<html>\r\n<head><title>504 Gateway Time-out</title></head>\r\n<body>\r\n<center><h1>504 Gateway Time-out</h1>"
   "</center>\r\n<hr><center>nginx</center>\r\n</body>\r\n</html>")
_l("envoy_reset_as_content", "llm_gateway", "connection", "content200",
   "https://www.envoyproxy.io/docs/envoy/latest/configuration/http/http_conn_man/response_code_details",
   "upstream connect error or disconnect/reset before headers. reset reason: connection termination")
_l("sdk_read_timeout", "llm_gateway", "timeout", "read_timeout", "https://github.com/openai/openai-python#timeouts")
_l("slow_reply_past_deadline", "llm_gateway", "latency", "latency", "https://github.com/openai/openai-python#timeouts")
_l("snowflake_cortex_error_as_content", "llm_snowflake", "schema", "content200",
   "https://docs.snowflake.com/en/user-guide/snowflake-cortex/cortex-llm-rest-api",
   '{"code":"399504","message":"Request failed: model response exceeded the warehouse budget","request_id":"$rid"}')
_l("cerebras_length_content_cut", "llm_cerebras", "truncate", "finish", CE, finish="length")
_l("databricks_stale_replayed_response", "llm_databricks", "stale", "stale", DBX)

BY_ID = {f.id: f for f in FORMS}
if len(BY_ID) != len(FORMS):
    raise RuntimeError("duplicate form ids")
