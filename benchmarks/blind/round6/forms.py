# ruff: noqa: E501  (error texts are quoted as the systems publish them, one per line)
"""The failure forms of round 6: how real systems answer when they fail, each with its public source.

A form is one published way of failing (an error body, a status line, a reply shape, a stream that
stops) and the taxonomy label its meaning takes. Tool forms are shown to the agent by the tool
wrappers (local tools) or by the MCP server (MCP tools); LLM forms are played by the loopback
OpenAI-compatible server. Error texts are filled from templates with deterministic values.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

# Which tools a tool form may hit, by the system that would sit behind the tool.
FLIGHTS = ("search_flights", "get_fare_rules", "hold_seat", "rebook_flight")
PROFILE = ("get_traveller", "get_fare_rules")
HOTEL = ("find_hotels",)
GROUND = ("book_ground",)
PAY = ("issue_refund",)
NOTIFY = ("notify_traveller",)
ANY = ("search_flights", "get_fare_rules", "hold_seat", "rebook_flight", "get_traveller", "find_hotels",
       "book_ground", "issue_refund", "notify_traveller")
MCP_TOOLS = ("get_traveller", "get_fare_rules", "hold_seat", "rebook_flight")


@dataclass(frozen=True)
class Form:
    """One failure form: where it hits, what the agent is shown, what it means."""

    name: str
    family: str
    label: str
    side: str                      # "llm" or "tool"
    kind: str                      # tool: error | raise | data ; llm: see server.py
    source: str
    text: str = ""                 # tool error text / llm body template
    tools: tuple[str, ...] = ()    # tool forms: which tools it fits
    status: int = 200              # llm http forms
    headers: tuple[tuple[str, str], ...] = ()
    provider: str = ""             # llm forms: the provider whose wording it is
    extra: dict[str, Any] = field(default_factory=dict)


def _t(name: str, family: str, label: str, tools: tuple[str, ...], text: str, source: str,
       kind: str = "error", **extra: Any) -> Form:
    return Form(name, family, label, "tool", kind, source, text=text, tools=tools, extra=extra)


def _l(name: str, family: str, label: str, provider: str, kind: str, source: str, text: str = "",
       status: int = 200, headers: tuple[tuple[str, str], ...] = (), **extra: Any) -> Form:
    return Form(name, family, label, "llm", kind, source, text=text, status=status, headers=headers,
                provider=provider, extra=extra)


AMADEUS = "https://developers.amadeus.com/self-service/apis-docs/guides/permissions-and-errors-744"
DUFFEL = "https://duffel.com/docs/api/overview/errors"
SABRE = "https://developer.sabre.com/guides/travel-agency/developer-guides/rest-apis-error-handling"
TRAVELPORT = "https://support.travelport.com/webhelp/uapi/Content/Getting_Started/Design_and_Development/Error_Handling.htm"
EXPEDIA = "https://developers.expediagroup.com/docs/products/rapid/resources/reference/errors"
HOTELBEDS = "https://developer.hotelbeds.com/documentation/getting-started/#errors"
BOOKING = "https://developers.booking.com/demand/docs/development-guide/error-handling"
GMAPS = "https://developers.google.com/maps/documentation/directions/get-directions#DirectionsStatus"
MAPBOX = "https://docs.mapbox.com/api/navigation/directions/#directions-api-errors"
HERE = "https://www.here.com/docs/bundle/routing-api-developer-guide-v8/page/topics/troubleshooting.html"
BRAINTREE = "https://developer.paypal.com/braintree/docs/reference/general/validation-errors/all/ruby"
BRAINTREE_EXC = "https://developer.paypal.com/braintree/docs/reference/general/exceptions/ruby"
CHECKOUT = "https://www.checkout.com/docs/developer-resources/codes/api-response-codes"
WORLDPAY = "https://developer.worldpay.com/products/access/reference/errors"
SQUARE = "https://developer.squareup.com/docs/build-basics/handling-errors"
MYSQL = "https://dev.mysql.com/doc/mysql-errors/8.0/en/server-error-reference.html"
MYSQL_CLIENT = "https://dev.mysql.com/doc/mysql-errors/8.0/en/client-error-reference.html"
MARIADB = "https://mariadb.com/kb/en/mariadb-error-code-reference/"
ORACLE = "https://docs.oracle.com/en/error-help/db/"
MSSQL = "https://learn.microsoft.com/en-us/sql/relational-databases/errors-events/database-engine-events-and-errors"
REDIS = "https://redis.io/docs/latest/develop/reference/protocol-spec/#simple-errors"
MEMCACHED = "https://github.com/memcached/memcached/blob/master/doc/protocol.txt"
COSMOS = "https://learn.microsoft.com/en-us/rest/api/cosmos-db/http-status-codes-for-cosmosdb"
FIRESTORE = "https://firebase.google.com/docs/firestore/understand-reads-writes-scale#error_codes"
POSTGREST = "https://docs.postgrest.org/en/stable/references/errors.html"
SUPABASE = "https://supabase.com/docs/guides/api/rest/postgrest-error-codes"
HASURA = "https://hasura.io/docs/2.0/api-reference/graphql-api/overview/#error-codes"
LAMBDA = "https://docs.aws.amazon.com/lambda/latest/api/API_Invoke.html#API_Invoke_Errors"
LAMBDA_ERR = "https://docs.aws.amazon.com/lambda/latest/dg/python-exceptions.html"
AZFUNC = "https://learn.microsoft.com/en-us/azure/azure-functions/functions-host-json#functiontimeout"
CLOUDRUN = "https://cloud.google.com/run/docs/troubleshooting"
CELERY = "https://docs.celeryq.dev/en/stable/reference/celery.exceptions.html"
SIDEKIQ = "https://github.com/sidekiq/sidekiq/wiki/Error-Handling"
TEMPORAL = "https://docs.temporal.io/references/failures"
AKAMAI = "https://techdocs.akamai.com/property-mgr/docs/reference-numbers"
CADDY = "https://caddyserver.com/docs/caddyfile/directives/reverse_proxy"
TRAEFIK = "https://doc.traefik.io/traefik/routing/services/"
VERCEL = "https://vercel.com/docs/errors"
NETLIFY = "https://docs.netlify.com/functions/overview/#default-deployment-options"
FLY = "https://fly.io/docs/networking/troubleshooting/"
RUBY_NETHTTP = "https://docs.ruby-lang.org/en/master/Net/ReadTimeout.html"
FARADAY = "https://lostisland.github.io/faraday/#/middleware/included/raising-errors"
ERLANG = "https://www.erlang.org/doc/apps/kernel/inet.html#module-posix-error-codes"
MINT = "https://hexdocs.pm/mint/Mint.TransportError.html"
URLSESSION = "https://developer.apple.com/documentation/foundation/1508628-url_loading_system_error_codes"
KTOR = "https://ktor.io/docs/client-timeout.html"
KTOR_RESP = "https://ktor.io/docs/client-response-validation.html"
LWP = "https://metacpan.org/pod/LWP::UserAgent"
CURL = "https://curl.se/libcurl/c/libcurl-errors.html"
VONAGE = "https://developer.vonage.com/en/messaging/sms/guides/troubleshooting-sms#sms-api-error-codes"
MESSAGEBIRD = "https://developers.messagebird.com/api/#api-errors"
POSTMARK = "https://postmarkapp.com/developer/api/overview#error-codes"
APNS = "https://developer.apple.com/documentation/usernotifications/handling-notification-responses-from-apns"
FCM = "https://firebase.google.com/docs/reference/fcm/rest/v1/ErrorCode"

TOOL_ERRORS: list[Form] = [
    # travel APIs
    _t("amadeus_38194_rate", "travel_api_amadeus", "rate_limit", FLIGHTS,
       '{"errors":[{"status":429,"code":38194,"title":"Too many requests","detail":"The network rate limit is exceeded, please try again later"}]}', AMADEUS),
    _t("amadeus_38190_token", "travel_api_amadeus", "auth", FLIGHTS,
       '{"errors":[{"status":401,"code":38190,"title":"Invalid access token","detail":"The access token provided in the Authorization header is invalid"}]}', AMADEUS),
    _t("amadeus_141_system", "travel_api_amadeus", "error", FLIGHTS,
       '{"errors":[{"status":500,"code":141,"title":"SYSTEM ERROR HAS OCCURRED","detail":"ORIGIN SYSTEM ERROR"}]}', AMADEUS),
    _t("amadeus_477_format", "travel_api_amadeus", "invalid_request", FLIGHTS,
       '{"errors":[{"status":400,"code":477,"title":"INVALID FORMAT","detail":"invalid query parameter format","source":{"parameter":"departureDate","example":"2026-12-24"}}]}', AMADEUS),
    _t("amadeus_1797_notfound", "travel_api_amadeus", "not_found", FLIGHTS,
       '{"errors":[{"status":404,"code":1797,"title":"NOT FOUND","detail":"no response found for this query parameter"}]}', AMADEUS),
    _t("amadeus_38189_internal", "travel_api_amadeus", "error", FLIGHTS,
       '{"errors":[{"status":500,"code":38189,"title":"Internal error","detail":"An internal error occurred, please contact your administrator"}]}', AMADEUS),
    _t("duffel_rate_limit", "travel_api_duffel", "rate_limit", FLIGHTS,
       '{"meta":{"status":429,"request_id":"{rid}"},"errors":[{"type":"rate_limit_error","title":"Rate limit exceeded","message":"You have exceeded the rate limit for this endpoint.","code":"rate_limit_exceeded","documentation_url":"https://duffel.com/docs/api/overview/errors"}]}', DUFFEL),
    _t("duffel_offer_gone", "travel_api_duffel", "invalid_request", FLIGHTS,
       '{"meta":{"status":422,"request_id":"{rid}"},"errors":[{"type":"invalid_state_error","title":"Offer no longer available","message":"The requested offer is no longer available, please select another offer.","code":"offer_no_longer_available"}]}', DUFFEL),
    _t("duffel_airline_error", "travel_api_duffel", "error", FLIGHTS,
       '{"meta":{"status":502,"request_id":"{rid}"},"errors":[{"type":"airline_error","title":"There was a problem communicating with the airline","message":"The airline responded with an unexpected error, please try again.","code":"airline_unknown"}]}', DUFFEL),
    _t("duffel_not_found", "travel_api_duffel", "not_found", FLIGHTS,
       '{"meta":{"status":404,"request_id":"{rid}"},"errors":[{"type":"invalid_request_error","title":"Not found","message":"The resource you are trying to access does not exist.","code":"not_found"}]}', DUFFEL),
    _t("duffel_unauthorized", "travel_api_duffel", "auth", FLIGHTS,
       '{"meta":{"status":401,"request_id":"{rid}"},"errors":[{"type":"authentication_error","title":"Invalid authorization header","message":"The Authorization header is not a valid access token.","code":"invalid_authorization_header"}]}', DUFFEL),
    _t("duffel_validation", "travel_api_duffel", "invalid_request", FLIGHTS,
       '{"meta":{"status":422,"request_id":"{rid}"},"errors":[{"type":"validation_error","title":"Field is invalid","message":"must be a valid IATA code","code":"invalid","source":{"field":"destination","pointer":"/slices/0/destination"}}]}', DUFFEL),
    _t("sabre_credentials", "travel_api_sabre", "auth", FLIGHTS,
       '{"status":"NotProcessed","type":"Validation","errorCode":"ERR.2SG.SEC.INVALID_CREDENTIALS","timeStamp":"2026-12-05T21:40:00.000Z","message":"Wrong clientID or clientSecret"}', SABRE),
    _t("sabre_provider_timeout", "travel_api_sabre", "timeout", FLIGHTS,
       '{"status":"Incomplete","type":"Application","errorCode":"ERR.SWS.PROVIDER.TIMEOUT","timeStamp":"2026-12-05T21:40:00.000Z","message":"Provider timed out processing the request"}', SABRE),
    _t("sabre_rate_exceeded", "travel_api_sabre", "rate_limit", FLIGHTS,
       '{"status":"NotProcessed","type":"Application","errorCode":"ERR.2SG.RATE_LIMIT_EXCEEDED","message":"Rate limit exceeded for the requested resource"}', SABRE),
    _t("travelport_no_availability", "travel_api_travelport", "not_found", FLIGHTS,
       '<SOAP:Envelope xmlns:SOAP="http://schemas.xmlsoap.org/soap/envelope/"><SOAP:Body><SOAP:Fault><faultcode>Server.Business</faultcode><faultstring>NO AVAILABILITY FOR THIS REQUEST</faultstring><detail><common_v52_0:ErrorInfo xmlns:common_v52_0="http://www.travelport.com/schema/common_v52_0"><common_v52_0:Code>3000</common_v52_0:Code><common_v52_0:Service>AIRSVC</common_v52_0:Service><common_v52_0:Type>Business</common_v52_0:Type><common_v52_0:Description>NO AVAILABILITY FOR THIS REQUEST</common_v52_0:Description></common_v52_0:ErrorInfo></detail></SOAP:Fault></SOAP:Body></SOAP:Envelope>', TRAVELPORT),
    _t("travelport_security", "travel_api_travelport", "auth", FLIGHTS,
       '<SOAP:Envelope xmlns:SOAP="http://schemas.xmlsoap.org/soap/envelope/"><SOAP:Body><SOAP:Fault><faultcode>Server.Security</faultcode><faultstring>Authentication failed: invalid credentials for target branch</faultstring></SOAP:Fault></SOAP:Body></SOAP:Envelope>', TRAVELPORT),
    _t("travelport_system", "travel_api_travelport", "error", FLIGHTS,
       '<SOAP:Envelope xmlns:SOAP="http://schemas.xmlsoap.org/soap/envelope/"><SOAP:Body><SOAP:Fault><faultcode>Server.System</faultcode><faultstring>Transaction Error: AppErrorSeverityLevel/1</faultstring></SOAP:Fault></SOAP:Body></SOAP:Envelope>', TRAVELPORT),
    _t("expedia_unauthenticated", "travel_api_expedia", "auth", HOTEL,
       '{"type":"request_unauthenticated","message":"Data required to authenticate your request is missing or inaccurate. Ensure that your request follows the guidelines in our documentation."}', EXPEDIA),
    _t("expedia_unavailable", "travel_api_expedia", "error", HOTEL,
       '{"type":"service_unavailable","message":"This service is currently unavailable."}', EXPEDIA),
    _t("expedia_invalid_input", "travel_api_expedia", "invalid_request", HOTEL,
       '{"type":"invalid_input","message":"An invalid request was sent in, please check the nested errors for details.","errors":[{"type":"checkin.invalid_date_too_far_past","message":"Checkin cannot be in the past.","fields":[{"name":"checkin","type":"querystring","value":"{date}"}]}]}', EXPEDIA),
    _t("expedia_not_found", "travel_api_expedia", "not_found", HOTEL,
       '{"type":"resource.not_found","message":"The requested resource could not be found."}', EXPEDIA),
    _t("hotelbeds_qps", "travel_api_hotelbeds", "rate_limit", HOTEL,
       '<h1>Developer Over Qps</h1>', HOTELBEDS),
    _t("hotelbeds_system", "travel_api_hotelbeds", "error", HOTEL,
       '{"auditData":{"processTime":"412","timestamp":"2026-12-05 21:40:00.112","requestHost":"10.0.4.12","serverId":"ip-10-185-86-93","environment":"[awseuwest1, awseuwest1a, ip_10_185_86_93]","release":"7a1d1e2b","token":"{rid}","internal":"0|0~~22008~0|0|0||0|0||0|0|0|0|0|0|0|0|0"},"error":{"code":"SYSTEM_ERROR","message":"An internal error has occurred, please try again later"}}', HOTELBEDS),
    _t("hotelbeds_invalid", "travel_api_hotelbeds", "invalid_request", HOTEL,
       '{"auditData":{"processTime":"3","timestamp":"2026-12-05 21:40:00.021","token":"{rid}"},"error":{"code":"INVALID_REQUEST","message":"The check-in date must be at least today"}}', HOTELBEDS),
    _t("booking_forbidden", "travel_api_booking", "auth", HOTEL,
       '{"request_id":"{rid}","errors":[{"id":"forbidden","message":"You do not have permission to access this endpoint."}]}', BOOKING),
    _t("booking_too_many", "travel_api_booking", "rate_limit", HOTEL,
       '{"request_id":"{rid}","errors":[{"id":"too_many_requests","message":"You have exceeded the number of requests allowed in the time window."}]}', BOOKING),
    # maps and places (ground transport)
    _t("gmaps_over_query_limit", "maps", "rate_limit", GROUND,
       '{"error_message":"You have exceeded your rate-limit for this API.","routes":[],"status":"OVER_QUERY_LIMIT"}', GMAPS),
    _t("gmaps_request_denied", "maps", "auth", GROUND,
       '{"error_message":"The provided API key is invalid.","routes":[],"status":"REQUEST_DENIED"}', GMAPS),
    _t("gmaps_not_found", "maps", "not_found", GROUND,
       '{"geocoded_waypoints":[{"geocoder_status":"ZERO_RESULTS"}],"routes":[],"status":"NOT_FOUND"}', GMAPS),
    _t("gmaps_invalid_request", "maps", "invalid_request", GROUND,
       '{"error_message":"Invalid request. Invalid \'departure_time\' parameter.","routes":[],"status":"INVALID_REQUEST"}', GMAPS),
    _t("gmaps_unknown_error", "maps", "error", GROUND,
       '{"routes":[],"status":"UNKNOWN_ERROR"}', GMAPS),
    _t("mapbox_invalid_token", "maps", "auth", GROUND,
       '{"message":"Not Authorized - Invalid Token"}', MAPBOX),
    _t("mapbox_no_route", "maps", "not_found", GROUND,
       '{"code":"NoRoute","message":"No route found","routes":[]}', MAPBOX),
    _t("mapbox_too_many", "maps", "rate_limit", GROUND,
       '{"message":"Too Many Requests"}', MAPBOX),
    _t("here_unauthorized", "maps", "auth", GROUND,
       '{"error":"Unauthorized","error_description":"No credentials found","title":"Unauthorized","status":401,"code":"E606101"}', HERE),
    _t("here_malformed", "maps", "invalid_request", GROUND,
       '{"title":"Malformed request","status":400,"code":"E605001","cause":"Error while parsing request: \'origin\': Invalid coordinates","action":"","correlationId":"{rid}"}', HERE),
    # payments (refunds)
    _t("braintree_not_settled", "payments_braintree", "invalid_request", PAY,
       'Braintree::ErrorResult: Cannot refund a transaction unless it is settled. (91506)', BRAINTREE),
    _t("braintree_service_unavailable", "payments_braintree", "error", PAY,
       'Braintree::ServiceUnavailableError: Braintree::ServiceUnavailableError', BRAINTREE_EXC),
    _t("braintree_authentication", "payments_braintree", "auth", PAY,
       'Braintree::AuthenticationError: Braintree::AuthenticationError', BRAINTREE_EXC),
    _t("braintree_too_many", "payments_braintree", "rate_limit", PAY,
       'Braintree::TooManyRequestsError: Braintree::TooManyRequestsError', BRAINTREE_EXC),
    _t("checkout_amount_invalid", "payments_checkout", "invalid_request", PAY,
       '{"request_id":"{rid}","error_type":"request_invalid","error_codes":["amount_invalid"]}', CHECKOUT),
    _t("checkout_refund_exceeds", "payments_checkout", "invalid_request", PAY,
       '{"request_id":"{rid}","error_type":"action_invalid","error_codes":["refund_amount_exceeds_balance"]}', CHECKOUT),
    _t("checkout_too_many", "payments_checkout", "rate_limit", PAY,
       '{"request_id":"{rid}","error_type":"too_many_requests","error_codes":["too_many_requests"]}', CHECKOUT),
    _t("worldpay_access_denied", "payments_worldpay", "auth", PAY,
       '{"errorName":"accessDenied","message":"Access to the requested resource has been denied"}', WORLDPAY),
    _t("worldpay_internal", "payments_worldpay", "error", PAY,
       '{"errorName":"internalErrorOccurred","message":"An internal error has occurred"}', WORLDPAY),
    _t("worldpay_not_found", "payments_worldpay", "not_found", PAY,
       '{"errorName":"entityNotFound","message":"The requested payment could not be found"}', WORLDPAY),
    _t("square_rate_limited", "payments_square", "rate_limit", PAY,
       '{"errors":[{"category":"RATE_LIMIT_ERROR","code":"RATE_LIMITED","detail":"Rate limited."}]}', SQUARE),
    _t("square_unauthorized", "payments_square", "auth", PAY,
       '{"errors":[{"category":"AUTHENTICATION_ERROR","code":"UNAUTHORIZED","detail":"This request could not be authorized."}]}', SQUARE),
    _t("square_internal", "payments_square", "error", PAY,
       '{"errors":[{"category":"API_ERROR","code":"INTERNAL_SERVER_ERROR","detail":"An internal error has occurred, and the API was unable to service your request."}]}', SQUARE),
    _t("square_not_found", "payments_square", "not_found", PAY,
       '{"errors":[{"category":"INVALID_REQUEST_ERROR","code":"NOT_FOUND","detail":"Could not find payment with id: {rid}"}]}', SQUARE),
    # data stores behind the profile and fare-rule services
    _t("mysql_1205_lock_wait", "datastore_mysql", "timeout", PROFILE,
       "ERROR 1205 (HY000): Lock wait timeout exceeded; try restarting transaction", MYSQL),
    _t("mysql_2013_lost", "datastore_mysql", "connection", PROFILE,
       "ERROR 2013 (HY000): Lost connection to MySQL server during query", MYSQL_CLIENT),
    _t("mysql_1045_denied", "datastore_mysql", "auth", PROFILE,
       "ERROR 1045 (28000): Access denied for user 'desk_ro'@'10.0.3.17' (using password: YES)", MYSQL),
    _t("mysql_1146_no_table", "datastore_mysql", "not_found", PROFILE,
       "ERROR 1146 (42S02): Table 'travel_desk.fare_rules_v2' doesn't exist", MYSQL),
    _t("mysql_1213_deadlock", "datastore_mysql", "error", PROFILE,
       "ERROR 1213 (40001): Deadlock found when trying to get lock; try restarting transaction", MYSQL),
    _t("mariadb_1927_killed", "datastore_mysql", "connection", PROFILE,
       "ERROR 1927 (70100): Connection was killed", MARIADB),
    _t("ora_12541_listener", "datastore_oracle", "connection", PROFILE,
       "ORA-12541: TNS:no listener", ORACLE),
    _t("ora_01017_logon", "datastore_oracle", "auth", PROFILE,
       "ORA-01017: invalid username/password; logon denied", ORACLE),
    _t("ora_00942_table", "datastore_oracle", "not_found", PROFILE,
       "ORA-00942: table or view does not exist", ORACLE),
    _t("ora_12170_connect_timeout", "datastore_oracle", "timeout", PROFILE,
       "ORA-12170: TNS:Connect timeout occurred", ORACLE),
    _t("ora_00060_deadlock", "datastore_oracle", "error", PROFILE,
       "ORA-00060: deadlock detected while waiting for resource", ORACLE),
    _t("mssql_1205_victim", "datastore_mssql", "error", PROFILE,
       "Msg 1205, Level 13, State 51, Line 1\nTransaction (Process ID 72) was deadlocked on lock resources with another process and has been chosen as the deadlock victim. Rerun the transaction.", MSSQL),
    _t("mssql_18456_login", "datastore_mssql", "auth", PROFILE,
       "Msg 18456, Level 14, State 1, Server DESKSQL01, Line 1\nLogin failed for user 'desk_app'.", MSSQL),
    _t("mssql_208_object", "datastore_mssql", "not_found", PROFILE,
       "Msg 208, Level 16, State 1, Line 1\nInvalid object name 'dbo.TravellerProfiles'.", MSSQL),
    _t("mssql_timeout_expired", "datastore_mssql", "timeout", PROFILE,
       "Execution Timeout Expired.  The timeout period elapsed prior to completion of the operation or the server is not responding.", MSSQL),
    _t("redis_loading", "datastore_redis", "error", PROFILE,
       "LOADING Redis is loading the dataset in memory", REDIS),
    _t("redis_noauth", "datastore_redis", "auth", PROFILE,
       "NOAUTH Authentication required.", REDIS),
    _t("redis_busy", "datastore_redis", "error", PROFILE,
       "BUSY Redis is busy running a script. You can only call SCRIPT KILL or SHUTDOWN NOSAVE.", REDIS),
    _t("redis_oom", "datastore_redis", "error", PROFILE,
       "OOM command not allowed when used memory > 'maxmemory'.", REDIS),
    _t("memcached_server_error", "datastore_memcached", "error", PROFILE,
       "SERVER_ERROR out of memory storing object", MEMCACHED),
    _t("cosmos_429", "datastore_cosmos", "rate_limit", PROFILE,
       '{"code":"TooManyRequests","message":"Message: {\\"Errors\\":[\\"Request rate is large. More Request Units may be needed, so no changes were made. Please retry this request later.\\"]}\\r\\nActivityId: {rid}, Request URI: /apps/desk/services/profiles, RequestStats: , SDK: Microsoft.Azure.Documents.Common/2.14.0"}', COSMOS),
    _t("cosmos_404", "datastore_cosmos", "not_found", PROFILE,
       '{"code":"NotFound","message":"Message: {\\"Errors\\":[\\"Resource Not Found. Learn more: https://aka.ms/cosmosdb-tsg-not-found\\"]}\\r\\nActivityId: {rid}"}', COSMOS),
    _t("cosmos_408", "datastore_cosmos", "timeout", PROFILE,
       '{"code":"RequestTimeout","message":"Message: {\\"Errors\\":[\\"The requested operation exceeded maximum alloted time.\\"]}\\r\\nActivityId: {rid}"}', COSMOS),
    _t("firestore_exhausted", "datastore_firestore", "rate_limit", PROFILE,
       '{"error":{"code":429,"message":"Quota exceeded.","status":"RESOURCE_EXHAUSTED"}}', FIRESTORE),
    _t("firestore_deadline", "datastore_firestore", "timeout", PROFILE,
       '{"error":{"code":504,"message":"Deadline exceeded.","status":"DEADLINE_EXCEEDED"}}', FIRESTORE),
    _t("firestore_permission", "datastore_firestore", "auth", PROFILE,
       '{"error":{"code":403,"message":"Missing or insufficient permissions.","status":"PERMISSION_DENIED"}}', FIRESTORE),
    _t("firestore_unavailable", "datastore_firestore", "error", PROFILE,
       '{"error":{"code":503,"message":"The service is currently unavailable.","status":"UNAVAILABLE"}}', FIRESTORE),
    _t("postgrest_pgrst116", "datastore_postgrest", "not_found", PROFILE,
       '{"code":"PGRST116","details":"The result contains 0 rows","hint":null,"message":"JSON object requested, multiple (or no) rows returned"}', POSTGREST),
    _t("postgrest_42501", "datastore_postgrest", "auth", PROFILE,
       '{"code":"42501","details":null,"hint":null,"message":"permission denied for table travellers"}', SUPABASE),
    _t("postgrest_jwt_expired", "datastore_postgrest", "auth", PROFILE,
       '{"code":"PGRST301","details":null,"hint":null,"message":"JWT expired"}', POSTGREST),
    _t("postgrest_57014", "datastore_postgrest", "timeout", PROFILE,
       '{"code":"57014","details":null,"hint":null,"message":"canceling statement due to statement timeout"}', SUPABASE),
    _t("postgrest_pgrst000", "datastore_postgrest", "connection", PROFILE,
       '{"code":"PGRST000","details":"connection to server at \\"db.internal\\" (10.0.2.9), port 5432 failed: Connection refused","hint":null,"message":"Database connection error. Retrying the connection."}', POSTGREST),
    _t("hasura_validation", "datastore_hasura", "invalid_request", PROFILE,
       '{"errors":[{"extensions":{"path":"$.selectionSet.travellers_by_pk","code":"validation-failed"},"message":"field \'travellers_by_pk\' not found in type: \'query_root\'"}]}', HASURA),
    _t("hasura_access_denied", "datastore_hasura", "auth", PROFILE,
       '{"errors":[{"extensions":{"path":"$","code":"access-denied"},"message":"authentication hook unauthorized this request"}]}', HASURA),
    _t("hasura_unexpected", "datastore_hasura", "error", PROFILE,
       '{"errors":[{"extensions":{"path":"$","code":"unexpected"},"message":"database query error"}]}', HASURA),
    # serverless and job runners behind the booking services
    _t("lambda_task_timed_out", "serverless_lambda", "timeout", FLIGHTS + NOTIFY,
       '{"errorMessage":"2026-12-05T21:40:03.512Z {rid} Task timed out after 3.00 seconds"}', LAMBDA_ERR),
    _t("lambda_runtime_exit", "serverless_lambda", "error", FLIGHTS + NOTIFY,
       '{"errorType":"Runtime.ExitError","errorMessage":"RequestId: {rid} Error: Runtime exited with error: signal: killed"}', LAMBDA_ERR),
    _t("lambda_too_many", "serverless_lambda", "rate_limit", FLIGHTS + NOTIFY,
       "TooManyRequestsException: An error occurred (TooManyRequestsException) when calling the Invoke operation (reached max retries: 4): Rate Exceeded.", LAMBDA),
    _t("lambda_keyerror", "serverless_lambda", "error", FLIGHTS + NOTIFY,
       '{"errorMessage":"\'segments\'","errorType":"KeyError","requestId":"{rid}","stackTrace":["  File \\"/var/task/handler.py\\", line 41, in lambda_handler\\n    seg = event[\\"segments\\"][0]\\n"]}', LAMBDA_ERR),
    _t("azfunc_timeout", "serverless_azure", "timeout", FLIGHTS + NOTIFY,
       "Microsoft.Azure.WebJobs.Host.FunctionTimeoutException: Timeout value of 00:05:00 exceeded by function 'Functions.SeatHold' (Id: '{rid}'). Initiating cancellation.", AZFUNC),
    _t("cloudrun_upstream_timeout", "serverless_cloudrun", "timeout", ANY,
       "upstream request timeout", CLOUDRUN),
    _t("cloudrun_rate_exceeded", "serverless_cloudrun", "rate_limit", ANY,
       "Rate exceeded.", CLOUDRUN),
    _t("celery_time_limit", "jobs_celery", "timeout", FLIGHTS + PAY + NOTIFY,
       "celery.exceptions.TimeLimitExceeded: TimeLimitExceeded(30,)", CELERY),
    _t("celery_kombu_refused", "jobs_celery", "connection", FLIGHTS + PAY + NOTIFY,
       "kombu.exceptions.OperationalError: [Errno 111] Connection refused", CELERY),
    _t("sidekiq_retry_exhausted", "jobs_sidekiq", "error", PAY + NOTIFY,
       "Sidekiq::JobRetry::Handled: RefundWorker failed: PG::ConnectionBad is retried; job jid={rid} moved to the Dead set after 25 retries", SIDEKIQ),
    _t("temporal_schedule_to_close", "jobs_temporal", "timeout", FLIGHTS + PAY,
       'ActivityError: activity error (type: RebookActivity, scheduledEventID: 11, startedEventID: 12, identity: desk-worker@1): activity ScheduleToClose timeout (type: ScheduleToClose)', TEMPORAL),
    _t("temporal_already_started", "jobs_temporal", "invalid_request", FLIGHTS + PAY,
       "WorkflowExecutionAlreadyStartedError: Workflow execution is already running. WorkflowId: refund-{rid}, RunId: 3b9c1a2e-8f1d-4c55-9e3a-0e6d7f1b2c44.", TEMPORAL),
    # edges and proxies in front of the services
    _t("akamai_access_denied", "edge_akamai", "auth", ANY,
       '<HTML><HEAD>\n<TITLE>Access Denied</TITLE>\n</HEAD><BODY>\n<H1>Access Denied</H1>\n \nYou don\'t have permission to access "http&#58;&#47;&#47;api&#46;desk&#46;example&#47;v2&#47;" on this server.<P>\nReference&#32;&#35;18&#46;6b3c2e17&#46;1765000800&#46;2d4f0a1\n</BODY>\n</HTML>', AKAMAI),
    _t("akamai_error_reference", "edge_akamai", "error", ANY,
       '<HTML><HEAD><TITLE>Error</TITLE></HEAD><BODY>\nAn error occurred while processing your request.<p>\nReference&#32;&#35;97&#46;4c1e2f17&#46;1765000800&#46;9a0b1c2\n</BODY></HTML>', AKAMAI),
    _t("caddy_dial_refused", "edge_caddy", "connection", ANY,
       "502 Bad Gateway: dial tcp 127.0.0.1:9081: connect: connection refused", CADDY),
    _t("traefik_bad_gateway", "edge_traefik", "error", ANY, "Bad Gateway", TRAEFIK),
    _t("traefik_gateway_timeout", "edge_traefik", "timeout", ANY, "Gateway Timeout", TRAEFIK),
    _t("vercel_invocation_timeout", "edge_vercel", "timeout", ANY,
       "An error occurred with your deployment\n\nFUNCTION_INVOCATION_TIMEOUT\n\ncdg1::{rid}", VERCEL),
    _t("vercel_invocation_failed", "edge_vercel", "error", ANY,
       "A server error has occurred\n\nFUNCTION_INVOCATION_FAILED\n\ncdg1::{rid}", VERCEL),
    _t("vercel_deployment_not_found", "edge_vercel", "not_found", ANY,
       "The deployment could not be found on Vercel.\n\nDEPLOYMENT_NOT_FOUND\n\ncdg1::{rid}", VERCEL),
    _t("netlify_task_timeout", "edge_netlify", "timeout", ANY,
       '{"errorMessage":"Task timed out after 10.00 seconds","errorType":"TimeoutError"}', NETLIFY),
    _t("fly_no_candidate", "edge_fly", "error", ANY,
       "could not find a good candidate within 90 attempts at load balancing", FLY),
    _t("fly_instance_refused", "edge_fly", "connection", ANY,
       "[PR04] could not proxy TCP data to/from instance: failed to copy (direction=server->client, error=Connection reset by peer (os error 104))", FLY),
    # language runtimes and HTTP clients inside the tool services
    _t("ruby_net_read_timeout", "runtime_ruby", "timeout", ANY,
       "Net::ReadTimeout with #<TCPSocket:(closed)>", RUBY_NETHTTP),
    _t("faraday_connection_failed", "runtime_ruby", "connection", ANY,
       "Faraday::ConnectionFailed: Failed to open TCP connection to fares.internal:443 (Connection refused - connect(2) for \"fares.internal\" port 443)", FARADAY),
    _t("faraday_too_many", "runtime_ruby", "rate_limit", ANY,
       "Faraday::TooManyRequestsError: the server responded with status 429", FARADAY),
    _t("faraday_unauthorized", "runtime_ruby", "auth", ANY,
       "Faraday::UnauthorizedError: the server responded with status 401", FARADAY),
    _t("faraday_resource_not_found", "runtime_ruby", "not_found", ANY,
       "Faraday::ResourceNotFound: the server responded with status 404", FARADAY),
    _t("erlang_econnrefused", "runtime_erlang", "connection", ANY, "{error,econnrefused}", ERLANG),
    _t("erlang_timeout", "runtime_erlang", "timeout", ANY, "{error,timeout}", ERLANG),
    _t("erlang_nxdomain", "runtime_erlang", "connection", ANY, "{error,nxdomain}", ERLANG),
    _t("mint_closed", "runtime_erlang", "connection", ANY,
       "** (Mint.TransportError) socket closed", MINT),
    _t("urlsession_timed_out", "runtime_swift", "timeout", ANY,
       'Error Domain=NSURLErrorDomain Code=-1001 "The request timed out." UserInfo={NSErrorFailingURLStringKey=https://seats.internal/v1/holds, NSLocalizedDescription=The request timed out.}', URLSESSION),
    _t("urlsession_cannot_connect", "runtime_swift", "connection", ANY,
       'Error Domain=NSURLErrorDomain Code=-1004 "Could not connect to the server." UserInfo={NSErrorFailingURLStringKey=https://seats.internal/v1/holds, NSLocalizedDescription=Could not connect to the server.}', URLSESSION),
    _t("urlsession_bad_response", "runtime_swift", "error", ANY,
       'Error Domain=NSURLErrorDomain Code=-1011 "bad server response" UserInfo={NSLocalizedDescription=bad server response}', URLSESSION),
    _t("ktor_request_timeout", "runtime_kotlin", "timeout", ANY,
       "io.ktor.client.plugins.HttpRequestTimeoutException: Request timeout has expired [url=https://hotels.internal/v3/availability, request_timeout=5000 ms]", KTOR),
    _t("ktor_client_404", "runtime_kotlin", "not_found", ANY,
       'io.ktor.client.plugins.ClientRequestException: Client request(GET https://hotels.internal/v3/availability) invalid: 404 Not Found. Text: "{\\"message\\":\\"no such property\\"}"', KTOR_RESP),
    _t("ktor_server_503", "runtime_kotlin", "error", ANY,
       'io.ktor.client.plugins.ServerResponseException: Server error(GET https://hotels.internal/v3/availability: 503 Service Unavailable. Text: "upstream unavailable"', KTOR_RESP),
    _t("lwp_cant_connect", "runtime_perl", "connection", ANY,
       "500 Can't connect to rides.internal:443 (Connection refused)", LWP),
    _t("lwp_read_timeout", "runtime_perl", "timeout", ANY, "500 read timeout", LWP),
    _t("curl_28", "runtime_curl", "timeout", ANY,
       "curl: (28) Operation timed out after 5001 milliseconds with 0 bytes received", CURL),
    _t("curl_7", "runtime_curl", "connection", ANY,
       "curl: (7) Failed to connect to rides.internal port 443 after 2 ms: Connection refused", CURL),
    _t("curl_6", "runtime_curl", "connection", ANY,
       "curl: (6) Could not resolve host: rides.internal", CURL),
    _t("curl_56", "runtime_curl", "connection", ANY,
       "curl: (56) Recv failure: Connection reset by peer", CURL),
    _t("curl_22_403", "runtime_curl", "auth", ANY,
       "curl: (22) The requested URL returned error: 403", CURL),
    _t("python_connection_reset", "runtime_python", "connection", ANY,
       "ConnectionResetError(104, 'Connection reset by peer')", "https://docs.python.org/3/library/exceptions.html#ConnectionResetError",
       kind="raise", exc="ConnectionResetError"),
    _t("python_timeout_traceback", "runtime_python", "timeout", ANY,
       'Traceback (most recent call last):\n  File "/srv/desk/clients.py", line 88, in fetch\n    resp = await client.get(url, timeout=5)\n  File "/usr/lib/python3.11/asyncio/tasks.py", line 500, in wait_for\n    raise exceptions.TimeoutError() from exc\nTimeoutError', "https://docs.python.org/3/library/exceptions.html#TimeoutError",
       kind="raise", exc="TimeoutError"),
    # messaging (traveller notifications)
    _t("vonage_throttled", "messaging_vonage", "rate_limit", NOTIFY,
       '{"message-count":"1","messages":[{"status":"1","error-text":"Throttled"}]}', VONAGE),
    _t("vonage_invalid_credentials", "messaging_vonage", "auth", NOTIFY,
       '{"message-count":"1","messages":[{"status":"4","error-text":"Bad Credentials"}]}', VONAGE),
    _t("vonage_internal", "messaging_vonage", "error", NOTIFY,
       '{"message-count":"1","messages":[{"status":"5","error-text":"Internal Error"}]}', VONAGE),
    _t("messagebird_access_key", "messaging_messagebird", "auth", NOTIFY,
       '{"errors":[{"code":2,"description":"Request not allowed (incorrect access_key)","parameter":"access_key"}]}', MESSAGEBIRD),
    _t("messagebird_no_recipients", "messaging_messagebird", "invalid_request", NOTIFY,
       '{"errors":[{"code":9,"description":"no (correct) recipients found","parameter":"recipients"}]}', MESSAGEBIRD),
    _t("postmark_10_token", "messaging_postmark", "auth", NOTIFY,
       '{"ErrorCode":10,"Message":"The Server Token you provided in the X-Postmark-Server-Token request header was invalid. Please verify that you are using a valid token."}', POSTMARK),
    _t("postmark_406_inactive", "messaging_postmark", "invalid_request", NOTIFY,
       '{"ErrorCode":406,"Message":"You tried to send to recipient(s) that have been marked as inactive. Found inactive addresses: {contact}. Inactive recipients are ones that have generated a hard bounce, a spam complaint, or a manual suppression."}', POSTMARK),
    _t("apns_bad_device_token", "messaging_apns", "invalid_request", NOTIFY,
       '{"reason":"BadDeviceToken"}', APNS),
    _t("apns_unregistered", "messaging_apns", "not_found", NOTIFY,
       '{"reason":"Unregistered","timestamp":1765000800000}', APNS),
    _t("apns_too_many_token_updates", "messaging_apns", "rate_limit", NOTIFY,
       '{"reason":"TooManyProviderTokenUpdates"}', APNS),
    _t("apns_expired_token", "messaging_apns", "auth", NOTIFY,
       '{"reason":"ExpiredProviderToken"}', APNS),
    _t("fcm_unregistered", "messaging_fcm", "not_found", NOTIFY,
       '{"error":{"code":404,"message":"Requested entity was not found.","status":"NOT_FOUND","details":[{"@type":"type.googleapis.com/google.firebase.fcm.v1.FcmError","errorCode":"UNREGISTERED"}]}}', FCM),
    _t("fcm_quota", "messaging_fcm", "rate_limit", NOTIFY,
       '{"error":{"code":429,"message":"Quota exceeded for quota metric \'Send requests\'","status":"RESOURCE_EXHAUSTED","details":[{"@type":"type.googleapis.com/google.firebase.fcm.v1.FcmError","errorCode":"QUOTA_EXCEEDED"}]}}', FCM),
    _t("fcm_unavailable", "messaging_fcm", "error", NOTIFY,
       '{"error":{"code":503,"message":"The service is currently unavailable.","status":"UNAVAILABLE","details":[{"@type":"type.googleapis.com/google.firebase.fcm.v1.FcmError","errorCode":"UNAVAILABLE"}]}}', FCM),
]

REPLICA = "https://dev.mysql.com/doc/refman/8.0/en/replication-administration-status.html"
COSMOS_CONSISTENCY = "https://learn.microsoft.com/en-us/azure/cosmos-db/consistency-levels"
HASURA_CACHE = "https://hasura.io/docs/2.0/caching/caching-config/"
REDIS_CACHE = "https://redis.io/docs/latest/develop/use/client-side-caching/"
FIRESTORE_CACHE = "https://firebase.google.com/docs/firestore/manage-data/enable-offline"
AMADEUS_PRICES = "https://developers.amadeus.com/self-service/category/flights/api-doc/flight-offers-search/api-reference"
DUFFEL_OFFERS = "https://duffel.com/docs/api/v2/offers/schema"
HOTELBEDS_AVAIL = "https://developer.hotelbeds.com/documentation/hotels/booking-api/api-reference/"
ES_SEARCH = "https://www.elastic.co/guide/en/elasticsearch/reference/current/search-search.html#search-api-response-body"
LAMBDA_PAYLOAD = "https://docs.aws.amazon.com/lambda/latest/dg/gettingstarted-limits.html"
SEATMAP = "https://developers.amadeus.com/self-service/category/flights/api-doc/seatmap-display/api-reference"

# Tool forms that change the data the agent gets. ``op`` names the transform in tools.py.
TOOL_DATA: list[Form] = [
    _t("replica_lag_fare", "data_stale_read", "wrong_value", ("search_flights",), "", REPLICA, kind="data", op="fare_shift"),
    _t("cosmos_eventual_swap", "data_stale_read", "wrong_value", ("search_flights",), "", COSMOS_CONSISTENCY, kind="data", op="flight_swap"),
    _t("hasura_cached_booking_ref", "data_stale_read", "wrong_value", ("get_traveller",), "", HASURA_CACHE, kind="data", op="booking_neighbour"),
    _t("redis_stale_old_fare", "data_stale_read", "wrong_value", ("get_traveller",), "", REDIS_CACHE, kind="data", op="old_fare_shift"),
    _t("firestore_cache_channel", "data_stale_read", "wrong_value", ("get_traveller",), "", FIRESTORE_CACHE, kind="data", op="channel_swap"),
    _t("memcached_stale_change_fee", "data_stale_read", "wrong_value", ("get_fare_rules",), "", MEMCACHED, kind="data", op="fee_shift"),
    _t("seatmap_neighbour_seat", "data_wrong_entity", "wrong_value", ("hold_seat",), "", SEATMAP, kind="data", op="seat_neighbour"),
    _t("hotelbeds_rate_shift", "data_wrong_entity", "wrong_value", ("find_hotels",), "", HOTELBEDS_AVAIL, kind="data", op="rate_shift"),
    _t("pnr_locator_neighbour", "data_wrong_entity", "wrong_value", ("rebook_flight",), "", DUFFEL_OFFERS, kind="data", op="confirmation_neighbour"),
    _t("amadeus_price_strings", "data_key_rename", "key_rename", ("search_flights",), "", AMADEUS_PRICES, kind="data", op="fare_strings"),
    _t("duffel_total_amount", "data_key_rename", "key_rename", ("search_flights",), "", DUFFEL_OFFERS, kind="data", op="fare_renamed"),
    _t("hasura_camel_case_profile", "data_key_rename", "key_rename", ("get_traveller",), "", HASURA, kind="data", op="profile_camel"),
    _t("hotelbeds_net_rate", "data_key_rename", "key_rename", ("find_hotels",), "", HOTELBEDS_AVAIL, kind="data", op="rate_renamed"),
    _t("fare_rules_camel_fee", "data_key_rename", "key_rename", ("get_fare_rules",), "", SABRE, kind="data", op="fee_camel"),
    _t("rebook_record_locator", "data_key_rename", "key_rename", ("rebook_flight",), "", DUFFEL_OFFERS, kind="data", op="confirmation_renamed"),
    _t("amadeus_meta_count", "data_truncated", "truncated", ("search_flights",), "", AMADEUS_PRICES, kind="data", op="flights_count_cut"),
    _t("es_timed_out_partial", "data_truncated", "truncated", ("search_flights",), "", ES_SEARCH, kind="data", op="flights_timed_out"),
    _t("flights_halved_silent", "data_truncated", "truncated", ("search_flights",), "", LAMBDA_PAYLOAD, kind="data", op="flights_halved"),
    _t("hotelbeds_total_cut", "data_truncated", "truncated", ("find_hotels",), "", HOTELBEDS_AVAIL, kind="data", op="hotels_total_cut"),
    _t("profile_keys_halved", "data_truncated", "truncated", ("get_traveller",), "", LAMBDA_PAYLOAD, kind="data", op="profile_halved"),
    _t("output_truncated_line", "data_truncated", "truncated", ("search_flights",), "", LAMBDA_PAYLOAD, kind="data", op="flights_cut_line"),
    _t("flights_json_cut", "data_malformed", "malformed_json", ("search_flights",), "", LAMBDA_PAYLOAD, kind="data", op="json_cut"),
    _t("rules_json_cut", "data_malformed", "malformed_json", ("get_fare_rules",), "", LAMBDA_PAYLOAD, kind="data", op="json_cut"),
    _t("hotels_json_cut", "data_malformed", "malformed_json", ("find_hotels",), "", LAMBDA_PAYLOAD, kind="data", op="json_cut"),
    _t("profile_json_unbalanced", "data_malformed", "malformed_json", ("get_traveller",), "", LAMBDA_PAYLOAD, kind="data", op="json_cut"),
    _t("flights_empty_array", "data_empty", "empty", ("search_flights",), "", DUFFEL_OFFERS, kind="data", op="empty_list"),
    _t("rules_empty_object", "data_empty", "empty", ("get_fare_rules",), "", SABRE, kind="data", op="empty_object"),
    _t("hotels_null", "data_empty", "empty", ("find_hotels",), "", HOTELBEDS_AVAIL, kind="data", op="null"),
    _t("profile_empty_string", "data_empty", "empty", ("get_traveller",), "", SUPABASE, kind="data", op="empty_string"),
]

XAI = "https://docs.x.ai/docs/key-information/debugging"
PPLX = "https://docs.perplexity.ai/api-reference/chat-completions-post"
CEREBRAS = "https://inference-docs.cerebras.ai/support/error"
SAMBA = "https://docs.sambanova.ai/cloud/docs/get-started/rate-limits"
NIM = "https://docs.nvidia.com/nim/large-language-models/latest/api-reference.html"
TGI = "https://huggingface.co/docs/text-generation-inference/en/reference/api_reference"
LLAMACPP = "https://github.com/ggml-org/llama.cpp/blob/master/tools/server/README.md"
LMSTUDIO = "https://lmstudio.ai/docs/app/api/endpoints/openai"
BASETEN = "https://docs.baseten.co/inference/output-format/openai-compatible"
GEMINI = "https://ai.google.dev/gemini-api/docs/troubleshooting#error-codes"
GEMINI_COMPAT = "https://ai.google.dev/gemini-api/docs/openai"
BEDROCK = "https://docs.aws.amazon.com/bedrock/latest/userguide/bedrock-mantle.html"
BEDROCK_ERR = "https://docs.aws.amazon.com/bedrock/latest/APIReference/CommonErrors.html"
BEDROCK_GUARD = "https://docs.aws.amazon.com/bedrock/latest/userguide/guardrails-how.html"
DATABRICKS = "https://docs.databricks.com/en/machine-learning/model-serving/model-serving-limits.html"
KONG = "https://developer.konghq.com/plugins/ai-proxy/"
KONG_RL = "https://developer.konghq.com/plugins/rate-limiting/"
KONG_CACHE = "https://developer.konghq.com/plugins/ai-semantic-cache/"
HELICONE = "https://docs.helicone.ai/features/advanced-usage/caching"
HELICONE_GW = "https://docs.helicone.ai/getting-started/integration-method/gateway"
NGINX = "https://nginx.org/en/docs/http/ngx_http_proxy_module.html"
CLOUDFLARE = "https://developers.cloudflare.com/support/troubleshooting/http-status-codes/cloudflare-5xx-errors/error-524/"

LLM_FORMS: list[Form] = [
    # HTTP statuses of the model API
    _l("xai_429_credits", "llm_http_status", "rate_limit", "xai", "http", XAI,
       '{"code":"Some resource has been exhausted","error":"Your team {rid} has either used all available credits or reached its monthly spending limit. To continue making API requests, please purchase more credits or raise your spending limit."}',
       429, (("retry-after", "1"),)),
    _l("cerebras_429_quota", "llm_http_status", "rate_limit", "cerebras", "http", CEREBRAS,
       '{"message":"Tokens per minute limit exceeded - too many tokens processed.","type":"too_many_tokens_error","param":"quota","code":"token_quota_exceeded"}',
       429, (("retry-after", "1"), ("x-ratelimit-remaining-tokens-minute", "0"))),
    _l("sambanova_429", "llm_http_status", "rate_limit", "sambanova", "http", SAMBA,
       '{"error":{"code":null,"message":"Rate limit exceeded","param":null,"type":"rate_limit_exceeded"}}', 429,
       (("retry-after", "1"),)),
    _l("databricks_429", "llm_http_status", "rate_limit", "databricks", "http", DATABRICKS,
       '{"error_code":"REQUEST_LIMIT_EXCEEDED","message":"REQUEST_LIMIT_EXCEEDED: Exceeded workspace rate limit for databricks-meta-llama-3-3-70b-instruct, please reduce the request rate."}', 429),
    _l("kong_429_rate_limiting", "llm_gateway", "rate_limit", "kong", "http", KONG_RL,
       '{"message":"API rate limit exceeded","request_id":"{rid}"}', 429,
       (("ratelimit-limit", "60"), ("ratelimit-remaining", "0"), ("ratelimit-reset", "1"), ("retry-after", "1"))),
    _l("gemini_429_exhausted", "llm_http_status", "rate_limit", "gemini", "http", GEMINI,
       '[{"error":{"code":429,"message":"Resource has been exhausted (e.g. check quota).","status":"RESOURCE_EXHAUSTED"}}]', 429),
    _l("perplexity_401_openresty", "llm_http_status", "auth", "perplexity", "http", PPLX,
       "<html>\r\n<head><title>401 Authorization Required</title></head>\r\n<body>\r\n<center><h1>401 Authorization Required</h1></center>\r\n<hr><center>openresty/1.25.3.1</center>\r\n</body>\r\n</html>\r\n", 401,
       (("content-type", "text/html"),)),
    _l("nim_403_forbidden", "llm_http_status", "auth", "nim", "http", NIM,
       '{"status":403,"title":"Forbidden","detail":"Authorization failed"}', 403),
    _l("bedrock_403_token", "llm_http_status", "auth", "bedrock", "http", BEDROCK_ERR,
       '{"message":"The security token included in the request is invalid."}', 403,
       (("x-amzn-errortype", "UnrecognizedClientException:http://internal.amazon.com/coral/com.amazon.coral.service/"),)),
    _l("tgi_422_validation", "llm_http_status", "invalid_request", "tgi", "http", TGI,
       '{"error":"Input validation error: `inputs` tokens + `max_new_tokens` must be <= 8192. Given: 7912 `inputs` tokens and 512 `max_new_tokens`","error_type":"validation"}', 422),
    _l("llamacpp_400_context", "llm_http_status", "invalid_request", "llamacpp", "http", LLAMACPP,
       '{"error":{"code":400,"message":"the request exceeds the available context size, try increasing it","type":"exceed_context_size_error","n_prompt_tokens":8421,"n_ctx":8192}}', 400),
    _l("lmstudio_404_model", "llm_http_status", "not_found", "lmstudio", "http", LMSTUDIO,
       '{"error":{"message":"Model \\"qwen2.5-7b-instruct\\" not found. Please load the model first or specify a valid model.","type":"invalid_request_error","param":"model","code":"model_not_found"}}', 404),
    _l("databricks_404_endpoint", "llm_http_status", "not_found", "databricks", "http", DATABRICKS,
       '{"error_code":"RESOURCE_DOES_NOT_EXIST","message":"Endpoint with name \'travel-desk-llm\' does not exist."}', 404),
    _l("gemini_400_invalid", "llm_http_status", "invalid_request", "gemini", "http", GEMINI,
       '[{"error":{"code":400,"message":"Request contains an invalid argument.","status":"INVALID_ARGUMENT"}}]', 400),
    _l("llamacpp_500_server", "llm_http_status", "http_error", "llamacpp", "http", LLAMACPP,
       '{"error":{"code":500,"message":"Failed to parse tool call arguments as JSON","type":"server_error"}}', 500),
    _l("sambanova_503", "llm_http_status", "http_error", "sambanova", "http", SAMBA,
       '{"error":{"code":null,"message":"Model is currently overloaded, please try again later","param":null,"type":"model_overloaded"}}', 503),
    _l("nim_503_not_ready", "llm_http_status", "http_error", "nim", "http", NIM,
       '{"object":"error","message":"Service is not ready yet","type":"ServiceUnavailableError","code":503}', 503),
    _l("cerebras_500", "llm_http_status", "http_error", "cerebras", "http", CEREBRAS,
       '{"message":"Encountered an unexpected error while processing the request.","type":"internal_server_error","param":"","code":"internal_error"}', 500),
    _l("databricks_503", "llm_http_status", "http_error", "databricks", "http", DATABRICKS,
       '{"error_code":"TEMPORARILY_UNAVAILABLE","message":"The service at /serving-endpoints/databricks-meta-llama-3-3-70b-instruct/invocations is temporarily unavailable. Please try again later."}', 503),
    _l("kong_502_upstream", "llm_gateway", "http_error", "kong", "http", KONG,
       '{"message":"An invalid response was received from the upstream server","request_id":"{rid}"}', 502),
    _l("helicone_500_gateway", "llm_gateway", "http_error", "helicone", "http", HELICONE_GW,
       '{"success":false,"error":"Internal server error: failed to forward request to provider"}', 500),
    _l("baseten_502_html", "llm_gateway", "http_error", "baseten", "http", BASETEN,
       "<html>\r\n<head><title>502 Bad Gateway</title></head>\r\n<body>\r\n<center><h1>502 Bad Gateway</h1></center>\r\n</body>\r\n</html>\r\n", 502,
       (("content-type", "text/html"),)),
    _l("kong_504_upstream_timeout", "llm_gateway", "timeout", "kong", "http", KONG,
       '{"message":"The upstream server is timing out","request_id":"{rid}"}', 504),
    _l("bedrock_408_model_timeout", "llm_http_status", "timeout", "bedrock", "http", BEDROCK_ERR,
       '{"message":"Model has timed out in processing the request. Try your request again."}', 408,
       (("x-amzn-errortype", "ModelTimeoutException"),)),
    _l("xai_524_cloudflare", "llm_gateway", "http_error", "xai", "http", CLOUDFLARE,
       "<!DOCTYPE html><html><head><title>api.x.ai | 524: A timeout occurred</title></head><body><h1>A timeout occurred</h1><p>Error code 524</p><p>Cloudflare Ray ID: {rid}</p></body></html>", 524,
       (("content-type", "text/html"),)),
    # no conversation / no answer
    _l("helicone_reset_before_headers", "llm_connection", "connection", "helicone", "reset", HELICONE_GW),
    _l("lmstudio_closed_mid_body", "llm_connection", "connection", "lmstudio", "half_body", LMSTUDIO),
    _l("llamacpp_read_timeout", "llm_slow", "timeout", "llamacpp", "silent", LLAMACPP),
    _l("nim_read_timeout", "llm_slow", "timeout", "nim", "silent", NIM),
    # an error object delivered instead of the completion, status 200
    _l("databricks_200_error_body", "llm_error_200", "error", "databricks", "body200", DATABRICKS,
       '{"error_code":"INTERNAL_ERROR","message":"Model server failed to produce a response"}'),
    _l("gemini_200_error_list", "llm_error_200", "rate_limit", "gemini", "body200", GEMINI,
       '[{"error":{"code":429,"message":"Resource has been exhausted (e.g. check quota).","status":"RESOURCE_EXHAUSTED"}}]'),
    _l("helicone_200_upstream_error", "llm_error_200", "error", "helicone", "body200", HELICONE_GW,
       '{"error":{"message":"Upstream provider returned an error","type":"upstream_error","code":"provider_error"}}'),
    # a status or gateway page written as the message content of a 200 reply
    _l("baseten_502_page_in_content", "llm_content_error", "error", "baseten", "content", NGINX,
       "<html>\r\n<head><title>502 Bad Gateway</title></head>\r\n<body>\r\n<center><h1>502 Bad Gateway</h1></center>\r\n<hr><center>nginx</center>\r\n</body>\r\n</html>"),
    _l("kong_504_page_in_content", "llm_content_error", "timeout", "kong", "content", KONG,
       "<html><head><title>504 Gateway Time-out</title></head><body><center><h1>504 Gateway Time-out</h1></center><hr><center>kong/3.9.0</center></body></html>"),
    _l("tgi_overloaded_text", "llm_content_error", "error", "tgi", "content", TGI,
       "Model is overloaded: Request failed during generation: Server error: CUDA out of memory. Tried to allocate 1.02 GiB"),
    # JSON error or policy objects as the content (format slips of the API)
    _l("gemini_status_json_content", "llm_schema", "schema", "gemini", "content", GEMINI_COMPAT,
       '{"error": {"code": 503, "message": "The model is overloaded. Please try again later.", "status": "UNAVAILABLE"}}'),
    _l("bedrock_policy_json_content", "llm_schema", "schema", "bedrock", "content", BEDROCK_GUARD,
       '{"action": "GUARDRAIL_INTERVENED", "outputs": [{"text": "Sorry, the model cannot answer this question."}]}'),
    _l("perplexity_args_foreign_keys", "llm_schema", "schema", "perplexity", "args", PPLX, op="foreign_keys"),
    # finish reasons
    _l("gemini_content_filter", "llm_finish_reason", "content_filter", "gemini", "finish", GEMINI_COMPAT,
       "", finish="content_filter"),
    _l("bedrock_guardrail_message", "llm_finish_reason", "content_filter", "bedrock", "finish", BEDROCK_GUARD,
       "Sorry, the model cannot answer this question.", finish="content_filter"),
    _l("llamacpp_length_content", "llm_finish_reason", "truncate", "llamacpp", "finish", LLAMACPP,
       "", finish="length", cut=0.35),
    _l("nim_length_args", "llm_finish_reason", "truncate", "nim", "args", NIM, op="cut_json"),
    _l("lmstudio_length_strings", "llm_finish_reason", "truncate", "lmstudio", "args", LMSTUDIO, op="cut_strings"),
    _l("cerebras_empty_stop", "llm_empty", "empty", "cerebras", "finish", CEREBRAS, "", finish="stop", empty=True),
    _l("xai_empty_stream", "llm_empty", "empty", "xai", "stream_empty", XAI),
    _l("baseten_args_emptied", "llm_args", "error", "baseten", "args", BASETEN, op="empty_args"),
    _l("sambanova_args_emptied", "llm_args", "error", "sambanova", "args", SAMBA, op="empty_args"),
    # garbled in transit
    _l("llamacpp_utf8_replacement", "llm_corrupt", "corrupt", "llamacpp", "args", LLAMACPP, op="replacement_chars"),
    _l("tgi_latin1_mojibake", "llm_corrupt", "corrupt", "tgi", "args", TGI, op="mojibake"),
    _l("lmstudio_symbol_noise_args", "llm_corrupt", "corrupt", "lmstudio", "args", LMSTUDIO, op="symbols"),
    # earlier response again
    _l("helicone_cache_hit", "llm_stale", "stale", "helicone", "stale", HELICONE),
    _l("kong_semantic_cache_hit", "llm_stale", "stale", "kong", "stale", KONG_CACHE),
    # streams that end before their end
    _l("xai_stream_no_done", "llm_stream", "stream_cut", "xai", "stream_cut", XAI, done=False),
    _l("cerebras_stream_done_no_finish", "llm_stream", "stream_cut", "cerebras", "stream_cut", CEREBRAS, done=True),
    _l("tgi_stream_mid_event", "llm_stream", "stream_cut", "tgi", "stream_mid_event", TGI),
    _l("sambanova_stream_error_event", "llm_stream", "error", "sambanova", "stream_error", SAMBA,
       '{"error":{"message":"Internal server error occurred during generation","type":"internal_server_error","code":null}}'),
    _l("tgi_stream_generation_error", "llm_stream", "error", "tgi", "stream_error", TGI,
       '{"error":"Request failed during generation: Server error: Unexpected <class \'torch.cuda.OutOfMemoryError\'>","error_type":"generation"}'),
    # slowness that failed the task
    _l("gemini_slow_reply", "llm_slow", "latency", "gemini", "slow", GEMINI),
    _l("perplexity_slow_reply", "llm_slow", "latency", "perplexity", "slow", PPLX),
    _l("databricks_stream_stall", "llm_slow", "latency", "databricks", "stall", DATABRICKS),
]

# Forms that may appear only absorbed (benign): transient answers a retry recovers from.
BENIGN_LLM = ["xai_429_credits", "cerebras_429_quota", "kong_429_rate_limiting", "sambanova_503", "nim_503_not_ready",
              "cerebras_500", "kong_502_upstream", "helicone_reset_before_headers", "bedrock_408_model_timeout",
              "databricks_503"]
BENIGN_TOOL = ["amadeus_38194_rate", "duffel_airline_error", "mysql_1213_deadlock", "redis_loading", "cosmos_429",
               "firestore_unavailable", "cloudrun_upstream_timeout", "curl_56", "erlang_timeout", "vonage_throttled",
               "square_rate_limited", "traefik_bad_gateway", "lambda_too_many", "mssql_1205_victim"]

ALL_FORMS: dict[str, Form] = {f.name: f for f in TOOL_ERRORS + TOOL_DATA + LLM_FORMS}
