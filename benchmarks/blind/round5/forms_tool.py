"""Tool-side failure forms: how ERPs, data platforms, storage, identity, messaging, proxies and HTTP
clients answer when they fail, and the data faults (wrong, cut, renamed, broken, empty results).

Each form is one row: its id, the family (the imitated system), the taxonomy label, the tools it
fits, where its wording comes from, and either the text the tool answers with (an error, shown to
the agent as the tool's result) or the name of a data transform. ``<<inv>>``, ``<<vendor>>``,
``<<req>>``, ``<<ts>>`` and ``<<arg>>`` are filled from the call. ``ran`` says whether the real
tool ran before the failure was shown (it matters for writes that are retried).
"""

from __future__ import annotations

from typing import Any

ERP = ("search_invoices", "get_invoice", "post_payment", "get_vendor")
READ_ERP = ("search_invoices", "get_invoice", "get_vendor")
BANK = ("list_bank_transactions",)
FX = ("get_fx_rate",)
MSG = ("send_remittance",)
LOCAL = BANK + FX + MSG
ANY = ERP + LOCAL

SAP_ERR = "https://help.sap.com/saphelp_em92/helpdata/en/95/fd2651c294256ee10000000a445394/content.htm"
ODATA4 = "https://docs.oasis-open.org/odata/odata-json-format/v4.01/odata-json-format-v4.01.html#sec_ErrorResponse"
NS_REST = "https://docs.oracle.com/en/cloud/saas/netsuite/ns-online-help/section_156570709583.html"
NS_RESTLET = "https://docs.oracle.com/en/cloud/saas/netsuite/ns-online-help/section_4634920277.html"
NS_SOAP = "https://docs.oracle.com/en/cloud/saas/netsuite/ns-online-help/section_N3536574.html"
QBO = "https://developer.intuit.com/app/developer/qbo/docs/develop/troubleshooting/error-codes"
QBO_COMMON = "https://developer.intuit.com/app/developer/qbo/docs/develop/troubleshooting/handling-common-errors"
XERO = "https://developer.xero.com/documentation/guides/oauth2/limits/ and https://developer.xero.com/documentation/api/accounting/responsecodes"
AIRFLOW = "https://airflow.apache.org/docs/apache-airflow/stable/stable-rest-api-ref.html"
DBT = "https://docs.getdbt.com/guides/debug-errors"
SPARK = "https://spark.apache.org/docs/latest/sql-error-conditions.html"
DATABRICKS = "https://docs.databricks.com/api/workspace/statementexecution"
SNOW = "https://docs.snowflake.com/en/developer-guide/sql-api/handling-errors"
TRINO = "https://trino.io/docs/current/develop/client-protocol.html"
HIVE = "https://cwiki.apache.org/confluence/display/Hive/HiveServer2+Clients"
GCS = "https://cloud.google.com/storage/docs/json_api/v1/status-codes"
S3 = "https://docs.aws.amazon.com/AmazonS3/latest/API/ErrorResponses.html (MinIO speaks the same S3 error XML)"
WEBHDFS = "https://hadoop.apache.org/docs/stable/hadoop-project-dist/hadoop-hdfs/WebHDFS.html#Error_Responses"
NFS = "https://man7.org/linux/man-pages/man5/nfs.5.html and https://man7.org/linux/man-pages/man3/errno.3.html"
SMB = "https://learn.microsoft.com/en-us/openspecs/windows_protocols/ms-erref/596a1078-e883-4972-9bbc-49e60bebca55"
OKTA = "https://developer.okta.com/docs/reference/error-codes/"
AUTH0 = "https://auth0.com/docs/api/authentication#standard-error-responses"
KEYCLOAK = "https://www.keycloak.org/docs/latest/server_development/ (OAuth2 error responses, RFC 6749 section 5.2)"
LDAP = "https://ldap.com/ldap-result-code-reference/"
SENDGRID = "https://www.twilio.com/docs/sendgrid/api-reference/how-to-use-the-sendgrid-v3-api/responses"
TWILIO = "https://www.twilio.com/docs/api/errors"
SLACK = "https://api.slack.com/methods/chat.postMessage#errors"
GRAPH = "https://learn.microsoft.com/en-us/graph/errors"
SMTP = "https://www.rfc-editor.org/rfc/rfc5321#section-4.2 and https://www.rfc-editor.org/rfc/rfc3463"
HAPROXY = "https://docs.haproxy.org/2.8/configuration.html#4-errorfile (built-in error pages)"
TRAEFIK = "https://doc.traefik.io/traefik/routing/services/ (Bad Gateway / Gateway Timeout answers)"
ENVOY = "https://www.envoyproxy.io/docs/envoy/latest/configuration/observability/access_log/usage#config-access-log-format-response-flags"
IIS = "https://learn.microsoft.com/en-us/troubleshoot/developer/webapps/iis/www-administration-management/http-status-code"
APACHE = "https://httpd.apache.org/docs/2.4/mod/mod_proxy.html"
JAVA = "https://docs.oracle.com/en/java/javase/21/docs/api/java.net.http/java/net/http/HttpTimeoutException.html"
OKHTTP = "https://square.github.io/okhttp/4.x/okhttp/okhttp3/-ok-http-client/-builder/read-timeout/"
GO = "https://pkg.go.dev/net/http#Client"
DOTNET = "https://learn.microsoft.com/en-us/dotnet/api/system.net.http.httpclient.timeout"
REQWEST = "https://docs.rs/reqwest/latest/reqwest/struct.Error.html"
RUBY = "https://docs.ruby-lang.org/en/master/Net/HTTP.html"
GUZZLE = "https://docs.guzzlephp.org/en/stable/quickstart.html#exceptions"
CURL = "https://curl.se/libcurl/c/libcurl-errors.html"
GRPC = "https://grpc.io/docs/guides/status-codes/"
PYTHON = "https://docs.python.org/3/library/exceptions.html"
PAGING = "https://www.odata.org/documentation/odata-version-2-0/json-format/ (__count, __next)"
NS_PAGING = (
    "https://docs.oracle.com/en/cloud/saas/netsuite/ns-online-help/section_1545222128.html (hasMore, totalResults)"
)
SNOW_PART = "https://docs.snowflake.com/en/developer-guide/sql-api/handling-responses (partitionInfo)"
SPARK_SHOW = "https://spark.apache.org/docs/latest/api/python/reference/pyspark.sql/api/pyspark.sql.DataFrame.show.html"
ISO20022 = "https://www.iso20022.org/catalogue-messages (camt.053 RmtInf/Ustrd)"
ECB = "https://www.ecb.europa.eu/stats/policy_and_exchange_rates/euro_reference_exchange_rates/html/index.en.html"
BC = "https://learn.microsoft.com/en-us/dynamics365/business-central/dev-itpro/api-reference/v2.0/resources/dynamics_purchaseinvoice"

FORMS: list[dict[str, Any]] = []


def _t(
    fid: str,
    family: str,
    label: str,
    text: str,
    source: str,
    tools: tuple[str, ...] = ANY,
    ran: bool | None = None,
    exc: str | None = None,
) -> None:
    FORMS.append(
        {
            "id": fid,
            "family": family,
            "label": label,
            "side": "tool",
            "where": "tool_result",
            "kind": "text",
            "text": text,
            "source": source,
            "tools": list(tools),
            "ran": label in ("timeout", "error") if ran is None else ran,
            "exc": exc,
        }
    )


def _d(fid: str, family: str, label: str, transform: str, source: str, tools: tuple[str, ...], **params: Any) -> None:
    FORMS.append(
        {
            "id": fid,
            "family": family,
            "label": label,
            "side": "tool",
            "where": "tool_result",
            "kind": "data",
            "transform": transform,
            "source": source,
            "tools": list(tools),
            "ran": True,
            "params": params,
        }
    )


# --- ERP: SAP OData, NetSuite, QuickBooks Online, Xero ---------------------------------------
_t(
    "sap_odata_v2_not_found",
    "sap_odata",
    "not_found",
    '{"error":{"code":"/IWBEP/CM_MGW_RT/020","message":{"lang":"en","value":"Resource not found for segment '
    '\'A_SupplierInvoiceType\'."},"innererror":{"transactionid":"<<req>>","timestamp":"20261205193001.1234560",'
    '"errordetails":[]}}}',
    SAP_ERR,
    READ_ERP,
)
_t(
    "sap_odata_xml_period_closed",
    "sap_odata",
    "invalid_request",
    '<?xml version="1.0" encoding="utf-8"?><error xmlns="http://schemas.microsoft.com/ado/2007/08/dataservices/metadata">'
    '<code>F5/201</code><message xml:lang="en">Posting period 005 2026 is not open</message><innererror>'
    "<transactionid><<req>></transactionid><errordetails><errordetail><code>F5/201</code><message>Posting period "
    "005 2026 is not open</message><propertyref/><severity>error</severity></errordetail></errordetails>"
    "</innererror></error>",
    SAP_ERR,
    ("post_payment",),
)
_t(
    "sap_csrf_forbidden",
    "sap_odata",
    "auth",
    "HTTP 403 Forbidden: CSRF token validation failed (x-csrf-token: Required)",
    SAP_ERR,
    ERP,
)
_t(
    "odata_v4_internal",
    "sap_odata",
    "error",
    '{"error":{"code":"500","message":"Internal Server Error","target":"","details":[],"innererror":'
    '{"ErrorDetails":{"@Common.ExceptionCategory":"Programming_Error"}}}}',
    ODATA4,
    ERP,
)
_t(
    "sap_icm_timeout",
    "sap_odata",
    "timeout",
    "<html><head><title>500 Connection timed out</title></head><body><h2>500 Connection timed out</h2>"
    "Error: -5<br>Version: 7530<br>Component: ICM ABAP<br>Detail: Connection to partner timed out after 60s"
    "<br>Server: s4prd-app01_PRD_00</body></html>",
    "https://help.sap.com/docs/SAP_NETWEAVER_750/683d6a1797a34730a6e005d1e8de6f22/"
    "48a5e37e6d3e6b73e10000000a42189c.html "
    "(ICM error pages, ICM_HTTP_TIMEOUT)",
    ERP,
)
_t(
    "netsuite_invalid_login",
    "netsuite",
    "auth",
    '{"type":"https://www.rfc-editor.org/rfc/rfc9110.html#section-15.5.2","title":"Unauthorized","status":401,'
    '"o:errorDetails":[{"detail":"Invalid login attempt. For more details, see the Login Audit Trail in the '
    'NetSuite UI at Setup > Users/Roles > User Management > View Login Audit Trail.","o:errorCode":"INVALID_LOGIN"}]}',
    NS_REST,
    ERP,
)
_t(
    "netsuite_concurrency",
    "netsuite",
    "rate_limit",
    '{"type":"https://www.rfc-editor.org/rfc/rfc6585.html#section-4","title":"Too Many Requests","status":429,'
    '"o:errorDetails":[{"detail":"Concurrent request limit exceeded. Request blocked.",'
    '"o:errorCode":"CONCURRENCY_LIMIT_EXCEEDED"}]}',
    NS_REST,
    ERP,
)
_t(
    "netsuite_nonexistent_id",
    "netsuite",
    "not_found",
    '{"type":"https://www.rfc-editor.org/rfc/rfc9110.html#section-15.5.5","title":"Not Found","status":404,'
    '"o:errorDetails":[{"detail":"The record instance does not exist. Provide a valid record instance ID.",'
    '"o:errorPath":"<<inv>>","o:errorCode":"NONEXISTENT_ID"}]}',
    NS_REST,
    READ_ERP,
)
_t(
    "netsuite_usage_limit",
    "netsuite",
    "rate_limit",
    '{"error" : {"code" : "SSS_USAGE_LIMIT_EXCEEDED", "message" : "Script Execution Usage Limit Exceeded"}}',
    NS_RESTLET,
    ERP,
)
_t(
    "netsuite_unexpected",
    "netsuite",
    "error",
    '{"error" : {"code" : "UNEXPECTED_ERROR", "message" : "An unexpected SuiteScript error has occurred"}}',
    NS_RESTLET,
    ERP,
)
_t(
    "netsuite_soap_session_concurrency",
    "netsuite",
    "rate_limit",
    '<soapenv:Envelope xmlns:soapenv="http://schemas.xmlsoap.org/soap/envelope/"><soapenv:Body><soapenv:Fault>'
    "<faultcode>soapenv:Server.userException</faultcode><faultstring>Only one request may be made against a "
    "session at a time</faultstring><detail><platformFaults:exceededConcurrentRequestLimitFault "
    'xmlns:platformFaults="urn:faults_2024_2.platform.webservices.netsuite.com"><platformFaults:code>'
    "WS_CONCUR_SESSION_DISALLWD</platformFaults:code></platformFaults:exceededConcurrentRequestLimitFault>"
    "</detail></soapenv:Fault></soapenv:Body></soapenv:Envelope>",
    NS_SOAP,
    ERP,
)
_t(
    "qbo_authentication_fault",
    "quickbooks",
    "auth",
    '{"Fault":{"Error":[{"Message":"message=AuthenticationFailed; errorCode=003200; statusCode=401",'
    '"code":"3200"}],"type":"AuthenticationFault"},"time":"<<ts>>"}',
    QBO,
    ERP,
)
_t(
    "qbo_duplicate_doc_number",
    "quickbooks",
    "invalid_request",
    '{"Fault":{"Error":[{"Message":"Duplicate Document Number Error","Detail":"Duplicate Document Number Error '
    ": You must specify a different number. This number has already been used. DocNumber=<<inv>> is assigned "
    'to TxnType=BillPayment with TxnId=4711","code":"6140","element":""}],"type":"ValidationFault"},"time":"<<ts>>"}',
    QBO_COMMON,
    ("post_payment",),
)
_t(
    "qbo_object_not_found",
    "quickbooks",
    "not_found",
    '{"Fault":{"Error":[{"Message":"Object Not Found","Detail":"Object Not Found : Something you\'re trying to '
    'use has been made inactive. Check the fields with accounts, customers, items, vendors or employees.",'
    '"code":"610","element":""}],"type":"ValidationFault"},"time":"<<ts>>"}',
    QBO_COMMON,
    ERP,
)
_t(
    "qbo_throttle",
    "quickbooks",
    "rate_limit",
    '{"Fault":{"Error":[{"Message":"message=ThrottleExceeded; errorCode=003001; statusCode=429",'
    '"Detail":"Request has been throttled. Too many requests in a short period.","code":"3001"}],'
    '"type":"ThrottleExceeded"},"time":"<<ts>>"}',
    QBO,
    ERP,
)
_t(
    "qbo_xml_system_fault",
    "quickbooks",
    "error",
    '<IntuitResponse xmlns="http://schema.intuit.com/finance/v3" time="<<ts>>"><Fault type="SystemFault">'
    '<Error code="10000"><Message>An application error has occurred while processing your request</Message>'
    "<Detail>System Failure Error: An unexpected error occurred while accessing or saving your data. Please "
    "wait a few minutes and try again.</Detail></Error></Fault></IntuitResponse>",
    QBO,
    ERP,
)
_t(
    "qbo_stale_object",
    "quickbooks",
    "invalid_request",
    '{"Fault":{"Error":[{"Message":"Stale Object Error","Detail":"Stale Object Error : You and ap.clerk were '
    'working on this at the same time. ap.clerk finished before you did, so your work was not saved.",'
    '"code":"5010","element":""}],"type":"ValidationFault"},"time":"<<ts>>"}',
    QBO,
    ("post_payment",),
)
_t(
    "xero_minute_limit",
    "xero",
    "rate_limit",
    '{"Title":"Too Many Requests","Status":429,"Detail":"The rate limit for the application has been exceeded '
    '(X-Rate-Limit-Problem: minute, Retry-After: 23)","Instance":"<<req>>"}',
    XERO,
    ERP,
)
_t(
    "xero_validation",
    "xero",
    "invalid_request",
    '{"ErrorNumber":10,"Type":"ValidationException","Message":"A validation exception occurred","Elements":'
    '[{"ValidationErrors":[{"Message":"Payment amount exceeds the amount outstanding on this document"}]}]}',
    XERO,
    ("post_payment",),
)
_t(
    "xero_token_expired",
    "xero",
    "auth",
    '{"Type":null,"Title":"Unauthorized","Status":401,"Detail":"TokenExpired: token expired at 12/05/2026 '
    '18:01:17","Instance":"<<req>>","Extensions":{}}',
    XERO,
    ERP,
)
_t("xero_not_found", "xero", "not_found", "The resource you're looking for cannot be found", XERO, READ_ERP)
_t(
    "xero_org_offline",
    "xero",
    "error",
    '{"ErrorNumber":503,"Type":"OrganisationOfflineException","Message":"The Organisation is offline"}',
    XERO,
    ERP,
)
_t(
    "bc_odata_throttle",
    "business_central",
    "rate_limit",
    '{"error":{"code":"Application_TooManyRequests","message":"Too many requests reached.  Actual (101).  '
    'Maximum (100).  CorrelationId:  <<req>>."}}',
    BC,
    ERP,
)
_t(
    "bc_record_missing",
    "business_central",
    "not_found",
    '{"error":{"code":"Internal_RecordNotFound","message":"The Purchase Invoice does not exist. Identification '
    "fields and values: No.='<<inv>>'  CorrelationId:  <<req>>.\"}}",
    BC,
    READ_ERP,
)

# --- data platforms: bank statements land in a warehouse ------------------------------------
_t(
    "airflow_dag_not_found",
    "airflow",
    "not_found",
    '{"detail":"DAG with dag_id: \'bank_statement_import\' not found","status":404,"title":"DAG not found",'
    '"type":"https://airflow.apache.org/docs/apache-airflow/2.9.3/stable-rest-api-ref.html#section/Errors/NotFound"}',
    AIRFLOW,
    BANK,
)
_t(
    "airflow_unauthenticated",
    "airflow",
    "auth",
    '{"detail":null,"status":401,"title":"Unauthorized","type":"https://airflow.apache.org/docs/apache-airflow/'
    '2.9.3/stable-rest-api-ref.html#section/Errors/Unauthenticated"}',
    AIRFLOW,
    BANK,
)
_t(
    "airflow_sensor_timeout",
    "airflow",
    "timeout",
    "airflow.exceptions.AirflowSensorTimeout: Sensor has timed out; run duration of 3600.42 seconds exceeds "
    "the specified timeout of 3600.0. (task: wait_for_camt053, dag: bank_statement_import)",
    "https://airflow.apache.org/docs/apache-airflow/stable/core-concepts/sensors.html",
    BANK,
)
_t(
    "dbt_relation_missing",
    "dbt",
    "not_found",
    "Database Error in model stg_bank_transactions (models/staging/stg_bank_transactions.sql)\n  "
    'relation "raw.camt053_lines" does not exist\n  LINE 12:   from "analytics"."raw"."camt053_lines"\n'
    "  compiled Code at target/run/finance/models/staging/stg_bank_transactions.sql",
    DBT,
    BANK,
)
_t(
    "dbt_runtime_error",
    "dbt",
    "error",
    "Runtime Error in model fct_bank_lines (models/marts/fct_bank_lines.sql)\n  Database Error\n    division by zero",
    DBT,
    BANK,
)
_t(
    "spark_table_not_found",
    "spark",
    "not_found",
    "pyspark.errors.exceptions.captured.AnalysisException: [TABLE_OR_VIEW_NOT_FOUND] The table or view "
    "`finance`.`bank_lines` cannot be found. Verify the spelling and correctness of the schema and catalog.\n"
    "If you did not qualify the name with a schema, verify the current_schema() output, or qualify the name "
    "with the correct schema and catalog.; line 1 pos 14;",
    SPARK,
    BANK,
)
_t(
    "spark_executor_lost",
    "spark",
    "error",
    "org.apache.spark.SparkException: Job aborted due to stage failure: Task 3 in stage 12.0 failed 4 times, "
    "most recent failure: Lost task 3.3 in stage 12.0 (TID 87) (10.0.4.17 executor 2): ExecutorLostFailure "
    "(executor 2 exited caused by one of the running tasks) Reason: Container killed by YARN for exceeding "
    "memory limits. 9.1 GB of 9 GB physical memory used.",
    "https://spark.apache.org/docs/latest/running-on-yarn.html",
    BANK,
)
_t(
    "databricks_request_limit",
    "databricks",
    "rate_limit",
    '{"error_code":"REQUEST_LIMIT_EXCEEDED","message":"Error in statement execution: too many concurrent '
    'requests. Please retry after some time."}',
    DATABRICKS,
    BANK,
)
_t(
    "databricks_statement_failed",
    "databricks",
    "error",
    '{"statement_id":"01ef-<<req>>","status":{"state":"FAILED","error":{"error_code":"INTERNAL_ERROR",'
    '"message":"[INTERNAL_ERROR] The Spark SQL phase execution failed with an internal error."}}}',
    DATABRICKS,
    BANK,
)
_t(
    "databricks_canceled_wait",
    "databricks",
    "timeout",
    '{"statement_id":"01ef-<<req>>","status":{"state":"CANCELED","error":{"error_code":"DEADLINE_EXCEEDED",'
    '"message":"Statement did not complete within wait_timeout 50s and on_wait_timeout=CANCEL"}}}',
    DATABRICKS,
    BANK,
)
_t(
    "snowflake_object_missing",
    "snowflake",
    "not_found",
    '{"code":"002003","sqlState":"42S02","message":"SQL compilation error:\\nObject \'FINANCE.PUBLIC.BANK_LINES\' '
    'does not exist or not authorized.","statementHandle":"01b2<<req>>","statementHandles":["01b2<<req>>"]}',
    SNOW,
    BANK,
)
_t(
    "snowflake_statement_timeout",
    "snowflake",
    "timeout",
    '{"code":"000630","sqlState":"57014","message":"Statement reached its statement timeout and was canceled.",'
    '"statementHandle":"01b2<<req>>"}',
    SNOW,
    BANK,
)
_t(
    "snowflake_jwt_invalid",
    "snowflake",
    "auth",
    '{"code":"390144","message":"JWT token is invalid. [<<req>>]"}',
    "https://docs.snowflake.com/en/developer-guide/sql-api/authenticating",
    BANK,
)
_t(
    "trino_time_limit",
    "trino",
    "timeout",
    '{"id":"20261205_193001_00042_x7k2p","stats":{"state":"FAILED"},"error":{"message":"Query exceeded maximum '
    'time limit of 60.00s","errorCode":131075,"errorName":"EXCEEDED_TIME_LIMIT","errorType":"INSUFFICIENT_RESOURCES"}}',
    TRINO,
    BANK,
)
_t(
    "trino_table_not_found",
    "trino",
    "not_found",
    '{"id":"20261205_193001_00043_x7k2p","stats":{"state":"FAILED"},"error":{"message":"line 1:15: Table '
    '\'hive.finance.bank_lines\' does not exist","errorCode":46,"errorName":"TABLE_NOT_FOUND",'
    '"errorType":"USER_ERROR"}}',
    TRINO,
    BANK,
)
_t(
    "trino_no_nodes",
    "trino",
    "error",
    '{"id":"20261205_193001_00044_x7k2p","stats":{"state":"FAILED"},"error":{"message":"No nodes available to '
    'run query","errorCode":65542,"errorName":"NO_NODES_AVAILABLE","errorType":"INTERNAL_ERROR"}}',
    TRINO,
    BANK,
)
_t(
    "hive_semantic_table",
    "hive",
    "not_found",
    "Error while compiling statement: FAILED: SemanticException [Error 10001]: Line 1:14 Table not found "
    "'bank_lines' (SQLState 42S02, errorCode 10001)",
    HIVE,
    BANK,
)
_t(
    "hive_thrift_reset",
    "hive",
    "connection",
    "org.apache.thrift.transport.TTransportException: java.net.SocketException: Connection reset",
    HIVE,
    BANK,
)

# --- storage: FX rate files in object stores, statements on HDFS and file shares ------------
_t(
    "gcs_forbidden",
    "gcs",
    "auth",
    '{"error":{"code":403,"message":"fx-loader@treasury-prod.iam.gserviceaccount.com does not have '
    "storage.objects.get access to the Google Cloud Storage object. Permission 'storage.objects.get' denied on "
    'resource (or it may not exist).","errors":[{"message":"fx-loader@treasury-prod.iam.gserviceaccount.com does '
    'not have storage.objects.get access to the Google Cloud Storage object.","domain":"global",'
    '"reason":"forbidden"}]}}',
    GCS,
    FX,
)
_t(
    "gcs_rate_limit",
    "gcs",
    "rate_limit",
    '{"error":{"code":429,"message":"The rate of change requests to the object ecb/eurofxref-daily.json exceeds '
    'the rate limit. Please reduce the rate of create, update, and delete requests.","errors":[{"message":"...",'
    '"domain":"usageLimits","reason":"rateLimitExceeded"}]}}',
    GCS,
    FX,
)
_t(
    "gcs_backend_error",
    "gcs",
    "error",
    '{"error":{"code":503,"message":"Backend Error","errors":[{"message":"Backend Error","domain":"global",'
    '"reason":"backendError"}]}}',
    GCS,
    FX,
)
_t(
    "gcs_no_such_object",
    "gcs",
    "not_found",
    '{"error":{"code":404,"message":"No such object: treasury-fx/ecb/<<arg>>.json","errors":[{"message":'
    '"No such object: treasury-fx/ecb/<<arg>>.json","domain":"global","reason":"notFound"}]}}',
    GCS,
    FX,
)
_t(
    "s3_no_such_key",
    "minio",
    "not_found",
    '<?xml version="1.0" encoding="UTF-8"?>\n<Error><Code>NoSuchKey</Code><Message>The specified key does not '
    "exist.</Message><Key>ecb/<<arg>>.csv</Key><BucketName>fx-rates</BucketName><Resource>/fx-rates/ecb/<<arg>>.csv"
    "</Resource><RequestId><<req>></RequestId><HostId>dd9025bab4ad464b049177c95eb6ebf374d3b3fd1af9251148b658df7ac2e3e8"
    "</HostId></Error>",
    S3,
    FX,
)
_t(
    "minio_slow_down",
    "minio",
    "rate_limit",
    '<?xml version="1.0" encoding="UTF-8"?>\n<Error><Code>SlowDownRead</Code><Message>Resource requested is '
    "unreadable, please reduce your request rate</Message><Key>ecb/<<arg>>.csv</Key><BucketName>fx-rates</BucketName>"
    "<RequestId><<req>></RequestId></Error>",
    S3,
    FX,
)
_t(
    "s3_access_denied",
    "minio",
    "auth",
    '<?xml version="1.0" encoding="UTF-8"?>\n<Error><Code>AccessDenied</Code><Message>Access Denied.</Message>'
    "<BucketName>fx-rates</BucketName><RequestId><<req>></RequestId></Error>",
    S3,
    FX,
)
_t(
    "s3_time_skewed",
    "minio",
    "auth",
    '<?xml version="1.0" encoding="UTF-8"?>\n<Error><Code>RequestTimeTooSkewed</Code><Message>The difference '
    "between the request time and the server's time is too large.</Message><RequestId><<req>></RequestId></Error>",
    S3,
    FX,
)
_t(
    "s3_internal_error",
    "minio",
    "error",
    '<?xml version="1.0" encoding="UTF-8"?>\n<Error><Code>InternalError</Code><Message>We encountered an internal '
    "error, please try again.</Message><RequestId><<req>></RequestId></Error>",
    S3,
    FX,
)
_t(
    "webhdfs_file_not_found",
    "hdfs",
    "not_found",
    '{"RemoteException":{"exception":"FileNotFoundException","javaClassName":"java.io.FileNotFoundException",'
    '"message":"File does not exist: /data/bank/camt053/<<arg>>.xml"}}',
    WEBHDFS,
    BANK,
)
_t(
    "webhdfs_standby",
    "hdfs",
    "error",
    '{"RemoteException":{"exception":"StandbyException","javaClassName":"org.apache.hadoop.ipc.StandbyException",'
    '"message":"Operation category READ is not supported in state standby. Visit https://s.apache.org/sbnn-error"}}',
    WEBHDFS,
    BANK,
)
_t(
    "webhdfs_access_control",
    "hdfs",
    "auth",
    '{"RemoteException":{"exception":"AccessControlException","javaClassName":"org.apache.hadoop.security.'
    'AccessControlException","message":"Permission denied: user=svc_ap, access=READ_EXECUTE, '
    'inode=\\"/data/bank\\":hdfs:supergroup:drwx------"}}',
    WEBHDFS,
    BANK,
)
_t(
    "nfs_stale_handle",
    "fileshare",
    "error",
    "OSError: [Errno 116] Stale file handle: '/mnt/treasury/fx/eurofxref-hist.csv'",
    NFS,
    FX + BANK,
    exc="OSError",
)
_t(
    "nfs_not_responding",
    "fileshare",
    "timeout",
    "nfs: server filer01.corp not responding, timed out (reading /mnt/treasury/fx/eurofxref-hist.csv)",
    NFS,
    FX + BANK,
)
_t(
    "smb_logon_failure",
    "fileshare",
    "auth",
    "smbprotocol.exceptions.LogonFailure: Received unexpected status from the server: The attempted logon is "
    "invalid. This is either due to a bad username or authentication information. (3221225581) "
    "STATUS_LOGON_FAILURE: 0xc000006d",
    SMB,
    FX + BANK,
    exc="PermissionError",
)
_t(
    "smb_bad_network_name",
    "fileshare",
    "not_found",
    "smbprotocol.exceptions.BadNetworkName: Received unexpected status from the server: The specified share "
    "name cannot be found on the remote server. (3221225676) STATUS_BAD_NETWORK_NAME: 0xc00000cc",
    SMB,
    FX + BANK,
    exc="FileNotFoundError",
)

# --- identity: vendor master behind SSO, services behind tokens -------------------------------
_t(
    "okta_invalid_token",
    "okta",
    "auth",
    '{"errorCode":"E0000011","errorSummary":"Invalid token provided","errorLink":"E0000011",'
    '"errorId":"oae<<req>>","errorCauses":[]}',
    OKTA,
    ANY,
)
_t(
    "okta_rate_limit",
    "okta",
    "rate_limit",
    '{"errorCode":"E0000047","errorSummary":"API call exceeded rate limit due to too many requests.",'
    '"errorLink":"E0000047","errorId":"oae<<req>>","errorCauses":[]}',
    OKTA,
    ANY,
)
_t(
    "okta_not_found",
    "okta",
    "not_found",
    '{"errorCode":"E0000007","errorSummary":"Not found: Resource not found: <<vendor>> (User)",'
    '"errorLink":"E0000007","errorId":"oae<<req>>","errorCauses":[]}',
    OKTA,
    ("get_vendor",),
)
_t(
    "auth0_invalid_grant",
    "auth0",
    "auth",
    '{"error":"invalid_grant","error_description":"Unknown or invalid refresh token."}',
    AUTH0,
    ANY,
)
_t(
    "auth0_too_many",
    "auth0",
    "rate_limit",
    '{"statusCode":429,"error":"Too Many Requests","message":"Global limit has been reached",'
    '"errorCode":"too_many_requests"}',
    "https://auth0.com/docs/troubleshoot/customer-support/operational-policies/rate-limit-policy",
    ANY,
)
_t(
    "keycloak_session_not_active",
    "keycloak",
    "auth",
    '{"error":"invalid_grant","error_description":"Session not active"}',
    KEYCLOAK,
    ANY,
)
_t("keycloak_unknown_error", "keycloak", "error", '{"errorMessage":"unknown_error"}', KEYCLOAK, ANY)
_t(
    "ldap_invalid_credentials",
    "ldap",
    "auth",
    "LDAPException(resultCode=49 (invalid credentials), errorMessage='80090308: LdapErr: DSID-0C090447, "
    "comment: AcceptSecurityContext error, data 52e, v3839', diagnosticMessage='80090308: LdapErr: DSID-0C090447, "
    "comment: AcceptSecurityContext error, data 52e, v3839')",
    LDAP,
    ("get_vendor",),
)
_t(
    "ldap_no_such_object",
    "ldap",
    "not_found",
    "[LDAP: error code 32 - No Such Object]; remaining name 'uid=<<vendor>>,ou=vendors,dc=corp,dc=example'",
    LDAP,
    ("get_vendor",),
)
_t("ldap_time_limit", "ldap", "timeout", "[LDAP: error code 3 - Time Limit Exceeded]", LDAP, ("get_vendor",))
_t("ldap_unavailable", "ldap", "error", "[LDAP: error code 52 - Unavailable]", LDAP, ("get_vendor",))
_t(
    "ldap_insufficient_access",
    "ldap",
    "auth",
    "[LDAP: error code 50 - Insufficient Access Rights]; 00002098: SecErr: DSID-03150F93, problem 4003 "
    "(INSUFF_ACCESS_RIGHTS), data 0",
    LDAP,
    ("get_vendor",),
)

# --- messaging: remittance advice by mail, SMS, chat -----------------------------------------
_t(
    "sendgrid_unauthorized",
    "sendgrid",
    "auth",
    '{"errors":[{"field":null,"message":"The provided authorization grant is invalid, expired, or revoked",'
    '"help":null}]}',
    SENDGRID,
    MSG,
)
_t(
    "sendgrid_too_many",
    "sendgrid",
    "rate_limit",
    '{"errors":[{"field":null,"message":"too many requests","help":null}]}',
    SENDGRID,
    MSG,
)
_t(
    "sendgrid_bad_address",
    "sendgrid",
    "invalid_request",
    '{"errors":[{"message":"Does not contain a valid address.","field":"personalizations.0.to.0.email",'
    '"help":"http://sendgrid.com/docs/API_Reference/Web_API_v3/Mail/errors.html#message.personalizations.to"}]}',
    SENDGRID,
    MSG,
)
_t(
    "twilio_20429",
    "twilio",
    "rate_limit",
    '{"code":20429,"message":"Too Many Requests","more_info":"https://www.twilio.com/docs/errors/20429","status":429}',
    TWILIO,
    MSG,
)
_t(
    "twilio_20003",
    "twilio",
    "auth",
    '{"code":20003,"message":"Authenticate","more_info":"https://www.twilio.com/docs/errors/20003","status":401}',
    TWILIO,
    MSG,
)
_t(
    "twilio_20500",
    "twilio",
    "error",
    '{"code":20500,"message":"Internal Server Error","more_info":"https://www.twilio.com/docs/errors/20500","status":500}',
    TWILIO,
    MSG,
)
_t("slack_ratelimited", "slack", "rate_limit", '{"ok":false,"error":"ratelimited"}', SLACK, MSG)
_t("slack_channel_not_found", "slack", "not_found", '{"ok":false,"error":"channel_not_found"}', SLACK, MSG)
_t("slack_invalid_auth", "slack", "auth", '{"ok":false,"error":"invalid_auth"}', SLACK, MSG)
_t("slack_fatal_error", "slack", "error", '{"ok":false,"error":"fatal_error"}', SLACK, MSG)
_t(
    "graph_throttled",
    "teams_graph",
    "rate_limit",
    '{"error":{"code":"TooManyRequests","message":"Too many requests","innerError":{"code":"throttledRequest",'
    '"message":"Application is over its MailboxConcurrency limit.","date":"<<ts>>","request-id":"<<req>>"}}}',
    GRAPH,
    MSG,
)
_t(
    "graph_item_not_found",
    "teams_graph",
    "not_found",
    '{"error":{"code":"ErrorItemNotFound","message":"The specified object was not found in the store.",'
    '"innerError":{"date":"<<ts>>","request-id":"<<req>>"}}}',
    GRAPH,
    MSG,
)
_t(
    "graph_service_unavailable",
    "teams_graph",
    "error",
    '{"error":{"code":"serviceNotAvailable","message":"The service is temporarily unavailable for maintenance '
    'or is overloaded.","innerError":{"date":"<<ts>>","request-id":"<<req>>"}}}',
    GRAPH,
    MSG,
)
_t(
    "smtp_451_try_later",
    "smtp",
    "rate_limit",
    "451 4.7.1 <remittance@vendor>: Recipient address rejected: Greylisted, please try again later",
    SMTP,
    MSG,
)
_t(
    "smtp_550_user_unknown",
    "smtp",
    "not_found",
    "550 5.1.1 <<arg>>: Recipient address rejected: User unknown in virtual mailbox table",
    SMTP,
    MSG,
)
_t("smtp_535_auth", "smtp", "auth", "535 5.7.8 Error: authentication failed: authentication failure", SMTP, MSG)
_t("smtp_554_relay_denied", "smtp", "auth", "554 5.7.1 <<arg>>: Relay access denied", SMTP, MSG)
_t("smtp_421_timeout", "smtp", "timeout", "421 4.4.2 mail.corp.example Error: timeout exceeded", SMTP, MSG)
_t(
    "smtplib_disconnected",
    "smtp",
    "connection",
    "smtplib.SMTPServerDisconnected: Connection unexpectedly closed",
    "https://docs.python.org/3/library/smtplib.html#smtplib.SMTPServerDisconnected",
    MSG,
    exc="ConnectionError",
)
_t("smtp_452_storage", "smtp", "error", "452 4.3.1 Insufficient system storage", SMTP, MSG)

# --- web servers and proxies in front of the bank, FX and messaging services -----------------
_t(
    "haproxy_503",
    "haproxy",
    "error",
    "<html><body><h1>503 Service Unavailable</h1>\nNo server is available to handle this request.\n</body></html>",
    HAPROXY,
    LOCAL,
)
_t(
    "haproxy_504",
    "haproxy",
    "timeout",
    "<html><body><h1>504 Gateway Time-out</h1>\nThe server didn't respond in time.\n</body></html>",
    HAPROXY,
    LOCAL,
)
_t(
    "haproxy_429",
    "haproxy",
    "rate_limit",
    "<html><body><h1>429 Too Many Requests</h1>\nYou have sent too many requests in a given amount of time.\n"
    "</body></html>",
    HAPROXY,
    LOCAL,
)
_t(
    "haproxy_502",
    "haproxy",
    "error",
    "<html><body><h1>502 Bad Gateway</h1>\nThe server returned an invalid or incomplete response.\n</body></html>",
    HAPROXY,
    LOCAL,
)
_t("traefik_bad_gateway", "traefik", "error", "Bad Gateway", TRAEFIK, LOCAL)
_t("traefik_gateway_timeout", "traefik", "timeout", "Gateway Timeout", TRAEFIK, LOCAL)
_t("traefik_404", "traefik", "not_found", "404 page not found", TRAEFIK, LOCAL)
_t(
    "envoy_reset_termination",
    "envoy",
    "connection",
    "upstream connect error or disconnect/reset before headers. reset reason: connection termination",
    ENVOY,
    LOCAL,
)
_t(
    "envoy_reset_overflow",
    "envoy",
    "connection",
    "upstream connect error or disconnect/reset before headers. reset reason: overflow",
    ENVOY,
    LOCAL,
)
_t("envoy_no_healthy_upstream", "envoy", "error", "no healthy upstream", ENVOY, LOCAL)
_t("envoy_upstream_timeout", "envoy", "timeout", "upstream request timeout", ENVOY, LOCAL)
_t(
    "envoy_local_rate_limited",
    "envoy",
    "rate_limit",
    "local_rate_limited",
    "https://www.envoyproxy.io/docs/envoy/latest/configuration/http/http_filters/local_rate_limit_filter",
    LOCAL,
)
_t(
    "iis_503_2",
    "iis",
    "rate_limit",
    "HTTP Error 503.2 - Service Unavailable\nThe serverRuntime@appConcurrentRequestLimit setting is being exceeded.",
    IIS,
    LOCAL,
)
_t(
    "iis_502_3",
    "iis",
    "timeout",
    "HTTP Error 502.3 - Bad Gateway\nThe operation timed out\nError Code 0x80072ee2",
    IIS,
    LOCAL,
)
_t(
    "iis_401_1",
    "iis",
    "auth",
    "HTTP Error 401.1 - Unauthorized\nYou do not have permission to view this directory or page using the "
    "credentials that you supplied.",
    IIS,
    LOCAL,
)
_t(
    "iis_500_19",
    "iis",
    "error",
    "HTTP Error 500.19 - Internal Server Error\nThe requested page cannot be accessed because the related "
    "configuration data for the page is invalid.\nError Code 0x8007000d",
    IIS,
    LOCAL,
)
_t(
    "iis_404_0",
    "iis",
    "not_found",
    "HTTP Error 404.0 - Not Found\nThe resource you are looking for has been removed, had its name changed, or "
    "is temporarily unavailable.",
    IIS,
    LOCAL,
)
_t(
    "apache_proxy_error",
    "apache",
    "error",
    '<!DOCTYPE HTML PUBLIC "-//IETF//DTD HTML 2.0//EN">\n<html><head>\n<title>502 Proxy Error</title>\n</head><body>'
    "\n<h1>Proxy Error</h1>\n<p>The proxy server received an invalid\nresponse from an upstream server."
    "<br />\nThe proxy "
    "server could not handle the request<p>Reason: <strong>Error reading from remote server</strong></p></p>\n"
    "</body></html>",
    APACHE,
    LOCAL,
)
_t(
    "apache_503_maintenance",
    "apache",
    "error",
    '<!DOCTYPE HTML PUBLIC "-//IETF//DTD HTML 2.0//EN">\n<html><head>\n<title>503 Service Unavailable</title>\n'
    "</head><body>\n<h1>Service Unavailable</h1>\n<p>The server is temporarily unable to service your\nrequest due "
    "to maintenance downtime or capacity\nproblems. Please try again later.</p>\n</body></html>",
    APACHE,
    LOCAL,
)

# --- HTTP clients of the languages the integrations are written in ---------------------------
_t(
    "java_http_timeout",
    "java_httpclient",
    "timeout",
    "java.net.http.HttpTimeoutException: request timed out",
    JAVA,
    LOCAL,
    exc="TimeoutError",
)
_t(
    "java_connect_refused",
    "java_httpclient",
    "connection",
    "java.net.ConnectException: Connection refused\n\tat java.net.http/jdk.internal.net.http.HttpClientImpl.send"
    "(HttpClientImpl.java:951)",
    "https://docs.oracle.com/en/java/javase/21/docs/api/java.base/java/net/ConnectException.html",
    LOCAL,
    exc="ConnectionRefusedError",
)
_t(
    "okhttp_socket_timeout",
    "okhttp",
    "timeout",
    "java.net.SocketTimeoutException: timeout\n\tat okhttp3.internal.http2.Http2Stream$StreamTimeout."
    "newTimeoutException(Http2Stream.kt:675)\n\tat okhttp3.internal.http2.Http2Stream.takeHeaders(Http2Stream.kt:143)",
    OKHTTP,
    LOCAL,
    exc="TimeoutError",
)
_t(
    "okhttp_unexpected_end",
    "okhttp",
    "connection",
    "java.io.IOException: unexpected end of stream on http://bank-gw.internal/...\n\tat okhttp3.internal.http1."
    "Http1ExchangeCodec.readResponseHeaders(Http1ExchangeCodec.kt:210)\nCaused by: java.io.EOFException: "
    "\\n not found: limit=0 content=…",
    "https://square.github.io/okhttp/",
    LOCAL,
    exc="ConnectionError",
)
_t(
    "go_deadline_exceeded",
    "go_nethttp",
    "timeout",
    'Get "http://svc.internal/v1/<<tool>>": context deadline exceeded (Client.Timeout exceeded while awaiting headers)',
    GO,
    LOCAL,
)
_t("go_eof", "go_nethttp", "connection", 'Post "http://svc.internal/v1/<<tool>>": EOF', GO, LOCAL)
_t(
    "go_no_such_host",
    "go_nethttp",
    "connection",
    'Get "http://svc.internal/v1/<<tool>>": dial tcp: lookup svc.internal on 10.0.0.2:53: no such host',
    GO,
    LOCAL,
)
_t(
    "dotnet_task_canceled",
    "dotnet_httpclient",
    "timeout",
    "System.Threading.Tasks.TaskCanceledException: The request was canceled due to the configured "
    "HttpClient.Timeout of 100 seconds elapsing.\n ---> System.TimeoutException: The operation was canceled.",
    DOTNET,
    LOCAL,
    exc="TimeoutError",
)
_t(
    "dotnet_refused",
    "dotnet_httpclient",
    "connection",
    "System.Net.Http.HttpRequestException: No connection could be made because the target machine actively "
    "refused it. (svc.internal:443)\n ---> System.Net.Sockets.SocketException (10061): No connection could be made "
    "because the target machine actively refused it.",
    "https://learn.microsoft.com/en-us/dotnet/api/system.net.http.httprequestexception",
    LOCAL,
)
_t(
    "reqwest_timeout",
    "reqwest",
    "timeout",
    'reqwest::Error { kind: Request, url: "http://svc.internal/v2/<<tool>>", source: TimedOut }: error sending '
    "request for url (http://svc.internal/v2/<<tool>>): operation timed out",
    REQWEST,
    LOCAL,
)
_t(
    "reqwest_decode",
    "reqwest",
    "error",
    "error decoding response body: expected value at line 1 column 1",
    REQWEST,
    LOCAL,
)
_t(
    "ruby_read_timeout",
    "ruby_nethttp",
    "timeout",
    "Net::ReadTimeout: Net::ReadTimeout with #<TCPSocket:(closed)>",
    RUBY,
    LOCAL,
    exc="TimeoutError",
)
_t(
    "ruby_econnreset",
    "ruby_nethttp",
    "connection",
    "Errno::ECONNRESET: Connection reset by peer - SSL_connect",
    RUBY,
    LOCAL,
    exc="ConnectionResetError",
)
_t(
    "guzzle_connect",
    "guzzle",
    "connection",
    "GuzzleHttp\\Exception\\ConnectException: cURL error 7: Failed to connect to svc.internal port 443 after 3 ms: "
    "Connection refused (see https://curl.haxx.se/libcurl/c/libcurl-errors.html)",
    GUZZLE + " ; " + CURL,
    LOCAL,
)
_t(
    "guzzle_server",
    "guzzle",
    "error",
    "GuzzleHttp\\Exception\\ServerException: Server error: `POST https://svc.internal/v1/<<tool>>` resulted in a "
    '`500 Internal Server Error` response:\n{"message":"Server Error"}',
    GUZZLE,
    LOCAL,
)
_t(
    "guzzle_client_429",
    "guzzle",
    "rate_limit",
    "GuzzleHttp\\Exception\\ClientException: Client error: `GET https://svc.internal/v1/<<tool>>` resulted in a "
    '`429 Too Many Requests` response:\n{"message":"Too Many Attempts."}',
    GUZZLE,
    LOCAL,
)
_t(
    "grpc_unavailable_refused",
    "grpc",
    "connection",
    "grpc._channel._InactiveRpcError: <_InactiveRpcError of RPC that terminated with:\n\tstatus = "
    'StatusCode.UNAVAILABLE\n\tdetails = "failed to connect to all addresses; last error: UNKNOWN: '
    'ipv4:10.2.0.7:50051: Failed to connect to remote host: Connection refused"\n>',
    GRPC,
    LOCAL,
)
_t(
    "grpc_deadline",
    "grpc",
    "timeout",
    "grpc._channel._InactiveRpcError: <_InactiveRpcError of RPC that terminated with:\n\tstatus = "
    'StatusCode.DEADLINE_EXCEEDED\n\tdetails = "Deadline Exceeded"\n>',
    GRPC,
    LOCAL,
)
_t(
    "grpc_resource_exhausted",
    "grpc",
    "rate_limit",
    "grpc._channel._InactiveRpcError: <_InactiveRpcError of RPC that terminated with:\n\tstatus = "
    "StatusCode.RESOURCE_EXHAUSTED\n\tdetails = \"Quota exceeded for quota metric 'Read requests' and limit "
    "'Read requests per minute'\"\n>",
    GRPC,
    LOCAL,
)
_t(
    "python_traceback_zero_division",
    "python",
    "error",
    'Traceback (most recent call last):\n  File "/srv/fx/app.py", line 88, in cross_rate\n    return base / quote\n'
    "ZeroDivisionError: float division by zero",
    PYTHON,
    FX,
    exc="ZeroDivisionError",
)

# --- data faults: wrong and stale values, cut results, renamed keys, broken JSON, empties -----
_d("erp_amount_shifted", "data_wrong_value", "wrong_value", "shift_amount", BC, ("get_invoice",), factor=1.07)
_d(
    "erp_amount_minor_units",
    "data_wrong_value",
    "wrong_value",
    "shift_amount",
    "https://docs.stripe.com/currencies#minor-units (amounts in the smallest currency unit)",
    ("get_invoice",),
    factor=100.0,
)
_d("erp_currency_defaulted", "data_wrong_value", "wrong_value", "currency_eur", BC, ("get_invoice",))
_d("fx_previous_day", "data_wrong_value", "wrong_value", "fx_prev_day", ECB, ("get_fx_rate",))
_d("fx_rate_shifted", "data_wrong_value", "wrong_value", "fx_shift", ECB, ("get_fx_rate",), factor=1.04)
_d("bank_refs_swapped", "data_wrong_value", "wrong_value", "swap_refs", ISO20022, ("list_bank_transactions",))
_d("bank_booking_day_shift", "data_wrong_value", "wrong_value", "day_shift", ISO20022, ("list_bank_transactions",))
_d("vendor_wrong_entity_email", "data_wrong_value", "wrong_value", "wrong_email", BC, ("get_vendor",))
_d("vendor_name_other_entity", "data_wrong_value", "wrong_value", "wrong_name", BC, ("get_vendor",))
_d("search_page_cut", "data_truncated", "truncated", "cut_list", PAGING, ("search_invoices",), flag="none")
_d(
    "search_odata_count_above",
    "data_truncated",
    "truncated",
    "cut_list",
    PAGING,
    ("search_invoices",),
    flag="odata_count",
)
_d(
    "search_netsuite_has_more",
    "data_truncated",
    "truncated",
    "cut_list",
    NS_PAGING,
    ("search_invoices",),
    flag="has_more",
)
_d(
    "bank_snowflake_partitions",
    "data_truncated",
    "truncated",
    "cut_list",
    SNOW_PART,
    ("list_bank_transactions",),
    flag="partitions",
)
_d(
    "bank_partial_flag",
    "data_truncated",
    "truncated",
    "cut_list",
    SNOW_PART,
    ("list_bank_transactions",),
    flag="partial",
)
_d("bank_spark_show_top", "data_truncated", "truncated", "show_top", SPARK_SHOW, ("list_bank_transactions",))
_d("invoice_keys_halved", "data_truncated", "truncated", "halve_keys", BC, ("get_invoice",))
_d("vendor_keys_halved", "data_truncated", "truncated", "halve_keys", BC, ("get_vendor",))
_d(
    "invoice_sap_pascal_keys",
    "data_key_rename",
    "key_rename",
    "rename",
    SAP_ERR,
    ("get_invoice",),
    mapping={
        "invoice_id": "SupplierInvoice",
        "amount": "InvoiceGrossAmount",
        "net_amount": "NetAmount",
        "tax_amount": "TaxAmount",
        "currency": "DocumentCurrency",
        "vendor_id": "Supplier",
    },
    stringify=True,
)
_d(
    "invoice_amount_due_key",
    "data_key_rename",
    "key_rename",
    "rename",
    QBO,
    ("get_invoice",),
    mapping={"amount": "amount_due"},
)
_d(
    "invoice_qbo_keys",
    "data_key_rename",
    "key_rename",
    "rename",
    QBO,
    ("get_invoice",),
    mapping={"amount": "TotalAmt", "net_amount": "Subtotal", "tax_amount": "TxnTaxDetail.TotalTax"},
)
_d(
    "vendor_camel_email",
    "data_key_rename",
    "key_rename",
    "rename",
    GRAPH,
    ("get_vendor",),
    mapping={"remittance_email": "remittanceEmail", "ap_contact": "apContact"},
)
_d(
    "bank_iso_rmtinf",
    "data_key_rename",
    "key_rename",
    "rename",
    ISO20022,
    ("list_bank_transactions",),
    mapping={"reference": "RmtInf.Ustrd", "txn_id": "AcctSvcrRef"},
)
_d(
    "search_bc_document_no",
    "data_key_rename",
    "key_rename",
    "rename",
    BC,
    ("search_invoices",),
    mapping={"invoice_id": "documentNo"},
)
_d(
    "fx_rate_pascal_string",
    "data_key_rename",
    "key_rename",
    "rename",
    ECB,
    ("get_fx_rate",),
    mapping={"rate": "Rate"},
    stringify=True,
)
_d(
    "numbers_as_strings",
    "data_key_rename",
    "key_rename",
    "stringify",
    ODATA4 + " (IEEE754Compatible=true)",
    ("get_invoice", "get_fx_rate"),
)
_d(
    "invoice_json_cut",
    "data_malformed",
    "malformed_json",
    "cut_json",
    "https://www.rfc-editor.org/rfc/rfc9112#section-7.1 (chunked body cut)",
    ("get_invoice",),
    keep=0.55,
)
_d(
    "bank_json_cut",
    "data_malformed",
    "malformed_json",
    "cut_json",
    "https://www.rfc-editor.org/rfc/rfc9112#section-7.1",
    ("list_bank_transactions",),
    keep=0.4,
)
_d(
    "search_json_unbalanced",
    "data_malformed",
    "malformed_json",
    "unbalance",
    "https://www.rfc-editor.org/rfc/rfc8259",
    ("search_invoices",),
)
_d(
    "vendor_json_cut",
    "data_malformed",
    "malformed_json",
    "cut_json",
    "https://www.rfc-editor.org/rfc/rfc8259",
    ("get_vendor",),
    keep=0.6,
)
_d(
    "fx_json_cut",
    "data_malformed",
    "malformed_json",
    "cut_json",
    "https://www.rfc-editor.org/rfc/rfc8259",
    ("get_fx_rate",),
    keep=0.5,
)
_d(
    "search_empty_list",
    "data_empty",
    "empty",
    "empty",
    "https://www.rfc-editor.org/rfc/rfc8259",
    ("search_invoices",),
    value="[]",
)
_d(
    "invoice_empty_object",
    "data_empty",
    "empty",
    "empty",
    "https://www.rfc-editor.org/rfc/rfc8259",
    ("get_invoice",),
    value="{}",
)
_d(
    "bank_empty_string",
    "data_empty",
    "empty",
    "empty",
    "https://www.rfc-editor.org/rfc/rfc9110#section-15.3.5 (204 No Content)",
    ("list_bank_transactions",),
    value="",
)
_d("fx_null", "data_empty", "empty", "empty", "https://www.rfc-editor.org/rfc/rfc8259", ("get_fx_rate",), value="null")
_d(
    "vendor_empty_object",
    "data_empty",
    "empty",
    "empty",
    "https://www.rfc-editor.org/rfc/rfc8259",
    ("get_vendor",),
    value="{}",
)

BY_ID = {f["id"]: f for f in FORMS}
