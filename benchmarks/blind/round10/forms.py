# ruff: noqa: E501 - the published error texts are kept on one line each, as the systems send them
"""The failure forms of round 10: how real data-platform systems and model gateways answer badly.

Each form is one published wording or shape (the ``source`` names the public documentation it
imitates). Tool-side forms are text templates (``{obj}`` is the table, job, topic or path the call
named) or transformations of the real result; LLM-side forms are behaviours of the loopback
server (``llm_server``). ``label`` and ``target`` follow docs/taxonomy.md.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any


@dataclass(frozen=True)
class Form:
    name: str
    family: str
    side: str            # "tool" | "llm"
    label: str
    target: str          # tool_result | content | tool_calls | http | stream
    source: str
    text: str = ""       # tool error text template, or the LLM body/page
    how: str = "text"    # tool: text | json | xml | raise | data ; llm: see llm_server.apply
    extra: dict[str, Any] = field(default_factory=dict)


def _t(name: str, family: str, label: str, source: str, text: str, how: str = "text", **extra: Any) -> Form:
    return Form(name, family, "tool", label, "tool_result", source, text, how, extra)


def _l(name: str, family: str, label: str, target: str, source: str, how: str, text: str = "",
       **extra: Any) -> Form:
    return Form(name, family, "llm", label, target, source, text, how, extra)


DBX = "https://docs.databricks.com/en/error-messages/index.html"
DBX_API = "https://docs.databricks.com/api/workspace/introduction"
TRINO = "https://trino.io/docs/current/develop/client-protocol.html"
CH = "https://clickhouse.com/docs/en/interfaces/http"
SPARK = "https://spark.apache.org/docs/latest/sql-error-conditions.html"
DBT = "https://docs.getdbt.com/dbt-cloud/api-v2"
AIRFLOW = "https://airflow.apache.org/docs/apache-airflow/stable/stable-rest-api-ref.html"
DAGSTER = "https://docs.dagster.io/concepts/webserver/graphql"
PREFECT = "https://docs.prefect.io/latest/api-ref/rest-api/"
KAFKA = "https://kafka.apache.org/protocol.html#protocol_error_codes"
CKAFKA = "https://docs.confluent.io/platform/current/clients/confluent-kafka-python/html/index.html"
SR = "https://docs.confluent.io/platform/current/schema-registry/develop/api.html"
GCS = "https://cloud.google.com/storage/docs/json_api/v1/status-codes"
AZB = "https://learn.microsoft.com/en-us/rest/api/storageservices/blob-service-error-codes"
S3 = "https://docs.aws.amazon.com/AmazonS3/latest/API/ErrorResponses.html"
MINIO = "https://min.io/docs/minio/linux/developers/python/API.html"
B2 = "https://www.backblaze.com/apidocs/introduction-to-the-b2-native-api"
R2 = "https://developers.cloudflare.com/r2/api/s3/api/"
HDFS = "https://hadoop.apache.org/docs/stable/hadoop-project-dist/hadoop-hdfs/WebHDFS.html#Error_Responses"
HASURA = "https://hasura.io/docs/latest/api-reference/graphql-api/query/"
APOLLO = "https://www.apollographql.com/docs/apollo-server/data/errors"
LOOKER = "https://cloud.google.com/looker/docs/reference/looker-api/latest"
TABLEAU = "https://help.tableau.com/current/api/rest_api/en-us/REST/rest_api_concepts_errors.htm"
METABASE = "https://www.metabase.com/docs/latest/api-documentation"
SUPERSET = "https://superset.apache.org/docs/api"
FIVETRAN = "https://fivetran.com/docs/rest-api/api-reference/connectors"
AIRBYTE = "https://reference.airbyte.com/reference/getjob"
GX = "https://docs.greatexpectations.io/docs/reference/api/core/ExpectationSuiteValidationResult_class"
GAPI = "https://googleapis.dev/python/google-api-core/latest/exceptions.html"
AZCORE = "https://learn.microsoft.com/en-us/python/api/azure-core/azure.core.exceptions"
PYARROW = "https://arrow.apache.org/docs/python/api/misc.html#exceptions"
DBSQL = "https://docs.databricks.com/en/dev-tools/python-sql-connector.html"
TRINOPY = "https://github.com/trinodb/trino-python-client#readme"
CHC = "https://clickhouse.com/docs/en/integrations/python"
PYDOC = "https://docs.python.org/3/library/exceptions.html"
DRUID = "https://druid.apache.org/docs/latest/querying/querying.html#query-errors"
PINOT = "https://docs.pinot.apache.org/users/api/querying-pinot-using-standard-sql/response-format"
HIVE = "https://cwiki.apache.org/confluence/display/Hive/HiveServer2+Clients"
IMPALA = "https://impala.apache.org/docs/build/html/topics/impala_mem_limit.html"
NGINX = "https://nginx.org/en/docs/http/ngx_http_proxy_module.html"
CF = "https://developers.cloudflare.com/support/troubleshooting/cloudflare-errors/troubleshooting-cloudflare-5xx-errors/"
ALB = "https://docs.aws.amazon.com/elasticloadbalancing/latest/application/load-balancer-troubleshooting.html"
ENVOY = "https://www.envoyproxy.io/docs/envoy/latest/faq/debugging/why_is_envoy_503"

TOOL_FORMS: list[Form] = [
    # Databricks REST / SQL (error_code + SQLSTATE-bearing messages)
    _t("dbx_table_not_found", "databricks", "not_found", DBX,
       '{{"error_code": "TABLE_OR_VIEW_NOT_FOUND", "message": "[TABLE_OR_VIEW_NOT_FOUND] The table or view `{obj}` cannot be found. Verify the spelling and correctness of the schema and catalog. SQLSTATE: 42P01"}}', "json"),
    _t("dbx_permission_denied", "databricks", "auth", DBX_API,
       '{{"error_code": "PERMISSION_DENIED", "message": "User does not have SELECT on Table \'{obj}\'."}}', "json"),
    _t("dbx_temporarily_unavailable", "databricks", "error", DBX_API,
       '{{"error_code": "TEMPORARILY_UNAVAILABLE", "message": "The service at /api/2.0/sql/statements is temporarily unavailable. Please try again later."}}', "json"),
    _t("dbx_request_limit", "databricks", "rate_limit", DBX_API,
       '{{"error_code": "REQUEST_LIMIT_EXCEEDED", "message": "Exceeded rate limit for the statement execution API. Retry after some time."}}', "json"),
    _t("dbx_invalid_parameter", "databricks", "invalid_request", DBX_API,
       '{{"error_code": "INVALID_PARAMETER_VALUE", "message": "wait_timeout must be 0 or between 5s and 50s, got 60s"}}', "json"),
    _t("dbx_statement_failed", "databricks", "error", DBX_API,
       '{{"statement_id": "01ef-7a2c", "status": {{"state": "FAILED", "error": {{"error_code": "INTERNAL_ERROR", "message": "[INTERNAL_ERROR] Query could not be executed. SQLSTATE: XX000"}}}}}}', "json"),
    _t("dbx_resource_missing", "databricks", "not_found", DBX_API,
       '{{"error_code": "RESOURCE_DOES_NOT_EXIST", "message": "Job {obj} does not exist."}}', "json"),
    _t("dbx_statement_canceled_timeout", "databricks", "timeout", DBX_API,
       '{{"statement_id": "01ef-7a2d", "status": {{"state": "CANCELED", "error": {{"error_code": "DEADLINE_EXCEEDED", "message": "The statement was canceled because it exceeded the wait timeout."}}}}}}', "json"),
    # Trino / Presto client protocol
    _t("trino_table_not_found", "trino", "not_found", TRINO,
       '{{"id": "20261206_0412_00017_x8k2p", "stats": {{"state": "FAILED"}}, "error": {{"message": "line 1:15: Table \'hive.analytics.{obj}\' does not exist", "errorCode": 46, "errorName": "TABLE_NOT_FOUND", "errorType": "USER_ERROR"}}}}', "json"),
    _t("trino_time_limit", "trino", "timeout", TRINO,
       '{{"stats": {{"state": "FAILED"}}, "error": {{"message": "Query exceeded maximum time limit of 5.00m", "errorCode": 131075, "errorName": "EXCEEDED_TIME_LIMIT", "errorType": "INSUFFICIENT_RESOURCES"}}}}', "json"),
    _t("trino_memory", "trino", "error", TRINO,
       '{{"stats": {{"state": "FAILED"}}, "error": {{"message": "Query exceeded distributed user memory limit of 20GB", "errorCode": 131079, "errorName": "EXCEEDED_GLOBAL_MEMORY_LIMIT", "errorType": "INSUFFICIENT_RESOURCES"}}}}', "json"),
    _t("trino_syntax", "trino", "invalid_request", TRINO,
       '{{"stats": {{"state": "FAILED"}}, "error": {{"message": "line 1:8: mismatched input \'FROM\'. Expecting: \'*\', <expression>", "errorCode": 1, "errorName": "SYNTAX_ERROR", "errorType": "USER_ERROR"}}}}', "json"),
    _t("trino_access_denied", "trino", "auth", TRINO,
       '{{"stats": {{"state": "FAILED"}}, "error": {{"message": "Access Denied: Cannot select from table {obj}", "errorCode": 4, "errorName": "PERMISSION_DENIED", "errorType": "USER_ERROR"}}}}', "json"),
    _t("trino_no_nodes", "trino", "error", TRINO,
       '{{"stats": {{"state": "FAILED"}}, "error": {{"message": "No nodes available to run query", "errorCode": 65538, "errorName": "NO_NODES_AVAILABLE", "errorType": "INTERNAL_ERROR"}}}}', "json"),
    _t("trino_queue_full", "trino", "rate_limit", TRINO,
       '{{"stats": {{"state": "FAILED"}}, "error": {{"message": "Too many queued queries for \\"global.adhoc\\"", "errorCode": 131074, "errorName": "QUERY_QUEUE_FULL", "errorType": "INSUFFICIENT_RESOURCES"}}}}', "json"),
    # ClickHouse HTTP interface
    _t("ch_unknown_table", "clickhouse", "not_found", CH,
       "Code: 60. DB::Exception: Table analytics.{obj} does not exist. (UNKNOWN_TABLE) (version 24.3.2.23 (official build))"),
    _t("ch_timeout", "clickhouse", "timeout", CH,
       "Code: 159. DB::Exception: Timeout exceeded: elapsed 30.000812 seconds, maximum: 30. (TIMEOUT_EXCEEDED) (version 24.3.2.23 (official build))"),
    _t("ch_memory", "clickhouse", "error", CH,
       "Code: 241. DB::Exception: Memory limit (total) exceeded: would use 14.02 GiB (attempt to allocate chunk of 4194304 bytes), maximum: 14.00 GiB. (MEMORY_LIMIT_EXCEEDED) (version 24.3.2.23 (official build))"),
    _t("ch_syntax", "clickhouse", "invalid_request", CH,
       "Code: 62. DB::Exception: Syntax error: failed at position 8 ('FROM'): FROM {obj}. Expected one of: list of elements, expression. (SYNTAX_ERROR) (version 24.3.2.23 (official build))"),
    _t("ch_auth", "clickhouse", "auth", CH,
       "Code: 516. DB::Exception: analyst: Authentication failed: password is incorrect, or there is no user with such name. (AUTHENTICATION_FAILED) (version 24.3.2.23 (official build))"),
    _t("ch_too_many", "clickhouse", "rate_limit", CH,
       "Code: 202. DB::Exception: Too many simultaneous queries. Maximum: 100. (TOO_MANY_SIMULTANEOUS_QUERIES) (version 24.3.2.23 (official build))"),
    _t("ch_network", "clickhouse", "connection", CH,
       "Code: 210. DB::NetException: Connection refused (ch-replica-2:9000). (NETWORK_ERROR) (version 24.3.2.23 (official build))"),
    # Spark / Hive / Impala
    _t("spark_analysis", "spark_hive", "not_found", SPARK,
       "pyspark.errors.exceptions.captured.AnalysisException: [TABLE_OR_VIEW_NOT_FOUND] The table or view `{obj}` cannot be found. SQLSTATE: 42P01; line 1 pos 21;\n'Aggregate [count(1) AS count#12L]\n+- 'UnresolvedRelation [{obj}], [], false"),
    _t("spark_job_aborted", "spark_hive", "error", SPARK,
       "Traceback (most recent call last):\n  File \"/databricks/spark/python/pyspark/sql/dataframe.py\", line 1240, in count\n    return int(self._jdf.count())\n  File \"/databricks/spark/python/lib/py4j-0.10.9.7-src.zip/py4j/protocol.py\", line 326, in get_return_value\npy4j.protocol.Py4JJavaError: An error occurred while calling o412.count.\n: org.apache.spark.SparkException: Job aborted due to stage failure: Task 3 in stage 7.0 failed 4 times, most recent failure: Lost task 3.3 in stage 7.0 (TID 88) (10.1.4.7 executor 2): java.lang.OutOfMemoryError: Java heap space"),
    _t("spark_py4j_network", "spark_hive", "connection", SPARK,
       "py4j.protocol.Py4JNetworkError: Answer from Java side is empty\nduring handling of the above exception: ConnectionRefusedError: [Errno 111] Connection refused"),
    _t("hive_semantic", "spark_hive", "not_found", HIVE,
       "Error: Error while compiling statement: FAILED: SemanticException [Error 10001]: Line 1:21 Table not found '{obj}' (state=42S02,code=10001)"),
    _t("impala_mem", "spark_hive", "error", IMPALA,
       "ERROR: Memory limit exceeded: Failed to allocate tuple buffer\nHDFS_SCAN_NODE (id=0) could not allocate 190.00 KB without exceeding limit.\nError occurred on backend impalad-3:27000 by fragment 6f4e2a:0"),
    _t("druid_timeout", "druid_pinot", "timeout", DRUID,
       '{{"error": "Query timeout", "errorMessage": "Query [b91c-77] timed out.", "errorClass": "org.apache.druid.query.QueryTimeoutException", "host": "druid-historical-2:8083"}}', "json"),
    _t("druid_capacity", "druid_pinot", "rate_limit", DRUID,
       '{{"error": "Query capacity exceeded", "errorMessage": "Too many concurrent queries, total query capacity of 40 exceeded.", "errorClass": "org.apache.druid.query.QueryCapacityExceededException"}}', "json"),
    _t("pinot_exceptions", "druid_pinot", "not_found", PINOT,
       '{{"exceptions": [{{"errorCode": 190, "message": "TableDoesNotExistError: {obj}"}}], "numServersQueried": 0, "resultTable": null}}', "json"),
    _t("pinot_partial", "druid_pinot", "truncated", PINOT,
       '{{"resultTable": {{"rows": [[{half}]]}}, "partialResult": true, "numServersQueried": 4, "numServersResponded": 2, "exceptions": [{{"errorCode": 427, "message": "1 servers [pinot-server-3] not responded"}}]}}', "json"),
    # dbt Cloud API v2
    _t("dbt_not_found", "dbt_cloud", "not_found", DBT,
       '{{"status": {{"code": 404, "is_success": false, "user_message": "The requested resource was not found.", "developer_message": ""}}, "data": null}}', "json"),
    _t("dbt_unauthorized", "dbt_cloud", "auth", DBT,
       '{{"status": {{"code": 401, "is_success": false, "user_message": "Invalid token.", "developer_message": null}}, "data": null}}', "json"),
    _t("dbt_throttled", "dbt_cloud", "rate_limit", DBT,
       '{{"status": {{"code": 429, "is_success": false, "user_message": "Request was throttled. Expected available in 12 seconds.", "developer_message": ""}}, "data": null}}', "json"),
    _t("dbt_bad_request", "dbt_cloud", "invalid_request", DBT,
       '{{"status": {{"code": 400, "is_success": false, "user_message": "The request was invalid. Please double check the provided data and try again.", "developer_message": ""}}, "data": {{"cause": ["cause: This field is required."]}}}}', "json"),
    _t("dbt_run_errored", "dbt_cloud", "error", DBT,
       '{{"status": {{"code": 200, "is_success": true}}, "data": {{"id": 7741, "status": 20, "status_humanized": "Error", "status_message": "Internal error: could not connect to the run environment", "in_progress": false}}}}', "json"),
    # Airflow REST (problem+json)
    _t("airflow_404", "airflow", "not_found", AIRFLOW,
       '{{"detail": "DAG with dag_id: \'{obj}\' not found", "status": 404, "title": "DAG not found", "type": "https://airflow.apache.org/docs/apache-airflow/2.9.2/stable-rest-api-ref.html#section/Errors/NotFound"}}', "json"),
    _t("airflow_403", "airflow", "auth", AIRFLOW,
       '{{"detail": null, "status": 403, "title": "Forbidden", "type": "https://airflow.apache.org/docs/apache-airflow/2.9.2/stable-rest-api-ref.html#section/Errors/PermissionDenied"}}', "json"),
    _t("airflow_409", "airflow", "invalid_request", AIRFLOW,
       '{{"detail": "DAGRun with DAG ID: \'{obj}\' and DAGRun ID: \'manual__2026-12-06\' already exists", "status": 409, "title": "Conflict", "type": "https://airflow.apache.org/docs/apache-airflow/2.9.2/stable-rest-api-ref.html#section/Errors/AlreadyExists"}}', "json"),
    _t("airflow_401", "airflow", "auth", AIRFLOW,
       '{{"detail": null, "status": 401, "title": "Unauthorized", "type": "https://airflow.apache.org/docs/apache-airflow/2.9.2/stable-rest-api-ref.html#section/Errors/Unauthenticated"}}', "json"),
    _t("airflow_500", "airflow", "error", AIRFLOW,
       '{{"detail": "The server encountered an internal error and was unable to complete your request.", "status": 500, "title": "Internal Server Error", "type": "about:blank"}}', "json"),
    # Dagster GraphQL
    _t("dagster_python_error", "dagster_prefect", "error", DAGSTER,
       '{{"data": {{"launchPipelineExecution": {{"__typename": "PythonError", "message": "dagster._core.errors.DagsterUserCodeUnreachableError: Could not reach user code server", "stack": ["  File \\"/usr/local/lib/python3.11/site-packages/dagster/_core/host_representation/repository_location.py\\", line 812, in get_external_execution_plan\\n"]}}}}}}', "json"),
    _t("dagster_not_found", "dagster_prefect", "not_found", DAGSTER,
       '{{"data": {{"launchPipelineExecution": {{"__typename": "PipelineNotFoundError", "message": "Could not find Pipeline {obj}", "pipelineName": "{obj}"}}}}}}', "json"),
    _t("dagster_unauthorized", "dagster_prefect", "auth", DAGSTER,
       '{{"data": {{"launchRun": {{"__typename": "UnauthorizedError", "message": "Viewer does not have permission to launch runs in this deployment."}}}}}}', "json"),
    _t("dagster_gql_errors", "dagster_prefect", "invalid_request", DAGSTER,
       '{{"errors": [{{"message": "Variable \\"$selector\\" got invalid value {{\\"jobName\\": null}}; Field \\"jobName\\" of required type \\"String!\\" was not provided.", "locations": [{{"line": 1, "column": 18}}]}}]}}', "json"),
    _t("prefect_not_found", "dagster_prefect", "not_found", PREFECT,
       '{{"detail": "Deployment not found."}}', "json"),
    _t("prefect_crashed", "dagster_prefect", "error", PREFECT,
       '{{"id": "3f1b-77c2", "state": {{"type": "CRASHED", "name": "Crashed", "message": "Flow run infrastructure exited with non-zero status code 137."}}}}', "json"),
    # Kafka / Confluent
    _t("kafka_not_leader", "kafka", "error", KAFKA,
       "KafkaException(KafkaError{{code=NOT_LEADER_OR_FOLLOWER,val=6,str=\"Broker: Not leader for partition\"}})"),
    _t("kafka_timed_out", "kafka", "timeout", CKAFKA,
       "KafkaException(KafkaError{{code=_TIMED_OUT,val=-185,str=\"Failed to get watermark offsets: Local: Timed out\"}})"),
    _t("kafka_topic_auth", "kafka", "auth", KAFKA,
       "KafkaException(KafkaError{{code=TOPIC_AUTHORIZATION_FAILED,val=29,str=\"Broker: Topic authorization failed\"}})"),
    _t("kafka_unknown_topic", "kafka", "not_found", KAFKA,
       "KafkaException(KafkaError{{code=UNKNOWN_TOPIC_OR_PART,val=3,str=\"Subscribed topic not available: {obj}: Broker: Unknown topic or partition\"}})"),
    _t("kafka_transport", "kafka", "connection", CKAFKA,
       "KafkaException(KafkaError{{code=_TRANSPORT,val=-195,str=\"sasl_ssl://b-2.kafka.internal:9096/2: Disconnected (after 59981ms in state UP)\"}})"),
    _t("kafka_quota", "kafka", "rate_limit", KAFKA,
       "KafkaException(KafkaError{{code=THROTTLING_QUOTA_EXCEEDED,val=89,str=\"Broker: Throttling quota has been exceeded\"}})"),
    _t("sr_subject_not_found", "schema_registry", "not_found", SR,
       '{{"error_code": 40401, "message": "Subject \'{obj}-value\' not found."}}', "json"),
    _t("sr_invalid_schema", "schema_registry", "invalid_request", SR,
       '{{"error_code": 42201, "message": "Invalid schema: Either the input schema or one of its references is invalid"}}', "json"),
    _t("sr_backend", "schema_registry", "error", SR,
       '{{"error_code": 50001, "message": "Error in the backend data store"}}', "json"),
    _t("sr_unauthorized", "schema_registry", "auth", SR,
       '{{"error_code": 40101, "message": "Unauthorized"}}', "json"),
    # Google Cloud Storage JSON API
    _t("gcs_not_found", "gcs", "not_found", GCS,
       '{{"error": {{"code": 404, "message": "The specified bucket does not exist.", "errors": [{{"message": "The specified bucket does not exist.", "domain": "global", "reason": "notFound"}}]}}}}', "json"),
    _t("gcs_forbidden", "gcs", "auth", GCS,
       '{{"error": {{"code": 403, "message": "etl-runner@data-prod.iam.gserviceaccount.com does not have storage.objects.list access to the Google Cloud Storage bucket.", "errors": [{{"message": "does not have storage.objects.list access", "domain": "global", "reason": "forbidden"}}]}}}}', "json"),
    _t("gcs_rate", "gcs", "rate_limit", GCS,
       '{{"error": {{"code": 429, "message": "The project exceeded the rate limit for CloudStorage and project.", "errors": [{{"domain": "usageLimits", "reason": "rateLimitExceeded"}}]}}}}', "json"),
    _t("gcs_backend", "gcs", "error", GCS,
       '{{"error": {{"code": 503, "message": "Backend Error", "errors": [{{"message": "Backend Error", "domain": "global", "reason": "backendError"}}]}}}}', "json"),
    # Azure Blob Storage XML
    _t("azb_blob_not_found", "azure_blob", "not_found", AZB,
       '<?xml version="1.0" encoding="utf-8"?><Error><Code>ContainerNotFound</Code><Message>The specified container does not exist.\nRequestId:5e1c9a2b-701e-0042-3f2a-4c8d1b000000\nTime:2026-12-06T04:12:55.1174410Z</Message></Error>', "xml"),
    _t("azb_auth_failed", "azure_blob", "auth", AZB,
       '<?xml version="1.0" encoding="utf-8"?><Error><Code>AuthenticationFailed</Code><Message>Server failed to authenticate the request. Make sure the value of Authorization header is formed correctly including the signature.\nRequestId:7d02-0042\nTime:2026-12-06T04:12:55Z</Message><AuthenticationErrorDetail>Signed expiry time [Sat, 05 Dec 2026 23:00:00 GMT] has to be after signed start time</AuthenticationErrorDetail></Error>', "xml"),
    _t("azb_server_busy", "azure_blob", "rate_limit", AZB,
       '<?xml version="1.0" encoding="utf-8"?><Error><Code>ServerBusy</Code><Message>Operations per second is over the account limit.\nRequestId:91aa-0042</Message></Error>', "xml"),
    _t("azb_op_timeout", "azure_blob", "timeout", AZB,
       '<?xml version="1.0" encoding="utf-8"?><Error><Code>OperationTimedOut</Code><Message>The operation could not be completed within the permitted time.\nRequestId:0c3e-0042</Message></Error>', "xml"),
    # S3-compatible stores
    _t("minio_no_such_bucket", "s3_compatible", "not_found", MINIO,
       "S3Error: code: NoSuchBucket, message: The specified bucket does not exist, resource: /{obj}, request_id: 17E2A9C3F0B1D2E4, host_id: dd9025bab4ad464b049177c95eb6ebf374d3b3fd1af9251148b658df7ac2e3e8, bucket_name: {obj}"),
    _t("minio_slow_down", "s3_compatible", "rate_limit", S3,
       '<?xml version="1.0" encoding="UTF-8"?>\n<Error><Code>SlowDown</Code><Message>Resource requested is unreadable, please reduce your request rate</Message><Resource>/{obj}</Resource><RequestId>17E2A9C3F0B1D2E5</RequestId></Error>', "xml"),
    _t("ceph_access_denied", "s3_compatible", "auth", S3,
       '<?xml version="1.0" encoding="UTF-8"?><Error><Code>AccessDenied</Code><BucketName>{obj}</BucketName><RequestId>tx00000a1b2c3d4e5f6-0065e1-3b2a-default</RequestId><HostId>3b2a-default-default</HostId></Error>', "xml"),
    _t("b2_expired_token", "s3_compatible", "auth", B2,
       '{{"status": 401, "code": "expired_auth_token", "message": "Authorization token has expired"}}', "json"),
    _t("r2_internal", "s3_compatible", "error", R2,
       '<?xml version="1.0" encoding="UTF-8"?><Error><Code>InternalError</Code><Message>We encountered an internal error. Please try again.</Message></Error>', "xml"),
    _t("b2_service_unavailable", "s3_compatible", "error", B2,
       '{{"status": 503, "code": "service_unavailable", "message": "no tomes available"}}', "json"),
    # HDFS / WebHDFS RemoteException
    _t("hdfs_fnf", "hdfs", "not_found", HDFS,
       '{{"RemoteException": {{"exception": "FileNotFoundException", "javaClassName": "java.io.FileNotFoundException", "message": "File does not exist: /warehouse/{obj}"}}}}', "json"),
    _t("hdfs_acl", "hdfs", "auth", HDFS,
       '{{"RemoteException": {{"exception": "AccessControlException", "javaClassName": "org.apache.hadoop.security.AccessControlException", "message": "Permission denied: user=analyst, access=READ_EXECUTE, inode=\\"/warehouse/{obj}\\":hive:hadoop:drwx------"}}}}', "json"),
    _t("hdfs_safemode", "hdfs", "error", HDFS,
       '{{"RemoteException": {{"exception": "SafeModeException", "javaClassName": "org.apache.hadoop.hdfs.server.namenode.SafeModeException", "message": "Cannot complete listing. Name node is in safe mode."}}}}', "json"),
    _t("hdfs_standby", "hdfs", "error", HDFS,
       "org.apache.hadoop.ipc.RemoteException(org.apache.hadoop.ipc.StandbyException): Operation category READ is not supported in state standby. Visit https://s.apache.org/sbnn-error\n\tat org.apache.hadoop.hdfs.server.namenode.ha.StandbyState.checkOperation(StandbyState.java:108)"),
    # GraphQL (Hasura, Apollo)
    _t("hasura_validation", "graphql", "invalid_request", HASURA,
       '{{"errors": [{{"extensions": {{"path": "$.selectionSet.dashboards.selectionSet.tile", "code": "validation-failed"}}, "message": "field \'tile\' not found in type: \'dashboards\'"}}]}}', "json"),
    _t("hasura_access_denied", "graphql", "auth", HASURA,
       '{{"errors": [{{"extensions": {{"path": "$", "code": "access-denied"}}, "message": "Authentication hook unauthorized this request"}}]}}', "json"),
    _t("apollo_unauthenticated", "graphql", "auth", APOLLO,
       '{{"errors": [{{"message": "Context creation failed: token expired", "extensions": {{"code": "UNAUTHENTICATED"}}}}], "data": null}}', "json"),
    _t("apollo_internal", "graphql", "error", APOLLO,
       '{{"errors": [{{"message": "Cannot read properties of undefined (reading \'tiles\')", "locations": [{{"line": 2, "column": 3}}], "path": ["dashboard"], "extensions": {{"code": "INTERNAL_SERVER_ERROR"}}}}], "data": {{"dashboard": null}}}}', "json"),
    # BI tools
    _t("looker_not_found", "bi", "not_found", LOOKER,
       '{{"message": "Not found", "documentation_url": "https://cloud.google.com/looker/docs/r/err/4.0/404/get/dashboards/:dashboard_id"}}', "json"),
    _t("tableau_auth", "bi", "auth", TABLEAU,
       '<?xml version="1.0" encoding="UTF-8"?><tsResponse xmlns="http://tableau.com/api"><error code="401002"><summary>Unauthorized Access</summary><detail>Invalid authentication credentials were provided.</detail></error></tsResponse>', "xml"),
    _t("tableau_not_found", "bi", "not_found", TABLEAU,
       '<?xml version="1.0" encoding="UTF-8"?><tsResponse xmlns="http://tableau.com/api"><error code="404004"><summary>Resource Not Found</summary><detail>Workbook \'{obj}\' could not be found.</detail></error></tsResponse>', "xml"),
    _t("metabase_perm", "bi", "auth", METABASE, "You don't have permissions to do that."),
    _t("superset_422", "bi", "invalid_request", SUPERSET,
       '{{"message": {{"slice_name": ["Length must be between 1 and 250."]}}}}', "json"),
    _t("tableau_rate", "bi", "rate_limit", TABLEAU,
       '<?xml version="1.0" encoding="UTF-8"?><tsResponse xmlns="http://tableau.com/api"><error code="429000"><summary>Too Many Requests</summary><detail>Too many requests. Please try again later.</detail></error></tsResponse>', "xml"),
    # ELT tools
    _t("fivetran_not_found", "elt", "not_found", FIVETRAN,
       '{{"code": "NotFound_Connector", "message": "Connector with id \'{obj}\' doesn\'t exist"}}', "json"),
    _t("fivetran_broken", "elt", "error", FIVETRAN,
       '{{"code": "Success", "data": {{"id": "{obj}", "status": {{"setup_state": "broken", "sync_state": "paused", "tasks": [{{"code": "reconnect", "message": "Reconnect"}}], "warnings": []}}}}}}', "json"),
    _t("airbyte_failed", "elt", "error", AIRBYTE,
       '{{"jobId": 5512, "status": "failed", "jobType": "sync", "failureReason": {{"failureOrigin": "source", "failureType": "system_error", "externalMessage": "Something went wrong in the connector."}}}}', "json"),
    _t("fivetran_rate", "elt", "rate_limit", FIVETRAN,
       '{{"code": "TooManyRequests", "message": "Too many requests. Retry after 60 seconds."}}', "json"),
    _t("gx_exception", "elt", "error", GX,
       '{{"success": false, "results": [{{"success": false, "expectation_config": {{"expectation_type": "expect_table_row_count_to_be_between"}}, "exception_info": {{"raised_exception": true, "exception_message": "OperationalError: (psycopg2.OperationalError) server closed the connection unexpectedly", "exception_traceback": "Traceback (most recent call last): ..."}}}}]}}', "json"),
    # Python client exception reprs
    _t("dbsql_server_op", "client_reprs", "not_found", DBSQL,
       "databricks.sql.exc.ServerOperationError: [TABLE_OR_VIEW_NOT_FOUND] The table or view `main`.`analytics`.`{obj}` cannot be found. SQLSTATE: 42P01"),
    _t("trinopy_user_error", "client_reprs", "invalid_request", TRINOPY,
       'TrinoUserError(type=USER_ERROR, name=COLUMN_NOT_FOUND, message="line 1:8: Column \'rows\' cannot be resolved", query_id=20261206_041233_00031_x8k2p)'),
    _t("chc_database_error", "client_reprs", "error", CHC,
       "clickhouse_connect.driver.exceptions.DatabaseError: HTTPDriver for http://ch-1:8123 returned response code 500)\n Code: 1000. DB::Exception: Poco::Exception. Code: 1000, e.code() = 0, I/O error: Broken pipe. (POCO_EXCEPTION)"),
    _t("gapi_not_found", "client_reprs", "not_found", GAPI,
       "google.api_core.exceptions.NotFound: 404 GET https://storage.googleapis.com/storage/v1/b/{obj}/o?prefix=raw%2F&projection=noAcl&prettyPrint=false: The specified bucket does not exist."),
    _t("gapi_forbidden", "client_reprs", "auth", GAPI,
       "google.api_core.exceptions.Forbidden: 403 Access Denied: Table data-prod:analytics.{obj}: Permission bigquery.tables.getData denied on table data-prod:analytics.{obj} (or it may not exist)."),
    _t("gapi_unavailable", "client_reprs", "error", GAPI,
       "google.api_core.exceptions.ServiceUnavailable: 503 failed to connect to all addresses; last error: UNAVAILABLE"),
    _t("gapi_deadline", "client_reprs", "timeout", GAPI,
       "google.api_core.exceptions.DeadlineExceeded: 504 Deadline Exceeded"),
    _t("azcore_not_found", "client_reprs", "not_found", AZCORE,
       "azure.core.exceptions.ResourceNotFoundError: The specified blob does not exist.\nRequestId:a1c2-001e\nTime:2026-12-06T04:13:02Z\nErrorCode:BlobNotFound"),
    _t("azcore_service_request", "client_reprs", "connection", AZCORE,
       "azure.core.exceptions.ServiceRequestError: <urllib3.connection.HTTPSConnection object at 0x7f3a2c1b9d50>: Failed to establish a new connection: [Errno -2] Name or service not known"),
    _t("pyarrow_invalid", "client_reprs", "invalid_request", PYARROW,
       "pyarrow.lib.ArrowInvalid: Could not open Parquet input source '<Buffer>': Parquet magic bytes not found in footer. Either the file is corrupted or this is not a parquet file."),
    # Gateways in front of tool services
    _t("gw_nginx_502", "tool_gateway", "error", NGINX,
       "<html>\r\n<head><title>502 Bad Gateway</title></head>\r\n<body>\r\n<center><h1>502 Bad Gateway</h1></center>\r\n<hr><center>nginx/1.25.3</center>\r\n</body>\r\n</html>"),
    _t("gw_cf_524", "tool_gateway", "timeout", CF,
       "<!DOCTYPE html><html><head><title>superset.corp.example | 524: A timeout occurred</title></head><body><h1>A timeout occurred</h1><span>Error code 524</span><p>The origin web server timed out responding to this request.</p><p>Cloudflare Ray ID: 8f1a2b3c4d5e6f70</p></body></html>"),
    _t("gw_alb_503", "tool_gateway", "error", ALB,
       "<html><head><title>503 Service Temporarily Unavailable</title></head><body><center><h1>503 Service Temporarily Unavailable</h1></center></body></html>"),
    _t("gw_envoy_reset", "tool_gateway", "connection", ENVOY,
       "upstream connect error or disconnect/reset before headers. reset reason: connection termination"),
    # Raised inside local tools: the Agents SDK shows its default failure message
    _t("raise_timeout", "raised", "timeout", PYDOC, "TimeoutError: statement did not finish in 30s", "raise", exc="timeout"),
    _t("raise_conn_reset", "raised", "connection", PYDOC,
       "ConnectionResetError: [Errno 104] Connection reset by peer", "raise", exc="connection"),
    _t("raise_permission", "raised", "auth", PYDOC, "PermissionError: role analyst may not read {obj}", "raise", exc="auth"),
    _t("raise_runtime", "raised", "error", PYDOC, "RuntimeError: executor lost", "raise", exc="error"),
    _t("raise_lookup", "raised", "not_found", PYDOC, "LookupError: no such object {obj}", "raise", exc="not_found"),
    # Data faults: well-formed, transformed results
    _t("wv_shift_count", "wrong_value", "wrong_value", DBX_API, "", "data", op="shift"),
    _t("wv_stale_snapshot", "wrong_value", "wrong_value", TRINO, "", "data", op="stale"),
    _t("wv_wrong_entity", "wrong_value", "wrong_value", AIRFLOW, "", "data", op="entity"),
    _t("wv_day_off", "wrong_value", "wrong_value", DBT, "", "data", op="date"),
    _t("tr_partial_flag", "truncated", "truncated", DRUID, "", "data", op="partial"),
    _t("tr_next_page", "truncated", "truncated", GCS, "", "data", op="page"),
    _t("tr_total_above", "truncated", "truncated", LOOKER, "", "data", op="total"),
    _t("tr_cut_line", "truncated", "truncated", CH, "", "data", op="cutline"),
    _t("kr_camel", "key_rename", "key_rename", HASURA, "", "data", op="camel"),
    _t("kr_strings", "key_rename", "key_rename", DAGSTER, "", "data", op="strings"),
    _t("kr_prefixed", "key_rename", "key_rename", FIVETRAN, "", "data", op="prefix"),
    _t("em_object", "empty", "empty", DBX_API, "{}", "data", op="empty"),
    _t("em_list", "empty", "empty", PINOT, "[]", "data", op="empty"),
    _t("em_string", "empty", "empty", METABASE, "", "data", op="empty"),
    _t("em_null", "empty", "empty", SUPERSET, "null", "data", op="empty"),
    _t("mj_cut", "malformed_json", "malformed_json", TRINO, "", "data", op="cut"),
    _t("mj_unbalanced", "malformed_json", "malformed_json", CH, "", "data", op="unbalanced"),
]

BEDROCK = "https://docs.aws.amazon.com/bedrock/latest/userguide/inference-chat-completions.html"
BAG = "https://github.com/aws-samples/bedrock-access-gateway#readme"
VERTEX = "https://cloud.google.com/vertex-ai/generative-ai/docs/multimodal/call-vertex-using-openai-library"
HF = "https://huggingface.co/docs/inference-providers/index"
GHM = "https://docs.github.com/en/github-models/use-github-models/prototyping-with-ai-models#rate-limits"
NEBIUS = "https://docs.nebius.com/studio/inference/api"
SCW = "https://www.scaleway.com/en/docs/generative-apis/api-cli/using-chat-api/"
OVH = "https://help.ovhcloud.com/csm/en-public-cloud-ai-endpoints-getting-started"
COHERE = "https://docs.cohere.com/docs/compatibility-api"
AI21 = "https://docs.ai21.com/reference/jamba-1-6-api-ref"
UPSTAGE = "https://console.upstage.ai/docs/capabilities/chat"
FRIENDLI = "https://friendli.ai/docs/openapi/serverless/chat-completions"
BASETEN = "https://docs.baseten.co/inference/calling-your-model"
MODAL = "https://modal.com/docs/examples/vllm_inference"
RUNPOD = "https://docs.runpod.io/serverless/vllm/openai-compatibility"
LORAX = "https://loraexchange.ai/reference/openai_api/"
WRITER = "https://dev.writer.com/api-reference/completion-api/chat-completion"

LLM_FORMS: list[Form] = [
    # HTTP statuses of the model API
    _l("bedrock_throttling_429", "llm_http", "rate_limit", "http", BEDROCK, "status",
       '{"error": {"message": "Too many requests, please wait before trying again.", "type": "ThrottlingException", "code": 429}}', status=429),
    _l("vertex_resource_exhausted_429", "llm_http", "rate_limit", "http", VERTEX, "status",
       '[{"error": {"code": 429, "message": "Resource exhausted. Please try again later.", "status": "RESOURCE_EXHAUSTED"}}]', status=429),
    _l("ghm_ratelimit_429", "llm_http", "rate_limit", "http", GHM, "status",
       '{"error": {"code": "RateLimitReached", "message": "Rate limit of 15 per 60s exceeded for UserByModelByMinute. Please wait 0 seconds before retrying.", "details": "Rate limit of 15 per 60s exceeded."}}', status=429),
    _l("bag_500", "llm_http", "http_error", "http", BAG, "status",
       '{"detail": "An error occurred (ModelErrorException) when calling the Converse operation: The system encountered an unexpected error during processing. Try your request again."}', status=500),
    _l("vertex_503", "llm_http", "http_error", "http", VERTEX, "status",
       '[{"error": {"code": 503, "message": "The service is currently unavailable.", "status": "UNAVAILABLE"}}]', status=503),
    _l("hf_router_503_loading", "llm_http", "http_error", "http", HF, "status",
       '{"error": "Model meta-llama/Llama-3.3-70B-Instruct is currently loading", "estimated_time": 41.7}', status=503),
    _l("runpod_502", "llm_http", "http_error", "http", RUNPOD, "status",
       '{"error": "worker exited unexpectedly", "status": 502}', status=502),
    _l("nebius_504", "llm_http", "timeout", "http", NEBIUS, "status",
       '<html><head><title>504 Gateway Time-out</title></head><body><center><h1>504 Gateway Time-out</h1></center></body></html>', status=504, ctype="text/html"),
    _l("scaleway_401", "llm_http", "auth", "http", SCW, "status",
       '{"message": "authentication is denied", "method": "api_key", "reason": "invalid_argument", "type": "denied_authentication"}', status=401),
    _l("ovh_404_model", "llm_http", "not_found", "http", OVH, "status",
       '{"code": 404, "message": "model Meta-Llama-3_3-70B-Instruct-v2 not found"}', status=404),
    _l("cohere_400", "llm_http", "invalid_request", "http", COHERE, "status",
       '{"id": "b3c1", "message": "invalid request: tool call id call_7 has no matching tool result"}', status=400),
    _l("ai21_422", "llm_http", "invalid_request", "http", AI21, "status",
       '{"detail": [{"type": "less_than_equal", "loc": ["body", "max_tokens"], "msg": "Input should be less than or equal to 4096"}]}', status=422),
    _l("modal_408", "llm_http", "timeout", "http", MODAL, "status",
       '{"detail": "Request timed out waiting for a container."}', status=408),
    # Connection faults and client read timeouts
    _l("baseten_conn_drop", "llm_conn", "connection", "http", BASETEN, "drop"),
    _l("friendli_conn_drop", "llm_conn", "connection", "http", FRIENDLI, "drop"),
    _l("slow_past_client_timeout", "llm_conn", "timeout", "http", LORAX, "slow_timeout"),
    # Error objects delivered with status 200
    _l("cohere_200_error_body", "llm_200_error", "error", "content", COHERE, "body200",
       '{"error": {"message": "internal server error, this has been reported to our developers", "type": "server_error", "code": 500}}'),
    _l("hf_200_error_body", "llm_200_error", "error", "content", HF, "body200",
       '{"error": "Input validation error: an internal error occurred in the upstream provider", "error_type": "upstream_error"}'),
    _l("nebius_200_rate_body", "llm_200_error", "rate_limit", "content", NEBIUS, "body200",
       '{"error": {"message": "Rate limit exceeded: 400000 tokens per minute", "type": "rate_limit_error", "code": 429}}'),
    _l("writer_200_timeout_body", "llm_200_error", "timeout", "content", WRITER, "body200",
       '{"error": {"type": "timeout_error", "message": "Request timed out after 60 seconds"}}'),
    # Texts reporting errors as the message content of a 200 reply
    _l("gw_504_page_content", "llm_content_page", "timeout", "content", NGINX, "content",
       "<html>\r\n<head><title>504 Gateway Time-out</title></head>\r\n<body>\r\n<center><h1>504 Gateway Time-out</h1></center>\r\n<hr><center>nginx</center>\r\n</body>\r\n</html>"),
    _l("gw_502_page_content", "llm_content_page", "error", "content", CF, "content",
       "<!DOCTYPE html><html><head><title>502 Bad Gateway</title></head><body><h1>Bad gateway</h1><p>Error code 502</p><p>Cloudflare Ray ID: 8f1a77c2d9e0b311</p></body></html>"),
    _l("lorax_error_text_content", "llm_content_page", "error", "content", LORAX, "content",
       "Request failed during generation: Server error: CUDA error: an illegal memory access was encountered"),
    _l("envoy_reset_content", "llm_content_page", "connection", "content", ENVOY, "content",
       "upstream connect error or disconnect/reset before headers. reset reason: overflow"),
    _l("upstage_json_error_content", "llm_schema", "schema", "content", UPSTAGE, "content",
       '{"error": {"message": "The request was rejected by the safety system.", "type": "invalid_request_error", "code": "content_policy"}}'),
    _l("predibase_json_error_content", "llm_schema", "schema", "content", LORAX, "content",
       '{"error": "adapter load failed", "error_type": "generation"}'),
    # Finish reasons and content faults
    _l("vertex_content_filter", "llm_finish", "content_filter", "content", VERTEX, "finish_filter"),
    _l("bedrock_guardrail_filter", "llm_finish", "content_filter", "content", BEDROCK, "finish_filter",
       "Sorry, the model cannot answer this question. (guardrail intervened)"),
    _l("friendli_length", "llm_finish", "truncate", "content", FRIENDLI, "finish_length"),
    _l("scaleway_length_args", "llm_finish", "truncate", "tool_calls", SCW, "args_cut"),
    _l("runpod_empty", "llm_finish", "empty", "content", RUNPOD, "empty"),
    _l("baseten_empty_stop", "llm_finish", "empty", "content", BASETEN, "empty"),
    # Garbled, stale, emptied arguments
    _l("ovh_mojibake_args", "llm_garble", "corrupt", "tool_calls", OVH, "mojibake_args"),
    _l("modal_symbols_args", "llm_garble", "corrupt", "tool_calls", MODAL, "symbols_args"),
    _l("ai21_args_emptied", "llm_garble", "error", "tool_calls", AI21, "args_empty"),
    _l("bag_stale_repeat", "llm_stale", "stale", "content", BAG, "stale"),
    _l("hf_stale_repeat", "llm_stale", "stale", "content", HF, "stale"),
    # Streams
    _l("vertex_stream_cut", "llm_stream", "stream_cut", "stream", VERTEX, "stream_cut"),
    _l("runpod_stream_no_done", "llm_stream", "stream_cut", "stream", RUNPOD, "stream_cut_args"),
    _l("nebius_stream_error_event", "llm_stream", "error", "stream", NEBIUS, "stream_error",
       '{"error": {"message": "upstream inference worker crashed", "type": "server_error", "code": 500}}'),
    _l("writer_stream_length", "llm_stream", "truncate", "stream", WRITER, "stream_length"),
    # Slow replies: a deadline of the application passes
    _l("bedrock_slow_deadline", "llm_slow", "latency", "http", BEDROCK, "slow_deadline"),
    _l("hf_slow_deadline", "llm_slow", "latency", "http", HF, "slow_deadline"),
]

# Used only where the delay is waited out (benign successes), never as a root cause.
SLOW_BENIGN = _l("slow_benign", "benign", "latency", "http", BEDROCK, "slow_benign")

ALL_FORMS = {f.name: f for f in [*TOOL_FORMS, *LLM_FORMS, SLOW_BENIGN]}
TRANSIENT = {"rate_limit", "timeout", "error", "connection"}
