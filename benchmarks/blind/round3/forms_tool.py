# ruff: noqa: E501  (the forms quote published texts whole; cutting them would change what they are)
"""Failure forms on the tool side: what a real backing service answers, as the tool hands it on.

Each form imitates a published answer of a real system (the ``source`` is its public
documentation). The tool wrapper returns the text as the tool's result, the way a thin tool hands
a service's body or an exception's text back to the model. ``label`` is the taxonomy label the
text reports, read by docs/taxonomy.md ("a text that is an error is an error of its meaning";
"the most specific wins"; partial results are ``truncated``).

Data forms (``kind`` ``data``) change a real result instead of replacing it: the mutation's name
is in ``text`` and :mod:`world` applies it.
"""

from __future__ import annotations

from dataclasses import dataclass

PAY = ("charge_payment", "refund_payment")
READ = ("get_order", "get_customer", "check_stock", "list_orders")
DB = ("get_order", "get_customer", "reserve_stock")
SEARCH = ("check_stock", "list_orders")
MAIL = ("send_email",)
SHIP = ("create_shipment",)
ANY = ("get_order", "get_customer", "check_stock", "reserve_stock", "charge_payment",
       "create_shipment", "send_email", "list_orders", "refund_payment")


@dataclass(frozen=True)
class ToolForm:
    id: str
    family: str
    label: str
    tools: tuple[str, ...]
    source: str
    text: str
    kind: str = "error"      # error: text replaces the result, the call did not take effect; data
    side: str = "tool"
    surface: str = "tool_result"


def _f(id_: str, family: str, label: str, tools: tuple[str, ...], source: str, text: str,
       kind: str = "error") -> ToolForm:
    return ToolForm(id_, family, label, tools, source, text, kind)


S_STRIPE = "https://docs.stripe.com/api/errors"
S_STRIPE_CODES = "https://docs.stripe.com/error-codes"
S_PAYPAL = "https://developer.paypal.com/api/rest/reference/orders/v2/errors/"
S_ADYEN = "https://docs.adyen.com/development-resources/response-handling/"
S_S3 = "https://docs.aws.amazon.com/AmazonS3/latest/API/ErrorResponses.html"
S_GCS = "https://cloud.google.com/storage/docs/json_api/v1/status-codes"
S_AZBLOB = "https://learn.microsoft.com/en-us/rest/api/storageservices/blob-service-error-codes"
S_PG = "https://www.postgresql.org/docs/current/errcodes-appendix.html"
S_SQLA = "https://docs.sqlalchemy.org/en/20/errors.html"
S_PRISMA = "https://www.prisma.io/docs/orm/reference/error-reference"
S_MONGO = "https://www.mongodb.com/docs/manual/reference/error-codes/"
S_DDB = "https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/Programming.Errors.html"
S_GQL = "https://www.apollographql.com/docs/apollo-server/data/errors"
S_SHOPIFY = "https://shopify.dev/docs/api/usage/rate-limits"
S_KAFKA = "https://kafka-python.readthedocs.io/en/master/apidoc/kafka.errors.html"
S_AMQP = "https://www.rabbitmq.com/amqp-0-9-1-reference#constants"
S_SQS = "https://docs.aws.amazon.com/AWSSimpleQueueService/latest/APIReference/CommonErrors.html"
S_ES = "https://www.elastic.co/guide/en/elasticsearch/reference/current/search-search.html"
S_ALGOLIA = "https://www.algolia.com/doc/api-reference/api-methods/search/"
S_AUTH0 = "https://auth0.com/docs/troubleshoot/customer-support/common-errors"
S_OKTA = "https://developer.okta.com/docs/reference/error-codes/"
S_KEYCLOAK = "https://www.rfc-editor.org/rfc/rfc6749#section-5.2"
S_CF = "https://developers.cloudflare.com/support/troubleshooting/http-status-codes/cloudflare-5xx-errors/"
S_CF1XXX = "https://developers.cloudflare.com/support/troubleshooting/http-status-codes/cloudflare-1xxx-errors/"
S_FASTLY = "https://www.fastly.com/documentation/guides/concepts/errors/"
S_CLOUDFRONT = "https://docs.aws.amazon.com/AmazonCloudFront/latest/DeveloperGuide/http-502-bad-gateway.html"
S_NGINX = "https://nginx.org/en/docs/http/ngx_http_proxy_module.html"
S_ENVOY = "https://www.envoyproxy.io/docs/envoy/latest/configuration/http/http_conn_man/response_code_details"
S_HAPROXY = "https://docs.haproxy.org/2.8/configuration.html#1.3.1"
S_KONG = "https://docs.konghq.com/hub/kong-inc/rate-limiting/"
S_APIGW = "https://docs.aws.amazon.com/apigateway/latest/developerguide/supported-gateway-response-types.html"
S_DOCKER = "https://docs.docker.com/reference/api/engine/"
S_K8S = "https://kubernetes.io/docs/reference/using-api/api-concepts/#response-status-kind"
S_GRPC = "https://grpc.github.io/grpc/core/md_doc_statuscodes.html"
S_REDIS = "https://redis-py.readthedocs.io/en/stable/exceptions.html"
S_PYEXC = "https://docs.python.org/3/library/exceptions.html#os-exceptions"
S_REQUESTS = "https://requests.readthedocs.io/en/latest/api/#exceptions"
S_JAVA = "https://docs.oracle.com/en/java/javase/21/docs/api/java.base/java/net/SocketTimeoutException.html"
S_GO = "https://pkg.go.dev/context#pkg-variables"
S_NODE = "https://nodejs.org/api/errors.html#common-system-errors"
S_SENDGRID = "https://www.twilio.com/docs/sendgrid/api-reference/how-to-use-the-sendgrid-v3-api/errors"
S_MAILGUN = "https://documentation.mailgun.com/docs/mailgun/api-reference/api-overview#errors"
S_POSTMARK = "https://postmarkapp.com/developer/api/overview#error-codes"
S_SES = "https://docs.aws.amazon.com/ses/latest/dg/manage-sending-quotas-errors.html"
S_SMTP = "https://www.rfc-editor.org/rfc/rfc3463"
S_TWILIO = "https://www.twilio.com/docs/api/errors"
S_EASYPOST = "https://docs.easypost.com/docs/errors"
S_SHIPENGINE = "https://www.shipengine.com/docs/errors/"
S_SOAP = "https://www.w3.org/TR/2000/NOTE-SOAP-20000508/#_Toc478383510"
S_JSONRPC = "https://www.jsonrpc.org/specification#error_object"
S_MCP = "https://modelcontextprotocol.io/specification/2025-06-18/server/tools#error-handling"
S_RFC9110 = "https://www.rfc-editor.org/rfc/rfc9110#name-status-codes"
S_GHSEARCH = "https://docs.github.com/en/rest/search/search#timeouts-and-incomplete-results"
S_GQLSPEC = "https://spec.graphql.org/October2021/#sec-Errors"
S_STUDY = "https://www.json.org/json-en.html"

NGINX_504 = ("<html>\r\n<head><title>504 Gateway Time-out</title></head>\r\n<body>\r\n<center><h1>504 Gateway "
             "Time-out</h1></center>\r\n<hr><center>nginx/1.25.3</center>\r\n</body>\r\n</html>\r\n")
NGINX_502 = ("<html>\r\n<head><title>502 Bad Gateway</title></head>\r\n<body>\r\n<center><h1>502 Bad Gateway"
             "</h1></center>\r\n<hr><center>nginx</center>\r\n</body>\r\n</html>\r\n")

TOOL_FORMS: tuple[ToolForm, ...] = (
    # --- payment APIs ---------------------------------------------------------------------------
    _f("stripe_rate_limit", "stripe", "rate_limit", PAY, S_STRIPE,
       '{"error": {"code": "rate_limit", "doc_url": "https://stripe.com/docs/error-codes/rate-limit", '
       '"message": "Request rate limit exceeded. Learn more about rate limits here https://stripe.com/docs/rate-limits.", '
       '"type": "invalid_request_error"}}'),
    _f("stripe_api_error", "stripe", "error", PAY, S_STRIPE,
       '{"error": {"message": "An unknown error occurred", "request_log_url": "https://dashboard.stripe.com/test/logs/{req}", '
       '"type": "api_error"}}'),
    _f("stripe_auth", "stripe", "auth", PAY, S_STRIPE,
       '{"error": {"message": "Invalid API Key provided: sk_live_********************3xQz", "type": "invalid_request_error"}}'),
    _f("stripe_resource_missing", "stripe", "not_found", PAY, S_STRIPE_CODES,
       '{"error": {"code": "resource_missing", "doc_url": "https://stripe.com/docs/error-codes/resource-missing", '
       '"message": "No such payment_intent: \'pi_{req}\'", "param": "intent", "type": "invalid_request_error"}}'),
    _f("stripe_idempotency", "stripe", "invalid_request", PAY, S_STRIPE_CODES,
       '{"error": {"message": "Keys for idempotent requests can only be used with the same parameters they were first '
       'used with. Try using a key other than \'{order_id}-pay\' if you meant to execute a different request.", '
       '"type": "idempotency_error"}}'),
    _f("paypal_rate_limit", "paypal", "rate_limit", PAY, S_PAYPAL,
       '{"name": "RATE_LIMIT_REACHED", "message": "Too many requests. Blocked due to rate limiting.", '
       '"debug_id": "{req}", "links": []}'),
    _f("paypal_internal", "paypal", "error", PAY, S_PAYPAL,
       '{"name": "INTERNAL_SERVER_ERROR", "message": "An internal server error has occurred.", "debug_id": "{req}", '
       '"links": [{"href": "https://developer.paypal.com/api/orders/v2/#error-INTERNAL_SERVER_ERROR", "rel": "information_link"}]}'),
    _f("paypal_unprocessable", "paypal", "invalid_request", PAY, S_PAYPAL,
       '{"name": "UNPROCESSABLE_ENTITY", "details": [{"field": "/purchase_units/@reference_id==\'default\'/amount/value", '
       '"issue": "DECIMAL_PRECISION", "description": "If the currency supports decimals, only two decimal place precision is supported."}], '
       '"message": "The requested action could not be performed, semantically incorrect, or failed business validation.", "debug_id": "{req}"}'),
    _f("paypal_invalid_token", "paypal", "auth", PAY, "https://developer.paypal.com/api/rest/authentication/",
       '{"error": "invalid_token", "error_description": "Access Token not found in cache"}'),
    _f("adyen_validation", "adyen", "invalid_request", PAY, S_ADYEN,
       '{"status": 422, "errorCode": "137", "message": "Invalid amount specified", "errorType": "validation", "pspReference": "{req}"}'),
    _f("adyen_security", "adyen", "auth", PAY, S_ADYEN,
       '{"status": 401, "errorCode": "000", "message": "HTTP Status Response - Unauthorized", "errorType": "security"}'),
    _f("adyen_internal", "adyen", "error", PAY, S_ADYEN,
       '{"status": 500, "errorCode": "905_1", "message": "Could not find an acquirer account for the provided currency (EUR).", '
       '"errorType": "configuration", "pspReference": "{req}"}'),
    # --- object stores --------------------------------------------------------------------------
    _f("s3_no_such_key", "aws_s3", "not_found", DB, S_S3,
       '<?xml version="1.0" encoding="UTF-8"?>\n<Error><Code>NoSuchKey</Code><Message>The specified key does not exist.</Message>'
       '<Key>orders/{order_id}.json</Key><RequestId>{req}</RequestId><HostId>Uuag1LuByRx9e6j5Onimru9pO4ZVKnJ2Qz7/C1NPcfTWAtRPfTaOFg==</HostId></Error>'),
    _f("s3_access_denied", "aws_s3", "auth", DB, S_S3,
       '<?xml version="1.0" encoding="UTF-8"?>\n<Error><Code>AccessDenied</Code><Message>Access Denied</Message>'
       '<RequestId>{req}</RequestId><HostId>4PZ8tF1jUe8Wl0YdGm2vq1E2vC4=</HostId></Error>'),
    _f("s3_slow_down", "aws_s3", "rate_limit", DB, S_S3,
       '<?xml version="1.0" encoding="UTF-8"?>\n<Error><Code>SlowDown</Code><Message>Please reduce your request rate.</Message>'
       '<RequestId>{req}</RequestId></Error>'),
    _f("s3_internal", "aws_s3", "error", DB, S_S3,
       '<?xml version="1.0" encoding="UTF-8"?>\n<Error><Code>InternalError</Code><Message>We encountered an internal error. '
       'Please try again.</Message><RequestId>{req}</RequestId></Error>'),
    _f("s3_request_timeout", "aws_s3", "timeout", DB, S_S3,
       '<?xml version="1.0" encoding="UTF-8"?>\n<Error><Code>RequestTimeout</Code><Message>Your socket connection to the server '
       'was not read from or written to within the timeout period. Idle connections will be closed.</Message>'
       '<RequestId>{req}</RequestId></Error>'),
    _f("gcs_rate", "gcs", "rate_limit", DB, S_GCS,
       '{"error": {"code": 429, "message": "The object exceeded the rate limit for object mutation operations (create, update, and delete).", '
       '"errors": [{"message": "The object exceeded the rate limit for object mutation operations.", "domain": "usageLimits", "reason": "rateLimitExceeded"}]}}'),
    _f("gcs_not_found", "gcs", "not_found", DB, S_GCS,
       '{"error": {"code": 404, "message": "No such object: shop-orders/{order_id}.json", '
       '"errors": [{"message": "No such object: shop-orders/{order_id}.json", "domain": "global", "reason": "notFound"}]}}'),
    _f("gcs_forbidden", "gcs", "auth", DB, S_GCS,
       '{"error": {"code": 403, "message": "fulfilment@shop-prod.iam.gserviceaccount.com does not have storage.objects.get access '
       'to the Google Cloud Storage object. Permission \'storage.objects.get\' denied on resource (or it may not exist).", '
       '"errors": [{"domain": "global", "reason": "forbidden"}]}}'),
    _f("azblob_not_found", "azure_blob", "not_found", DB, S_AZBLOB,
       '\ufeff<?xml version="1.0" encoding="utf-8"?><Error><Code>BlobNotFound</Code><Message>The specified blob does not exist.\n'
       'RequestId:{req}\nTime:2026-03-02T10:14:07.1184211Z</Message></Error>'),
    _f("azblob_server_busy", "azure_blob", "rate_limit", DB, S_AZBLOB,
       '\ufeff<?xml version="1.0" encoding="utf-8"?><Error><Code>ServerBusy</Code><Message>Ingress is over the account limit.\n'
       'RequestId:{req}\nTime:2026-03-02T10:14:07.1184211Z</Message></Error>'),
    _f("azblob_timeout", "azure_blob", "timeout", DB, S_AZBLOB,
       '\ufeff<?xml version="1.0" encoding="utf-8"?><Error><Code>OperationTimedOut</Code><Message>The operation could not be '
       'completed within the permitted time.\nRequestId:{req}\nTime:2026-03-02T10:14:07.1184211Z</Message></Error>'),
    # --- databases and ORMs ----------------------------------------------------------------------
    _f("pg_unique", "postgres", "invalid_request", ("reserve_stock", "charge_payment"), S_PG,
       'psycopg.errors.UniqueViolation: duplicate key value violates unique constraint "reservations_order_sku_key"\n'
       'DETAIL:  Key (order_id, sku)=({order_id}, {sku}) already exists.'),
    _f("pg_statement_timeout", "postgres", "timeout", DB, S_PG,
       'psycopg.errors.QueryCanceled: canceling statement due to statement timeout\nCONTEXT:  while locking tuple (412,7) in relation "stock_levels"'),
    _f("pg_undefined_table", "postgres", "not_found", DB, S_PG,
       'ERROR:  relation "order_lines_v2" does not exist\nLINE 1: SELECT sku, qty FROM order_lines_v2 WHERE order_id = $1\n'
       '                              ^\nSQLSTATE: 42P01'),
    _f("pg_password", "postgres", "auth", DB, S_PG,
       'psycopg.OperationalError: connection failed: FATAL:  password authentication failed for user "fulfilment_ro"'),
    _f("pg_conn_refused", "postgres", "connection", DB, S_PG,
       'psycopg.OperationalError: connection failed: connection to server at "10.20.4.11", port 5432 failed: Connection refused\n'
       '\tIs the server running on that host and accepting TCP/IP connections?'),
    _f("sqla_closed", "sqlalchemy", "connection", DB, S_SQLA,
       '(psycopg2.OperationalError) server closed the connection unexpectedly\n\tThis probably means the server terminated '
       'abnormally\n\tbefore or while processing the request.\n\n(Background on this error at: https://sqlalche.me/e/20/e3q8)'),
    _f("sqla_pool_timeout", "sqlalchemy", "timeout", DB, S_SQLA,
       'sqlalchemy.exc.TimeoutError: QueuePool limit of size 5 overflow 10 reached, connection timed out, timeout 30.00 '
       '(Background on this error at: https://sqlalche.me/e/20/3o7r)'),
    _f("sqla_no_result", "sqlalchemy", "not_found", DB, S_SQLA,
       'Traceback (most recent call last):\n  File "/srv/shop/repo.py", line 88, in load_order\n    return session.execute(stmt).scalar_one()\n'
       'sqlalchemy.exc.NoResultFound: No row was found when one was required'),
    _f("sqla_fk", "sqlalchemy", "invalid_request", ("reserve_stock", "charge_payment", "create_shipment"), S_SQLA,
       '(psycopg2.errors.ForeignKeyViolation) insert or update on table "reservations" violates foreign key constraint '
       '"reservations_sku_fkey"\nDETAIL:  Key (sku)=({sku}) is not present in table "products".\n'
       '(Background on this error at: https://sqlalche.me/e/20/gkpj)'),
    _f("prisma_p2025", "prisma", "not_found", DB, S_PRISMA,
       '{"name": "PrismaClientKnownRequestError", "code": "P2025", "clientVersion": "5.22.0", "meta": {"modelName": "Order", '
       '"cause": "Record to update not found."}, "message": "An operation failed because it depends on one or more records '
       'that were required but not found. Record to update not found."}'),
    _f("prisma_p1001", "prisma", "connection", DB, S_PRISMA,
       'PrismaClientInitializationError: Can\'t reach database server at `orders-db.internal`:`5432`\n\nPlease make sure your '
       'database server is running at `orders-db.internal`:`5432`.'),
    _f("prisma_p2024", "prisma", "timeout", DB, S_PRISMA,
       '{"code": "P2024", "message": "Timed out fetching a new connection from the connection pool. More info: '
       'http://pris.ly/d/connection-pool (Current connection pool timeout: 10, connection limit: 5)"}'),
    _f("prisma_p1000", "prisma", "auth", DB, S_PRISMA,
       'PrismaClientInitializationError: Authentication failed against database server at `orders-db.internal`, the provided '
       'database credentials for `shop` are not valid.'),
    _f("mongo_auth", "mongodb", "auth", DB, S_MONGO,
       "pymongo.errors.OperationFailure: Authentication failed., full error: {'ok': 0.0, 'errmsg': 'Authentication failed.', "
       "'code': 18, 'codeName': 'AuthenticationFailed'}"),
    _f("mongo_selection_timeout", "mongodb", "timeout", DB, S_MONGO,
       "pymongo.errors.ServerSelectionTimeoutError: orders-mongo-0:27017: [Errno 111] Connection refused, Timeout: 30s, "
       "Topology Description: <TopologyDescription id: 65f1, topology_type: Unknown, servers: [<ServerDescription "
       "('orders-mongo-0', 27017) server_type: Unknown, rtt: None, error=AutoReconnect('orders-mongo-0:27017: [Errno 111] "
       "Connection refused')>]>"),
    _f("mongo_exceeded_time", "mongodb", "timeout", DB, S_MONGO,
       "pymongo.errors.ExecutionTimeout: operation exceeded time limit, full error: {'ok': 0.0, 'errmsg': 'operation "
       "exceeded time limit', 'code': 50, 'codeName': 'MaxTimeMSExpired'}"),
    _f("ddb_throughput", "dynamodb", "rate_limit", DB, S_DDB,
       'An error occurred (ProvisionedThroughputExceededException) when calling the GetItem operation (reached max retries: 9): '
       'The level of configured provisioned throughput for the table was exceeded. Consider increasing your provisioning level '
       'with the UpdateTable API.'),
    _f("ddb_not_found", "dynamodb", "not_found", DB, S_DDB,
       '{"__type": "com.amazonaws.dynamodb.v20120810#ResourceNotFoundException", "message": "Requested resource not found: '
       'Table: orders-v3 not found"}'),
    _f("ddb_conditional", "dynamodb", "invalid_request", ("reserve_stock", "charge_payment"), S_DDB,
       '{"__type": "com.amazonaws.dynamodb.v20120810#ConditionalCheckFailedException", "message": "The conditional request failed"}'),
    # --- GraphQL ---------------------------------------------------------------------------------
    _f("shopify_throttled", "graphql", "rate_limit", READ, S_SHOPIFY,
       '{"errors": [{"message": "Throttled", "extensions": {"code": "THROTTLED", "documentation": '
       '"https://shopify.dev/api/usage/rate-limits"}}], "extensions": {"cost": {"requestedQueryCost": 752, '
       '"throttleStatus": {"maximumAvailable": 2000.0, "currentlyAvailable": 112, "restoreRate": 100.0}}}}'),
    _f("apollo_validation", "graphql", "invalid_request", READ, S_GQL,
       '{"errors": [{"message": "Cannot query field \\"quantity\\" on type \\"OrderLine\\". Did you mean \\"qty\\"?", '
       '"locations": [{"line": 4, "column": 7}], "extensions": {"code": "GRAPHQL_VALIDATION_FAILED"}}]}'),
    _f("apollo_unauthenticated", "graphql", "auth", READ, S_GQL,
       '{"data": null, "errors": [{"message": "Context creation failed: jwt expired", "extensions": {"code": "UNAUTHENTICATED"}}]}'),
    _f("apollo_internal", "graphql", "error", READ, S_GQL,
       '{"data": null, "errors": [{"message": "Cannot read properties of undefined (reading \'warehouse\')", "locations": '
       '[{"line": 2, "column": 3}], "path": ["order"], "extensions": {"code": "INTERNAL_SERVER_ERROR"}}]}'),
    # --- message queues --------------------------------------------------------------------------
    _f("kafka_timeout", "kafka", "timeout", SHIP + MAIL, S_KAFKA,
       "KafkaTimeoutError: Failed to update metadata after 60.0 secs."),
    _f("kafka_topic_auth", "kafka", "auth", SHIP + MAIL, S_KAFKA,
       "kafka.errors.TopicAuthorizationFailedError: [Error 29] TopicAuthorizationFailedError: shipments.requested"),
    _f("kafka_unknown_topic", "kafka", "not_found", SHIP + MAIL, S_KAFKA,
       "kafka.errors.UnknownTopicOrPartitionError: [Error 3] UnknownTopicOrPartitionError: This request is for a topic or "
       "partition that does not exist on this broker."),
    _f("kafka_too_large", "kafka", "invalid_request", SHIP + MAIL, S_KAFKA,
       "kafka.errors.MessageSizeTooLargeError: [Error 10] MessageSizeTooLargeError: The message is 1181203 bytes when "
       "serialized which is larger than the maximum request size you have configured with the max_request_size configuration"),
    _f("amqp_no_queue", "rabbitmq", "not_found", SHIP + MAIL, S_AMQP,
       "pika.exceptions.ChannelClosedByBroker: (404, \"NOT_FOUND - no queue 'label-print' in vhost '/'\")"),
    _f("amqp_access_refused", "rabbitmq", "auth", SHIP + MAIL, S_AMQP,
       "pika.exceptions.ProbableAuthenticationError: ConnectionClosedByBroker: (403) 'ACCESS_REFUSED - Login was refused "
       "using authentication mechanism PLAIN. For details see the broker logfile.'"),
    _f("amqp_conn", "rabbitmq", "connection", SHIP + MAIL, S_AMQP,
       "pika.exceptions.AMQPConnectionError: Connection to 10.20.7.3:5672 failed: [Errno 111] Connection refused"),
    _f("amqp_precondition", "rabbitmq", "invalid_request", SHIP + MAIL, S_AMQP,
       "pika.exceptions.ChannelClosedByBroker: (406, \"PRECONDITION_FAILED - inequivalent arg 'durable' for queue "
       "'shipments' in vhost '/': received 'false' but current is 'true'\")"),
    _f("sqs_no_queue", "aws_sqs", "not_found", SHIP + MAIL, S_SQS,
       "botocore.errorfactory.QueueDoesNotExist: An error occurred (AWS.SimpleQueueService.NonExistentQueue) when calling "
       "the SendMessage operation: The specified queue does not exist."),
    _f("sqs_throttling", "aws_sqs", "rate_limit", SHIP + MAIL, S_SQS,
       "botocore.exceptions.ClientError: An error occurred (ThrottlingException) when calling the SendMessage operation "
       "(reached max retries: 4): Rate exceeded"),
    _f("sqs_expired_token", "aws_sqs", "auth", SHIP + MAIL, S_SQS,
       "botocore.exceptions.ClientError: An error occurred (ExpiredToken) when calling the SendMessage operation: "
       "The security token included in the request is expired"),
    _f("boto_read_timeout", "aws_sqs", "timeout", SHIP + MAIL, "https://botocore.amazonaws.com/v1/documentation/api/latest/reference/config.html",
       'botocore.exceptions.ReadTimeoutError: Read timeout on endpoint URL: "https://sqs.eu-west-1.amazonaws.com/"'),
    _f("boto_endpoint", "aws_sqs", "connection", SHIP + MAIL, "https://botocore.amazonaws.com/v1/documentation/api/latest/reference/config.html",
       'botocore.exceptions.EndpointConnectionError: Could not connect to the endpoint URL: "https://sqs.eu-west-1.amazonaws.com/"'),
    # --- search services -------------------------------------------------------------------------
    _f("es_rejected", "elasticsearch", "rate_limit", SEARCH, S_ES,
       '{"error": {"root_cause": [{"type": "es_rejected_execution_exception", "reason": "rejected execution of '
       'org.elasticsearch.action.search.FetchSearchPhase on EsThreadPoolExecutor[name = node-2/search, queue capacity = 1000, '
       'active threads = 13, queued tasks = 1000, completed tasks = 9912]"}], "type": "es_rejected_execution_exception", '
       '"reason": "rejected execution of search"}, "status": 429}'),
    _f("es_index_missing", "elasticsearch", "not_found", SEARCH, S_ES,
       '{"error": {"root_cause": [{"type": "index_not_found_exception", "reason": "no such index [inventory-2026.03]", '
       '"index": "inventory-2026.03", "resource.type": "index_or_alias", "resource.id": "inventory-2026.03"}], '
       '"type": "index_not_found_exception", "reason": "no such index [inventory-2026.03]"}, "status": 404}'),
    _f("es_parse", "elasticsearch", "invalid_request", SEARCH, S_ES,
       '{"error": {"root_cause": [{"type": "parsing_exception", "reason": "[term] query malformed, no start_object after '
       'query name", "line": 1, "col": 29}], "type": "x_content_parse_exception", "reason": "[1:29] [bool] failed to parse '
       'field [filter]"}, "status": 400}'),
    _f("es_timed_out_empty", "elasticsearch", "timeout", SEARCH, S_ES,
       '{"took": 30001, "timed_out": true, "_shards": {"total": 3, "successful": 0, "skipped": 0, "failed": 3}, '
       '"hits": {"total": {"value": 0, "relation": "eq"}, "max_score": null, "hits": []}}'),
    _f("es_security", "elasticsearch", "auth", SEARCH, "https://www.elastic.co/guide/en/elasticsearch/reference/current/security-api.html",
       '{"error": {"root_cause": [{"type": "security_exception", "reason": "action [indices:data/read/search] is unauthorized '
       'for user [fulfilment-bot] with effective roles [viewer]"}], "type": "security_exception", "reason": "action '
       '[indices:data/read/search] is unauthorized for user [fulfilment-bot]"}, "status": 403}'),
    _f("algolia_no_index", "algolia", "not_found", SEARCH, S_ALGOLIA,
       '{"message": "Index does not exist", "status": 404}'),
    _f("algolia_bad_key", "algolia", "auth", SEARCH, S_ALGOLIA,
       '{"message": "Invalid Application-ID or API key", "status": 403}'),
    _f("algolia_quota", "algolia", "rate_limit", SEARCH, "https://www.algolia.com/doc/guides/scaling/algolia-service-limits/",
       '{"message": "Too many requests", "status": 429}'),
    # --- auth providers --------------------------------------------------------------------------
    _f("auth0_expired", "auth0", "auth", ANY, S_AUTH0,
       '{"statusCode": 401, "error": "Unauthorized", "message": "Expired token received for JSON Web Token validation", '
       '"attributes": {"error": "Expired token received for JSON Web Token validation"}}'),
    _f("auth0_rate", "auth0", "rate_limit", ANY, "https://auth0.com/docs/troubleshoot/customer-support/operational-policies/rate-limit-policy",
       '{"statusCode": 429, "error": "Too Many Requests", "message": "Global limit has been reached", "errorCode": "too_many_requests"}'),
    _f("okta_invalid_token", "okta", "auth", ANY, S_OKTA,
       '{"errorCode": "E0000011", "errorSummary": "Invalid token provided", "errorLink": "E0000011", "errorId": "oae{req}", "errorCauses": []}'),
    _f("okta_rate", "okta", "rate_limit", ANY, S_OKTA,
       '{"errorCode": "E0000047", "errorSummary": "API call exceeded rate limit due to too many requests.", '
       '"errorLink": "E0000047", "errorId": "oae{req}", "errorCauses": []}'),
    _f("oauth_invalid_grant", "oauth2", "auth", ANY, S_KEYCLOAK,
       '{"error": "invalid_grant", "error_description": "Token is not active"}'),
    _f("oauth_forbidden", "oauth2", "auth", ANY, "https://www.rfc-editor.org/rfc/rfc6750#section-3.1",
       'HTTP 403 Forbidden\nWWW-Authenticate: Bearer realm="shop", error="insufficient_scope", '
       'error_description="The request requires higher privileges than provided by the access token.", scope="payments:write"'),
    # --- CDNs and edges --------------------------------------------------------------------------
    _f("cf_522", "cloudflare", "timeout", ANY, S_CF,
       "error code: 522\n\nConnection timed out\nThe initial connection between Cloudflare's network and the origin web server "
       "timed out. As a result, the web page can not be displayed.\nCloudflare Ray ID: 8a1f{req}"),
    _f("cf_521", "cloudflare", "connection", ANY, S_CF,
       "Error 521 Web server is down\nThe web server is not returning a connection. As a result, the web page is not displaying.\n"
       "Cloudflare Ray ID: 8a1f{req}"),
    _f("cf_520", "cloudflare", "error", ANY, S_CF,
       "Error 520 Web server is returning an unknown error\nThere is an unknown connection issue between Cloudflare and the "
       "origin web server. As a result, the web page can not be displayed.\nCloudflare Ray ID: 8a1f{req}"),
    _f("cf_1015", "cloudflare", "rate_limit", ANY, S_CF1XXX,
       "Error 1015 Ray ID: 8a1f{req}\nYou are being rate limited\nThe owner of this website (api.shop.example) has banned you "
       "temporarily from accessing this website."),
    _f("cf_1020", "cloudflare", "auth", ANY, S_CF1XXX,
       "Error 1020 Ray ID: 8a1f{req}\nAccess denied\nThis website is using a security service to protect itself from online "
       "attacks. The action you just performed triggered a firewall rule."),
    _f("fastly_first_byte", "fastly", "timeout", ANY, S_FASTLY,
       "Error 503 first byte timeout\n\nfirst byte timeout\n\nGuru Mediation:\nDetails: cache-fra-etou8220087-FRA 1709374447 {req}\n\nVarnish cache server"),
    _f("fastly_unhealthy", "fastly", "error", ANY, S_FASTLY,
       "Error 503 Backend is unhealthy\n\nBackend is unhealthy\n\nGuru Mediation:\nDetails: cache-ams21044-AMS 1709374447 {req}\n\nVarnish cache server"),
    _f("cloudfront_502", "cloudfront", "connection", ANY, S_CLOUDFRONT,
       "502 ERROR\nThe request could not be satisfied.\nCloudFront wasn't able to connect to the origin. We can't connect to the "
       "server for this app or website at this time.\nGenerated by cloudfront (CloudFront)\nRequest ID: {req}=="),
    _f("cloudfront_504", "cloudfront", "timeout", ANY, "https://docs.aws.amazon.com/AmazonCloudFront/latest/DeveloperGuide/http-504-gateway-timeout.html",
       "504 Gateway Timeout ERROR\nThe request could not be satisfied.\nCloudFront attempted to establish a connection with the "
       "origin, but either the attempt failed or the origin closed the connection.\nGenerated by cloudfront (CloudFront)\nRequest ID: {req}=="),
    # --- proxies and API gateways ----------------------------------------------------------------
    _f("nginx_504_page", "nginx", "timeout", ANY, S_NGINX, NGINX_504),
    _f("nginx_502_page", "nginx", "error", ANY, S_NGINX, NGINX_502),
    _f("envoy_reset", "envoy", "connection", ANY, S_ENVOY,
       "upstream connect error or disconnect/reset before headers. reset reason: connection termination"),
    _f("envoy_timeout", "envoy", "timeout", ANY, S_ENVOY, "upstream request timeout"),
    _f("envoy_no_healthy", "envoy", "error", ANY, S_ENVOY, "no healthy upstream"),
    _f("haproxy_503", "haproxy", "error", ANY, S_HAPROXY,
       "<html><body><h1>503 Service Unavailable</h1>\nNo server is available to handle this request.\n</body></html>"),
    _f("haproxy_504", "haproxy", "timeout", ANY, S_HAPROXY,
       "<html><body><h1>504 Gateway Time-out</h1>\nThe server didn't respond in time.\n</body></html>"),
    _f("kong_rate", "kong", "rate_limit", ANY, S_KONG,
       '{"message": "API rate limit exceeded", "request_id": "{req}"}'),
    _f("kong_no_key", "kong", "auth", ANY, "https://docs.konghq.com/hub/kong-inc/key-auth/",
       '{"message": "No API key found in request", "request_id": "{req}"}'),
    _f("kong_dns", "kong", "connection", ANY, "https://docs.konghq.com/gateway/latest/reference/configuration/#dns_resolver",
       '{"message": "name resolution failed", "request_id": "{req}"}'),
    _f("apigw_timeout", "aws_api_gateway", "timeout", ANY, S_APIGW,
       '{"message": "Endpoint request timed out"}'),
    _f("apigw_missing_token", "aws_api_gateway", "auth", ANY, S_APIGW,
       '{"message": "Missing Authentication Token"}'),
    _f("apigw_throttled", "aws_api_gateway", "rate_limit", ANY, S_APIGW,
       '{"message": "Too Many Requests"}'),
    # --- container runtimes and orchestrators ---------------------------------------------------
    _f("docker_no_container", "docker", "not_found", SHIP, S_DOCKER,
       "Error response from daemon: No such container: label-printer-7f9c"),
    _f("docker_oci", "docker", "error", SHIP, S_DOCKER,
       'Error response from daemon: failed to create task for container: failed to create shim task: OCI runtime create '
       'failed: runc create failed: unable to start container process: exec: "/usr/local/bin/print-label": permission denied: unknown'),
    _f("k8s_forbidden", "kubernetes", "auth", SHIP, S_K8S,
       '{"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure", "message": "jobs.batch is forbidden: User '
       '\\"system:serviceaccount:shop:fulfilment\\" cannot create resource \\"jobs\\" in API group \\"batch\\" in the namespace '
       '\\"shipping\\"", "reason": "Forbidden", "details": {"group": "batch", "kind": "jobs"}, "code": 403}'),
    _f("k8s_not_found", "kubernetes", "not_found", SHIP, S_K8S,
       '{"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure", "message": "configmaps \\"carrier-routing\\" '
       'not found", "reason": "NotFound", "details": {"name": "carrier-routing", "kind": "configmaps"}, "code": 404}'),
    _f("k8s_timeout", "kubernetes", "timeout", SHIP, S_K8S,
       '{"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure", "message": "Timeout: request did not '
       'complete within requested timeout - context deadline exceeded", "reason": "Timeout", "details": {}, "code": 504}'),
    _f("k8s_too_many", "kubernetes", "rate_limit", SHIP, S_K8S,
       '{"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure", "message": "Too many requests, please try '
       'again later.", "reason": "TooManyRequests", "details": {"retryAfterSeconds": 1}, "code": 429}'),
    _f("k8s_invalid", "kubernetes", "invalid_request", SHIP, S_K8S,
       '{"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure", "message": "Job.batch \\"label-{order_id}\\" '
       'is invalid: metadata.name: Invalid value: \\"label-{order_id}\\": a lowercase RFC 1123 subdomain must consist of lower '
       'case alphanumeric characters", "reason": "Invalid", "details": {}, "code": 422}'),
    # --- RPC -------------------------------------------------------------------------------------
    _f("grpc_unavailable", "grpc", "connection", ANY, S_GRPC,
       '<_InactiveRpcError of RPC that terminated with:\n\tstatus = StatusCode.UNAVAILABLE\n\tdetails = "failed to connect to all '
       'addresses; last error: UNKNOWN: ipv4:10.20.3.9:50051: Failed to connect to remote host: Connection refused"\n>'),
    _f("grpc_deadline", "grpc", "timeout", ANY, S_GRPC,
       '<_InactiveRpcError of RPC that terminated with:\n\tstatus = StatusCode.DEADLINE_EXCEEDED\n\tdetails = "Deadline Exceeded"\n>'),
    _f("grpc_exhausted", "grpc", "rate_limit", ANY, S_GRPC,
       '<_InactiveRpcError of RPC that terminated with:\n\tstatus = StatusCode.RESOURCE_EXHAUSTED\n\tdetails = "Quota exceeded for '
       'quota metric \'Requests\' and limit \'Requests per minute\'"\n>'),
    _f("grpc_permission", "grpc", "auth", ANY, S_GRPC,
       '<_InactiveRpcError of RPC that terminated with:\n\tstatus = StatusCode.PERMISSION_DENIED\n\tdetails = "caller does not have '
       'permission inventory.reservations.create"\n>'),
    _f("grpc_internal", "grpc", "error", ANY, S_GRPC,
       '<_InactiveRpcError of RPC that terminated with:\n\tstatus = StatusCode.INTERNAL\n\tdetails = "Received RST_STREAM with '
       'error code 2"\n>'),
    _f("grpc_invalid", "grpc", "invalid_request", ANY, S_GRPC,
       '<_InactiveRpcError of RPC that terminated with:\n\tstatus = StatusCode.INVALID_ARGUMENT\n\tdetails = "quantity must be '
       'positive"\n>'),
    _f("jsonrpc_invalid_params", "jsonrpc", "invalid_request", ANY, S_JSONRPC,
       '{"jsonrpc": "2.0", "error": {"code": -32602, "message": "Invalid params", "data": "missing field `warehouse_id`"}, "id": 7}'),
    _f("jsonrpc_internal", "jsonrpc", "error", ANY, S_JSONRPC,
       '{"jsonrpc": "2.0", "error": {"code": -32603, "message": "Internal error"}, "id": 7}'),
    _f("mcp_is_error", "mcp", "error", ANY, S_MCP,
       '{"content": [{"type": "text", "text": "Failed to fetch data: upstream service raised an unhandled exception"}], "isError": true}'),
    # --- caches and language runtimes ------------------------------------------------------------
    _f("redis_conn", "redis", "connection", DB, S_REDIS,
       "redis.exceptions.ConnectionError: Error 111 connecting to cache-0.shop.svc:6379. Connection refused."),
    _f("redis_timeout", "redis", "timeout", DB, S_REDIS, "redis.exceptions.TimeoutError: Timeout reading from socket"),
    _f("redis_noauth", "redis", "auth", DB, S_REDIS, "redis.exceptions.AuthenticationError: NOAUTH Authentication required."),
    _f("redis_oom", "redis", "error", DB, S_REDIS,
       "redis.exceptions.OutOfMemoryError: OOM command not allowed when used memory > 'maxmemory'."),
    _f("py_conn_reset", "python_runtime", "connection", ANY, S_PYEXC,
       "Traceback (most recent call last):\n  File \"/srv/shop/clients/http.py\", line 41, in call\n    resp = conn.getresponse()\n"
       "ConnectionResetError: [Errno 104] Connection reset by peer"),
    _f("py_gaierror", "python_runtime", "connection", ANY, S_PYEXC,
       "socket.gaierror: [Errno -2] Name or service not known"),
    _f("py_keyerror", "python_runtime", "error", ANY, S_PYEXC,
       "Traceback (most recent call last):\n  File \"/srv/shop/tools/handlers.py\", line 112, in handle\n    wh = routing[line['sku']]\n"
       "KeyError: 'warehouse_id'"),
    _f("py_permission", "python_runtime", "auth", SHIP, S_PYEXC,
       "PermissionError: [Errno 13] Permission denied: '/var/spool/labels/{order_id}.pdf'"),
    _f("requests_read_timeout", "python_requests", "timeout", ANY, S_REQUESTS,
       "requests.exceptions.ReadTimeout: HTTPSConnectionPool(host='api.shop-backend.internal', port=443): Read timed out. (read timeout=10)"),
    _f("requests_conn", "python_requests", "connection", ANY, S_REQUESTS,
       "requests.exceptions.ConnectionError: HTTPSConnectionPool(host='api.shop-backend.internal', port=443): Max retries exceeded "
       "with url: /v2/stock (Caused by NewConnectionError('<urllib3.connection.HTTPSConnection object at 0x7f3a2c1e5d50>: "
       "Failed to establish a new connection: [Errno 111] Connection refused'))"),
    _f("java_socket_timeout", "jvm", "timeout", ANY, S_JAVA,
       "java.net.SocketTimeoutException: Read timed out\n\tat java.base/sun.nio.ch.NioSocketImpl.timedRead(NioSocketImpl.java:288)\n"
       "\tat java.base/sun.nio.ch.NioSocketImpl.implRead(NioSocketImpl.java:314)"),
    _f("java_conn_refused", "jvm", "connection", ANY, "https://docs.oracle.com/en/java/javase/21/docs/api/java.base/java/net/ConnectException.html",
       "java.net.ConnectException: Connection refused\n\tat java.base/sun.nio.ch.Net.pollConnect(Native Method)"),
    _f("java_npe", "jvm", "error", ANY, "https://docs.oracle.com/en/java/javase/21/docs/api/java.base/java/lang/NullPointerException.html",
       "java.lang.NullPointerException: Cannot invoke \"com.shop.stock.Level.getAvailable()\" because \"level\" is null\n"
       "\tat com.shop.stock.StockService.lookup(StockService.java:57)"),
    _f("go_deadline", "go_runtime", "timeout", ANY, S_GO,
       'Get "http://inventory.shop.svc:8080/v1/levels": context deadline exceeded (Client.Timeout exceeded while awaiting headers)'),
    _f("go_refused", "go_runtime", "connection", ANY, "https://pkg.go.dev/syscall#ECONNREFUSED",
       'Post "http://payments.shop.svc:8080/v1/charges": dial tcp 10.20.3.14:8080: connect: connection refused'),
    _f("node_econnrefused", "node_runtime", "connection", ANY, S_NODE,
       "Error: connect ECONNREFUSED 10.20.3.21:443\n    at TCPConnectWrap.afterConnect [as oncomplete] (node:net:1595:16)"),
    _f("node_etimedout", "node_runtime", "timeout", ANY, S_NODE,
       "Error: connect ETIMEDOUT 10.20.3.21:443\n    at TCPConnectWrap.afterConnect [as oncomplete] (node:net:1595:16)"),
    _f("node_enotfound", "node_runtime", "connection", ANY, S_NODE,
       "Error: getaddrinfo ENOTFOUND inventory.shop.internal\n    at GetAddrInfoReqWrap.onlookup [as oncomplete] (node:dns:107:26)"),
    # --- email and messaging providers ----------------------------------------------------------
    _f("sendgrid_auth", "sendgrid", "auth", MAIL, S_SENDGRID,
       '{"errors": [{"message": "The provided authorization grant is invalid, expired, or revoked", "field": null, "help": null}]}'),
    _f("sendgrid_rate", "sendgrid", "rate_limit", MAIL, S_SENDGRID,
       '{"errors": [{"field": null, "message": "too many requests"}]}'),
    _f("mailgun_domain", "mailgun", "not_found", MAIL, S_MAILGUN, '{"message": "Domain not found: mg.shop.example"}'),
    _f("postmark_invalid_to", "postmark", "invalid_request", MAIL, S_POSTMARK,
       '{"ErrorCode": 300, "Message": "Invalid \'To\' address: \'{email}\'."}'),
    _f("ses_throttle", "aws_ses", "rate_limit", MAIL, S_SES,
       "botocore.exceptions.ClientError: An error occurred (Throttling) when calling the SendEmail operation: Maximum sending rate exceeded."),
    _f("smtp_550", "smtp", "not_found", MAIL, S_SMTP,
       "smtplib.SMTPRecipientsRefused: {'{email}': (550, b'5.1.1 The email account that you tried to reach does not exist.')}"),
    _f("smtp_535", "smtp", "auth", MAIL, S_SMTP,
       "smtplib.SMTPAuthenticationError: (535, b'5.7.8 Username and Password not accepted.')"),
    _f("twilio_rate", "twilio", "rate_limit", MAIL, S_TWILIO,
       '{"code": 20429, "message": "Too Many Requests", "more_info": "https://www.twilio.com/docs/errors/20429", "status": 429}'),
    _f("twilio_auth", "twilio", "auth", MAIL, S_TWILIO,
       '{"code": 20003, "message": "Authenticate", "more_info": "https://www.twilio.com/docs/errors/20003", "status": 401}'),
    # --- shipping carriers -----------------------------------------------------------------------
    _f("easypost_address", "easypost", "invalid_request", SHIP, S_EASYPOST,
       '{"error": {"code": "ADDRESS.VERIFY.FAILURE", "message": "Unable to verify address.", "errors": [{"field": "address", '
       '"message": "Address not found"}]}}'),
    _f("easypost_rate", "easypost", "rate_limit", SHIP, S_EASYPOST,
       '{"error": {"code": "RATE_LIMITED", "message": "You have exceeded the rate limit. Please try again later.", "errors": []}}'),
    _f("shipengine_carrier", "shipengine", "error", SHIP, S_SHIPENGINE,
       '{"request_id": "{req}", "errors": [{"error_source": "carrier", "error_type": "system", "error_code": "unspecified", '
       '"message": "The carrier returned an unexpected error. Please try again later."}]}'),
    _f("shipengine_timeout", "shipengine", "timeout", SHIP, S_SHIPENGINE,
       '{"request_id": "{req}", "errors": [{"error_source": "carrier", "error_type": "system", "error_code": "timeout", '
       '"message": "The request to the carrier timed out."}]}'),
    # --- SOAP and legacy ERP ---------------------------------------------------------------------
    _f("soap_server", "soap", "error", ("check_stock", "reserve_stock"), S_SOAP,
       '<?xml version="1.0" encoding="utf-8"?><soap:Envelope xmlns:soap="http://schemas.xmlsoap.org/soap/envelope/"><soap:Body>'
       '<soap:Fault><faultcode>soap:Server</faultcode><faultstring>Server was unable to process request. ---&gt; Object reference '
       'not set to an instance of an object.</faultstring><detail /></soap:Fault></soap:Body></soap:Envelope>'),
    _f("soap_client", "soap", "invalid_request", ("check_stock", "reserve_stock"), S_SOAP,
       '<?xml version="1.0" encoding="utf-8"?><soap:Envelope xmlns:soap="http://schemas.xmlsoap.org/soap/envelope/"><soap:Body>'
       '<soap:Fault><faultcode>soap:Client</faultcode><faultstring>Validation error: element \'ItemNumber\' value \'{sku}\' does not '
       'match pattern [0-9]{8}</faultstring></soap:Fault></soap:Body></soap:Envelope>'),
    _f("http_status_line_429", "http_text", "rate_limit", ANY, S_RFC9110,
       "HTTP/1.1 429 Too Many Requests\nRetry-After: 30\nContent-Type: text/plain\n\nrate limit exceeded, retry later"),
    _f("http_status_line_404", "http_text", "not_found", ("get_order", "get_customer"), S_RFC9110,
       "404 Not Found: the requested URL /api/v2/orders/{order_id} was not found on this server."),
    # --- data faults: the answer is delivered, but what it says is wrong --------------------------
    _f("empty_object", "empty_result", "empty", READ, S_STUDY, "{}", kind="literal"),
    _f("empty_array", "empty_result", "empty", READ, S_STUDY, "[]", kind="literal"),
    _f("empty_string", "empty_result", "empty", READ, S_STUDY, "", kind="literal"),
    _f("empty_null", "empty_result", "empty", READ, S_STUDY, "null", kind="literal"),
    _f("json_cut_half", "broken_json", "malformed_json", READ, S_STUDY, "cut:0.5", kind="data"),
    _f("json_cut_late", "broken_json", "malformed_json", READ, S_STUDY, "cut:0.9", kind="data"),
    _f("json_cut_after_colon", "broken_json", "malformed_json", READ, S_STUDY, "cut_colon", kind="data"),
    _f("json_unbalanced", "broken_json", "malformed_json", READ, S_STUDY, "unbalanced", kind="data"),
    _f("partial_flag", "partial_result", "truncated", ("get_order", "list_orders"), S_GQLSPEC, "partial_flag", kind="data"),
    _f("es_timed_out_hits", "partial_result", "truncated", ("list_orders",), S_ES, "es_partial", kind="data"),
    _f("github_incomplete", "partial_result", "truncated", ("list_orders",), S_GHSEARCH, "incomplete_results", kind="data"),
    _f("array_halved", "partial_result", "truncated", ("get_order", "list_orders"), S_STUDY, "halve", kind="data"),
    _f("rename_camel", "key_rename", "key_rename", ("get_order", "list_orders"), S_STUDY, "camel", kind="data"),
    _f("rename_legacy", "key_rename", "key_rename", READ, S_STUDY, "legacy", kind="data"),
    _f("numbers_as_strings", "key_rename", "key_rename", ("get_order", "check_stock"), S_STUDY, "stringify", kind="data"),
    _f("price_shifted", "wrong_value", "wrong_value", ("get_order",), S_STUDY, "price_shift", kind="data"),
    _f("qty_shifted", "wrong_value", "wrong_value", ("get_order",), S_STUDY, "qty_shift", kind="data"),
    _f("stock_stale", "wrong_value", "wrong_value", ("check_stock",), S_STUDY, "stock_low", kind="data"),
    _f("email_wrong_entity", "wrong_value", "wrong_value", ("get_customer",), S_STUDY, "other_email", kind="data"),
    _f("tracking_swapped", "wrong_value", "wrong_value", ("create_shipment",), S_STUDY, "tracking_swap", kind="data"),
    _f("order_id_neighbour", "wrong_value", "wrong_value", ("list_orders",), S_STUDY, "neighbour_id", kind="data"),
)
