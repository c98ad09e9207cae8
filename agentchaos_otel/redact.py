"""One place that keeps credentials out of everything we write: spans, DuckDB, spools, OTLP, logs.

A credential can reach a trace by four routes, and each has its own defence here:

1. an attribute named after it (a captured ``x-api-key`` header, ``auth.token``): dropped by name;
2. a URL that carries it in the query (``?key=`` for Gemini, presigned ``X-Amz-Signature``) or
   in its user info: the value is replaced wherever such a URL appears in a string;
3. an echo of a value the process really sent (a 401 body quoting the key, a stack trace): the
   injector registers every credential it sees on a request (``remember_request``) and any
   occurrence of one of them, in any string, is replaced;
4. a well-known credential shape (``sk-...``, ``AIza...``, ``Bearer ...``, JWTs): replaced as a
   fallback, which is what protects traces received from other processes, whose credentials this
   process never saw.

Dropping (not masking) secret-named attributes keeps the stored schema simple; masking in text
keeps the rest of an error message readable. Everything here is pure string work: it never
raises into the caller, since a failure to redact must not cost a span.
"""

from __future__ import annotations

import functools
import json
import logging
import re
import threading
from collections import OrderedDict
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from agentchaos_otel.gil_handoff import hand_off

MARKER = "[REDACTED]"

# Header (and attribute) names, lower case with "-" for "_"; compared on an attribute key's last
# dot-separated segment, so ``http.request.header.x_api_key`` and ``X-Api-Key`` both match.
SECRET_HEADER_NAMES: tuple[str, ...] = (
    "authorization", "proxy-authorization", "x-authorization", "x-amz-security-token",
    "api-key", "x-api-key", "apikey", "x-apikey", "api-token", "x-api-token",
    "ocp-apim-subscription-key", "x-goog-api-key", "x-goog-iam-authorization-token",
    "openai-api-key", "anthropic-api-key", "x-anthropic-api-key", "x-openai-api-key",
    "x-functions-key", "cookie", "set-cookie", "x-auth-token", "x-access-token", "x-auth",
    "x-token", "auth-token", "access-token", "x-session-token", "session-token", "x-csrf-token",
    "x-xsrf-token", "x-vault-token", "private-token", "x-gitlab-token", "x-goog-authenticated-user-jwt",
)
# Further attribute names that hold credentials (``auth.token``, ``db.password``...).
SECRET_ATTRIBUTE_NAMES: tuple[str, ...] = (
    "token", "auth", "secret", "password", "passwd", "pwd", "credential", "credentials",
    "client-secret", "refresh-token", "id-token", "bearer-token", "private-key", "secret-key",
    "access-key", "access-key-id", "secret-access-key", "subscription-key", "connection-string",
)
# Unambiguous endings: ``x-portkey-api-key``, ``github.client_secret``.
_SECRET_SUFFIXES: tuple[str, ...] = (
    "-api-key", "-apikey", "authorization", "-auth-token", "-access-token", "-api-token",
    "-refresh-token", "-session-token", "-security-token", "-bearer-token", "-client-secret",
    "-secret-key", "-secret", "-password", "-private-key", "-subscription-key",
)
_NAMES = frozenset(SECRET_HEADER_NAMES) | frozenset(SECRET_ATTRIBUTE_NAMES)

# URL query parameters, lower case with "_" for "-".
SECRET_QUERY_PARAMS: tuple[str, ...] = (
    "key", "api_key", "apikey", "api_token", "token", "access_token", "refresh_token", "id_token",
    "auth", "auth_token", "authorization", "sig", "signature", "x_amz_signature", "x_amz_credential",
    "x_amz_security_token", "x_goog_signature", "x_goog_credential", "awsaccesskeyid", "code",
    "password", "passwd", "pwd", "secret", "client_secret", "subscription_key",
    "ocp_apim_subscription_key", "session_token", "jwt", "private_key", "access_key", "secret_key",
)
_QUERY_NAMES = frozenset(SECRET_QUERY_PARAMS)


def _norm(name: str) -> str:
    return name.strip().lower().replace("_", "-")


def is_secret_name(key: str) -> bool:
    """True for a header or attribute name that holds a credential, in any common spelling."""
    last = _norm(str(key).rsplit(".", 1)[-1])
    return last in _NAMES or last.endswith(_SECRET_SUFFIXES)


def is_secret_query_param(name: str) -> bool:
    return name.strip().lower().replace("-", "_") in _QUERY_NAMES


# --- text patterns -------------------------------------------------------------------------------

_QUERY_RE = re.compile(r"(?P<sep>[?&;])(?P<name>[A-Za-z0-9_\-.%]+)=(?P<value>[^&#\s\"'<>\\]*)")
_USERINFO_RE = re.compile(r"(?P<head>[A-Za-z][A-Za-z0-9+.\-]*://[^/\s:@\"']+:)(?P<pw>[^/\s@\"']+)(?P<at>@)")
# ``"api_key": "v"``, ``'token'='v'``, ``password=v``, ``Authorization: Basic v``; escaped quotes too,
# so the pattern also holds inside a JSON document stored as a string.
_KV_NAMES = (r"(?<![A-Za-z0-9])(?:(?:proxy[-_]?)?authorization|api[-_]?key|api[-_]?token|access[-_]?token"
             r"|refresh[-_]?token|auth[-_]?token|id[-_]?token|session[-_]?token|security[-_]?token"
             r"|bearer[-_]?token|client[-_]?secret|secret[-_]?key|secret|password|passwd|subscription[-_]?key"
             r"|private[-_]?key|functions[-_]key)"
             r"|(?<![A-Za-z0-9_\-])token")  # bare "token" only on its own: not input_token, max-token
_KV_RE = re.compile(
    r"(?P<head>(?:" + _KV_NAMES + r")(?:\\*[\"'])?\s*[:=]\s*(?:(?:Bearer|Basic|Token)\s+)?)"
    r"(?P<value>\\*\"(?:[^\"\\]|\\[^\"])*\\*\"|'[^']*'|[^\s\"',;&}\])\\]+)",
    re.IGNORECASE)
_OPENING_QUOTE_RE = re.compile(r"^\\*[\"']")
# Fallback shapes: provider keys and bearer credentials.
_SHAPES_RE = re.compile(
    r"(?<![A-Za-z0-9])sk-(?:ant-|proj-|svcacct-|or-)?[A-Za-z0-9_\-]{16,}"
    r"|(?<![A-Za-z0-9])AIza[0-9A-Za-z_\-]{30,}"
    r"|(?<![A-Za-z0-9])eyJ[A-Za-z0-9_\-]{8,}\.eyJ[A-Za-z0-9_\-]{8,}\.[A-Za-z0-9_\-]{8,}"
    r"|(?<![A-Za-z0-9])(?:gh[pousr]_[A-Za-z0-9]{30,}|github_pat_[A-Za-z0-9_]{30,}|xox[abprs]-[A-Za-z0-9\-]{10,}"
    r"|hf_[A-Za-z0-9]{30,}|AKIA[0-9A-Z]{16}|gsk_[A-Za-z0-9]{30,})"
    r"|(?<=Bearer )[A-Za-z0-9\-._~+/]{8,}=*",
    re.IGNORECASE)
# Cheap gates (substring tests on the lower-cased text) so the regexes above only run on text that
# can match them: spans are redacted on the export path, and most hold nothing to redact.
_KV_NEEDLES = ("authoriz", "api-key", "api_key", "apikey", "token", "secret", "passw", "subscription",
               "private", "functions")
_SHAPE_NEEDLES = ("sk-", "aiza", "eyj", "ghp_", "gho_", "ghu_", "ghs_", "ghr_", "github_pat_", "xox", "hf_",
                  "akia", "gsk_", "bearer")
# What a JSON document must contain for the structural walk to change it: every secret name (as a
# key it ends in a quote), and every needle of the text rules.
_WALK_NEEDLES = ("authoriz", "api-key", "api_key", "apikey", "secret", "passw", "pwd", "cookie", "credential",
                 "subscription", "private", "access-key", "access_key", "connection-string", "connection_string",
                 "functions", "jwt", 'auth"', "auth\\", 'query"', "query\\", "=", *_SHAPE_NEEDLES[1:])


def _any_in(low: str, needles: tuple[str, ...]) -> bool:
    return any(n in low for n in needles)


def _word_alone(low: str, word: str, *, before: bool) -> bool:
    """``word`` in ``low`` not preceded (``before``) or not followed by a letter, digit or ``_``.

    ``sk-`` starting a word is a key shape, ``task-3`` is not; ``token`` ending a name is a
    credential, ``input_tokens`` is not. A find loop: far cheaper than a regex with a lookaround.
    """
    i = low.find(word)
    while i >= 0:
        j = i - 1 if before else i + len(word)
        if not 0 <= j < len(low) or not (low[j].isalnum() or low[j] == "_"):
            return True
        i = low.find(word, i + 1)
    return False


def _query_sub(m: re.Match[str]) -> str:
    name = m.group("name")
    try:
        from urllib.parse import unquote

        name = unquote(name)
    except Exception:  # noqa: BLE001 - a name that does not decode is compared as written
        pass
    if not is_secret_query_param(name) or not m.group("value"):
        return m.group(0)
    return f"{m.group('sep')}{m.group('name')}={MARKER}"


def _kv_sub(m: re.Match[str]) -> str:
    value = m.group("value")
    if MARKER in value or m.string.startswith(MARKER, m.start("value") + len(value) - len(value.lstrip("\\\"'"))):
        return m.group(0)  # already redacted (by the query rule, or an earlier pass)
    quote = _OPENING_QUOTE_RE.match(value)
    if quote is not None:  # keep the quoting (escaped or not) so JSON text stays JSON
        return f"{m.group('head')}{quote.group(0)}{MARKER}{quote.group(0)}"
    return f"{m.group('head')}{MARKER}"


# --- registry of credentials seen on requests ------------------------------------------------------

MAX_REMEMBERED = 512
MIN_SECRET_LEN = 8


class _Registry:
    """Credential values this process sent, most recent last, bounded; one regex over all of them."""

    def __init__(self, limit: int = MAX_REMEMBERED) -> None:
        self.limit = limit
        self._values: OrderedDict[str, None] = OrderedDict()
        self._lock = threading.Lock()
        self._pattern: re.Pattern[str] | None = None

    @staticmethod
    def forms(value: str) -> tuple[str, ...]:
        """What ``add(value)`` registers: the value and how it reads inside a JSON document."""
        if len(value) < MIN_SECRET_LEN or value in MARKER:
            return ()
        return tuple(dict.fromkeys((value, json.dumps(value, ensure_ascii=False)[1:-1])))

    def add(self, value: str) -> None:
        self.add_forms(self.forms(value))

    def add_forms(self, forms: Iterable[str]) -> None:
        """Register (or refresh, as most recent) forms ``forms`` already computed."""
        if not forms:
            return
        with self._lock:
            changed = False
            for form in forms:
                if form in self._values:
                    self._values.move_to_end(form)
                else:
                    self._values[form] = None
                    changed = True
            while len(self._values) > self.limit:
                self._values.popitem(last=False)
                changed = True
            if changed:
                self._pattern = None

    def pattern(self) -> re.Pattern[str] | None:
        with self._lock:
            if self._pattern is None and self._values:
                # Longest first, so a value that contains another is removed whole.
                alts = sorted(self._values, key=len, reverse=True)
                self._pattern = re.compile("|".join(re.escape(v) for v in alts))
            return self._pattern

    def clear(self) -> None:
        with self._lock:
            self._values.clear()
            self._pattern = None

    def __len__(self) -> int:
        return len(self._values)


_registry = _Registry()


@functools.lru_cache(maxsize=MAX_REMEMBERED)
def _credential_forms(text: str) -> tuple[str, ...]:
    """Every form ``remember(text)`` registers, in order: the value, the credential after its
    scheme (decoded too for Basic), each cookie value. An agent sends the same key on every call,
    so this is worked out once per value."""
    values = [text]
    scheme, _, rest = text.partition(" ")
    if rest and scheme.lower() in ("bearer", "basic", "token", "apikey", "key", "sharedaccesssignature"):
        values.append(rest.strip())
        if scheme.lower() == "basic":
            import base64

            try:
                decoded = base64.b64decode(rest.strip(), validate=False).decode("utf-8", "replace")
                values += [decoded, decoded.partition(":")[2]]
            except ValueError:  # not base64 after all: the forms before it still count
                pass
    if ";" in text or "=" in text:  # cookies: each value on its own
        values += [part.strip().partition("=")[2].strip() for part in text.split(";")]
    return tuple(dict.fromkeys(form for value in values for form in _Registry.forms(value)))


def remember(value: Any) -> None:
    """Register a credential value: from now on it is redacted wherever it appears."""
    try:
        text = value.decode("latin-1") if isinstance(value, (bytes, bytearray)) else str(value)
        text = text.strip()
        if text:
            _registry.add_forms(_credential_forms(text))
    except Exception:  # noqa: BLE001 - registering is best effort and must never break a request
        pass


@functools.lru_cache(maxsize=1024)
def _secret_header(name: bytes) -> bool:
    """``is_secret_name`` of a raw header name (every request of a client sends the same few)."""
    return is_secret_name(name.decode("latin-1"))


def remember_request(request: Any) -> None:
    """Register the credentials an httpx/httpx2 request carries (headers, query, user info).

    Runs on every LLM call, so it reads the raw header list (decoding only the secret values, as
    httpx would: an ASCII value reads the same in any of its encodings) and parses the query and
    user info only when the URL has them.
    """
    try:
        headers = request.headers
        for name, value in headers.raw:
            if _secret_header(name):
                remember(value.decode("ascii") if value.isascii() else value.decode(headers.encoding))
        url = request.url
        if url.query:
            for name, value in url.params.multi_items():
                if is_secret_query_param(name):
                    remember(value)
        if url.userinfo and url.password:
            remember(url.password)
    except Exception:  # noqa: BLE001 - a request we cannot read still goes out untouched
        pass


def forget_all() -> None:
    """Empty the registry (tests)."""
    _registry.clear()


def remembered_count() -> int:
    return len(_registry)


def remembered() -> list[str]:
    """The remembered values (every form), oldest first: for a helper process to ``remember`` too."""
    with _registry._lock:
        return list(_registry._values)


# --- redaction -----------------------------------------------------------------------------------

def redact_text(text: str) -> str:
    """``text`` with every credential this module can recognise replaced by ``[REDACTED]``."""
    if not isinstance(text, str) or not text:
        return text
    try:
        out = text
        low = text.lower()
        if "=" in out:
            out = _QUERY_RE.sub(_query_sub, out)
        if "@" in out and "://" in out:
            out = _USERINFO_RE.sub(lambda m: f"{m.group('head')}{MARKER}{m.group('at')}", out)
        if (":" in out or "=" in out) and _any_in(low, _KV_NEEDLES):
            out = _KV_RE.sub(_kv_sub, out)
        if _any_in(low, _SHAPE_NEEDLES):
            out = _SHAPES_RE.sub(MARKER, out)
        pattern = _registry.pattern()
        if pattern is not None:
            out = pattern.sub(MARKER, out)
            if pattern.search(out):  # a marker next to the text around it spelled a secret again
                return MARKER
        return out
    except Exception:  # noqa: BLE001 - we cannot tell what is safe, so keep nothing
        return MARKER


def redact_query(query: str) -> str:
    """A bare query string (``url.query``: ``key=v&alt=sse``) with secret parameters replaced."""
    return redact_text("?" + query)[1:] if isinstance(query, str) and query else query


def redact_value(value: Any, key: str = "") -> Any:
    """An attribute value with credentials replaced; mappings lose their secret-named keys."""
    if isinstance(value, str):
        if key.lower().endswith("query"):
            return redact_query(value)
        if value.lstrip()[:1] in ("{", "["):  # JSON held in a string (tool arguments, invocation
            return redact_json_text(value, compact=False)  # parameters): its keys are checked too
        return redact_text(value)
    if isinstance(value, Mapping):
        return redact_attributes(value)
    if isinstance(value, (list, tuple)):
        items = [redact_value(v, key) for v in value]
        return tuple(items) if isinstance(value, tuple) else items
    return value


def redact_attributes(attrs: Mapping[str, Any] | None) -> dict[str, Any]:
    """Attributes without secret-named keys and with every string value redacted."""
    if not attrs:
        return {}
    return {str(k): redact_value(v, str(k)) for k, v in attrs.items() if not is_secret_name(str(k))}


def _needs_walk(text: str) -> bool:
    low = text.lower()
    if _any_in(low, _WALK_NEEDLES) or ("://" in low and "@" in low):
        return True
    if _word_alone(low, "sk-", before=True) or _word_alone(low, "token", before=False):
        return True
    pattern = _registry.pattern()
    return pattern is not None and pattern.search(text) is not None


def redact_json_text(text: Any, *, compact: bool = True) -> Any:
    """A JSON document held as text, redacted as a structure (re-encoded only when it changes).

    Text that is not JSON gets the plain text rules. ``compact`` picks the re-encoding: ours for
    the store's JSON columns, Python's default for JSON that an application put in a string.
    """
    if not isinstance(text, str) or not text or not _needs_walk(text):
        return text
    try:
        doc = json.loads(text)
        cleaned = redact_value(doc)
        if cleaned == doc:
            return text
        return json.dumps(cleaned, ensure_ascii=False, separators=(",", ":") if compact else None,
                          allow_nan=False)
    except (ValueError, RecursionError):  # not JSON, too deep, or numbers JSON cannot write back
        return redact_text(text)


_TEXT_COLUMNS = ("name", "status_message")
_JSON_COLUMNS = ("attributes", "resource", "events")


ROW_COLUMNS = (*_TEXT_COLUMNS, *_JSON_COLUMNS)


def redact_row(row: dict[str, Any], columns: Iterable[str] = ROW_COLUMNS) -> dict[str, Any]:
    """A ``spans`` table row (JSON columns as text) with credentials removed; the same dict, changed.

    ``columns`` narrows it to some of them (a caller that redacted a shared resource once).
    """
    for col in columns:
        value = row.get(col)
        if isinstance(value, str):
            row[col] = redact_text(value) if col in _TEXT_COLUMNS else redact_json_text(value)
    return row


def redact_rows(rows: Sequence[dict[str, Any]], columns: Sequence[str] = ROW_COLUMNS) -> list[dict[str, Any]]:
    """``redact_row`` on every row ``candidates`` flags in ``columns``; rows are changed in place.

    The same result as ``redact_row`` on each row, at the cost of one scan of the texts when
    nothing needs redacting (the usual case), instead of every rule on every text.
    """
    rows = list(rows)
    for i in flagged_rows([r.get(c) for c in columns for r in rows], len(rows)):
        redact_row(rows[i], columns)
    return rows


def flagged_rows(texts: Any, n: int) -> list[int]:
    """Rows (in order) ``redact_row`` might change, from their texts laid out column after column.

    ``texts`` holds ``n`` rows' values of one column, then of the next (a list or an Arrow
    array), so text ``j`` belongs to row ``j % n``.
    """
    return sorted({i % n for i in candidates(texts)}) if n else []


# --- batch gate ------------------------------------------------------------------------------------
#
# An exporter redacts every span it writes, and nearly none holds anything to redact; running
# ``redact_row`` per span costs more than storing it. ``candidates`` finds, for a whole column of
# texts at once, the ones ``redact_row`` could change, so only those go through it. It must never
# miss one (a false alarm only costs time), so it looks for a superset of what every rule above
# needs before it can change anything:
#
# - a secret-named key (dropped by ``redact_attributes``): every name and suffix, in both the "-"
#   and "_" spelling; "token" only when no letter, digit or "_" follows (``input_tokens`` is not a
#   credential name, ``x-auth-token"`` is), which holds for every secret name ending in "token";
# - the text rules: "=" (query parameters, and ``key=value``), "://" with "@" (user info), the
#   key-value names, the key shapes ("sk-" after anything but a letter or digit, as the shape rule);
# - whatever JSON decoding could turn into one of those: any ``\u`` escape and ``\/``;
# - a credential this process remembered, case-sensitively, as the registry matches.
#
# The scan runs in Arrow's RE2 engine over the whole column (C++, one pass, without the GIL); a
# process without pyarrow checks text by text in Python with the same needles.

def _gate_needles() -> tuple[str, ...]:
    names = {n.strip("-") for n in (*_NAMES, *_SECRET_SUFFIXES)} | set(_KV_NEEDLES)
    names |= {n.replace("-", "_") for n in names} | set(_SHAPE_NEEDLES)
    names |= {"=", "\\u", "\\/", "auth"}
    names -= {"token", "sk-"}  # matched with their neighbours below
    needles = {n for n in names if "token" not in n}  # every "...token" name is covered by "token"
    # a needle containing another needle adds nothing
    return tuple(sorted(n for n in needles if not any(m != n and m in n for m in needles)))


GATE_NEEDLES: tuple[str, ...] = _gate_needles()
_GATE_RE2 = ("(?s)" + "|".join(re.escape(n) for n in GATE_NEEDLES)
             + r"|token([^a-z0-9_]|$)|(^|[^a-z0-9])sk-|://.*@|@.*://")
_GATE_PY = re.compile(_GATE_RE2, re.IGNORECASE)


def _registry_re2(pattern: re.Pattern[str] | None) -> str | None:
    if pattern is None:
        return None
    with _registry._lock:
        values = list(_registry._values)
    # \Q...\E quotes a literal in RE2; a value holding "\E" ends the quote, closed and reopened
    return "|".join("\\Q" + v.replace("\\E", "\\E\\\\E\\Q") + "\\E" for v in values) or None


def _could_change(text: str, pattern: re.Pattern[str] | None) -> bool:
    return _GATE_PY.search(text) is not None or (pattern is not None and pattern.search(text) is not None)


# Texts joined for the one-scan check below are parted by a character no needle holds.
_JOIN_SEPARATOR = "\x00"
_JOIN_MAX_BYTES = 1 << 30  # below Arrow's 2 GiB limit on one string


def _none_in_joined(pa: Any, pc: Any, arr: Any, registry: str | None) -> bool:
    """True when no text of ``arr`` can be a candidate, found by one RE2 scan of all of them joined.

    RE2 costs about as much to start on a text as to scan a few hundred bytes of it, and a batch
    has thousands of short texts, nearly always without a candidate. Joining them (a copy in C)
    makes that one scan. Joining can only add matches, never lose one: every text is a part of the
    joined string, and the separator stands where a text began or ended, where the gate's anchors
    accept any character that is not a letter, digit or "_". So a joined scan without a match
    proves every text clean; with one, the texts are scanned one by one to say which.
    """
    if isinstance(arr, pa.ChunkedArray):
        arr = arr.combine_chunks()
    if len(arr) == 0 or arr.nbytes >= _JOIN_MAX_BYTES:
        return len(arr) == 0
    items = pa.ListArray.from_arrays(pa.array([0, len(arr)], pa.int32()), pc.fill_null(arr, ""))
    joined = pc.binary_join(items, _JOIN_SEPARATOR)
    if pc.match_substring_regex(pc.utf8_lower(joined), _GATE_RE2)[0].as_py():
        return False
    return registry is None or not pc.match_substring_regex(joined, registry)[0].as_py()


def candidates(texts: Any) -> list[int]:
    """Positions of the texts (a list, or an Arrow string array, chunked or not) ``redact_row`` might change.

    A superset: every text ``redact_text`` or ``redact_json_text`` would change is listed, and
    texts that only look close (``author``, a base64 ``=``) are listed too. None is never listed.
    """
    pattern = _registry.pattern()
    try:
        import pyarrow as pa
        import pyarrow.compute as pc
    except ImportError:  # pragma: no cover - a declared dependency
        pa = None
    if pa is not None:
        try:
            # each step is a long C call: a waiting thread gets its turn between
            arr = texts if isinstance(texts, (pa.Array, pa.ChunkedArray)) else pa.array(texts, pa.string())
            hand_off()
            registry = _registry_re2(pattern)
            if _none_in_joined(pa, pc, arr, registry):
                return []
            hand_off()
            # lower-cased once, then matched case-sensitively: RE2 scans faster than with case folding
            mask = pc.match_substring_regex(pc.utf8_lower(arr), _GATE_RE2)
            hand_off()
            if registry is not None:
                mask = pc.or_(mask, pc.match_substring_regex(arr, registry))
            if not pc.any(mask).as_py():
                return []
            return pc.indices_nonzero(pc.fill_null(mask, False)).to_pylist()
        except (pa.ArrowException, TypeError, ValueError, UnicodeError):
            pass  # a text Arrow refuses (a lone surrogate), or a pattern RE2 cannot take: per text
    if not isinstance(texts, list):
        texts = texts.to_pylist()
    return [i for i, t in enumerate(texts) if isinstance(t, str) and _could_change(t, pattern)]


def exception_attributes(exc: BaseException) -> dict[str, str]:
    """``exception.message`` / ``exception.stacktrace`` of ``exc``, redacted, for ``record_exception``.

    An SDK error often quotes the provider's answer, and a 401 answer may quote the key sent.
    """
    import traceback

    from agentchaos_otel import attributes as A  # here: attributes imports this module

    try:
        stack = "".join(traceback.format_exception(type(exc), exc, exc.__traceback__))
    except Exception:  # noqa: BLE001
        stack = ""
    return {A.EXCEPTION_MESSAGE: redact_text(str(exc)), A.EXCEPTION_STACKTRACE: redact_text(stack)}


# --- logs ----------------------------------------------------------------------------------------

class RedactingFilter(logging.Filter):
    """Redacts a record's message (and traceback) before any handler formats it."""

    def filter(self, record: logging.LogRecord) -> bool:
        try:
            message = record.getMessage()
            record.msg, record.args = redact_text(message), None
            if record.exc_info and not record.exc_text:
                record.exc_text = redact_text(logging.Formatter().formatException(record.exc_info))
            elif record.exc_text:
                record.exc_text = redact_text(record.exc_text)
        except Exception:  # noqa: BLE001 - a record we cannot redact is still logged, as the marker
            record.msg, record.args = MARKER, None
        return True


_FILTER = RedactingFilter()


def get_logger(name: str) -> logging.Logger:
    """``logging.getLogger(name)`` whose records are redacted (filters do not propagate to children)."""
    log = logging.getLogger(name)
    if _FILTER not in log.filters:
        log.addFilter(_FILTER)
    return log
