# ruff: noqa: E501  (the published error texts are kept verbatim, one per line)
"""The failure forms of the corpus: how real systems answer when they fail, one entry each.

Every form names the public documentation it imitates (``source``), the taxonomy label it carries
and the side it hits. Tool-side forms are rendered by the MCP server and the local tool wrappers;
model-side forms by the loopback Messages server. Nothing here is read by the build's agent.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any


@dataclass(frozen=True)
class Form:
    """One way a system answers wrongly, with its label by the taxonomy's rules."""

    name: str
    family: str
    side: str          # "tool" or "llm"
    label: str
    target: str        # tool_result | http | content | stream | tool_calls
    kind: str          # tool: err | raise | data ; llm: see llm_server
    source: str
    text: str = ""
    is_error: bool = True
    extra: dict[str, Any] = field(default_factory=dict)


FEDEX = "https://developer.fedex.com/api/en-us/guides/api-reference.html"
UPS = "https://developer.ups.com/api/reference/rating/errors"
DHL = "https://developer.dhl.com/api-reference/dhl-express-mydhl-api"
USPS = "https://developers.usps.com/apis"
EASYPOST = "https://docs.easypost.com/docs/errors"
SHIPPO = "https://docs.goshippo.com/docs/api_concepts/errors/"
SHIPSTATION = "https://www.shipstation.com/docs/api/requirements/"
P44 = "https://developers.project44.com/api-reference/"
SMARTY = "https://www.smarty.com/docs/cloud/us-street-api#http-status-codes"
LOQATE = "https://www.loqate.com/developers/api/generic-errors/"
AVALARA = "https://developer.avalara.com/avatax/errors/"
ODOO = "https://www.odoo.com/documentation/17.0/developer/reference/external_api.html"
D365 = "https://learn.microsoft.com/en-us/dynamics365/fin-ops-core/dev-itpro/data-entities/odata"
KAFKA = "https://kafka.apache.org/protocol#protocol_error_codes"
AMQP = "https://www.rabbitmq.com/amqp-0-9-1-reference#constants"
NATS = "https://docs.nats.io/reference/reference-protocols/nats-protocol#-err"
SQS = "https://docs.aws.amazon.com/AWSSimpleQueueService/latest/APIReference/CommonErrors.html"
ASB = "https://learn.microsoft.com/en-us/azure/service-bus-messaging/service-bus-messaging-exceptions"
MONGO = "https://www.mongodb.com/docs/manual/reference/error-codes/"
CASS = "https://docs.datastax.com/en/developer/python-driver/latest/api/cassandra/"
ES = "https://www.elastic.co/guide/en/elasticsearch/reference/current/common-options.html"
DDB = "https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/Programming.Errors.html"
NEO4J = "https://neo4j.com/docs/status-codes/current/"
CH = "https://clickhouse.com/docs/en/interfaces/http"
S3 = "https://docs.aws.amazon.com/AmazonS3/latest/API/ErrorResponses.html"
GCS = "https://cloud.google.com/storage/docs/json_api/v1/status-codes"
AZBLOB = "https://learn.microsoft.com/en-us/rest/api/storageservices/blob-service-error-codes"
HAPROXY = "https://docs.haproxy.org/2.8/configuration.html#1.3.1"
ENVOY = "https://www.envoyproxy.io/docs/envoy/latest/configuration/observability/access_log/usage"
HEROKU = "https://devcenter.heroku.com/articles/error-codes"
CLOUDFLARE = "https://developers.cloudflare.com/support/troubleshooting/http-status-codes/cloudflare-5xx-errors/"
NODE = "https://nodejs.org/api/errors.html#common-system-errors"
JAVA = "https://docs.oracle.com/en/java/javase/21/docs/api/java.base/java/net/package-summary.html"
DOTNET = "https://learn.microsoft.com/en-us/dotnet/api/system.net.http.httprequestexception"
REQWEST = "https://docs.rs/reqwest/latest/reqwest/struct.Error.html"
GUZZLE = "https://docs.guzzlephp.org/en/stable/quickstart.html#exceptions"
AIOHTTP = "https://docs.aiohttp.org/en/stable/client_reference.html#client-exceptions"
APOLLO = "https://www.apollographql.com/docs/apollo-server/data/errors#built-in-error-codes"
X12 = "https://x12.org/examples/005010x231/example-1-999-acknowledgment"
SAMSARA = "https://developers.samsara.com/docs/rate-limits"
GEOTAB = "https://developers.geotab.com/myGeotab/guides/codeBase/errorHandling"
BEDROCK = "https://docs.aws.amazon.com/bedrock/latest/APIReference/API_runtime_InvokeModel.html#API_runtime_InvokeModel_Errors"
VERTEX = "https://cloud.google.com/vertex-ai/generative-ai/docs/partner-models/claude/use-claude"
VERTEX_ERR = "https://cloud.google.com/vertex-ai/generative-ai/docs/error-code-list"
AZURE = "https://learn.microsoft.com/en-us/azure/ai-foundry/foundry-models/how-to/use-foundry-models-claude"
OPENROUTER = "https://openrouter.ai/docs/api-reference/errors"
LITELLM = "https://docs.litellm.ai/docs/exception_mapping"
PORTKEY = "https://portkey.ai/docs/api-reference/inference-api/error-codes"
CFGW = "https://developers.cloudflare.com/ai-gateway/usage/providers/anthropic/"
DEEPSEEK = "https://api-docs.deepseek.com/quick_start/error_codes"
MOONSHOT = "https://platform.moonshot.ai/docs/api/chat#error-explanation"
ZHIPU = "https://docs.z.ai/api-reference/api-code"
MINIMAX = "https://platform.minimax.io/docs/api-reference/errorcode"
ANTHROPIC = "https://docs.anthropic.com/en/api/errors"
ANTHROPIC_STREAM = "https://docs.anthropic.com/en/docs/build-with-claude/streaming#error-events"
ANTHROPIC_STOP = "https://docs.anthropic.com/en/api/handling-stop-reasons"


def _t(name: str, family: str, label: str, source: str, text: str, is_error: bool = True) -> Form:
    return Form(name, family, "tool", label, "tool_result", "err", source, text, is_error)


def _r(name: str, family: str, label: str, source: str, exc: str, text: str) -> Form:
    return Form(name, family, "tool", label, "tool_result", "raise", source, text, True, {"exc": exc})


def _d(name: str, family: str, label: str, source: str, op: str, tools: tuple[str, ...]) -> Form:
    return Form(name, family, "tool", label, "tool_result", "data", source, "", False,
                {"op": op, "tools": tools})


TOOL_ERRORS: list[Form] = [
    # carriers and shipping APIs
    _t("fedex_rate_limit", "carrier_api", "rate_limit", FEDEX, '{"transactionId":"{rid}","errors":[{"code":"TOO.MANY.REQUESTS","message":"We have received too many requests in a short duration. Please wait a while to try again."}]}'),
    _t("fedex_unauthorized", "carrier_api", "auth", FEDEX, '{"transactionId":"{rid}","errors":[{"code":"NOT.AUTHORIZED.ERROR","message":"Access token expired. Please modify your request and try again."}]}'),
    _t("fedex_service_unavailable", "carrier_api", "error", FEDEX, '{"transactionId":"{rid}","errors":[{"code":"SERVICE.UNAVAILABLE.ERROR","message":"The service is currently unavailable and we are working to resolve the issue. We apologize for any inconvenience. Please check back at a later time."}]}'),
    _t("fedex_tracking_not_found", "carrier_api", "not_found", FEDEX, '{"transactionId":"{rid}","output":{"completeTrackResults":[{"trackResults":[{"error":{"code":"TRACKING.TRACKINGNUMBER.NOTFOUND","message":"Tracking number cannot be found. Please correct the tracking number and try again."}}]}]}}', False),
    _t("fedex_invalid_postal", "carrier_api", "invalid_request", FEDEX, '{"transactionId":"{rid}","errors":[{"code":"RATE.POSTALCODE.INVALID","message":"Invalid postal code. Please correct and try again."}]}'),
    _t("ups_auth", "carrier_api", "auth", UPS, '{"response":{"errors":[{"code":"250002","message":"Invalid Authentication Information."}]}}'),
    _t("ups_rate_limit", "carrier_api", "rate_limit", UPS, '{"response":{"errors":[{"code":"429","message":"Rate Limit Exceeded"}]}}'),
    _t("ups_system_unavailable", "carrier_api", "error", UPS, '{"response":{"errors":[{"code":"190001","message":"The Rating system is currently unavailable, please try again later."}]}}'),
    _t("ups_invalid_service", "carrier_api", "invalid_request", UPS, '{"response":{"errors":[{"code":"111210","message":"The requested service is unavailable between the selected locations."}]}}'),
    _t("dhl_problem_429", "carrier_api", "rate_limit", DHL, '{"instance":"/mydhlapi/rates","detail":"Too many requests, rate limit exceeded","title":"Too Many Requests","status":"429"}'),
    _t("dhl_problem_500", "carrier_api", "error", DHL, '{"instance":"/mydhlapi/shipments","detail":"991: Internal error occurred, please retry later","title":"Internal Server Error","status":"500"}'),
    _t("dhl_problem_422", "carrier_api", "invalid_request", DHL, '{"instance":"/mydhlapi/shipments","detail":"Multiple problems found, see Additional Details","title":"Unprocessable Entity","status":"422","additionalDetails":["Invalid value for postalCode"]}'),
    _t("dhl_parcel_401", "carrier_api", "auth", "https://developer.dhl.com/api-reference/parcel-de-shipping-post-parcel-germany-v2", '{"title":"Unauthorized","status":401,"detail":"Unauthorized for given resource."}'),
    _t("usps_oauth_invalid_token", "carrier_api", "auth", USPS, '{"error":{"code":"401","message":"OAuth token is invalid or expired","errors":[{"status":"401","title":"invalid_token"}]}}'),
    _t("usps_503", "carrier_api", "error", USPS, '{"apiVersion":"/prices/v3","error":{"code":"503","message":"Service Unavailable","errors":[{"status":"503","code":"503","title":"Service Unavailable","detail":"The server is temporarily unable to handle the request."}]}}'),
    _t("easypost_rate_limited", "shipping_platform", "rate_limit", EASYPOST, '{"error":{"code":"RATE_LIMITED","message":"Your rate limit has been exceeded. Please slow down.","errors":[]}}'),
    _t("easypost_not_found", "shipping_platform", "not_found", EASYPOST, '{"error":{"code":"NOT_FOUND","message":"The requested resource could not be found.","errors":[]}}'),
    _t("easypost_address_verify", "shipping_platform", "invalid_request", EASYPOST, '{"error":{"code":"ADDRESS.VERIFY.FAILURE","message":"Unable to verify address.","errors":[{"field":"address","message":"Address not found"}]}}'),
    _t("easypost_internal", "shipping_platform", "error", EASYPOST, '{"error":{"code":"INTERNAL_SERVER_ERROR","message":"We\'re sorry, something went wrong. If the problem persists please contact support@easypost.com.","errors":[]}}'),
    _t("shippo_carrier_timeout", "shipping_platform", "timeout", SHIPPO, '{"object_state":"INVALID","status":"ERROR","messages":[{"source":"UPS","code":"","text":"Carrier timed out: request to carrier took longer than 30 seconds"}]}', False),
    _t("shippo_invalid_token", "shipping_platform", "auth", SHIPPO, '{"detail":"Invalid token."}'),
    _t("shipstation_429", "shipping_platform", "rate_limit", SHIPSTATION, '{"Message":"Too many requests","ExceptionMessage":"You have exceeded the rate limit of 40 requests per minute. X-Rate-Limit-Reset: 37"}'),
    _t("shipstation_500", "shipping_platform", "error", SHIPSTATION, '{"Message":"An error has occurred.","ExceptionMessage":"Object reference not set to an instance of an object.","ExceptionType":"System.NullReferenceException","StackTrace":"   at ShipStation.Api.Controllers.ShipmentsController.CreateLabel()"}'),
    _t("p44_upstream_timeout", "visibility_api", "timeout", P44, '{"httpStatusCode":504,"httpMessage":"Gateway Timeout","errorMessage":"Timed out waiting for carrier response","errors":[{"severity":"ERROR","message":"Carrier API did not respond in time","source":"SYSTEM"}]}'),
    _t("p44_forbidden", "visibility_api", "auth", P44, '{"httpStatusCode":403,"httpMessage":"Forbidden","errorMessage":"User does not have permission to access this resource.","errors":[]}'),
    _t("p44_not_found", "visibility_api", "not_found", P44, '{"httpStatusCode":404,"httpMessage":"Not Found","errorMessage":"Shipment with identifier {order} not found","errors":[]}'),
    # address and tax
    _t("smarty_401", "address_tax", "auth", SMARTY, "Unauthorized: The credentials were provided incorrectly or did not match any existing, active credentials."),
    _t("smarty_429", "address_tax", "rate_limit", SMARTY, '{"errors":[{"id":1538069,"message":"Too Many Requests: The rate limit for the plan associated with this account has been exceeded."}]}'),
    _t("loqate_invalid_key", "address_tax", "auth", LOQATE, '{"Items":[{"Error":"2","Description":"Unknown key","Cause":"The key you are using to access the service was not found.","Resolution":"Please check that the key is correct."}]}', False),
    _t("loqate_daily_limit", "address_tax", "rate_limit", LOQATE, '{"Items":[{"Error":"5","Description":"Key daily limit exceeded","Cause":"The daily limit on the key has been exceeded.","Resolution":"Alter the daily limit on the key."}]}', False),
    _t("avatax_auth", "address_tax", "auth", AVALARA, '{"error":{"code":"AuthenticationException","message":"Authentication failed.","target":"HttpRequestHeaders","details":[{"code":"AuthenticationException","number":30,"severity":"Error"}]}}'),
    _t("avatax_invalid_hs", "address_tax", "invalid_request", AVALARA, '{"error":{"code":"InvalidHsCode","message":"HS code is not valid for destination country.","target":"IncorrectData","details":[{"code":"InvalidHsCode","number":1215,"severity":"Error"}]}}'),
    _t("avatax_server_error", "address_tax", "error", AVALARA, '{"error":{"code":"ServerConfiguration","message":"Server configuration error.","details":[{"number":1,"severity":"Exception"}]}}'),
    # warehouse and ERP
    _t("odoo_access_error", "erp_wms", "auth", ODOO, '{"jsonrpc":"2.0","id":7,"error":{"code":200,"message":"Odoo Server Error","data":{"name":"odoo.exceptions.AccessError","message":"You are not allowed to access \'Transfer\' (stock.picking) records."}}}'),
    _t("odoo_missing_record", "erp_wms", "not_found", ODOO, '{"jsonrpc":"2.0","id":7,"error":{"code":200,"message":"Odoo Server Error","data":{"name":"odoo.exceptions.MissingError","message":"Record does not exist or has been deleted."}}}'),
    _t("odoo_validation", "erp_wms", "invalid_request", ODOO, '{"jsonrpc":"2.0","id":7,"error":{"code":200,"message":"Odoo Server Error","data":{"name":"odoo.exceptions.ValidationError","message":"The quantity done for the product must be positive."}}}'),
    _t("d365_throttled", "erp_wms", "rate_limit", D365, '{"error":{"code":"0x80072322","message":"Number of requests exceeded the limit of 6000 over time window of 300 seconds."}}'),
    _t("d365_not_found", "erp_wms", "not_found", D365, '{"error":{"code":"","message":"No HTTP resource was found that matches the request URI \'https://erp.example.com/data/WarehouseInventories\'."}}'),
    _t("wms_lock_timeout", "erp_wms", "timeout", "https://help.sap.com/docs/SAP_EXTENDED_WAREHOUSE_MANAGEMENT", "WMS-E-0417 Lock wait timeout on location record; transaction rolled back after 30s", True),
    # brokers and queues
    _t("kafka_request_timed_out", "broker", "timeout", KAFKA, "KafkaError{code=REQUEST_TIMED_OUT,val=7,str=\"Broker: Request timed out\"}"),
    _t("kafka_not_leader", "broker", "error", KAFKA, "KafkaError{code=NOT_LEADER_OR_FOLLOWER,val=6,str=\"Broker: Not leader for partition\"}"),
    _t("kafka_throttled_quota", "broker", "rate_limit", KAFKA, "KafkaError{code=THROTTLING_QUOTA_EXCEEDED,val=89,str=\"Broker: Throttling quota has been exceeded\"}"),
    _t("kafka_topic_auth", "broker", "auth", KAFKA, "KafkaError{code=TOPIC_AUTHORIZATION_FAILED,val=29,str=\"Broker: Topic authorization failed\"}"),
    _t("amqp_access_refused", "broker", "auth", AMQP, "(403, \"ACCESS_REFUSED - access to exchange 'label.events' in vhost '/freight' refused for user 'wms'\")"),
    _t("amqp_not_found", "broker", "not_found", AMQP, "(404, \"NOT_FOUND - no queue 'dock.appointments' in vhost '/freight'\")"),
    _t("amqp_connection_forced", "broker", "connection", AMQP, "(320, \"CONNECTION_FORCED - broker forced connection closure with reason 'shutdown'\")"),
    _t("nats_no_responders", "broker", "error", NATS, "nats: no responders available for request"),
    _t("nats_timeout", "broker", "timeout", NATS, "nats: timeout"),
    _t("sqs_throttling", "broker", "rate_limit", SQS, '<?xml version="1.0"?><ErrorResponse><Error><Type>Sender</Type><Code>ThrottlingException</Code><Message>Rate exceeded</Message></Error><RequestId>{rid}</RequestId></ErrorResponse>'),
    _t("sqs_queue_missing", "broker", "not_found", SQS, '{"__type":"com.amazonaws.sqs#QueueDoesNotExist","message":"The specified queue does not exist."}'),
    _t("servicebus_busy", "broker", "rate_limit", ASB, "Microsoft.Azure.ServiceBus.ServerBusyException: The request was terminated because the entity is being throttled. Error code : 50009. Please wait 2 seconds and try again."),
    _t("servicebus_timeout", "broker", "timeout", ASB, "Azure.Messaging.ServiceBus.ServiceBusException: The operation did not complete within the allocated time 00:01:00 for object session. (ServiceTimeout)"),
    # data stores
    _t("mongo_not_primary", "datastore", "error", MONGO, '{"ok":0,"errmsg":"not primary","code":10107,"codeName":"NotWritablePrimary"}'),
    _t("mongo_exceeded_time", "datastore", "timeout", MONGO, '{"ok":0,"errmsg":"operation exceeded time limit","code":50,"codeName":"MaxTimeMSExpired"}'),
    _t("mongo_unauthorized", "datastore", "auth", MONGO, '{"ok":0,"errmsg":"not authorized on freight to execute command { find: \\"shipments\\" }","code":13,"codeName":"Unauthorized"}'),
    _t("cassandra_unavailable", "datastore", "error", CASS, "cassandra.Unavailable: Error from server: code=1000 [Unavailable exception] message=\"Cannot achieve consistency level LOCAL_QUORUM\" info={'consistency': 'LOCAL_QUORUM', 'required_replicas': 2, 'alive_replicas': 1}"),
    _t("cassandra_read_timeout", "datastore", "timeout", CASS, "cassandra.ReadTimeout: Error from server: code=1200 [Coordinator node timed out waiting for replica nodes' responses] message=\"Operation timed out - received only 0 responses.\" info={'consistency': 'LOCAL_ONE', 'required_responses': 1, 'received_responses': 0}"),
    _t("es_index_not_found", "datastore", "not_found", ES, '{"error":{"root_cause":[{"type":"index_not_found_exception","reason":"no such index [rates-2026.12]","index":"rates-2026.12"}],"type":"index_not_found_exception","reason":"no such index [rates-2026.12]"},"status":404}'),
    _t("es_rejected_execution", "datastore", "rate_limit", ES, '{"error":{"root_cause":[{"type":"es_rejected_execution_exception","reason":"rejected execution of coordinating operation [shard_detail=[rates][0]]"}],"type":"es_rejected_execution_exception"},"status":429}'),
    _t("ddb_throughput", "datastore", "rate_limit", DDB, '{"__type":"com.amazonaws.dynamodb.v20120810#ProvisionedThroughputExceededException","message":"The level of configured provisioned throughput for the table was exceeded. Consider increasing your provisioning level with the UpdateTable API."}'),
    _t("ddb_conditional", "datastore", "invalid_request", DDB, '{"__type":"com.amazonaws.dynamodb.v20120810#ConditionalCheckFailedException","message":"The conditional request failed"}'),
    _t("neo4j_unavailable", "datastore", "error", NEO4J, '{"errors":[{"code":"Neo.TransientError.General.DatabaseUnavailable","message":"The database is not currently available to serve your request."}]}'),
    _t("clickhouse_timeout", "datastore", "timeout", CH, "Code: 159. DB::Exception: Timeout exceeded: elapsed 30.001 seconds, maximum: 30. (TIMEOUT_EXCEEDED) (version 24.3.2.23 (official build))"),
    _t("clickhouse_unknown_table", "datastore", "not_found", CH, "Code: 60. DB::Exception: Table freight.carrier_rates does not exist. (UNKNOWN_TABLE) (version 24.3.2.23 (official build))"),
    # object storage
    _t("s3_slowdown", "object_storage", "rate_limit", S3, '<?xml version="1.0" encoding="UTF-8"?>\n<Error><Code>SlowDown</Code><Message>Please reduce your request rate.</Message><RequestId>{rid}</RequestId></Error>'),
    _t("s3_access_denied", "object_storage", "auth", S3, '<?xml version="1.0" encoding="UTF-8"?>\n<Error><Code>AccessDenied</Code><Message>Access Denied</Message><RequestId>{rid}</RequestId></Error>'),
    _t("s3_no_such_key", "object_storage", "not_found", S3, '<?xml version="1.0" encoding="UTF-8"?>\n<Error><Code>NoSuchKey</Code><Message>The specified key does not exist.</Message><Key>labels/{order}.pdf</Key><RequestId>{rid}</RequestId></Error>'),
    _t("gcs_503", "object_storage", "error", GCS, '{"error":{"code":503,"message":"We encountered an internal error. Please try again.","errors":[{"message":"Backend Error","domain":"global","reason":"backendError"}]}}'),
    _t("azblob_server_busy", "object_storage", "rate_limit", AZBLOB, '<?xml version="1.0" encoding="utf-8"?><Error><Code>ServerBusy</Code><Message>Operations per second is over the account limit.\nRequestId:{rid}</Message></Error>'),
    # edges and PaaS
    _t("haproxy_504", "edge_paas", "timeout", HAPROXY, "<html><body><h1>504 Gateway Time-out</h1>\nThe server didn't respond in time.\n</body></html>"),
    _t("haproxy_503", "edge_paas", "error", HAPROXY, "<html><body><h1>503 Service Unavailable</h1>\nNo server is available to handle this request.\n</body></html>"),
    _t("envoy_reset", "edge_paas", "connection", ENVOY, "upstream connect error or disconnect/reset before headers. reset reason: connection termination"),
    _t("envoy_upstream_timeout", "edge_paas", "timeout", ENVOY, "upstream request timeout"),
    _t("heroku_h12", "edge_paas", "timeout", HEROKU, "at=error code=H12 desc=\"Request timeout\" method=POST path=\"/rates\" host=rating.herokuapp.com dyno=web.1 connect=0ms service=30000ms status=503"),
    _t("heroku_h10", "edge_paas", "error", HEROKU, "at=error code=H10 desc=\"App crashed\" method=POST path=\"/labels\" host=labels.herokuapp.com status=503"),
    _t("render_502", "edge_paas", "error", "https://render.com/docs/troubleshooting-deploys", "HTTP 502 Bad Gateway: the upstream service failed to respond (render-proxy)"),
    _t("cloudflare_522", "edge_paas", "timeout", CLOUDFLARE, "<!DOCTYPE html><html><head><title>carrier-gw.example.com | 522: Connection timed out</title></head><body><h1>Connection timed out</h1><span>Error code 522</span></body></html>"),
    _t("cloudflare_521", "edge_paas", "connection", CLOUDFLARE, "<!DOCTYPE html><html><head><title>carrier-gw.example.com | 521: Web server is down</title></head><body><h1>Web server is down</h1><span>Error code 521</span><p>The web server is not returning a connection.</p></body></html>"),
    # GraphQL, EDI, telematics
    _t("apollo_internal", "graphql", "error", APOLLO, '{"errors":[{"message":"Cannot read properties of undefined (reading \'rates\')","extensions":{"code":"INTERNAL_SERVER_ERROR"}}],"data":null}', False),
    _t("apollo_unauthenticated", "graphql", "auth", APOLLO, '{"errors":[{"message":"Context creation failed: token expired","extensions":{"code":"UNAUTHENTICATED"}}]}', False),
    _t("apollo_bad_input", "graphql", "invalid_request", APOLLO, '{"errors":[{"message":"Variable \\"$weight\\" got invalid value","extensions":{"code":"BAD_USER_INPUT"}}]}', False),
    _t("x12_999_rejected", "edi", "invalid_request", X12, "ISA*00*          *00*          *ZZ*CARRIER        *ZZ*SHIPPER        *261206*0025*^*00501*000000905*0*P*:~GS*FA*CARRIER*SHIPPER*20261206*0025*905*X*005010X231A1~ST*999*0001*005010X231A1~AK1*SM*1208*005010~AK2*204*0001~IK3*N4*7**8~IK4*3*116*7*{order}~IK5*R*5~AK9*R*1*1*0~SE*8*0001~GE*1*905~IEA*1*000000905~", False),
    _t("samsara_429", "telematics", "rate_limit", SAMSARA, '{"message":"Rate limit exceeded. Retry after 1 second.","requestId":"{rid}"}'),
    _t("geotab_invalid_user", "telematics", "auth", GEOTAB, '{"error":{"name":"JSONRPCError","message":"Incorrect login credentials","errors":[{"name":"InvalidUserException","message":"Incorrect login credentials"}]},"jsonrpc":"2.0"}'),
    # raised by local clients (runtime and HTTP client exceptions)
    _r("node_econnrefused", "runtime_client", "connection", NODE, "ConnectionRefusedError", "connect ECONNREFUSED 10.0.4.17:8443"),
    _r("node_econnreset", "runtime_client", "connection", NODE, "ConnectionResetError", "read ECONNRESET"),
    _r("node_etimedout", "runtime_client", "timeout", NODE, "TimeoutError", "connect ETIMEDOUT 10.0.4.17:8443"),
    _r("node_enotfound", "runtime_client", "connection", NODE, "OSError", "getaddrinfo ENOTFOUND tax-api.internal"),
    _r("java_socket_timeout", "runtime_client", "timeout", JAVA, "RuntimeError", "java.net.SocketTimeoutException: Read timed out\n\tat java.base/sun.nio.ch.NioSocketImpl.timedRead(NioSocketImpl.java:288)\n\tat com.freight.wms.DockClient.book(DockClient.java:91)"),
    _r("java_connect_exception", "runtime_client", "connection", JAVA, "RuntimeError", "java.net.ConnectException: Connection refused\n\tat java.base/sun.nio.ch.Net.pollConnect(Native Method)\n\tat com.freight.notify.SmsGateway.send(SmsGateway.java:54)"),
    _r("java_npe", "runtime_client", "error", JAVA, "RuntimeError", "java.lang.NullPointerException: Cannot invoke \"com.freight.model.Dock.getDoor()\" because \"dock\" is null\n\tat com.freight.wms.DockScheduler.assign(DockScheduler.java:142)"),
    _r("dotnet_http_request", "runtime_client", "connection", DOTNET, "RuntimeError", "System.Net.Http.HttpRequestException: No connection could be made because the target machine actively refused it. (duties.internal:443)\n ---> System.Net.Sockets.SocketException (10061): No connection could be made because the target machine actively refused it."),
    _r("dotnet_task_canceled", "runtime_client", "timeout", DOTNET, "RuntimeError", "System.Threading.Tasks.TaskCanceledException: The request was canceled due to the configured HttpClient.Timeout of 100 seconds elapsing.\n ---> System.TimeoutException: The operation was canceled."),
    _r("reqwest_timeout", "runtime_client", "timeout", REQWEST, "RuntimeError", "reqwest::Error { kind: Request, url: \"https://wms.internal/picks\", source: TimedOut }"),
    _r("hyper_incomplete", "runtime_client", "connection", REQWEST, "RuntimeError", "error sending request for url (https://wms.internal/picks): connection closed before message completed"),
    _r("guzzle_connect", "runtime_client", "connection", GUZZLE, "RuntimeError", "GuzzleHttp\\Exception\\ConnectException: cURL error 7: Failed to connect to notify.internal port 443: Connection refused (see https://curl.haxx.se/libcurl/c/libcurl-errors.html)"),
    _r("guzzle_server", "runtime_client", "error", GUZZLE, "RuntimeError", "GuzzleHttp\\Exception\\ServerException: Server error: `POST https://notify.internal/v1/sms` resulted in a `500 Internal Server Error` response"),
    _r("aiohttp_disconnected", "runtime_client", "connection", AIOHTTP, "ConnectionError", "aiohttp.client_exceptions.ServerDisconnectedError: Server disconnected"),
    _r("aiohttp_429", "runtime_client", "rate_limit", AIOHTTP, "RuntimeError", "aiohttp.client_exceptions.ClientResponseError: 429, message='Too Many Requests', url='https://duties.internal/v2/calculate'"),
    _r("python_permission", "runtime_client", "auth", "https://docs.python.org/3/library/exceptions.html#PermissionError", "PermissionError", "[Errno 13] Permission denied: '/var/spool/labels/outbound'"),
]

_RATES = ("rate_shop",)
TOOL_DATA: list[Form] = [
    _d("rates_amount_shifted", "wrong_value", "wrong_value", EASYPOST, "rates_shift", _RATES),
    _d("rates_services_swapped", "wrong_value", "wrong_value", SHIPPO, "rates_swap", _RATES),
    _d("address_neighbor_zip", "wrong_value", "wrong_value", SMARTY, "zip_neighbor", ("validate_address",)),
    _d("duties_rate_shifted", "wrong_value", "wrong_value", AVALARA, "duty_shift", ("calculate_duties",)),
    _d("inventory_count_shifted", "wrong_value", "wrong_value", ODOO, "inv_shift", ("check_inventory",)),
    _d("tracking_number_neighbor", "wrong_value", "wrong_value", FEDEX, "tracking_neighbor", ("book_shipment",)),
    _d("tracking_stale_status", "stale_data", "wrong_value", P44, "stale_status", ("track_shipment",)),
    _d("rates_stale_cache", "stale_data", "wrong_value", "https://docs.easypost.com/docs/shipments/rates", "rates_stale", _RATES),
    _d("duties_stale_table", "stale_data", "wrong_value", AVALARA, "duty_stale", ("calculate_duties",)),
    _d("rates_partial_flag", "partial", "truncated", P44, "rates_partial", _RATES),
    _d("rates_total_above_items", "partial", "truncated", SHIPSTATION, "rates_total", _RATES),
    _d("rates_es_timed_out", "partial", "truncated", ES, "rates_es_partial", _RATES),
    _d("rates_cut_note", "partial", "truncated", "https://docs.ovh.com/gb/en/logs-data-platform/", "rates_cutline", _RATES),
    _d("rates_camelcase_keys", "key_rename", "key_rename", FEDEX, "rates_camel", _RATES),
    _d("rates_amounts_as_strings", "key_rename", "key_rename", UPS, "rates_strings", _RATES),
    _d("inventory_keys_renamed", "key_rename", "key_rename", D365, "inv_rename", ("check_inventory",)),
    _d("duties_keys_renamed", "key_rename", "key_rename", AVALARA, "duty_rename", ("calculate_duties",)),
    _d("tracking_keys_renamed", "key_rename", "key_rename", P44, "track_rename", ("track_shipment",)),
    _d("json_cut_midway", "malformed", "malformed_json", "https://www.rfc-editor.org/rfc/rfc8259", "json_cut", ()),
    _d("json_unbalanced", "malformed", "malformed_json", "https://www.rfc-editor.org/rfc/rfc8259", "json_unbalanced", ()),
    _d("json_cut_in_string", "malformed", "malformed_json", "https://www.rfc-editor.org/rfc/rfc8259", "json_cut_string", ()),
    _d("empty_object", "empty", "empty", "https://www.rfc-editor.org/rfc/rfc8259", "empty_obj", ()),
    _d("empty_array", "empty", "empty", "https://www.rfc-editor.org/rfc/rfc8259", "empty_arr", ()),
    _d("empty_string", "empty", "empty", "https://modelcontextprotocol.io/specification/2025-06-18/server/tools", "empty_str", ()),
    _d("null_body", "empty", "empty", "https://www.rfc-editor.org/rfc/rfc8259", "null", ()),
]

# anomalies that are not faults: a success that meets them stays a benign success
BENIGN_DATA: list[Form] = [
    _d("address_optional_fields_missing", "benign_variation", "none", SMARTY, "addr_optional", ("validate_address",)),
    _d("inventory_no_bins", "benign_variation", "none", ODOO, "inv_nobins", ("check_inventory",)),
    _d("tracking_no_events_yet", "benign_variation", "none", P44, "track_noevents", ("track_shipment",)),
]


def _l(name: str, family: str, label: str, target: str, kind: str, source: str, **extra: Any) -> Form:
    return Form(name, family, "llm", label, target, kind, source, "", True, extra)


_HTML_CF524 = ("<!DOCTYPE html><html><head><title>gateway.ai.cloudflare.com | 524: A timeout occurred</title>"
               "</head><body><h1>A timeout occurred</h1><span>Error code 524</span></body></html>")
_HTML_502 = "<html>\r\n<head><title>502 Bad Gateway</title></head>\r\n<body>\r\n<center><h1>502 Bad Gateway</h1></center>\r\n<hr><center>nginx</center>\r\n</body>\r\n</html>"
_HTML_504 = "<html><body><h1>504 Gateway Time-out</h1>\nThe server didn't respond in time.\n</body></html>"

LLM_FORMS: list[Form] = [
    _l("bedrock_throttling", "bedrock", "rate_limit", "http", "status", BEDROCK, status=429, etype="ThrottlingException", body={"message": "Too many requests, please wait before trying again."}),
    _l("bedrock_model_not_ready", "bedrock", "rate_limit", "http", "status", BEDROCK, status=429, etype="ModelNotReadyException", body={"message": "Model is not ready to serve inference requests. The model may be loading; try again later."}),
    _l("bedrock_service_unavailable", "bedrock", "http_error", "http", "status", BEDROCK, status=503, etype="ServiceUnavailableException", body={"message": "Service temporarily unavailable, please try again."}),
    _l("bedrock_internal", "bedrock", "http_error", "http", "status", BEDROCK, status=500, etype="InternalServerException", body={"message": "The server encountered an error processing the request. Try your request again."}),
    _l("bedrock_model_timeout", "bedrock", "timeout", "http", "status", BEDROCK, status=408, etype="ModelTimeoutException", body={"message": "Model has timed out in processing the request. Try your request again."}),
    _l("bedrock_access_denied", "bedrock", "auth", "http", "status", BEDROCK, status=403, etype="AccessDeniedException", body={"message": "You don't have access to the model with the specified model ID."}),
    _l("bedrock_validation", "bedrock", "invalid_request", "http", "status", BEDROCK, status=400, etype="ValidationException", body={"message": "messages.4.content.0.tool_result.content: tool_result block(s) provided when previous message does not send tool_use blocks"}),
    _l("vertex_resource_exhausted", "vertex", "rate_limit", "http", "status", VERTEX_ERR, status=429, body=[{"error": {"code": 429, "message": "Quota exceeded for aiplatform.googleapis.com/online_prediction_requests_per_base_model with base model: anthropic-claude-sonnet-4.", "status": "RESOURCE_EXHAUSTED"}}]),
    _l("vertex_permission_denied", "vertex", "auth", "http", "status", VERTEX_ERR, status=403, body=[{"error": {"code": 403, "message": "Permission 'aiplatform.endpoints.predict' denied on resource '//aiplatform.googleapis.com/projects/freight-ops/locations/us-east5/publishers/anthropic/models/claude-sonnet-4'.", "status": "PERMISSION_DENIED"}}]),
    _l("vertex_model_not_found", "vertex", "not_found", "http", "status", VERTEX_ERR, status=404, body=[{"error": {"code": 404, "message": "Publisher Model `projects/freight-ops/locations/us-east5/publishers/anthropic/models/claude-sonnet-4@20250514` not found.", "status": "NOT_FOUND"}}]),
    _l("vertex_unavailable", "vertex", "http_error", "http", "status", VERTEX_ERR, status=503, body=[{"error": {"code": 503, "message": "The service is currently unavailable.", "status": "UNAVAILABLE"}}]),
    _l("vertex_deadline", "vertex", "timeout", "http", "status", VERTEX_ERR, status=504, body=[{"error": {"code": 504, "message": "Deadline Exceeded", "status": "DEADLINE_EXCEEDED"}}]),
    _l("azure_token_rate", "azure_foundry", "rate_limit", "http", "status", AZURE, status=429, body={"error": {"code": "429", "message": "Requests to the Messages_Create Operation under Azure AI Foundry have exceeded token rate limit of your current pricing tier. Please retry after 6 seconds."}}),
    _l("azure_unauthorized", "azure_foundry", "auth", "http", "status", AZURE, status=401, body={"error": {"code": "401", "message": "Access denied due to invalid subscription key or wrong API endpoint."}}),
    _l("azure_deployment_not_found", "azure_foundry", "not_found", "http", "status", AZURE, status=404, body={"error": {"code": "DeploymentNotFound", "message": "The API deployment for this resource does not exist."}}),
    _l("openrouter_rate_limited", "openrouter", "rate_limit", "http", "status", OPENROUTER, status=429, body={"error": {"code": 429, "message": "Rate limit exceeded: free-models-per-min", "metadata": {"headers": {"X-RateLimit-Limit": "20"}}}}),
    _l("openrouter_provider_502", "openrouter", "http_error", "http", "status", OPENROUTER, status=502, body={"error": {"code": 502, "message": "Provider returned error", "metadata": {"provider_name": "Anthropic"}}}),
    _l("openrouter_200_error_body", "openrouter", "error", "content", "body200", OPENROUTER, body={"error": {"code": 502, "message": "Provider returned error", "metadata": {"provider_name": "Google Vertex"}}}),
    _l("openrouter_408", "openrouter", "timeout", "http", "status", OPENROUTER, status=408, body={"error": {"code": 408, "message": "Your request timed out"}}),
    _l("litellm_rate_limit", "litellm", "rate_limit", "http", "status", LITELLM, status=429, body={"error": {"message": "litellm.RateLimitError: AnthropicException - {\"type\":\"error\",\"error\":{\"type\":\"rate_limit_error\",\"message\":\"Number of request tokens has exceeded your per-minute rate limit\"}}", "type": "None", "param": "None", "code": "429"}}),
    _l("litellm_context_window", "litellm", "invalid_request", "http", "status", LITELLM, status=400, body={"error": {"message": "litellm.ContextWindowExceededError: AnthropicError - prompt is too long: 212344 tokens > 200000 maximum", "type": "None", "param": "None", "code": "400"}}),
    _l("litellm_api_connection", "litellm", "http_error", "http", "status", LITELLM, status=500, body={"error": {"message": "litellm.APIConnectionError: BedrockException - Connection reset by peer", "type": None, "param": None, "code": "500"}}),
    _l("portkey_gateway_timeout", "portkey", "timeout", "http", "status", PORTKEY, status=504, body={"status": "failure", "message": "Request timed out after 30000ms", "provider": "anthropic"}),
    _l("portkey_invalid_key", "portkey", "auth", "http", "status", PORTKEY, status=401, body={"status": "failure", "message": "Invalid API Key. Error Code: 03"}),
    _l("cfgw_524_status", "cloudflare_gateway", "http_error", "http", "status_html", CFGW, status=524, html=_HTML_CF524),
    _l("cfgw_524_in_content", "cloudflare_gateway", "timeout", "content", "content_text", CFGW, text=_HTML_CF524),
    _l("nginx_502_in_content", "gateway_pages", "error", "content", "content_text", "https://nginx.org/en/docs/http/ngx_http_proxy_module.html", text=_HTML_502),
    _l("haproxy_504_in_content", "gateway_pages", "timeout", "content", "content_text", HAPROXY, text=_HTML_504),
    _l("envoy_503_status", "gateway_pages", "http_error", "http", "status_html", ENVOY, status=503, html="upstream connect error or disconnect/reset before headers. reset reason: overflow"),
    _l("heroku_h12_status", "gateway_pages", "http_error", "http", "status_html", HEROKU, status=503, html="<!DOCTYPE html><html><head><title>Application Error</title></head><body><iframe src=\"//www.herokucdn.com/error-pages/application-error.html\"></iframe></body></html>"),
    _l("deepseek_server_busy", "deepseek", "http_error", "http", "status", DEEPSEEK, status=503, body={"error": {"message": "Server overloaded, please retry shortly.", "type": "service_unavailable_error", "code": "server_busy"}}),
    _l("deepseek_invalid_params", "deepseek", "invalid_request", "http", "status", DEEPSEEK, status=422, body={"error": {"message": "Invalid parameters: max_tokens must be <= 8192", "type": "invalid_request_error"}}),
    _l("deepseek_rate_limit", "deepseek", "rate_limit", "http", "status", DEEPSEEK, status=429, body={"error": {"message": "Rate limit reached for requests", "type": "rate_limit_error"}}),
    _l("moonshot_rate_limit", "moonshot", "rate_limit", "http", "status", MOONSHOT, status=429, body={"error": {"type": "rate_limit_reached_error", "message": "Your account org-8a7c... request reached organization max RPM: 200, please try again after 1 seconds"}}),
    _l("moonshot_high_risk", "moonshot", "content_filter", "http", "status", MOONSHOT, status=400, body={"error": {"type": "content_filter", "message": "The request was rejected because it was considered high risk"}}),
    _l("moonshot_engine_overloaded", "moonshot", "http_error", "http", "status", MOONSHOT, status=500, body={"error": {"type": "engine_overloaded_error", "message": "The engine is currently overloaded, please try again later"}}),
    _l("zhipu_concurrency", "zhipu", "rate_limit", "http", "status", ZHIPU, status=429, body={"error": {"code": "1302", "message": "您当前使用该API的并发数过高，请降低并发，或联系客服增加限额。"}}),
    _l("zhipu_sensitive", "zhipu", "content_filter", "http", "status", ZHIPU, status=400, body={"error": {"code": "1301", "message": "系统检测到输入或生成内容可能包含不安全或敏感内容，请您避免输入易产生敏感内容的提示语，感谢您的配合。"}}),
    _l("zhipu_model_missing", "zhipu", "not_found", "http", "status", ZHIPU, status=400, body={"error": {"code": "1211", "message": "模型不存在，请检查模型代码。"}}),
    _l("minimax_rate_in_200", "minimax", "rate_limit", "content", "body200", MINIMAX, body={"base_resp": {"status_code": 1002, "status_msg": "rate limit exceeded(RPM)"}}),
    _l("minimax_auth_in_200", "minimax", "auth", "content", "body200", MINIMAX, body={"base_resp": {"status_code": 1004, "status_msg": "login fail: Please carry the API secret key in the 'Authorization' field of the request header"}}),
    _l("minimax_internal_in_200", "minimax", "error", "content", "body200", MINIMAX, body={"base_resp": {"status_code": 1000, "status_msg": "unknown error"}}),
    _l("anthropic_overloaded_529", "anthropic_wire", "http_error", "http", "status", ANTHROPIC, status=529, body={"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}}),
    _l("stream_error_overloaded", "anthropic_wire", "error", "stream", "stream_error", ANTHROPIC_STREAM, etype="overloaded_error", message="Overloaded"),
    _l("stream_error_api", "anthropic_wire", "error", "stream", "stream_error", ANTHROPIC_STREAM, etype="api_error", message="Internal server error"),
    _l("stream_error_rate", "anthropic_wire", "rate_limit", "stream", "stream_error", ANTHROPIC_STREAM, etype="rate_limit_error", message="This request would exceed the rate limit for your organization of 80,000 output tokens per minute."),
    _l("stream_cut_no_stop", "stream_cut", "stream_cut", "stream", "stream_cut", ANTHROPIC_STREAM, how="clean"),
    _l("stream_cut_mid_event", "stream_cut", "stream_cut", "stream", "stream_cut", ANTHROPIC_STREAM, how="abort"),
    _l("stream_cut_after_start", "stream_cut", "stream_cut", "stream", "stream_cut", ANTHROPIC_STREAM, how="early"),
    _l("max_tokens_tool_input", "stop_reason", "truncate", "content", "max_tokens", ANTHROPIC_STOP),
    _l("refusal_stop", "stop_reason", "content_filter", "content", "refusal", ANTHROPIC_STOP),
    _l("empty_content_end_turn", "stop_reason", "empty", "content", "empty", ANTHROPIC_STOP),
    _l("policy_json_as_text", "format", "schema", "content", "schema_text", "https://docs.litellm.ai/docs/proxy/guardrails/quick_start", text='{"error": {"type": "guardrail_violation", "message": "Response blocked by output guardrail: pii-detector"}}'),
    _l("tool_args_foreign_keys", "format", "schema", "tool_calls", "schema_args", "https://docs.anthropic.com/en/docs/agents-and-tools/tool-use/implement-tool-use"),
    _l("tool_args_emptied", "format", "error", "tool_calls", "empty_args", "https://docs.anthropic.com/en/docs/agents-and-tools/tool-use/implement-tool-use"),
    _l("mojibake_tool_args", "transit", "corrupt", "tool_calls", "corrupt_args", "https://docs.python.org/3/howto/unicode.html"),
    _l("stale_repeat_reply", "transit", "stale", "content", "stale", "https://developers.cloudflare.com/ai-gateway/features/caching/"),
    _l("read_timeout", "transport", "timeout", "http", "slow_timeout", "https://www.python-httpx.org/exceptions/"),
    _l("connection_reset", "transport", "connection", "http", "reset", "https://www.python-httpx.org/exceptions/"),
    _l("slow_reply_deadline", "transport", "latency", "http", "slow_latency", "https://docs.anthropic.com/en/api/rate-limits"),
]

BY_NAME: dict[str, Form] = {f.name: f for f in (*TOOL_ERRORS, *TOOL_DATA, *BENIGN_DATA, *LLM_FORMS)}
