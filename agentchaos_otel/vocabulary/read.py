"""Reading what a failed call or tool result means, from its structure and published codes.

An error is recognised by its shape, wherever it sits in the result: an error member (``error``,
``errors``, ``fault``, ``exception``), a status object (Kubernetes ``Status``, ``google.rpc.
Status``, RFC 9457 problem details), an in-band flag (``ok: false``, ``isError``, ``timed_out``),
an XML ``Fault``/``Error`` element, an HTML error page, a status line, a traceback, an exception
line or repr, a log line at ``ERROR``. What it means is then read from the codes inside it (HTTP
status, gRPC code, errno, SQLSTATE, exception class, vendor reason; ``table.py``), and from
published error texts when no code says more. A text that is an error is never "invalid JSON".

Runs in the agent's process on every result, so every walk is bounded (nodes, keys, characters,
lines) and nothing here raises: a reader that cannot make sense of something says it is not an
error it recognises.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from agentchaos_otel.vocabulary.table import GENERIC, Hit, Table, best, load, norm, words

MAX_NODES = 2_000  # JSON nodes visited per value
MAX_KEYS = 64  # keys read per object
MAX_ITEMS = 16  # list items read inside an error member
MAX_TEXT = 4_000  # characters of one error text scanned for codes and phrases
MAX_LINES = 3  # lines read at each end of a plain text
_BOM = "\ufeff"  # a byte-order mark some servers put before a text (Azure Storage's XML errors)
MAX_WHOLE = 65_536  # characters of a text result considered at all
LLM_HEAD = 24  # an error phrase must start this close to the start of a model's reply


@dataclass(frozen=True, slots=True)
class Reading:
    """What a result or failure says about itself. ``meaning`` is a ``table.MEANINGS`` value
    (``error`` when it failed without saying how), ``evidence`` the row it rests on, ``form`` the
    shape it was recognised by. A partial result is not an error: ``is_error`` False, meaning
    ``partial``."""

    is_error: bool
    meaning: str = ""
    evidence: str = ""
    form: str = ""

    @property
    def found(self) -> bool:
        return self.is_error or bool(self.meaning)


NOTHING = Reading(False)

# Member names (normalised) whose truthy value is an error report.
# ASP.NET Web API's HttpError carries ExceptionMessage beside its Message.
ERROR_KEYS = frozenset({"error", "errors", "err", "errormessage", "errormessages", "errmsg", "exception", "fault",
                        "failure", "errorinfo", "errordetails", "errortype", "errorcode", "errordescription",
                        "errorresult", "errorname", "errortext", "exceptionmessage", "failurereason"})
# Members of an error report that hold codes, names and statuses.
CODE_KEYS = frozenset({"code", "type", "reason", "status", "error", "name", "kind", "errorcode",
                       "errortype", "exception", "exctype", "class", "faultcode", "statuscode", "httpstatus",
                       "httpcode", "grpcstatus", "grpccode", "sqlstate", "pgcode", "errno", "title", "cause",
                       "subcode", "category", "responseflags", "domain", "errtype", "exceptiontype", "codename",
                       "errorname", "failuretype", "failureorigin"})
# Members of an error report that hold words.
MESSAGE_KEYS = frozenset({"message", "msg", "detail", "details", "description", "title", "errormessage",
                          "errordescription", "faultstring", "reason", "text", "cause", "hint", "error",
                          "stack", "stacktrace", "trace", "info", "content", "output", "stderr", "errorsummary",
                          "value", "errortext", "exceptionmessage", "messagedetail", "statusmsg",
                          "externalmessage", "internalmessage",  # Airbyte's FailureReason
                          "diagnostics"})  # FHIR OperationOutcome issues
STATUS_KEYS = frozenset({"status", "state", "result", "outcome", "level", "severity", "levelname"})
HTTP_STATUS_KEYS = frozenset({"status", "statuscode", "httpstatus", "httpstatuscode", "httpcode",
                              "responsecode", "code"})
_STATUS_SHAPED = frozenset({"code", "message", "details", "status", "error", "type", "reason", "metadata",
                            "grpcstatus", "grpccode", "httpstatus", "httpcode", "statuscode"})
WRAPPER_KEYS = frozenset({"result", "response", "data", "body", "meta", "metadata", "payload", "output",
                          "status", "error", "content", "d"})  # "d": OData v2's JSON envelope
REPORT_KEYS = frozenset({"message", "detail", "msg", "documentationurl", "docurl", "moreinfo", "help",
                         "requestid", "status", "code", "title", "type", "details", "hint", "timestamp", "path",
                         "instance", "traceid", "name", "debugid", "links", "informationlink", "errornumber",
                         "sqlstate", "statementhandle", "statementhandles", "elements", "took"})
_META_KEYS = frozenset({"took", "status", "timedout", "timeout", "shards", "message", "code", "requestid",
                        "totalcount", "total", "count", "incompleteresults", "failures", "failed",
                        "partial", "ispartial", "incomplete", "truncated", "complete", "iscomplete",
                        "ok", "success", "error", "errors", "warnings", "meta", "metadata", "statistics",
                        "rows"})
_FAILED_LEVELS = frozenset({"error", "err", "fatal", "critical", "crit", "panic", "emerg", "alert", "severe"})
# Status words that only a call's own report uses (a record may be "failed" or "denied" itself).
_CALL_LEVEL_WORDS = frozenset({"error", "fault", "throttled", "ratelimited", "timedout", "timeout"})
# A process's result as a shell or job runner reports it (exit status beside its output streams).
_EXIT_KEYS = frozenset({"exitcode", "exitstatus", "returncode", "rc"})
_STREAM_KEYS = frozenset({"stderr", "stdout", "output", "Stderr", "Stdout", "Output", "STDERR", "STDOUT", "StdErr",
                          "StdOut"})
# Members that say how many items exist in all (``total`` beside a list of fewer items), and
# members that offer the rest (a page the caller asked for, with the way to the next one).
# ClickHouse's JSON output format counts the rows a LIMIT left out in rows_before_limit_at_least.
_COUNT_KEYS = frozenset({"total", "totalcount", "count", "totalresults", "totalitems", "totalsize", "totalhits",
                         "rowsbeforelimitatleast", "@odatacount"})
# Members where an answer carries warnings about itself (Prometheus `warnings`, Grafana data
# frames' `meta.notices`): one saying the answer was cut makes it partial.
_NOTICE_KEYS = frozenset({"warnings", "warning", "notices", "notice"})
_PAGING_KEYS = frozenset({"limit", "pagesize", "perpage", "page", "offset", "next", "nextpagetoken", "nexttoken",
                          "cursor", "nextcursor", "hasmore", "pagetoken", "start", "after", "nextlink", "links",
                          "continue", "continuationtoken", "pagination", "paging", "@odatanextlink"})


# --- evidence --------------------------------------------------------------------------------------

class _Evidence:
    """Hits collected while reading one error, with the budget of the walk."""

    __slots__ = ("hits", "nodes")

    def __init__(self) -> None:
        self.hits: list[Hit] = []
        self.nodes = MAX_NODES

    def add(self, hit: Hit | None) -> None:
        if hit is not None:
            self.hits.append(hit)

    def reading(self, form: str, *, is_error: bool = True) -> Reading:
        b = best(self.hits)
        if b is None:
            return Reading(is_error, GENERIC if is_error else "", "", form)
        return Reading(is_error, b.meaning, b.evidence, form)


def _code_hit(t: Table, value: str) -> Hit | None:
    """A code or name standing alone (a ``code``/``type``/``reason`` value, a bracket tag): the
    row it names, else what its parts say (``UpstreamRequestTimeout``, ``DB_CONN_REFUSED``)."""
    value = value.strip()
    if not value or len(value) > 120:
        return None
    if "/" in value and value.startswith(("http://", "https://", "about:")):  # RFC 9457 type URI
        value = value.rstrip("/").rsplit("/", 1)[-1]
    for cand in (value, re.split(r"::|[.#:/]", value)[-1]):
        key = norm(cand)
        hit = t.tokens.get(key) or t.exceptions.get(key) or t.soap.get(key)
        if hit is not None:
            return hit
    if len(value) == 5 and value[:2].isalnum() and value.upper() in t.sqlstate:
        return t.sqlstate[value.upper()]
    return _parts_hit(t, value)


_CAMEL_RE = re.compile(r"[A-Z]+(?![a-z])|[A-Z]?[a-z]+|\d+")


def _parts_hit(t: Table, name: str) -> Hit | None:
    """The meaning of a name not on any list, from the words it is built of."""
    parts = [p.lower() for p in _CAMEL_RE.findall(name)]
    if not parts or len(parts) > 12:
        return None
    hits = []
    for n in (3, 2, 1):
        for i in range(len(parts) - n + 1):
            hit = t.name_parts.get("".join(parts[i:i + n]))
            if hit is not None:
                hits.append(hit)
    return best(hits)


def _number_hit(t: Table, key: str, value: int, has_message: bool) -> Hit | None:
    """A number in a code-like member: an HTTP status, a JSON-RPC code, a gRPC code (only in a
    ``google.rpc.Status``-shaped object: small codes beside a message)."""
    if 100 <= value <= 599:
        return t.http.get(value) or (Hit(GENERIC, f"http:{value}") if value >= 400 else None)
    if -32768 <= value <= -32000:
        return t.jsonrpc.get(value) or Hit(GENERIC, f"jsonrpc:{value}")
    if key in ("code", "grpcstatus", "grpccode") and 1 <= value <= 16 and has_message:
        return t.grpc.get(value)
    if key == "errno":
        return t.errno_number.get(value)
    return None


# --- text --------------------------------------------------------------------------------------------

# Codes inside error texts, with the system each marker names.
_TEXT_CODES: tuple[tuple[str, re.Pattern[str]], ...] = (
    ("http", re.compile(r"\b(?:https?(?:/\d(?:\.\d)?)?|status(?:[ _-]?code)?|status[ _-]?=|error|code|returned|"
                        r"response)[\s:=#(]*([1-5]\d\d)\b(?!\.\d)", re.I)),
    ("errno", re.compile(r"\[errno (\d+)\]|\berrno[\s:=]+(\d+)|\(os error (\d+)\)", re.I)),
    ("winsock", re.compile(r"\[winerror (\d+)\]", re.I)),
    ("sqlstate", re.compile(r"\bsql\s?state[\s:=\[(]*([0-9A-Z]{5})\b", re.I)),
    ("curl", re.compile(r"\bcurl: \((\d+)\)")),
    ("mysql", re.compile(r"\bERROR (\d{4}) \(([0-9A-Z]{5})\)")),
    ("mssql", re.compile(r"\bMsg (\d+), Level \d+, State \d+")),
    ("oracle", re.compile(r"\b(ORA-\d{5})\b")),
    ("grpc", re.compile(r"\bStatusCode\.([A-Z_]+)|\bcode\s*=\s*([A-Za-z_]+)|\bstatus:\s*([A-Z][A-Za-z]+),")),
)
# Names that stand out in running text: CamelCase compounds, snake_case codes, errno-style names.
_TOKEN_RE = re.compile(r"[A-Za-z_][A-Za-z0-9_]*(?:(?:\.|::)[A-Za-z_][A-Za-z0-9_]*)*")


def _distinctive(tok: str) -> bool:
    """A name that stands out in running text: a snake_case or dotted code (DEADLINE_EXCEEDED,
    rate_limit_exceeded), an errno name (EPIPE), a CamelCase compound (ThrottlingException)."""
    if "_" in tok.strip("_") or "." in tok or "::" in tok:
        return len(tok) >= 5
    if tok.isupper():
        return tok[0] == "E" and len(tok) >= 3
    return len(tok) >= 6 and sum(c.isupper() for c in tok) >= 2 and not tok[1:].islower()


def _phrase_hits(t: Table, text: str, out: _Evidence, limit: int | None = None) -> int:
    """Published error texts in ``text``; returns the character-free word position of the first
    hit (or -1). ``limit``: only hits that start within the first ``limit`` words."""
    ws = words(text[:MAX_TEXT])
    first = -1
    counted = 0  # words that are not bare numbers (addresses and ports do not push a phrase out)
    covered = 0  # words inside a phrase already matched: the longer text said it, not its parts
    for i, w in enumerate(ws):
        counted += not w.isdigit()
        if limit is not None and counted > limit + 1:
            break
        if i < covered:
            continue
        for phrase, hit in t.phrases.get(w, ()):
            if tuple(ws[i:i + len(phrase)]) == phrase:
                out.add(hit)
                first = i if first < 0 else first
                covered = i + len(phrase)
                break
    return first


def _text_codes(t: Table, text: str, out: _Evidence) -> None:
    """Codes written into an error text (``HTTP 503``, ``[Errno 111]``, ``SQLSTATE 57014``,
    ``curl: (28)``, ``code = Unavailable``) and distinctive names (``ECONNREFUSED``,
    ``ThrottlingException``, ``DEADLINE_EXCEEDED``)."""
    text = text[:MAX_TEXT]
    for system, pattern in _TEXT_CODES:
        for m in pattern.finditer(text):
            groups = [g for g in m.groups() if g]
            if not groups:
                continue
            g = groups[0]
            if system == "http":
                code = int(g)
                if code >= 400:
                    out.add(t.http.get(code) or Hit(GENERIC, f"http:{code}"))
            elif system == "errno":
                out.add(t.errno_number.get(int(g)))
            elif system == "winsock":
                out.add(t.winsock.get(int(g)))
            elif system == "sqlstate":
                out.add(_sqlstate(t, g))
            elif system in ("curl", "mysql", "mssql"):
                out.add(t.numbers.get((system, int(g))))
                if system == "mysql" and len(groups) > 1:
                    out.add(_sqlstate(t, groups[1]))
            else:  # oracle / grpc names
                out.add(_code_hit(t, g))
    for m in _TOKEN_RE.finditer(text):
        tok = m.group(0)
        if _distinctive(tok):
            key = norm(re.split(r"::|\.", tok)[-1])
            out.add(t.tokens.get(key) or t.exceptions.get(norm(tok)))


def _sqlstate(t: Table, code: str) -> Hit | None:
    code = code.upper()
    return t.sqlstate.get(code) or t.sqlstate.get(code[:2])


def read_words(text: str, out: _Evidence | None = None) -> _Evidence:
    """Codes, names and phrases of an error text (known to be one)."""
    ev = out or _Evidence()
    t = load()
    _text_codes(t, text, ev)
    _phrase_hits(t, text, ev)
    return ev


# Structural forms of a text that is an error (each tried on the first and last lines).
# "HTTP/1.1 503 ...", "429 Too Many Requests", and the edge caches' "Error 503 first byte timeout"
# (Varnish), "502 ERROR" (CloudFront) and "error code: 522" (Cloudflare) openings.
_STATUS_LINE_RE = re.compile(r"^\s*(?:HTTP(?:/\d(?:\.\d)?)?\s*|(?:Error|ERROR|error)(?:\s+code:)?\s+)?([45]\d\d)"
                             r"(?:\s+[A-Za-z]|\s*[:\-]|\s*$)")
_BRACKET_RE = re.compile(r"^\s*\[([A-Z][A-Z0-9 _-]{2,})\]")
_EXCEPTION_RE = re.compile(
    r"^\s*(?:Caused by:\s*|Exception in thread \"[^\"]*\"\s*|Unhandled exception\.\s*|panic:\s*"
    r"|Code: \d+\.\s*|Error:\s*"
    r"(?=[A-Z][\w.$]*(?:Error|Exception)))?"
    r"((?:[A-Za-z_$][\w$]*(?:\.|::|/|\\))*[A-Za-z_$][\w$]*)(?::\s|:$|\(|\s?\{)")
_REFERENCE_KEYS = frozenset({"group", "uid", "namespace", "apiVersion", "resourceVersion"})
_EXCEPTION_MODULES = frozenset({"exceptions", "errors", "exception", "error"})
_EXC_SUFFIX_RE = re.compile(r"(Error|Exception|Fault|Failure|Timeout|Exceeded|Refused|Denied|Exhausted|"
                            r"Throttled|NotFound|Interrupted|Abort(?:ed)?|Canceled|Cancelled)$")
_LOG_RE = re.compile(r"^\s*(?:\d{4}-\d\d-\d\d[T ][\d:.,]+\S*\s+)?(?:\[\s*)?(?:ERROR|FATAL|CRITICAL|CRIT|PANIC|SEVERE|"
                     r"EMERG|ALERT|ERR)\b(?:\s*\])?(?:[\s:|\-]|$)|^\s*[\w.\-]+: (?:error|fatal):"
                     r"|^[EF]\d{4} \d\d:\d\d:\d\d")
_LEVEL_RE = re.compile(r"\blevel=(?:error|fatal|panic|critical)\b")
# Openings of an error text: error/exception words, Go's "rpc error:" and "panic:", vendor codes
# such as "ORA-12170:", curl's exit code, and Go's url.Error and net.OpError strings
# ('Get "https://...": dial tcp 10.0.0.1:443: ...', https://pkg.go.dev/net/url#Error).
_GO_URL_ERROR = r"^\s*(?:Get|Post|Put|Patch|Delete|Head|Options) \"[^\"]*\": "
_PREFIX_RE = re.compile(r"^\s*(?:(?:rpc )?error|exception|fatal(?: error)?|failed|failure|traceback|panic)\b\s*[:!(\-]"
                        r"|^\s*[A-Z]{2,6}-\d{3,6}:|^\s*curl: \(\d+\)|^\s*Msg \d+, Level \d+, State \d+"
                        r"|" + _GO_URL_ERROR +
                        r"|^\s*(?:dial|read|write) (?:tcp|udp|unix)[46]? ", re.I)
# The first line of a pydantic ValidationError ("2 validation errors for Booking"), which servers
# built on pydantic pass on as text (https://docs.pydantic.dev/latest/errors/validation_errors/).
_PYDANTIC_RE = re.compile(r"^\s*\d+ validation errors? for [\w.\[\], ]{1,200}$")
# The MCP SDK server's wrapper around a failed tool's text (mcp.server.mcpserver.tools.base: ToolError).
_MCP_TOOL_ERROR_RE = re.compile(r"^Error executing tool [\w.\-/]{1,128}(?:: |$)")
# Go's url.Error around a bare io.EOF ('Post "https://...": EOF'): the server closed the connection
# before a response came (https://pkg.go.dev/io#pkg-variables).
_GO_EOF_RE = re.compile(_GO_URL_ERROR + r"EOF\s*$")
# A tool's text that opens by saying an error happened, then where, then what: "Error response
# from daemon: ..." (Docker), "An error occurred (ThrottlingException) when calling the GetItem
# operation: ..." (botocore's ClientError), "error while reading body: ...". The word after
# "error" must say when or where ("Error budgets were met: ..." is a report, not an error). Only
# tool results are read this way: a model's reply may begin a sentence about errors.
_ERROR_OPENING_RE = re.compile(r"^\s*(?:an?\s+)?(?:(?:unexpected|internal|unknown|database|runtime|compilation|"
                               r"parsing|syntax|network|server|client|connection|validation|dependency)\s+)?error\s+"
                               r"(?:occurred|happened|response|while|when|during|in|from|on|at|for|\w+ing)\b"
                               r"[^:\n]{0,160}?:(?:\s|$)", re.I)
# botocore's ClientError as printed: the code in parentheses names the failure. Its exact frame
# makes it safe to read at the start of a model's reply too (a gateway passing the error on).
_BOTOCORE_RE = re.compile(r"^\s*An error occurred \(([A-Za-z][\w.]*)\) when calling the \w+ operation")
# A status code named in a client's opening line: HashiCorp's API clients ("Unexpected response
# code: 500 (No cluster leader)") and .NET's WebException ("The remote server returned an error:
# (503) Server Unavailable.").
_CODE_MENTION_RE = re.compile(r"\bunexpected response code:? \(?([45]\d\d)\b|\breturned an error: \(([45]\d\d)\)", re.I)
# A PowerShell error record: "Verb-Noun : message" and the record's "+ CategoryInfo" lines.
_POWERSHELL_RE = re.compile(r"^\s*[A-Z][A-Za-z]+-[A-Za-z]+ : \S")
_POWERSHELL_RECORD_RE = re.compile(r"^\s*\+ (?:CategoryInfo|FullyQualifiedErrorId)\s*:", re.M)
# Go's sentinel errors, prefixed by their package ("nats: timeout", "etcdserver: leader changed"):
# a short one-line text; an error only when its words say which one.
_PACKAGE_PREFIX_RE = re.compile(r"^\s*[a-z][a-z0-9_]*(?:[./-][a-z0-9_]+)*: (\S[^\n]{0,200})$")
# An LDAP result code as Java's JNDI ("[LDAP: error code 32 - No Such Object]") and the UnboundID
# SDK ("LDAPException(resultCode=49 (invalid credentials), ...)") print it (RFC 4511 result codes).
_LDAP_RE = re.compile(r"^\s*(?:\[LDAP: error code |LDAPException\(resultCode=)(\d{1,3})\b")
# A last line with a process's exit status ("[exit status 137]", "exit code 1").
_EXIT_LINE_RE = re.compile(r"^\s*\[?exit (?:status|code):? (\d{1,3})\]?\s*$", re.I)
# dbt's run errors: "Database Error in model stg_x (models/stg_x.sql)", then the database's words.
_QUALIFIED_ERROR_RE = re.compile(r"^\s*(?:Database|Runtime|Compilation|Parsing|Dependency) Error in \w+")
# An SMTP reply with an enhanced status code (RFC 3463): "550 5.1.1 <x>: Recipient address rejected".
_SMTP_RE = re.compile(r"^\s*[45]\d\d[ -][45]\.\d{1,3}\.\d{1,3}\s")
# URLs in an error text name hosts and paths, not failures ("svc.internal" is no gRPC INTERNAL).
_URL_RE = re.compile(r"\b[a-z][a-z0-9+.-]*://[^\s\"'`<>]+", re.I)
# Openings that make a tool's text an error report (not a model's reply, which may discuss errors).
# A first line that only says an error occurred, its details on the lines below (Vercel's "An
# error occurred with your deployment" page, "A server error has occurred").
_ERROR_OCCURRED_RE = re.compile(r"^\s*(?:an?\s+)?(?:[a-z]+\s+){0,2}error\s+(?:has\s+)?occurred\b[^\n:]{0,80}$", re.I)
_TOOL_OPENINGS = (_QUALIFIED_ERROR_RE, _SMTP_RE, _ERROR_OPENING_RE, _ERROR_OCCURRED_RE)
# A driver's exception named in parentheses before its message, as SQLAlchemy wraps DB-API errors:
# "(psycopg2.OperationalError) server closed the connection unexpectedly".
_PAREN_EXCEPTION_RE = re.compile(r"^\s*\(((?:[A-Za-z_]\w*\.)*[A-Za-z_]\w*)\)\s")
# An HTML page, also behind an XML declaration (XHTML error pages: Varnish's "Guru Mediation").
_HTML_RE = re.compile(r"^\s*(?:<\?xml[^>]{0,200}\?>\s*)?(?:<!doctype\s+html|<html|<head|<body|<h1[\s>])", re.I)
_TITLE_RE = re.compile(r"<(title|h1)[^>]*>(.*?)</\1\s*>", re.I | re.S)
# An error element that names the field it is about (Recurly's API v2: <error field="..."
# symbol="...">is greater than the invoice total</error>): the XML form of a field-error map.
_XML_FIELD_ERROR_RE = re.compile(r"<(?:[\w-]+:)?error\s[^>]{0,200}\bfield\s*=\s*[\"'][^\"']+[\"']", re.I)
_XML_FAULT_RE = re.compile(r"<(?:[\w-]+:)?(Fault|Error|Errors|error|fault)\b", re.S)
_XML_CODE_RE = re.compile(r"<(?:[\w-]+:)?(faultcode|Code|Value|Subcode|code|status|Status|Reason|reason)\b[^>]*>"
                          r"\s*(?:<(?:[\w-]+:)?(?:Value|Text)[^>]*>)?([^<]{1,120})<", re.S)
_XML_TEXT_RE = re.compile(r"<(?:[\w-]+:)?(faultstring|Text|Message|message|Detail|detail)\b[^>]*>([^<]{1,2000})<",
                          re.S)
# A SOAP fault's typed detail: WSDL faults are elements named for what went wrong
# (``<ns:exceededRequestLimitFault>``, ``<InvalidCredentialsException>``), read by their parts.
_XML_TYPED_RE = re.compile(r"<(?:[\w-]+:)?([A-Za-z]\w{2,80}(?:Fault|Exception|Error))[\s>/]")
# Elixir and Erlang error reports: "** (RuntimeError) ...", "** (exit) exited in: ...", "** (EXIT) time out".
_BEAM_RE = re.compile(r"^\s*\*\* \(([A-Za-z][\w.]*)\)")
# An Erlang/Elixir error tuple as printed: {error,nxdomain}, {error,{tls_alert,...}}, {:error, :timeout}.
_ERLANG_ERROR_RE = re.compile(r"^\s*\{:?error,\s*\{?:?'?([A-Za-z_][A-Za-z0-9_]*)")
# A Redis error reply: its first word, in capitals, names the kind of error (RESP simple errors).
_REDIS_RE = re.compile(r"^\s*-?([A-Z]{3,12})\s+\S")
# A sign-in form where data was expected: the back end asks for credentials.
_PASSWORD_INPUT_RE = re.compile(r"<input\b[^>]*\btype\s*=\s*[\"']?password\b", re.I)
# A last line that says the output above was cut short (a row limit, a size cap): a trailer such
# as "# export truncated ...", "-- output truncated", "(results incomplete)".
_TRAILER_RE = re.compile(r"^\s*(?:#|--|//|\(|\[|\.\.\.|\u2026|note:|warning:)", re.I)

# Python reprs of exception classes and objects: "<class 'TimeoutError'>", "<_InactiveRpcError of RPC ...>".
_REPR_RE = re.compile(r"^\s*<class '([\w.]+)'>|^\s*<([\w.]*(?:Error|Exception|Fault))\b")


def _stripped(text: str) -> str:
    """The text without surrounding white space or a leading byte-order mark."""
    return text.strip().lstrip(_BOM).lstrip()


def _exception_name(line: str) -> str | None:
    m = _EXCEPTION_RE.match(line)
    if m is None:
        return None
    name = m.group(1)
    return name if _is_exception_name(name) else None


def _is_exception_name(name: str) -> bool:
    """A (qualified) name that is an exception class: by its suffix, by the vocabulary, or by the
    module it lives in (Python packages keep theirs in ``exceptions`` or ``errors`` modules:
    ``pika.exceptions.ConnectionClosedByBroker``)."""
    parts = re.split(r"::|[./\\]", name)
    last = parts[-1]
    return (bool(_EXC_SUFFIX_RE.search(last)) or norm(last) in load().tokens or norm(name) in load().exceptions
            or any(p.lower() in _EXCEPTION_MODULES for p in parts[:-1]))


def _edge_lines(text: str) -> list[str]:
    lines = [ln for ln in text.splitlines() if ln.strip()]
    if len(lines) <= 2 * MAX_LINES:
        return [ln[:500] for ln in lines]
    return [ln[:500] for ln in lines[:MAX_LINES] + lines[-MAX_LINES:]]


def read_text(text: str, *, reply: bool = False) -> Reading:
    """Whether a plain text (not JSON) is an error, and what it means.

    ``reply``: the text is a model's reply, which may discuss errors in prose; only forms at its
    start count (a status line, a bracketed tag, an error prefix, an exception line, an error
    page, or a published error text among its first words of a short reply). A tool's text is
    also read at its end (a run that printed some lines and then failed).
    """
    try:
        return _read_text(text, reply)
    except Exception:  # noqa: BLE001 - a reader never breaks its caller
        return NOTHING


def _read_text(text: str, reply: bool) -> Reading:
    if reply:  # only the start of a reply counts: never copy or split a long one
        head = text.lstrip().lstrip(_BOM).lstrip()[:MAX_TEXT]
        stripped = head.rstrip() if len(text) <= MAX_TEXT else head
    else:
        stripped = _stripped(text)[:MAX_WHOLE]
    if not stripped:
        return NOTHING
    if not reply and (wrapper := _MCP_TOOL_ERROR_RE.match(stripped)) is not None:
        # The MCP SDK's server puts "Error executing tool <name>: " before the tool's own error
        # text (nothing after it when the tool crashed): the error is what follows, in its form.
        inner = _read_text(stripped[wrapper.end():], reply) if wrapper.end() < len(stripped) else NOTHING
        return inner if inner.is_error else Reading(True, inner.meaning or GENERIC, inner.evidence, "error_prefix")
    t = load()
    if stripped[0] in "{[":
        value = _embedded_json(stripped)
        if value is not None:
            got = read_value(value)
            if got.found:
                return got
    if _HTML_RE.match(stripped):
        return _html(t, stripped)
    if stripped.startswith("<"):
        got = _xml(t, stripped)
        if got.found:
            return got
    if stripped.startswith("ISA"):
        got = _x12_ack(stripped)
        if got.found:
            return got
    if stripped.startswith("MSH|"):
        got = _hl7_ack(t, stripped)
        if got.found:
            return got
    lines = _edge_lines(stripped.split("\n", 1)[0] if reply else stripped)
    form = ""
    ev = _Evidence()
    for i, line in enumerate(lines):
        if i == 0:
            status = _status_line(t, line)
            if status is not None:
                form = "status_line"
                ev.add(status)
                break
            bracket = _BRACKET_RE.match(line)
            if bracket:
                form = "bracket_tag"
                ev.add(_code_hit(t, bracket.group(1)))
                break
        if i == 0 and (ldap := _LDAP_RE.match(line)) is not None:
            form = "error_prefix"
            ev.add(t.numbers.get(("ldap", int(ldap.group(1)))))
            break
        if line.lstrip().startswith("Traceback (most recent call last)"):
            form = "traceback"
            break
        repr_match = _REPR_RE.match(line)
        if repr_match:
            form = "exception"
            ev.add(_code_hit(t, repr_match.group(1) or repr_match.group(2)))
            break
        if _exception_name(line) is not None:
            form = "exception"
            break
        if i == 0 and (tup := _ERLANG_ERROR_RE.match(line)) is not None:  # {error,econnrefused}
            form = "exception"
            ev.add(_code_hit(t, tup.group(1)))
            break
        beam = _BEAM_RE.match(line)
        if beam:
            form = "exception"
            ev.add(_code_hit(t, beam.group(1)))
            break
        if _LOG_RE.match(line) or ("level=" in line and _LEVEL_RE.search(line)):
            form = "log_line"
            break
        if i == 0 and _PYDANTIC_RE.match(line):  # str() of pydantic's ValidationError
            form = "exception"
            ev.add(Hit("invalid_request", "pydantic:ValidationError"))
            break
        if i == 0 and _PREFIX_RE.match(line):
            form = "error_prefix"
            if _GO_EOF_RE.match(line):  # io.EOF: the peer closed the connection before answering
                ev.add(Hit("connection", "go:io.EOF"))
            break
        if i == 0 and (boto := _BOTOCORE_RE.match(line)) is not None:
            form = "exception"
            ev.add(_code_hit(t, boto.group(1)))
            break
        if i == 0 and not reply and any(r.match(line) for r in _TOOL_OPENINGS):
            form = "error_prefix"
            break
        if i == 0 and not reply and (mention := _CODE_MENTION_RE.search(line)) is not None:
            code = int(mention.group(1) or mention.group(2))
            form = "status_line"
            ev.add(t.http.get(code) or Hit(GENERIC, f"http:{code}"))
            break
        if i == 0 and _POWERSHELL_RE.match(line) and _POWERSHELL_RECORD_RE.search(stripped):
            form = "exception"
            break
        if i == 0 and not reply and "\n" not in stripped and (pkg := _package_error(t, line)) is not None:
            form = "error_prefix"
            ev.add(pkg)
            break
        exit_line = _EXIT_LINE_RE.match(line) if not reply and i == len(lines) - 1 and i > 0 else None
        if exit_line and int(exit_line.group(1)):
            form = "process_result"
            ev.add(t.numbers.get(("exit", int(exit_line.group(1)))))
            break
        paren = _PAREN_EXCEPTION_RE.match(line) if i == 0 else None
        if paren and _is_exception_name(paren.group(1)):
            form = "exception"
            ev.add(_code_hit(t, paren.group(1)))
            break
        if i == 0 and not reply and (redis := _redis_prefix(t, line)) is not None:
            form = "error_prefix"
            ev.add(redis)
            break
    if form:
        half = MAX_TEXT // 2
        scope = stripped if len(stripped) <= MAX_TEXT else stripped[:half] + "\n" + stripped[-half:]
        if form in ("traceback", "exception"):
            for line in _edge_lines(scope):
                name = _exception_name(line)
                if name is not None:
                    ev.add(_code_hit(t, name))
        read_words(_URL_RE.sub(" ", scope), ev)
        return ev.reading(form)
    # A short text that opens with a published error text ("Connection refused", "Request timed out").
    if len(stripped) <= (300 if reply else 400):
        first = _phrase_hits(t, stripped, ev, 4 if reply else 12)
        if first >= 0:
            _text_codes(t, stripped, ev)
            return ev.reading("sentence")
    if not reply:
        return _trailer(t, stripped)
    return NOTHING


def _package_error(t: Table, line: str) -> Hit | None:
    """A Go sentinel error prefixed by its package ("nats: timeout"): the words after the prefix
    must name a failure (a published text, or a name part such as ``timeout``)."""
    m = _PACKAGE_PREFIX_RE.match(line)
    if m is None:
        return None
    rest = m.group(1)
    ev = read_words(rest)
    for w in words(rest):
        ev.add(_parts_hit(t, w))
    hit = best(ev.hits)
    return hit if hit is not None and hit.meaning != GENERIC else None


def _redis_prefix(t: Table, line: str) -> Hit | None:
    """A Redis error reply ("OOM command not allowed ...", "NOAUTH Authentication required."): the
    first word in capitals is the error's kind when the vocabulary lists it as a Redis code."""
    m = _REDIS_RE.match(line)
    if m is None:
        return None
    hit = t.tokens.get(norm(m.group(1)))
    return hit if hit is not None and hit.evidence.startswith("redis:") else None


def _trailer(t: Table, text: str) -> Reading:
    """A text whose last line is a trailer saying the output above it was cut (``# export
    truncated: row limit reached``): a partial answer, by the words the partial flags use."""
    tail = text[-200:]
    cut = tail.rfind("\n")
    if cut < 0:
        return NOTHING
    last = tail[cut + 1:]
    if not _TRAILER_RE.match(last):
        return NOTHING
    for w in words(last):
        flag = t.flags.get(w)
        if flag is not None and flag[1].meaning == "partial" and flag[0] is True:
            return Reading(False, "partial", f"trailer:{w}", "trailer")
    return NOTHING


def _refined(t: Table, hit: Hit, rest: str) -> Hit:
    """A generic status refined by a published text after it: LWP's own responses ("500 read
    timeout", "500 Can't connect to host:443") carry what happened only in their words."""
    if hit.meaning != GENERIC:
        return hit
    ev = _Evidence()
    _phrase_hits(t, rest[:120], ev)
    return best([*ev.hits, hit]) or hit


def _status_line(t: Table, line: str) -> Hit | None:
    """``429 Too Many Requests: ...``, ``HTTP/1.1 503 Service Unavailable``, ``HTTP 500``: a status
    at the start of a text, followed by ``HTTP``, a colon or its own published reason (so that
    "500 items found" is not one)."""
    m = _STATUS_LINE_RE.match(line)
    if m is None:
        return None
    code = int(m.group(1))
    rest = line[m.end(1):].lstrip()
    opening = line.lstrip().upper()
    if not (opening.startswith(("HTTP", "ERROR")) or rest[:1] in (":", "-", "") or words(rest)[:1] == ["error"]):
        if _phrase_hits(t, rest[:80], _Evidence(), 2) < 0 and not any(
                words(r["phrase"]) == words(rest)[:len(words(r["phrase"]))] for r in t.rows.get("http", [])
                if r["code"] == code):
            return None  # "500 items found": not a status line
    return _refined(t, t.http.get(code) or Hit(GENERIC, f"http:{code}"), rest)


def _embedded_json(text: str) -> Any:
    if len(text) > MAX_WHOLE:
        return None
    try:
        return json.loads(text)
    except ValueError:
        return None


def _html(t: Table, text: str) -> Reading:
    """An HTML page is an error when its title or heading is a status or a published error text."""
    head = " ".join(m.group(2) for m in _TITLE_RE.finditer(text[:MAX_TEXT]))
    if _PASSWORD_INPUT_RE.search(text[:MAX_WHOLE]):  # a sign-in page: the session was not accepted
        return Reading(True, "auth", "html:password_input", "html_page")
    if not head.strip():
        return NOTHING
    ev = _Evidence()
    m = re.search(r"\b([45]\d\d)\b", head)
    if m:
        code = int(m.group(1))
        ev.add(t.http.get(code) or Hit(GENERIC, f"http:{code}"))
    _phrase_hits(t, head, ev)
    if not ev.hits:
        return NOTHING
    return ev.reading("html_page")


def _xml(t: Table, text: str) -> Reading:
    """A SOAP ``Fault`` or an ``Error`` element (S3, Azure storage): codes from its code elements,
    words from its message elements. Read by pattern, never parsed (no entity expansion)."""
    body = text[:MAX_WHOLE]
    if not _XML_FAULT_RE.search(body):
        return NOTHING
    ev = _Evidence()
    for m in _XML_CODE_RE.finditer(body):
        value = m.group(2).strip()
        if value.isdigit():
            ev.add(_number_hit(t, "code", int(value), True))
        else:
            ev.add(_code_hit(t, value.split(":")[-1]))
    for m in _XML_TEXT_RE.finditer(body):
        read_words(m.group(2), ev)
    for m in _XML_TYPED_RE.finditer(body):
        if m.group(1).lower() not in ("fault", "error"):
            ev.add(_code_hit(t, m.group(1)))
    if _XML_FIELD_ERROR_RE.search(body):  # an error about one of the call's fields: it failed validation
        ev.add(Hit("invalid_request", "structure:field_errors"))
    return ev.reading("xml_fault")


# --- JSON values -------------------------------------------------------------------------------------

def _truthy(v: Any) -> bool:
    return v not in (None, False, "", [], {}, 0)


def _has_message(obj: dict[str, Any]) -> bool:
    return any(norm(k) in ("message", "msg", "detail", "details", "description", "error", "title", "errormessage")
               for k in list(obj)[:MAX_KEYS] if isinstance(k, str))


def _read_error(t: Table, value: Any, ev: _Evidence, depth: int = 0) -> None:
    """Codes and words of an error report (a member known to report a failure)."""
    if ev.nodes <= 0 or depth > 6:
        return
    ev.nodes -= 1
    if isinstance(value, str):
        text = value[:MAX_TEXT]
        if len(text) <= 80 and " " not in text.strip():
            hit = _code_hit(t, text)
            ev.add(hit)
            if hit is not None and not hit.evidence.startswith("name:"):
                return  # a listed code says what it means; the words inside it would only guess
        read_words(text, ev)
    elif isinstance(value, bool):
        return
    elif isinstance(value, int | float):
        if isinstance(value, int):
            ev.add(_number_hit(t, "value", value, False))
    elif isinstance(value, list):
        for item in value[:MAX_ITEMS]:
            _read_error(t, item, ev, depth + 1)
    elif isinstance(value, dict):
        # A small number in `code` is a gRPC status only in a google.rpc.Status-shaped object
        # ({code, message, details}); elsewhere (MessageBird's {code, description, parameter}) it
        # is the vendor's own number.
        msg = _has_message(value) and _STATUS_SHAPED.issuperset(norm(k) for k in list(value)[:MAX_KEYS]
                                                                if isinstance(k, str))
        # A reference to the object the error is about (Kubernetes StatusDetails: name, group,
        # kind, uid): its name and kind are data ("auth" may be a service's name), not codes.
        reference = not value.keys().isdisjoint(_REFERENCE_KEYS)
        for k, v in list(value.items())[:MAX_KEYS]:
            if not isinstance(k, str):
                continue
            nk = norm(k)
            if nk in CODE_KEYS and not (reference and nk in ("name", "kind")):
                if isinstance(v, int) and not isinstance(v, bool):
                    ev.add(_number_hit(t, nk, v, msg))
                elif isinstance(v, str):
                    s = v.strip()
                    if s.isdigit() and len(s) == 3:
                        ev.add(_number_hit(t, nk, int(s), msg))
                    elif nk in ("sqlstate", "pgcode") or (nk == "code" and _sqlstate_context(value)):
                        ev.add(_sqlstate(t, s))
                    elif len(s) <= 120 and (" " not in s or nk in ("type", "title")):
                        ev.add(_code_hit(t, s))
            if nk in MESSAGE_KEYS and isinstance(v, str):
                read_words(v, ev)
            elif isinstance(v, dict | list):
                _read_error(t, v, ev, depth + 1)
            elif nk in ("retryafter", "retryafterseconds", "retryafterms") and _truthy(v):
                ev.add(Hit("rate_limit", "http:Retry-After"))


def _sqlstate_context(obj: dict[str, Any]) -> bool:
    """node-postgres / libpq error objects: a severity beside the 5-character code."""
    sev = obj.get("severity")
    return isinstance(sev, str) and sev.upper() in ("ERROR", "FATAL", "PANIC")


def _has_items(value: Any, depth: int = 0) -> bool:
    """A non-empty list somewhere inside (what a search or a listing found)."""
    if isinstance(value, list):
        return bool(value)
    if isinstance(value, dict) and depth < 3:
        return any(_has_items(v, depth + 1) for v in list(value.values())[:MAX_KEYS])
    return False


def _data_present(obj: dict[str, Any]) -> bool:
    """Other members carry data (a partial answer rather than none): a scalar of the answer's own,
    or a list with items anywhere below (an envelope of counts around empty lists is no data)."""
    for k, v in list(obj.items())[:MAX_KEYS]:
        if not isinstance(k, str) or norm(k) in _META_KEYS or v is None or isinstance(v, bool):
            continue
        if isinstance(v, list | dict):
            if _has_items(v):
                return True
        elif v not in ("", 0):
            return True
    return False


def _failed_parts(obj: dict[str, Any]) -> bool:
    """Some parts of the answer failed while others answered: a non-empty ``failures`` list or a
    ``failed`` count above zero in the answer or its shards summary (Elasticsearch ``_shards``)."""
    for holder in (obj, obj.get("_shards"), obj.get("shards")):
        if not isinstance(holder, dict):
            continue
        failed, failures = holder.get("failed"), holder.get("failures")
        if (isinstance(failed, int) and not isinstance(failed, bool) and failed > 0) or (
                isinstance(failures, list) and failures):
            return True
    return False


def _flag_reading(t: Table, obj: dict[str, Any]) -> tuple[Reading | None, list[Hit]]:
    """In-band flags of an object: (a partial-answer reading, the hits of flags saying it failed)."""
    partial: Reading | None = None
    failed: list[Hit] = []
    for k, v in list(obj.items())[:MAX_KEYS]:
        if not isinstance(k, str) or not isinstance(v, bool):
            continue
        flag = t.flags.get(norm(k))
        if flag is None or v is not flag[0]:
            continue
        _, hit, with_data = flag
        if hit.meaning == "partial" or (with_data != hit.meaning and _data_present(obj)):
            partial = partial or Reading(False, "partial", hit.evidence, "flag")
        else:
            failed.append(hit)
    return (None if failed else partial), failed


def _status_reading(t: Table, obj: dict[str, Any]) -> Hit | None:
    """A status-like member that says the call failed: a failure word (beside a message or code,
    unless the word names a call-level failure), a gRPC status name, a log level, or an HTTP status
    of 400 or more (``code`` only beside a message). A record's own status ("the flight: failed")
    has neither."""
    msg = _has_message(obj)
    for k, v in list(obj.items())[:MAX_KEYS]:
        if not isinstance(k, str):
            continue
        nk = norm(k)
        if nk in STATUS_KEYS and isinstance(v, str) and len(v) <= 40:
            word = norm(v)
            if nk in ("level", "severity", "levelname"):
                if word in _FAILED_LEVELS and msg:
                    return Hit(GENERIC, f"status:{v.lower()}")
                continue
            hit = t.status_words.get(word)
            if hit is not None and (msg or word in _CALL_LEVEL_WORDS or "reason" in obj or "code" in obj):
                return hit
            if nk == "status" and v.isupper() and len(v) > 3:  # google.rpc.Code names in `status`
                hit = t.grpc_names.get(word)
                if hit is not None:
                    return hit
        if nk in HTTP_STATUS_KEYS and (nk != "code" or msg):
            code = v if isinstance(v, int) and not isinstance(v, bool) else (
                int(v) if isinstance(v, str) and v.isdigit() and len(v) == 3 else None)
            if code is not None and 400 <= code <= 599:
                return t.http.get(code) or Hit(GENERIC, f"http:{code}")
            # google.rpc.Status as a whole answer (grpc-gateway): a small code, a message, details
            if (nk == "code" and isinstance(code := v, int) and not isinstance(v, bool) and 1 <= code <= 16
                    and msg and ("details" in obj or len(obj) <= 2)):
                return t.grpc.get(code)
    return None


def read_value(value: Any) -> Reading:
    """Whether a parsed JSON value reports a failure (or a partial answer), and what it means."""
    try:
        return _read_value(value)
    except Exception:  # noqa: BLE001 - a reader never breaks its caller
        return NOTHING


def _read_value(value: Any) -> Reading:
    t = load()
    if isinstance(value, str):
        return read_text(value)
    if isinstance(value, list):
        for item in value[:MAX_ITEMS]:
            if isinstance(item, dict):
                got = _read_object(t, item, top=False)
                if got.is_error and len(value) == 1:
                    return got
        return NOTHING
    if not isinstance(value, dict):
        return NOTHING
    got = _read_object(t, value, top=True)
    if got.found:
        return got
    # one wrapper level: {"result": {...}}, {"response": {"status": 503, ...}}
    lists = []
    for k, v in list(value.items())[:MAX_KEYS]:
        if isinstance(k, str) and norm(k) in WRAPPER_KEYS and isinstance(v, dict):
            inner = _read_object(t, v, top=False)
            if inner.found:
                return inner
            inner = _graphql_fields(t, v)
            if inner.is_error:
                return inner
        elif type(v) is list:
            lists.append(v)
    # a batch of one whose only item failed (Vonage's {"message-count": "1", "messages": [{"status":
    # "4", "error-text": ...}]}): the call failed
    if len(lists) == 1 and len(lists[0]) == 1 and isinstance(lists[0][0], dict):
        inner = _read_object(t, lists[0][0], top=False)
        if inner.is_error:
            return inner
    return NOTHING


_ERROR_TYPE_RE = re.compile(r"(Exception|Error|Fault)$")
# A GraphQL field that resolves to a result or an error type (Dagster's ``runOrError``): its
# member's ``__typename`` says which, not its name.
_UNION_FIELD_RE = re.compile(r"[a-z]Or(?:Error|Exception|Fault|Failure)$")


def _graphql_fields(t: Table, data: dict[str, Any]) -> Reading:
    """A GraphQL answer's root field that resolved to an error type of the schema's union
    (``{"data": {"launchRun": {"__typename": "UnauthorizedError", "message": ...}}}``): the
    operation failed, though the answer has no ``errors`` member."""
    for v in list(data.values())[:MAX_KEYS]:
        if isinstance(v, dict) and "__typename" in v:
            got = _read_object(t, v, top=False)
            if got.is_error:
                return got
    return NOTHING


# X12 functional (997) and implementation (999) acknowledgments: AK9's first element says whether
# the group was accepted (A, E: with errors noted), partly accepted (P) or rejected (R, M, W, X).
_X12_REJECTED = frozenset({"R", "M", "W", "X"})


def _x12_ack(text: str) -> Reading:
    """An X12 interchange that acknowledges a rejected (or partly accepted) group. The element
    separator is the character after ``ISA``, the segment terminator the one that ends the
    fixed-length ISA segment (its 106th character)."""
    if len(text) < 106 or text[3].isalnum():
        return NOTHING
    sep, term = text[3], text[105]
    segments = [seg.strip().split(sep) for seg in text[:MAX_WHOLE].split(term)]
    if not any(seg[0] == "ST" and len(seg) > 1 and seg[1] in ("997", "999") for seg in segments):
        return NOTHING
    for seg in segments:
        if seg[0] == "AK9" and len(seg) > 1:
            if seg[1] in _X12_REJECTED:
                return Reading(True, "invalid_request", f"x12:AK9*{seg[1]}", "x12_ack")
            if seg[1] == "P":
                return Reading(False, "partial", "x12:AK9*P", "x12_ack")
    return NOTHING


# HL7 v2 acknowledgment codes (MSA-1) that say the message was not processed: application error
# or reject, in original and enhanced acknowledgment mode.
_HL7_NOT_ACCEPTED = frozenset({"AE", "AR", "CE", "CR"})


def _hl7_ack(t: Table, text: str) -> Reading:
    """An HL7 v2 acknowledgment whose MSA segment did not accept the message. Its meaning is the
    ERR segment's error condition code (table 0357: ``204^Unknown key identifier^HL70357``), else
    the words of the ERR segment and of MSA's text."""
    segments = [seg.split(text[3]) for seg in re.split(r"\r\n|\r|\n", text[:MAX_WHOLE])]
    msa = next((seg for seg in segments if seg[0] == "MSA" and len(seg) > 1), None)
    if msa is None or msa[1] not in _HL7_NOT_ACCEPTED:
        return NOTHING
    ev = _Evidence()
    words = _Evidence()
    for seg in segments:
        if seg[0] != "ERR":
            continue
        for field in seg[1:]:
            code = field.split("^", 1)[0]
            if code.isdigit() and "HL70357" in field:
                ev.add(t.numbers.get(("hl7", int(code))))
        _read_error(t, {"message": " ".join(seg[1:]).replace("^", " ")}, words)
    if len(msa) > 3:
        _read_error(t, {"message": msa[3]}, words)
    return (ev if ev.hits else words).reading("hl7_ack")


def _status_envelope(v: Any) -> bool:
    """MiniMax's ``base_resp`` ({"status_code": 1002, "status_msg": "rate limit exceeded(RPM)"}),
    on every reply: a non-zero status code in it is the call's failure."""
    code = v.get("status_code") if isinstance(v, dict) else None
    return type(code) is int and code != 0


def _operation_outcome(t: Table, obj: dict[str, Any]) -> Reading:
    """A FHIR OperationOutcome: the call failed when an issue is of severity error or fatal, and
    means what its IssueType code says; the issue's details and diagnostics refine the broad codes
    (HAPI FHIR reports an unknown resource as ``processing``, "Resource Patient/9 is not known").
    Informational and warning outcomes (a successful delete's) are no failure."""
    issues = obj.get("issue")
    if not isinstance(issues, list):
        return NOTHING
    codes, words = _Evidence(), _Evidence()
    failed = False
    for issue in issues[:MAX_ITEMS]:
        if not isinstance(issue, dict) or issue.get("severity") not in ("error", "fatal"):
            continue
        failed = True
        code = issue.get("code")
        codes.add(t.fhir_issue.get(norm(code)) if isinstance(code, str) else None)
        _read_error(t, {k: issue[k] for k in ("details", "diagnostics") if k in issue}, words)
    if not failed:
        return NOTHING
    broad = all(h.meaning in ("invalid_request", GENERIC) for h in codes.hits)
    if broad:
        codes.hits += words.hits
    got = codes.reading("operation_outcome")
    return Reading(False, "partial", got.evidence, got.form) if got.meaning == "partial" else got


def _read_object(t: Table, obj: dict[str, Any], *, top: bool) -> Reading:
    if obj.get("resourceType") == "OperationOutcome":
        return _operation_outcome(t, obj)
    ev = _Evidence()
    partial, failed = _flag_reading(t, obj)
    if partial is not None:
        return partial
    if not failed and _failed_parts(obj) and _data_present(obj):
        return Reading(False, "partial", "flag:failed_parts", "flag")
    process = _process_reading(t, obj)
    if process is not None:
        return process
    more = _more_than_shown(obj)
    if more:
        return Reading(False, "partial", more, "count")
    members = [(k, v) for k, v in list(obj.items())[:MAX_KEYS]
               if isinstance(k, str) and ((nk := norm(k)) in ERROR_KEYS
                                          or (len(obj) == 1 and isinstance(v, dict) and _EXC_SUFFIX_RE.search(k)
                                              and not _UNION_FIELD_RE.search(k))
                                          or (nk == "baseresp" and _status_envelope(v))) and _truthy(v)]
    status = _status_reading(t, obj)
    kind = obj.get("__type")
    if isinstance(kind, str):  # AWS JSON protocols may qualify it: "com.amazonaws.sqs#OverLimit"
        kind = kind.rsplit("#", 1)[-1]
    typed = isinstance(kind, str) and (bool(_ERROR_TYPE_RE.search(kind)) or norm(kind) in t.tokens)
    if not typed and isinstance(obj.get("__typename"), str):  # a GraphQL union's error member
        kind = obj["__typename"]
        typed = bool(_ERROR_TYPE_RE.search(kind))
    if not (members or failed or status or typed):
        notice = _partial_notice(t, obj)
        if notice:
            return Reading(False, "partial", notice, "notice")
        return _message_only(t, obj) or NOTHING
    if status is not None and status.meaning == "partial" and not (members or failed or typed):
        return Reading(False, "partial", status.evidence, "status_object")
    form = "error_member" if members or typed else "flag" if failed else "status_object"
    for hit in failed:
        if hit.meaning != GENERIC:
            ev.add(hit)
    ev.add(status)
    if typed:
        ev.add(_code_hit(t, str(kind)))
    for _, v in members:
        _read_error(t, v, ev)
        if _field_errors(v):
            ev.add(Hit("invalid_request", "structure:field_errors"))
    # the rest of the report: codes and words beside the error member (Kubernetes reason, RFC
    # 9457 title and detail, the content of an MCP result with isError)
    _read_error(t, {k: v for k, v in list(obj.items())[:MAX_KEYS]
                    if not (isinstance(k, str) and norm(k) in ERROR_KEYS)}, ev)
    return ev.reading(form)


def _field_errors(value: Any) -> bool:
    """An error member that maps the call's fields to what is wrong with each (``{"errors":
    {"priority": "Specify a valid priority"}}``: Jira, Rails, Django REST framework, Laravel): the
    call failed validation. A member holding a string that an error report itself uses (code,
    status, ...) is not a field; one holding a list of messages is, whatever its name, except
    the report's own message members."""
    if not isinstance(value, dict) or not value or len(value) > MAX_KEYS:
        return False
    for k, v in value.items():
        if not isinstance(k, str) or norm(k) in MESSAGE_KEYS:
            return False
        if isinstance(v, list):  # a field's messages, whatever it is called (Laravel's "status": [...])
            if not v or not all(isinstance(x, str) and x.strip() for x in v[:MAX_ITEMS]):
                return False
        elif not (isinstance(v, str) and v.strip()) or norm(k) in CODE_KEYS or norm(k) in REPORT_KEYS:
            return False
    return True


def _exit_status(obj: dict[str, Any]) -> int | None:
    for k, v in list(obj.items())[:MAX_KEYS]:
        if type(v) is int and isinstance(k, str) and norm(k) in _EXIT_KEYS:
            return v
    return None


def _process_reading(t: Table, obj: dict[str, Any]) -> Reading | None:
    """A process's result (``{"exit_code": 1, "stdout": "", "stderr": "..."}``): a non-zero exit
    status is a failure, meaning what its error stream says, else what the status says (the shell's
    published statuses: 124 timed out, 126 not executable, 127 not found)."""
    # The output streams first: one set intersection with their spellings, on every result.
    if obj.keys().isdisjoint(_STREAM_KEYS):
        return None
    code = _exit_status(obj)
    if not code:
        return None
    ev = _Evidence()
    ev.add(t.numbers.get(("exit", code)))
    for k, v in obj.items():
        if isinstance(k, str) and norm(k) in ("stderr", "error", "message") and isinstance(v, str) and v.strip():
            read_words(v, ev)
    return ev.reading("process_result")


def _count(value: Any) -> int | None:
    """A count member's value: an integer, or an integer written as a string."""
    if type(value) is int:
        return value
    if isinstance(value, str) and value.isdigit() and len(value) <= 12:
        return int(value)
    return None


def _pages(obj: dict[str, Any]) -> bool:
    """Whether an answer offers the rest: a paging member, or a ``links`` object with a ``next``."""
    for k, v in list(obj.items())[:MAX_KEYS]:
        if not isinstance(k, str):
            continue
        nk = norm(k)
        if nk == "links":
            if not isinstance(v, dict) or any(isinstance(x, str) and norm(x) == "next" for x in v):
                return True
        elif nk in _PAGING_KEYS:
            return True
    return False


def _more_than_shown(obj: dict[str, Any]) -> str:
    """Evidence that an answer holds fewer items than it says exist, with no way offered to the
    rest: Kubernetes ``ListMeta.remainingItemCount`` above zero, a count kept under ``meta``
    above the list's length, or, in a listing (one list beside its count and metadata, nothing
    else: an order's ``total`` beside its ``items`` is an amount), a count member (``total``)
    above it. '' otherwise."""
    meta = obj.get("metadata")
    for holder in (obj, meta if isinstance(meta, dict) else None):
        if holder is not None:
            left = holder.get("remainingItemCount")
            if isinstance(left, int) and not isinstance(left, bool) and left > 0:
                return "count:remainingItemCount"
    counted = _count_above_items(obj)
    if not counted or not any(type(v) is list and v for v in obj.values()):
        return ""  # no count above the items, or an empty page beside one: the store's norm decides
    if not counted.startswith("meta.") and any(
            type(v) is not list and (k := norm(key)) not in _COUNT_KEYS and k not in _META_KEYS
            for key, v in list(obj.items())[:MAX_KEYS] if isinstance(key, str)):
        return ""  # other members carry data of their own: not a listing
    return f"count:{counted}"


def count_above_items(obj: dict[str, Any]) -> str:
    """The count member of an answer with one list (empty or not) that says more items exist
    than the list holds, when nothing in the answer offers the rest: ``meta.<key>`` for a
    JSON:API-style count under ``meta`` (about the answer, whatever else it holds), else the
    top-level key. '' when there is none.

    Whether a top-level count beside other data is a cut depends on the tool: an order's
    ``total`` is an amount above its item count in every answer, a search's ``total`` equals
    its hits in every answer but a cut one. ``_more_than_shown`` reads it alone only in a
    listing; elsewhere the store's norm of the tool decides (``diagnosers/norms.py``).
    """
    try:
        return _count_above_items(obj)
    except Exception:  # noqa: BLE001 - a reader never breaks its caller (a tool may return any mapping)
        return ""


def _count_above_items(obj: dict[str, Any]) -> str:
    shown = -1
    for v in obj.values():
        if type(v) is list:
            if shown >= 0:
                return ""  # several lists: not one listing
            shown = len(v)
    if shown < 0:
        return ""
    if isinstance(meta := obj.get("meta"), dict):
        counted = [norm(k) for k, v in list(meta.items())[:MAX_KEYS]
                   if isinstance(k, str) and norm(k) in _COUNT_KEYS and (_count(v) or 0) > shown]
        if counted and not _pages(obj) and not _pages(meta):
            return f"meta.{counted[0]}"
    # Only a count above the items shown needs the rest of the object read (the usual answer has none).
    # OData v2 writes its inline count as a string ("__count": "12").
    items = list(obj.items())[:MAX_KEYS]
    counts = [k for k in (norm(key) for key, v in items if isinstance(key, str) and (_count(v) or 0) > shown)
              if k in _COUNT_KEYS]
    if not counts or any(isinstance(key, str) and norm(key) in _PAGING_KEYS for key, _ in items):
        return ""
    return counts[0]


def _partial_notice(t: Table, obj: dict[str, Any]) -> str:
    """A warning the answer carries about itself that says it was cut ("Query result truncated:
    max data points reached", "returning the first 4 of 8 points" beside a status "incomplete"),
    at the top or under ``meta``: its partial word as evidence, else ''."""
    places = [obj] + [m for m in (obj.get("meta"), obj.get("metadata")) if isinstance(m, dict)]
    for place in places:
        for k, v in list(place.items())[:MAX_KEYS]:
            if not isinstance(k, str) or norm(k) not in _NOTICE_KEYS:
                continue
            for item in (v if isinstance(v, list) else [v])[:MAX_ITEMS]:
                text = item if isinstance(item, str) else (
                    item.get("text") or item.get("message") if isinstance(item, dict) else None)
                if not isinstance(text, str):
                    continue
                for w in words(text[:500]):
                    flag = t.flags.get(w)
                    if flag is not None and flag[1].meaning == "partial" and flag[0] is True:
                        return f"notice:{w}"
    status = obj.get("status")
    if isinstance(status, str) and any(isinstance(k, str) and norm(k) in _NOTICE_KEYS for k in obj):
        hit = t.status_words.get(norm(status))  # "incomplete" beside the warnings that say why
        if hit is not None and hit.meaning == "partial":
            return f"status:{status.lower()}"
    return ""


def _validation_items(value: Any) -> bool:
    """A list of validation errors as pydantic reports them (``[{"type", "loc", "msg", ...}]``,
    FastAPI's 422 ``detail``): each item says where (``loc``) and what (``msg``)."""
    return (isinstance(value, list) and bool(value)
            and all(isinstance(x, dict) and "loc" in x and "msg" in x for x in value[:MAX_ITEMS]))


def _message_only(t: Table, obj: dict[str, Any]) -> Reading | None:
    """An object made only of what an error report holds (a message beside codes, details, hints,
    documentation links, ids): how several APIs refuse a call (GitHub's ``{message,
    documentation_url}``, PostgREST's ``{code, message, details, hint}``, PayPal's ``{name, message,
    debug_id, links}``). It is a failure when its words say which one, or when a code or name
    member holds a published error code (then even a generic one); a bare message about anything
    else is not taken for one."""
    keys = {norm(k) for k in obj if isinstance(k, str)}
    # APNs answers a refused push with only {"reason": "BadDeviceToken"} (and a timestamp)
    reason_only = "reason" in keys and keys <= {"reason", "timestamp"}
    if not obj or len(obj) > 6 or not (reason_only or (keys <= REPORT_KEYS and keys & {"message", "detail", "msg"})):
        return None
    ev = _Evidence()
    coded = False  # a published error code names the failure, even a generic one
    for k, v in obj.items():
        if not isinstance(k, str):
            continue
        nk = norm(k)
        if nk in ("message", "detail", "msg") and isinstance(v, str):
            _phrase_hits(t, v, ev)
        elif nk == "detail" and _validation_items(v):  # FastAPI / pydantic: what failed, field by field
            ev.add(Hit("invalid_request", "structure:validation_detail"))
            coded = True
        elif nk in ("code", "name", "type", "reason") and isinstance(v, str) and v.strip():
            code = v.strip()
            hit = (_sqlstate(t, code) if nk == "code" and len(code) == 5 and code[:2].isalnum()
                   and any(c.isdigit() for c in code) else t.tokens.get(norm(code)))
            if hit is None and _EXC_SUFFIX_RE.search(code):  # Xero's "Type": "OrganisationOfflineException"
                hit = _code_hit(t, code) or Hit(GENERIC, f"exception:{code}")
            coded = coded or hit is not None
            ev.add(hit)
        elif nk == "sqlstate" and isinstance(v, str) and len(v.strip()) == 5:
            hit = _sqlstate(t, v.strip())
            coded = coded or hit is not None
            ev.add(hit)
    hit = best(ev.hits)
    if hit is None or (hit.meaning == GENERIC and not coded):
        return None
    return Reading(True, hit.meaning, hit.evidence, "message_only")


def read_result(result: Any) -> Reading:
    """A tool result as the agent was shown it: text (JSON or not) or a structured value."""
    if isinstance(result, bytes | bytearray):
        result = bytes(result[:MAX_WHOLE]).decode("utf-8", "replace")
    if isinstance(result, str):
        stripped = _stripped(result)
        if stripped[:1] in ("{", "["):
            value = _embedded_json(stripped)
            if value is not None:
                return read_value(value)
        return read_text(result)
    return read_value(result)


def read_flagged_text(text: str) -> Reading:
    """A text its sender flagged as an error (an MCP result with ``isError``): what its own form
    says (the text may be a JSON error object, an XML fault, a status line), else the meaning of
    its codes, names and published texts, reading also the words of names on no list (the class
    name of an exception a server turned into text)."""
    try:
        t = load()
        whole = read_result(text)  # its own form first: a JSON error object, an XML fault, a status line
        if whole.is_error and whole.meaning and whole.meaning != GENERIC:
            return Reading(True, whole.meaning, whole.evidence, "flagged")
        scope = text[:MAX_TEXT]
        ev = read_words(_URL_RE.sub(" ", scope))
        for m in _TOKEN_RE.finditer(scope):
            tok = m.group(0)
            if _distinctive(tok) and "_" not in tok and "." not in tok:
                ev.add(_parts_hit(t, tok))
        return ev.reading("flagged")
    except Exception:  # noqa: BLE001 - a reader never breaks its caller
        return Reading(True, GENERIC, "", "flagged")


# --- exceptions ------------------------------------------------------------------------------------

def read_exception_names(names: Iterable[str], message: str = "") -> Reading:
    """An exception known by its class names (most derived first) and message, as recorded on a
    span (``exception.type``, ``exception.message``) or seen live."""
    try:
        t = load()
        ev = _Evidence()
        for name in names:  # the most derived class with a row decides; its parents are not read
            if not name:
                continue
            last = re.split(r"::|[.#/]", name)[-1]
            hit = t.exceptions.get(norm(name)) or t.exceptions.get(norm(name.removeprefix("builtins.")))
            if hit is None and (_EXC_SUFFIX_RE.search(last) or _distinctive(last)):
                hit = t.tokens.get(norm(last))
            if hit is not None:
                ev.add(hit)
                break
            ev.add(_parts_hit(t, last))
        if message:
            read_words(message, ev)
            top = best(ev.hits)
            if top is None or top.meaning == GENERIC:
                # A wrapper class that says little ("BackendError") around the text of the system
                # below it: that text's own form says more ("pika.exceptions.ConnectionClosedByBroker: ...").
                inner = _read_text(message[:MAX_WHOLE].strip(), False)
                if inner.is_error and inner.meaning and inner.meaning != GENERIC:
                    ev.add(Hit(inner.meaning, inner.evidence or inner.form))
        return ev.reading("exception")
    except Exception:  # noqa: BLE001
        return Reading(True, GENERIC, "", "exception")


def read_exception(exc: BaseException, depth: int = 0) -> Reading:
    """A live exception: its class hierarchy (``__mro__``), ``errno``, an HTTP status it carries,
    its message, then its cause (``raise ... from``) when that says more."""
    try:
        names = [f"{c.__module__}.{c.__qualname__}" for c in type(exc).__mro__
                 if c not in (BaseException, Exception, object)]
        names = [n.removeprefix("builtins.") for n in names]
        msg = str(exc)[:MAX_TEXT] if not isinstance(exc, KeyError) else ""
        got = read_exception_names(names, msg)
        t = load()
        extra: list[Hit] = []
        errno = getattr(exc, "errno", None)
        if isinstance(errno, int):
            extra.append(t.errno_number.get(errno) or t.winsock.get(errno) or Hit(GENERIC, f"errno:{errno}"))
        for attr in ("status_code", "status"):
            code = getattr(exc, attr, None)
            if isinstance(code, int) and 400 <= code <= 599:
                extra.append(t.http.get(code) or Hit(GENERIC, f"http:{code}"))
                break
        hits = [h for h in extra if h is not None]
        if got.meaning and got.meaning != GENERIC:
            hits.append(Hit(got.meaning, got.evidence))
        b = best(hits)
        if (b is None or b.meaning == GENERIC) and depth < 3:
            cause = exc.__cause__ or exc.__context__
            if cause is not None and cause is not exc:
                inner = read_exception(cause, depth + 1)
                if inner.meaning and inner.meaning != GENERIC:
                    return Reading(True, inner.meaning, inner.evidence, "exception")
        if b is None:
            return got
        return Reading(True, b.meaning, b.evidence, "exception")
    except Exception:  # noqa: BLE001
        return Reading(True, GENERIC, "", "exception")


# --- small lookups used by signals -----------------------------------------------------------------

def finish_reason_meaning(reason: str | None) -> Hit | None:
    """What a provider's finish/stop reason says (None for an ordinary stop, tool call or unknown)."""
    if not reason:
        return None
    return load().finish.get(norm(str(reason)))


def http_status_meaning(status: int | None) -> Hit | None:
    if status is None or status < 400:
        return None
    t = load()
    return t.http.get(status) or Hit(GENERIC, f"http:{status}")


def code_meaning(code: str) -> Hit | None:
    """A provider's error code or type standing alone (``insufficient_quota``, ``overloaded_error``)."""
    try:
        return _code_hit(load(), code)
    except Exception:  # noqa: BLE001
        return None


_VERB_RE = re.compile(r"[A-Z]?[a-z]+|[A-Z]+(?![a-z])")


def listing_key(key: str) -> bool:
    """Whether ``key`` is a listing's own member (a count, or a way to the next page: ``hasMore``,
    ``nextPageToken``, ``totalResults``), which APIs often spell in another convention than their
    records."""
    k = norm(key)
    return k in _PAGING_KEYS or k in _COUNT_KEYS


def method_kind(tool_name: str | None) -> str:
    """``safe`` / ``idempotent`` / ``unsafe`` for a tool named after a standard method
    (``get_weather``, ``createOrder``, ``book_flight``), '' when its name says nothing."""
    if not tool_name:
        return ""
    m = _VERB_RE.match(tool_name.strip("_"))
    if m is None:
        return ""
    return load().methods.get(m.group(0).lower(), "")
