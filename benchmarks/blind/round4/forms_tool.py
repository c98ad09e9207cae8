# ruff: noqa: E501  (a table of published wordings and their sources, one per line)
"""Tool-side failure forms: how real systems report failures, as the tools here return them.

Each form is one published wording or shape (the ``source`` is the public page it imitates) with
the taxonomy label its meaning takes. ``{svc}`` and ``{rid}`` are filled per call. Data forms
(wrong or stale values, partial results, renamed keys, empty and cut payloads) are in
``tool_data.py``; they transform the real result instead of replacing it.
"""

from __future__ import annotations

import json
from dataclasses import dataclass


@dataclass(frozen=True)
class ToolForm:
    name: str
    family: str
    label: str
    text: str
    source: str
    after: bool = False        # the call took effect before the error was reported


K8S = "https://kubernetes.io/docs/reference/using-api/api-concepts/#http-status-codes"
K8S_STATUS = "https://kubernetes.io/docs/reference/kubernetes-api/common-definitions/status/"


def _k8s(reason: str, code: int, message: str) -> str:
    return json.dumps({"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure",
                       "message": message, "reason": reason,
                       "details": {"name": "{svc}", "group": "apps", "kind": "deployments"}, "code": code})


def _gcp(code: int, status: str, message: str) -> str:
    return json.dumps({"error": {"code": code, "message": message, "status": status}})


def _es(etype: str, reason: str, status: int) -> str:
    return json.dumps({"error": {"root_cause": [{"type": etype, "reason": reason}], "type": etype,
                                 "reason": reason}, "status": status})


def _az(code: str, message: str) -> str:
    return json.dumps({"error": {"code": code, "message": message}})


def _prom(etype: str, error: str) -> str:
    return json.dumps({"status": "error", "errorType": etype, "error": error})


GCP = "https://cloud.google.com/apis/design/errors"
AZ = "https://learn.microsoft.com/en-us/azure/azure-resource-manager/troubleshooting/common-deployment-errors"
ES = "https://www.elastic.co/guide/en/elasticsearch/reference/current/common-options.html"
PROM = "https://prometheus.io/docs/prometheus/latest/querying/api/#format-overview"
CH = "https://clickhouse.com/docs/en/interfaces/http"
KAFKA = "https://kafka.apache.org/protocol#protocol_error_codes"
RMQ = "https://www.rabbitmq.com/amqp-0-9-1-reference#constants"
NATS = "https://docs.nats.io/using-nats/developer/connecting/reconnect"
AWS = "https://docs.aws.amazon.com/AmazonECS/latest/APIReference/CommonErrors.html"
DDB = "https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/Programming.Errors.html"
SQS = "https://docs.aws.amazon.com/AWSSimpleQueueService/latest/APIReference/CommonErrors.html"
BQ = "https://cloud.google.com/bigquery/docs/error-messages"
SF = "https://docs.snowflake.com/en/developer-guide/python-connector/python-connector-api#error-codes"
CASS = "https://docs.datastax.com/en/developer/python-driver/latest/api/cassandra/"
TF = "https://developer.hashicorp.com/terraform/language/state/locking"
NOMAD = "https://developer.hashicorp.com/nomad/api-docs#status-codes"
CONSUL = "https://developer.hashicorp.com/consul/api-docs/api-structure"
ETCD = "https://etcd.io/docs/v3.5/learning/api_guarantees/"
DD = "https://docs.datadoghq.com/api/latest/rate-limits/"
PD = "https://developer.pagerduty.com/docs/ZG9jOjExMDI5NTYz-errors"
GRAF = "https://grafana.com/docs/grafana/latest/developers/http_api/"
JIRA = "https://developer.atlassian.com/cloud/jira/platform/rest/v3/intro/#status-codes"
SNOW = "https://developer.servicenow.com/dev.do#!/reference/api/latest/rest/c_TableAPI"
ZD = "https://developer.zendesk.com/api-reference/introduction/rate-limits/"
BASH = "https://www.gnu.org/software/bash/manual/html_node/Exit-Status.html"
CURL = "https://curl.se/libcurl/c/libcurl-errors.html"
PS = "https://learn.microsoft.com/en-us/powershell/module/microsoft.powershell.utility/invoke-restmethod"
NODE = "https://nodejs.org/api/errors.html#common-system-errors"
JVM = "https://docs.oracle.com/en/java/javase/21/docs/api/java.base/java/net/SocketTimeoutException.html"
DOTNET = "https://learn.microsoft.com/en-us/dotnet/api/system.net.http.httpclient.timeout"
GO = "https://go.dev/ref/spec#Run_time_panics"
GRPC = "https://grpc.io/docs/guides/status-codes/"
PY = "https://docs.python.org/3/library/exceptions.html#os-exceptions"
GW = "https://www.envoyproxy.io/docs/envoy/latest/configuration/http/http_conn_man/response_code_details"

_ROWS: list[tuple[str, str, str, str, str]] = [
    # kubernetes: Status objects and kubectl lines
    ("kubernetes", "k8s_status_notfound", "not_found", _k8s("NotFound", 404, 'deployments.apps "{svc}" not found'), K8S_STATUS),
    ("kubernetes", "k8s_status_forbidden", "auth", _k8s("Forbidden", 403, 'deployments.apps "{svc}" is forbidden: User "system:serviceaccount:ops:responder" cannot patch resource "deployments/scale" in API group "apps" in the namespace "prod"'), K8S_STATUS),
    ("kubernetes", "k8s_status_conflict", "invalid_request", _k8s("Conflict", 409, 'Operation cannot be fulfilled on deployments.apps "{svc}": the object has been modified; please apply your changes to the latest version and try again'), K8S),
    ("kubernetes", "k8s_status_toomany", "rate_limit", _k8s("TooManyRequests", 429, "the server has received too many requests and has asked us to try again later"), K8S),
    ("kubernetes", "k8s_status_timeout", "timeout", _k8s("Timeout", 504, "Timeout: request did not complete within requested timeout - context deadline exceeded"), K8S_STATUS),
    ("kubernetes", "k8s_status_internal", "error", _k8s("InternalError", 500, 'Internal error occurred: failed calling webhook "validate.kyverno.svc-fail": failed to call webhook: Post "https://kyverno-svc.kyverno.svc:443/validate/fail?timeout=10s": EOF'), K8S_STATUS),
    ("kubernetes", "k8s_status_invalid", "invalid_request", _k8s("Invalid", 422, 'Deployment.apps "{svc}" is invalid: spec.template.spec.containers[0].image: Invalid value: "registry/{svc}:": invalid reference format'), K8S_STATUS),
    ("kubernetes", "kubectl_refused", "connection", "The connection to the server 10.96.0.1:6443 was refused - did you specify the right host or port?", "https://kubernetes.io/docs/tasks/debug/debug-cluster/"),
    ("kubernetes", "kubectl_unauthorized", "auth", "error: You must be logged in to the server (Unauthorized)", "https://kubernetes.io/docs/reference/access-authn-authz/authentication/"),
    ("kubernetes", "k8s_status_unavailable", "error", _k8s("ServiceUnavailable", 503, "the server is currently unable to handle the request"), K8S_STATUS),
    # AWS SDK (JSON and XML protocols, botocore lines)
    ("aws_sdk", "aws_throttling_json", "rate_limit", '{"__type":"ThrottlingException","message":"Rate exceeded"}', AWS),
    ("aws_sdk", "aws_access_denied_xml", "auth", '<ErrorResponse xmlns="http://ecs.amazonaws.com/doc/2014-11-13/"><Error><Type>Sender</Type><Code>AccessDeniedException</Code><Message>User: arn:aws:sts::123456789012:assumed-role/ops-responder/session is not authorized to perform: ecs:UpdateService on resource: arn:aws:ecs:us-east-1:123456789012:service/prod/{svc}</Message></Error><RequestId>{rid}</RequestId></ErrorResponse>', AWS),
    ("aws_sdk", "botocore_expired_token", "auth", "An error occurred (ExpiredTokenException) when calling the UpdateService operation: The security token included in the request is expired", "https://docs.aws.amazon.com/STS/latest/APIReference/CommonErrors.html"),
    ("aws_sdk", "aws_server_exception", "error", '{"__type":"ServerException","message":"Service encountered an internal error. Retry the request."}', "https://docs.aws.amazon.com/AmazonECS/latest/APIReference/API_UpdateService.html"),
    ("aws_sdk", "aws_service_not_found", "not_found", "An error occurred (ServiceNotFoundException) when calling the UpdateService operation: Service not found.", "https://docs.aws.amazon.com/AmazonECS/latest/APIReference/API_UpdateService.html"),
    ("aws_sdk", "aws_validation", "invalid_request", "An error occurred (ValidationException) when calling the UpdateService operation: 1 validation error detected: Value '-1' at 'desiredCount' failed to satisfy constraint: Member must have value greater than or equal to 0", AWS),
    ("aws_sdk", "botocore_endpoint_conn", "connection", 'Could not connect to the endpoint URL: "https://ecs.us-east-1.amazonaws.com/"', "https://botocore.amazonaws.com/v1/documentation/api/latest/client_upgrades.html"),
    ("aws_sdk", "botocore_read_timeout", "timeout", 'Read timeout on endpoint URL: "https://ecs.us-east-1.amazonaws.com/"', "https://docs.aws.amazon.com/sdkref/latest/guide/feature-timeouts.html"),
    ("aws_sdk", "s3_slowdown_xml", "rate_limit", '<?xml version="1.0" encoding="UTF-8"?>\n<Error><Code>SlowDown</Code><Message>Please reduce your request rate.</Message><RequestId>{rid}</RequestId></Error>', "https://docs.aws.amazon.com/AmazonS3/latest/API/ErrorResponses.html"),
    ("sqs", "sqs_nonexistent_queue", "not_found", '<ErrorResponse><Error><Type>Sender</Type><Code>AWS.SimpleQueueService.NonExistentQueue</Code><Message>The specified queue does not exist for this wsdl version.</Message></Error><RequestId>{rid}</RequestId></ErrorResponse>', SQS),
    ("sqs", "sqs_over_limit", "rate_limit", '{"__type":"com.amazonaws.sqs#OverLimit","message":"Too many messages in flight for this queue"}', SQS),
    ("sqs", "sqs_kms_access_denied", "auth", '{"__type":"com.amazonaws.sqs#KmsAccessDenied","message":"The caller doesn\'t have the required KMS access."}', SQS),
    ("dynamodb", "ddb_throughput", "rate_limit", '{"__type":"com.amazonaws.dynamodb.v20120810#ProvisionedThroughputExceededException","message":"The level of configured provisioned throughput for the table was exceeded. Consider increasing your provisioning level with the UpdateTable API."}', DDB),
    ("dynamodb", "ddb_resource_not_found", "not_found", '{"__type":"com.amazonaws.dynamodb.v20120810#ResourceNotFoundException","message":"Requested resource not found: Table: ops-incidents not found"}', DDB),
    ("dynamodb", "ddb_conditional", "invalid_request", '{"__type":"com.amazonaws.dynamodb.v20120810#ConditionalCheckFailedException","message":"The conditional request failed"}', DDB),
    ("dynamodb", "ddb_internal", "error", '{"__type":"com.amazonaws.dynamodb.v20120810#InternalServerError","message":"Internal server error"}', DDB),
    # Google Cloud
    ("gcp", "gcp_unavailable", "error", _gcp(503, "UNAVAILABLE", "The service is currently unavailable."), GCP),
    ("gcp", "gcp_permission_denied", "auth", _gcp(403, "PERMISSION_DENIED", "Permission 'run.services.update' denied on resource 'projects/ops-prod/locations/us-central1/services/{svc}' (or it may not exist)."), GCP),
    ("gcp", "gcp_deadline", "timeout", _gcp(504, "DEADLINE_EXCEEDED", "Deadline expired before operation could complete."), GCP),
    ("gcp", "gcp_quota", "rate_limit", _gcp(429, "RESOURCE_EXHAUSTED", "Quota exceeded for quota metric 'Read requests' and limit 'Read requests per minute' of service 'monitoring.googleapis.com'."), GCP),
    ("gcp", "gcp_not_found", "not_found", _gcp(404, "NOT_FOUND", "Resource 'projects/ops-prod/locations/us-central1/services/{svc}' was not found"), GCP),
    ("gcp", "gcp_failed_precondition", "invalid_request", _gcp(400, "FAILED_PRECONDITION", "Revision is not ready and cannot serve traffic."), GCP),
    ("bigquery", "bq_rate_limit", "rate_limit", json.dumps({"error": {"code": 403, "message": "Exceeded rate limits: too many api requests per user per method for this user_method.", "errors": [{"message": "Exceeded rate limits", "domain": "usageLimits", "reason": "rateLimitExceeded"}], "status": "PERMISSION_DENIED"}}), BQ),
    ("bigquery", "bq_backend_error", "error", json.dumps({"error": {"code": 500, "message": "An internal error occurred and the request could not be completed.", "errors": [{"domain": "global", "reason": "backendError"}], "status": "INTERNAL"}}), BQ),
    ("bigquery", "bq_invalid_query", "invalid_request", json.dumps({"error": {"code": 400, "message": "Syntax error: Unexpected keyword WHERE at [1:42]", "errors": [{"domain": "global", "reason": "invalidQuery", "location": "q"}], "status": "INVALID_ARGUMENT"}}), BQ),
    ("bigquery", "bq_not_found", "not_found", json.dumps({"error": {"code": 404, "message": "Not found: Table ops-prod:telemetry.error_logs was not found in location US", "errors": [{"domain": "global", "reason": "notFound"}], "status": "NOT_FOUND"}}), BQ),
    # Azure Resource Manager
    ("azure", "az_throttled", "rate_limit", _az("SubscriptionRequestsThrottled", "Number of 'read' requests for subscription '00000000-1111-2222-3333-444444444444' actor '5f1a' exceeded. Please try again after '17' seconds."), "https://learn.microsoft.com/en-us/azure/azure-resource-manager/management/request-limits-and-throttling"),
    ("azure", "az_authorization_failed", "auth", _az("AuthorizationFailed", "The client 'ops-responder' with object id '5f1a' does not have authorization to perform action 'Microsoft.App/containerApps/write' over scope '/subscriptions/0000/resourceGroups/prod/providers/Microsoft.App/containerApps/{svc}' or the scope is invalid."), AZ),
    ("azure", "az_resource_not_found", "not_found", _az("ResourceNotFound", "The Resource 'Microsoft.App/containerApps/{svc}' under resource group 'prod' was not found."), AZ),
    ("azure", "az_gateway_timeout", "timeout", _az("GatewayTimeout", "The gateway did not receive a response from 'Microsoft.App' within the specified time period."), AZ),
    ("azure", "az_another_operation", "invalid_request", _az("AnotherOperationInProgress", "Operation is not allowed because another operation is in progress on containerApps '{svc}'."), AZ),
    ("azure", "az_internal", "error", _az("InternalServerError", "Encountered internal server error. Diagnostic information: timestamp '20261201T101122Z', tracking id '{rid}'."), AZ),
    # HashiCorp
    ("terraform", "tf_state_lock", "invalid_request", "Error: Error acquiring the state lock\n\nError message: ConditionalCheckFailedException: The conditional request failed\nLock Info:\n  ID:        3f2c9a1e-77c1-4c3b-9c1e-0b7e0f1a2d44\n  Path:      ops-tfstate/prod/{svc}.tfstate\n  Operation: OperationTypeApply\n  Who:       ci@runner-7\n\nTerraform acquires a state lock to protect the state from being written\nby multiple users at the same time.", TF),
    ("terraform", "tf_no_credentials", "auth", "Error: No valid credential sources found\n\n  with provider[\"registry.terraform.io/hashicorp/aws\"],\n  on providers.tf line 1, in provider \"aws\":\n   1: provider \"aws\" {", "https://registry.terraform.io/providers/hashicorp/aws/latest/docs#authentication-and-configuration"),
    ("terraform", "tf_wait_timeout", "timeout", "Error: waiting for ECS Service (arn:aws:ecs:us-east-1:123456789012:service/prod/{svc}) to reach steady state: timeout while waiting for state to become 'STEADY' (last state: 'PENDING', timeout: 10m0s)", "https://registry.terraform.io/providers/hashicorp/aws/latest/docs/resources/ecs_service#timeouts"),
    ("terraform", "tf_invalid_value", "invalid_request", 'Error: Invalid value for variable\n\n  on variables.tf line 12:\n  12: variable "desired_count" {\n\ndesired_count must be between 1 and 50.', "https://developer.hashicorp.com/terraform/language/values/variables#custom-validation-rules"),
    ("nomad", "nomad_permission_denied", "auth", "Unexpected response code: 403 (Permission denied)", NOMAD),
    ("nomad", "nomad_job_not_found", "not_found", "Unexpected response code: 404 (job not found)", NOMAD),
    ("nomad", "nomad_no_leader", "error", "Unexpected response code: 500 (No cluster leader)", NOMAD),
    ("consul", "consul_acl_denied", "auth", "Unexpected response code: 403 (Permission denied: token with AccessorID '7e1c' lacks permission 'service:write' on \"{svc}\")", CONSUL),
    ("consul", "consul_rate_limited", "rate_limit", "Unexpected response code: 429 (rate limit exceeded, try again later)", "https://developer.hashicorp.com/consul/docs/agent/limits"),
    ("consul", "consul_no_leader", "error", "Unexpected response code: 500 (rpc error making call: No cluster leader)", CONSUL),
    ("etcd", "etcd_deadline", "timeout", "rpc error: code = DeadlineExceeded desc = context deadline exceeded", ETCD),
    ("etcd", "etcd_leader_changed", "error", "etcdserver: leader changed", "https://etcd.io/docs/v3.5/dev-guide/api_reference_v3/"),
    ("etcd", "etcd_too_many_requests", "rate_limit", "etcdserver: too many requests", "https://etcd.io/docs/v3.5/dev-guide/api_reference_v3/"),
    ("etcd", "etcd_request_timed_out", "timeout", "etcdserver: request timed out", ETCD),
    ("etcd", "etcd_permission_denied", "auth", "etcdserver: permission denied", "https://etcd.io/docs/v3.5/op-guide/authentication/rbac/"),
    # message brokers
    ("kafka", "kafka_not_leader", "error", 'KafkaError{code=NOT_LEADER_FOR_PARTITION,val=6,str="Broker: Not leader for partition"}', KAFKA),
    ("kafka", "kafka_request_timed_out", "timeout", 'KafkaError{code=REQUEST_TIMED_OUT,val=7,str="Broker: Request timed out"}', KAFKA),
    ("kafka", "kafka_unknown_topic", "not_found", 'KafkaError{code=UNKNOWN_TOPIC_OR_PART,val=3,str="Broker: Unknown topic or partition"}', KAFKA),
    ("kafka", "kafka_topic_authorization", "auth", "org.apache.kafka.common.errors.TopicAuthorizationException: Not authorized to access topics: [ops.pages]", KAFKA),
    ("kafka", "kafka_throttling_quota", "rate_limit", 'KafkaError{code=THROTTLING_QUOTA_EXCEEDED,val=89,str="Broker: Throttling quota has been exceeded"}', KAFKA),
    ("kafka", "rdkafka_connect_refused", "connection", "%3|1733047871.512|FAIL|rdkafka#producer-1| [thrd:kafka-0:9092/0]: kafka-0:9092/0: Connect to ipv4#10.0.4.12:9092 failed: Connection refused (after 0ms in state CONNECT)", "https://github.com/confluentinc/librdkafka/blob/master/INTRODUCTION.md#error-reporting"),
    ("kafka", "kafka_msg_too_large", "invalid_request", 'KafkaError{code=MSG_SIZE_TOO_LARGE,val=10,str="Broker: Message size too large"}', KAFKA),
    ("rabbitmq", "rmq_not_found", "not_found", "pika.exceptions.ChannelClosedByBroker: (404, \"NOT_FOUND - no exchange 'pager' in vhost '/'\")", RMQ),
    ("rabbitmq", "rmq_access_refused", "auth", "pika.exceptions.ProbableAccessDeniedError: (403, \"ACCESS_REFUSED - Login was refused using authentication mechanism PLAIN. For details see the broker logfile.\")", RMQ),
    ("rabbitmq", "rmq_precondition", "invalid_request", "pika.exceptions.ChannelClosedByBroker: (406, \"PRECONDITION_FAILED - inequivalent arg 'durable' for exchange 'pager' in vhost '/': received 'false' but current is 'true'\")", RMQ),
    ("rabbitmq", "rmq_connection_forced", "connection", "pika.exceptions.ConnectionClosedByBroker: (320, \"CONNECTION_FORCED - broker forced connection closure with reason 'shutdown'\")", RMQ),
    ("nats", "nats_timeout", "timeout", "nats: timeout", "https://pkg.go.dev/github.com/nats-io/nats.go#pkg-variables"),
    ("nats", "nats_permissions", "auth", 'nats: permissions violation for publish to "pager.page"', "https://docs.nats.io/running-a-nats-service/configuration/securing_nats/authorization"),
    ("nats", "nats_connection_closed", "connection", "nats: connection closed", "https://pkg.go.dev/github.com/nats-io/nats.go#pkg-variables"),
    ("nats", "nats_max_payload", "invalid_request", "nats: maximum payload exceeded", "https://pkg.go.dev/github.com/nats-io/nats.go#pkg-variables"),
    # data stores and search
    ("elasticsearch", "es_index_not_found", "not_found", _es("index_not_found_exception", "no such index [logs-{svc}-2026.12.01]", 404), ES),
    ("elasticsearch", "es_rejected_execution", "rate_limit", _es("es_rejected_execution_exception", "rejected execution of coordinating operation [coordinating_and_primary_bytes=0, replica_bytes=0, all_bytes=0, coordinating_operation_bytes=51981, max_coordinating_and_primary_bytes=53687091]", 429), "https://www.elastic.co/guide/en/elasticsearch/reference/current/rejected-requests.html"),
    ("elasticsearch", "es_all_shards_failed", "error", _es("search_phase_execution_exception", "all shards failed", 503), ES),
    ("elasticsearch", "es_parsing", "invalid_request", _es("parsing_exception", "[match] query malformed, no start_object after query name", 400), ES),
    ("elasticsearch", "es_security", "auth", _es("security_exception", "action [indices:data/read/search] is unauthorized for user [ops-responder] with effective roles [viewer] on indices [logs-{svc}]", 403), "https://www.elastic.co/guide/en/elasticsearch/reference/current/security-privileges.html"),
    ("clickhouse", "ch_timeout", "timeout", "Code: 159. DB::Exception: Timeout exceeded: elapsed 30.000118 seconds, maximum: 30. (TIMEOUT_EXCEEDED) (version 24.3.2.23 (official build))", CH),
    ("clickhouse", "ch_unknown_table", "not_found", "Code: 60. DB::Exception: Table logs.{svc}_errors does not exist. (UNKNOWN_TABLE) (version 24.3.2.23 (official build))", CH),
    ("clickhouse", "ch_too_many_queries", "rate_limit", "Code: 202. DB::Exception: Too many simultaneous queries. Maximum: 100. (TOO_MANY_SIMULTANEOUS_QUERIES) (version 24.3.2.23 (official build))", CH),
    ("clickhouse", "ch_syntax", "invalid_request", "Code: 62. DB::Exception: Syntax error: failed at position 38 ('level'): level:error. Expected one of: token, Comma, Arrow. (SYNTAX_ERROR) (version 24.3.2.23 (official build))", CH),
    ("clickhouse", "ch_memory", "error", "Code: 241. DB::Exception: Memory limit (total) exceeded: would use 28.01 GiB (attempt to allocate chunk of 4194304 bytes), maximum: 28.00 GiB. (MEMORY_LIMIT_EXCEEDED) (version 24.3.2.23 (official build))", CH),
    ("clickhouse", "ch_auth", "auth", "Code: 516. DB::Exception: responder: Authentication failed: password is incorrect, or there is no user with such name. (AUTHENTICATION_FAILED) (version 24.3.2.23 (official build))", CH),
    ("cassandra", "cass_unavailable", "error", "cassandra.Unavailable: Error from server: code=1000 [Unavailable exception] message=\"Cannot achieve consistency level QUORUM\" info={'consistency': 'QUORUM', 'required_replicas': 2, 'alive_replicas': 1}", CASS),
    ("cassandra", "cass_read_timeout", "timeout", "cassandra.ReadTimeout: Error from server: code=1200 [Coordinator node timed out waiting for replica nodes' responses] message=\"Operation timed out - received only 1 responses.\" info={'consistency': 'QUORUM', 'required_responses': 2, 'received_responses': 1}", CASS),
    ("cassandra", "cass_no_host", "connection", "cassandra.cluster.NoHostAvailable: ('Unable to connect to any servers', {'10.0.3.7:9042': ConnectionRefusedError(111, \"Tried connecting to [('10.0.3.7', 9042)]. Last error: Connection refused\")})", CASS),
    ("cassandra", "cass_invalid_query", "invalid_request", "cassandra.InvalidRequest: Error from server: code=2200 [Invalid query] message=\"Undefined column name sevrity in table ops.incidents\"", CASS),
    ("snowflake", "sf_does_not_exist", "not_found", "snowflake.connector.errors.ProgrammingError: 002003 (42S02): SQL compilation error:\nObject 'OPS.PUBLIC.DEPLOYMENTS' does not exist.", SF),
    ("snowflake", "sf_statement_timeout", "timeout", "snowflake.connector.errors.ProgrammingError: 000630 (57014): Statement reached its statement or warehouse timeout of 60 second(s) and was canceled.", SF),
    ("snowflake", "sf_syntax", "invalid_request", "snowflake.connector.errors.ProgrammingError: 001003 (42000): SQL compilation error:\nsyntax error line 1 at position 24 unexpected 'FORM'.", SF),
    # observability and ticketing APIs
    ("datadog", "dd_rate_limited", "rate_limit", json.dumps({"errors": ["Rate limit of 300 requests in 3600 seconds reached. Please try again later."]}), DD),
    ("datadog", "dd_forbidden", "auth", json.dumps({"errors": ["Forbidden"]}), "https://docs.datadoghq.com/api/latest/?tab=python#status-codes"),
    ("datadog", "dd_bad_query", "invalid_request", json.dumps({"status": "error", "code": 400, "errors": ["Error parsing query: \n unable to parse avg:{svc}.cpu{env:prod: Rule 'scope_expr' didn't match at 'env:prod' (line 1, column 18)."]}), "https://docs.datadoghq.com/api/latest/metrics/#query-timeseries-points"),
    ("datadog", "dd_service_unavailable", "error", json.dumps({"errors": ["Service Unavailable"], "statuspage": "https://status.datadoghq.com"}), "https://docs.datadoghq.com/api/latest/?tab=python#status-codes"),
    ("pagerduty", "pd_not_found", "not_found", json.dumps({"error": {"message": "Not Found", "code": 2100}}), PD),
    ("pagerduty", "pd_invalid_input", "invalid_request", json.dumps({"error": {"message": "Invalid Input Provided", "code": 2001, "errors": ["Escalation Policy must be a valid escalation policy id."]}}), PD),
    ("pagerduty", "pd_events_throttled", "rate_limit", json.dumps({"status": "throttle event", "message": "Requests for this service are arriving too quickly.  Please retry later."}), "https://developer.pagerduty.com/docs/events-api-v2/overview/#response-codes--retry-logic"),
    ("pagerduty", "pd_unauthorized", "auth", json.dumps({"error": {"message": "Authentication failed", "code": 2006}}), PD),
    ("grafana", "grafana_invalid_key", "auth", json.dumps({"message": "invalid API key", "traceID": ""}), GRAF),
    ("grafana", "grafana_ds_not_found", "not_found", json.dumps({"message": "Data source not found", "traceID": ""}), "https://grafana.com/docs/grafana/latest/developers/http_api/data_source/"),
    ("grafana", "grafana_query_deadline", "timeout", json.dumps({"results": {"A": {"error": "context deadline exceeded", "errorSource": "downstream", "status": 500}}}), "https://grafana.com/docs/grafana/latest/developers/http_api/data_source/#query-a-data-source"),
    ("grafana", "grafana_proxy_refused", "connection", 'Post "http://prometheus.monitoring:9090/api/v1/query_range": dial tcp 10.0.7.2:9090: connect: connection refused', "https://grafana.com/docs/grafana/latest/troubleshooting/"),
    ("prometheus", "prom_bad_data", "invalid_request", _prom("bad_data", 'invalid parameter "query": 1:30: parse error: unexpected "}" in label matching, expected string'), PROM),
    ("prometheus", "prom_timeout", "timeout", _prom("timeout", "query timed out in expression evaluation"), PROM),
    ("prometheus", "prom_execution", "error", _prom("execution", "query processing would load too many samples into memory in query execution"), PROM),
    ("prometheus", "prom_unavailable", "error", _prom("unavailable", "TSDB not ready"), PROM),
    ("jira", "jira_not_found", "not_found", json.dumps({"errorMessages": ["Issue does not exist or you do not have permission to see it."], "errors": {}}), JIRA),
    ("jira", "jira_field_invalid", "invalid_request", json.dumps({"errorMessages": [], "errors": {"priority": "Specify the Priority (id or name) in the correct format"}}), JIRA),
    ("jira", "jira_rate_limited", "rate_limit", json.dumps({"errorMessages": ["Rate limit exceeded."], "errors": {}}), "https://developer.atlassian.com/cloud/jira/platform/rate-limiting/"),
    ("jira", "jira_unauthenticated", "auth", json.dumps({"errorMessages": ["You do not have permission to create issues in this project."], "errors": {}}), JIRA),
    ("servicenow", "snow_no_record", "not_found", json.dumps({"error": {"message": "No Record found", "detail": "Record doesn't exist or ACL restricts the record retrieval"}, "status": "failure"}), SNOW),
    ("servicenow", "snow_not_authenticated", "auth", json.dumps({"error": {"message": "User Not Authenticated", "detail": "Required to provide Auth information"}, "status": "failure"}), SNOW),
    ("servicenow", "snow_txn_cancelled", "timeout", json.dumps({"error": {"message": "Transaction cancelled: maximum execution time exceeded", "detail": "Transaction cancelled: maximum execution time exceeded. Check logs for error trace or enable glide.rest.debug property to verify REST request processing"}, "status": "failure"}), "https://docs.servicenow.com/bundle/washingtondc-platform-administration/page/administer/platform-performance/concept/transaction-quotas.html"),
    ("servicenow", "snow_invalid_body", "invalid_request", json.dumps({"error": {"message": "Exception while reading request", "detail": "The payload is not valid JSON."}, "status": "failure"}), SNOW),
    ("zendesk", "zd_record_invalid", "invalid_request", json.dumps({"error": "RecordInvalid", "description": "Record validation errors", "details": {"priority": [{"description": "Priority: is not valid", "error": "InvalidValue"}]}}), "https://developer.zendesk.com/api-reference/ticketing/introduction/#response-format"),
    ("zendesk", "zd_ticket_update_rate", "rate_limit", "Rate limit for ticket updates exceeded, please wait before updating this ticket again", ZD),
    ("zendesk", "zd_record_not_found", "not_found", json.dumps({"error": "RecordNotFound", "description": "Not found"}), "https://developer.zendesk.com/api-reference/ticketing/introduction/#response-format"),
    ("zendesk", "zd_forbidden", "auth", json.dumps({"error": "Forbidden", "description": "You do not have access to this page. Please contact the account owner of this help desk for further help."}), "https://developer.zendesk.com/api-reference/ticketing/introduction/#response-format"),
    # shells and runtimes
    ("bash", "bash_command_not_found", "not_found", "bash: line 1: deployctl: command not found", BASH),
    ("bash", "bash_permission_denied", "auth", "bash: /opt/ops/bin/deployctl: Permission denied", BASH),
    ("bash", "coreutils_timeout", "timeout", "timeout: sending signal TERM to command 'deployctl'\n[exit status 124]", "https://www.gnu.org/software/coreutils/manual/html_node/timeout-invocation.html"),
    ("bash", "bash_killed", "error", "bash: line 1:  4121 Killed                  deployctl status --service {svc}\n[exit status 137]", BASH),
    ("bash", "curl_refused", "connection", "curl: (7) Failed to connect to deploy-api.internal port 8443 after 0 ms: Couldn't connect to server", CURL),
    ("bash", "curl_resolve", "connection", "curl: (6) Could not resolve host: deploy-api.internal", CURL),
    ("bash", "curl_timeout", "timeout", "curl: (28) Operation timed out after 30001 milliseconds with 0 bytes received", CURL),
    ("powershell", "ps_not_recognized", "not_found", "Invoke-Rollback : The term 'Invoke-Rollback' is not recognized as the name of a cmdlet, function, script file, or operable program. Check the spelling of the name, or if a path was included, verify that the path is correct and try again.\n    + CategoryInfo          : ObjectNotFound: (Invoke-Rollback:String) [], CommandNotFoundException\n    + FullyQualifiedErrorId : CommandNotFoundException", "https://learn.microsoft.com/en-us/powershell/scripting/learn/deep-dives/everything-about-exceptions"),
    ("powershell", "ps_webexception_503", "error", "Invoke-RestMethod : The remote server returned an error: (503) Server Unavailable.\nAt line:1 char:1\n+ Invoke-RestMethod -Uri https://deploy-api.internal/v1/services/{svc}\n    + CategoryInfo          : InvalidOperation: (System.Net.HttpWebRequest:HttpWebRequest) [Invoke-RestMethod], WebException\n    + FullyQualifiedErrorId : WebCmdletWebResponseException,Microsoft.PowerShell.Commands.InvokeRestMethodCommand", PS),
    ("powershell", "ps_timed_out", "timeout", "Invoke-WebRequest : The operation has timed out.\n    + CategoryInfo          : InvalidOperation: (System.Net.HttpWebRequest:HttpWebRequest) [Invoke-WebRequest], WebException", PS),
    ("powershell", "ps_access_denied", "auth", "Set-Service : Service 'Ops Agent ({svc})' cannot be configured due to the following error: Access is denied\n    + CategoryInfo          : PermissionDenied: (System.ServiceProcess.ServiceController:ServiceController) [Set-Service], ServiceCommandException", "https://learn.microsoft.com/en-us/powershell/module/microsoft.powershell.management/set-service"),
    ("node", "node_econnrefused", "connection", "Error: connect ECONNREFUSED 10.0.5.9:8080\n    at TCPConnectWrap.afterConnect [as oncomplete] (node:net:1607:16) {\n  errno: -111,\n  code: 'ECONNREFUSED',\n  syscall: 'connect',\n  address: '10.0.5.9',\n  port: 8080\n}", NODE),
    ("node", "node_econnreset", "connection", "Error: read ECONNRESET\n    at TLSWrap.onStreamRead (node:internal/stream_base_commons:218:20) {\n  errno: -104,\n  code: 'ECONNRESET',\n  syscall: 'read'\n}", NODE),
    ("node", "node_enotfound", "connection", "Error: getaddrinfo ENOTFOUND pager-api.internal\n    at GetAddrInfoReqWrap.onlookup [as oncomplete] (node:dns:109:26) {\n  errno: -3008,\n  code: 'ENOTFOUND',\n  syscall: 'getaddrinfo',\n  hostname: 'pager-api.internal'\n}", NODE),
    ("node", "node_typeerror", "error", "TypeError: Cannot read properties of undefined (reading 'replicas')\n    at scaleService (/srv/ops-api/src/scale.js:42:31)\n    at process.processTicksAndRejections (node:internal/process/task_queues:95:5)", "https://nodejs.org/api/errors.html#class-typeerror"),
    ("jvm", "jvm_socket_timeout", "timeout", "java.net.SocketTimeoutException: Read timed out\n\tat java.base/sun.nio.ch.NioSocketImpl.timedRead(NioSocketImpl.java:288)\n\tat java.base/sun.nio.ch.NioSocketImpl.implRead(NioSocketImpl.java:314)\n\tat com.acme.ops.client.DeployClient.get(DeployClient.java:77)", JVM),
    ("jvm", "jvm_connect_refused", "connection", "java.net.ConnectException: Connection refused\n\tat java.base/sun.nio.ch.Net.pollConnect(Native Method)\n\tat java.base/sun.nio.ch.NioSocketImpl.timedFinishConnect(NioSocketImpl.java:554)\n\tat com.acme.ops.client.DeployClient.get(DeployClient.java:77)", "https://docs.oracle.com/en/java/javase/21/docs/api/java.base/java/net/ConnectException.html"),
    ("jvm", "jvm_npe", "error", "java.lang.NullPointerException: Cannot invoke \"String.length()\" because \"version\" is null\n\tat com.acme.ops.DeployService.rollback(DeployService.java:118)\n\tat com.acme.ops.api.DeployController.post(DeployController.java:54)", "https://docs.oracle.com/en/java/javase/21/docs/api/java.base/java/lang/NullPointerException.html"),
    ("jvm", "jvm_oom", "error", "Exception in thread \"http-nio-8080-exec-7\" java.lang.OutOfMemoryError: Java heap space", "https://docs.oracle.com/en/java/javase/21/troubleshoot/troubleshooting-memory-leaks.html"),
    ("jvm", "hikari_not_available", "timeout", "java.sql.SQLTransientConnectionException: HikariPool-1 - Connection is not available, request timed out after 30000ms.\n\tat com.zaxxer.hikari.pool.HikariPool.createTimeoutException(HikariPool.java:696)", "https://github.com/brettwooldridge/HikariCP/wiki/MySQL-Configuration"),
    ("dotnet", "dotnet_refused", "connection", "System.Net.Http.HttpRequestException: No connection could be made because the target machine actively refused it. (ticketing.internal:443)\n ---> System.Net.Sockets.SocketException (10061): No connection could be made because the target machine actively refused it.\n   at System.Net.Sockets.Socket.AwaitableSocketAsyncEventArgs.ThrowException(SocketError error, CancellationToken cancellationToken)", "https://learn.microsoft.com/en-us/dotnet/api/system.net.http.httprequestexception"),
    ("dotnet", "dotnet_task_canceled", "timeout", "System.Threading.Tasks.TaskCanceledException: The request was canceled due to the configured HttpClient.Timeout of 100 seconds elapsing.\n ---> System.TimeoutException: The operation was canceled.", DOTNET),
    ("dotnet", "dotnet_unauthorized_access", "auth", "System.UnauthorizedAccessException: Access to the path '/var/ops/state/{svc}.json' is denied.\n   at System.IO.FileSystem.OpenHandle(String fullPath, FileMode mode)", "https://learn.microsoft.com/en-us/dotnet/api/system.unauthorizedaccessexception"),
    ("dotnet", "dotnet_key_not_found", "not_found", "System.Collections.Generic.KeyNotFoundException: The given key '{svc}' was not present in the dictionary.\n   at System.Collections.Generic.Dictionary`2.get_Item(TKey key)", "https://learn.microsoft.com/en-us/dotnet/api/system.collections.generic.keynotfoundexception"),
    ("go", "go_nil_pointer", "error", "panic: runtime error: invalid memory address or nil pointer dereference\n[signal SIGSEGV: segmentation violation code=0x1 addr=0x18 pc=0x6f2a1c]\n\ngoroutine 1 [running]:\nmain.(*Scaler).Apply(0x0, {0xc0000a4000, 0x8})\n\t/src/ops/scaler.go:88 +0x1c", GO),
    ("go", "go_index_out_of_range", "error", "panic: runtime error: index out of range [3] with length 3\n\ngoroutine 17 [running]:\nmain.pickRelease(...)\n\t/src/ops/releases.go:41", GO),
    ("go", "go_client_timeout", "timeout", 'Get "http://metrics-api.internal:8080/v1/query": context deadline exceeded (Client.Timeout exceeded while awaiting headers)', "https://pkg.go.dev/net/http#Client"),
    ("go", "go_dial_refused", "connection", 'Post "http://deploy-api.internal:8080/v1/rollback": dial tcp 10.0.2.4:8080: connect: connection refused', "https://pkg.go.dev/net#Dial"),
    ("grpc", "grpc_unavailable_dial", "connection", 'rpc error: code = Unavailable desc = connection error: desc = "transport: Error while dialing: dial tcp 10.0.2.4:50051: connect: connection refused"', GRPC),
    ("grpc", "grpc_not_found", "not_found", 'rpc error: code = NotFound desc = job "{svc}" not found', GRPC),
    ("grpc", "grpc_permission_denied", "auth", "rpc error: code = PermissionDenied desc = caller ops-responder lacks scope deploy:write", GRPC),
    ("python", "py_connection_reset_repr", "connection", "ConnectionResetError(104, 'Connection reset by peer')", PY),
    ("python", "py_timeout_repr", "timeout", "TimeoutError('timed out')", PY),
    ("python", "py_traceback_keyerror", "error", "Traceback (most recent call last):\n  File \"/srv/ops/handlers.py\", line 61, in handle\n    owner = TEAMS[record['team_id']]\n            ~~~~~^^^^^^^^^^^^^^^^^\nKeyError: 'team_id'", "https://docs.python.org/3/library/exceptions.html#KeyError"),
    # gateways in front of the tools
    ("gateway", "nginx_502_page", "error", "<html>\r\n<head><title>502 Bad Gateway</title></head>\r\n<body>\r\n<center><h1>502 Bad Gateway</h1></center>\r\n<hr><center>nginx/1.25.3</center>\r\n</body>\r\n</html>", "https://nginx.org/en/docs/http/ngx_http_proxy_module.html"),
    ("gateway", "nginx_504_page", "timeout", "<html>\r\n<head><title>504 Gateway Time-out</title></head>\r\n<body>\r\n<center><h1>504 Gateway Time-out</h1></center>\r\n<hr><center>nginx</center>\r\n</body>\r\n</html>", "https://nginx.org/en/docs/http/ngx_http_proxy_module.html#proxy_read_timeout"),
    ("gateway", "envoy_upstream_reset", "connection", "upstream connect error or disconnect/reset before headers. reset reason: connection termination", GW),
    ("gateway", "envoy_upstream_timeout", "timeout", "upstream request timeout", GW),
    ("gateway", "envoy_no_healthy_upstream", "error", "no healthy upstream", GW),
    ("gateway", "haproxy_503", "error", "<html><body><h1>503 Service Unavailable</h1>\nNo server is available to handle this request.\n</body></html>", "https://docs.haproxy.org/2.8/configuration.html#1.3.1"),
    ("gateway", "cloudflare_522", "timeout", "error code: 522", "https://developers.cloudflare.com/support/troubleshooting/cloudflare-errors/troubleshooting-cloudflare-5xx-errors/#error-522-connection-timed-out"),
]

TOOL_ERROR_FORMS: dict[str, ToolForm] = {
    name: ToolForm(name, family, label, text, source) for family, name, label, text, source in _ROWS}

# Forms that report a failure after the call took effect (the retry then applies it twice).
AFTER_EFFECT = {
    "pd_events_after_timeout": ToolForm("pd_events_after_timeout", "pagerduty", "timeout",
                                        "ReadTimeout: HTTPSConnectionPool(host='events.pagerduty.com', port=443): Read timed out. (read timeout=10)",
                                        "https://developer.pagerduty.com/docs/events-api-v2/overview/#response-codes--retry-logic", after=True),
    "jira_create_502_after": ToolForm("jira_create_502_after", "jira", "error",
                                      "<html><head><title>502 Bad Gateway</title></head><body><center><h1>502 Bad Gateway</h1></center></body></html>",
                                      "https://confluence.atlassian.com/jirakb/502-bad-gateway-errors-when-accessing-jira-applications-779160656.html", after=True),
    "snow_create_txn_cancelled_after": ToolForm("snow_create_txn_cancelled_after", "servicenow", "timeout",
                                                json.dumps({"error": {"message": "Transaction cancelled: maximum execution time exceeded", "detail": None}, "status": "failure"}),
                                                "https://docs.servicenow.com/bundle/washingtondc-platform-administration/page/administer/platform-performance/concept/transaction-quotas.html", after=True),
    "node_socket_hang_up_after": ToolForm("node_socket_hang_up_after", "node", "connection",
                                          "Error: socket hang up\n    at connResetException (node:internal/errors:787:14)\n    at TLSSocket.socketOnEnd (node:_http_client:519:23) {\n  code: 'ECONNRESET'\n}",
                                          NODE, after=True),
}
TOOL_ERROR_FORMS.update(AFTER_EFFECT)

# Which forms a tool's backend would plausibly answer with (by family).
TOOL_FAMILIES: dict[str, tuple[str, ...]] = {
    "get_incident": ("pagerduty", "servicenow", "jira", "dynamodb", "cassandra", "snowflake", "python", "gateway", "jvm", "dotnet"),
    "update_incident": ("pagerduty", "servicenow", "jira", "dynamodb", "cassandra", "gateway", "node", "python"),
    "query_metrics": ("datadog", "prometheus", "grafana", "gcp", "bigquery", "clickhouse", "go", "gateway", "aws_sdk"),
    "search_logs": ("elasticsearch", "clickhouse", "bigquery", "snowflake", "grafana", "gcp", "gateway", "go"),
    "list_deployments": ("kubernetes", "nomad", "consul", "etcd", "aws_sdk", "azure", "bash", "powershell", "grpc", "gcp"),
    "rollback": ("kubernetes", "terraform", "nomad", "aws_sdk", "azure", "bash", "powershell", "jvm", "go", "grpc", "gcp"),
    "scale_service": ("kubernetes", "nomad", "aws_sdk", "azure", "terraform", "gcp", "go", "node", "bash", "consul", "etcd"),
    "page_oncall": ("pagerduty", "kafka", "rabbitmq", "nats", "sqs", "node", "dotnet"),
    "create_ticket": ("jira", "servicenow", "zendesk", "dotnet", "jvm", "sqs", "kafka", "powershell"),
}


def forms_for(tool: str) -> list[ToolForm]:
    fams = TOOL_FAMILIES[tool]
    return [f for f in TOOL_ERROR_FORMS.values() if f.family in fams and not f.after]
