"""Who may add spans to a receiver: requests addressed to it, carrying its bearer token when it has one.

A loopback receiver is reachable from any web page the user opens: a page whose own name resolves
to 127.0.0.1 (DNS rebinding) can POST to it, and the browser then sends ``Host: that-name``. So the
HTTP receiver answers 403 unless ``Host`` names the address it is bound to (for loopback also
``localhost``, ``127.0.0.1`` and ``[::1]``, with its port). A bearer token (``--token``, or
``AGENTCHAOS_RECEIVER_TOKEN``) is checked on every request, HTTP and gRPC, compared in constant
time and never stored or logged; without one a receiver only listens on loopback. OTLP exporters
send it with ``OTEL_EXPORTER_OTLP_HEADERS=Authorization=Bearer%20TOKEN``.
"""

from __future__ import annotations

import hmac
import ipaddress
from dataclasses import dataclass

from agentchaos_otel import settings
from agentchaos_otel.errors import UsageError

_LOOPBACK_NAMES = ("localhost", "127.0.0.1", "[::1]")


def is_loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


def needs_token(host: str, token: str | None) -> None:
    """Refuse to listen beyond loopback without a token (a UsageError naming the option and variable)."""
    if not token and not is_loopback(host):
        raise UsageError(f"--host {host} listens beyond loopback; a receiver reachable from other machines needs "
                         f"a bearer token: pass --token or set {settings.RECEIVER_TOKEN.name}")


@dataclass(frozen=True)
class Access:
    """The ``Host`` values a receiver answers to, and its token (None: no token asked)."""

    hosts: frozenset[str]
    token: str | None = None

    @classmethod
    def bound(cls, host: str, port: int, token: str | None = None) -> Access:
        """For a server bound to ``host``:``port``; a wildcard address accepts any Host (the token guards it)."""
        if host in ("0.0.0.0", "::", ""):
            return cls(frozenset(), token or None)
        names = {host.lower(), f"[{host}]" if ":" in host else host.lower()}
        if is_loopback(host):
            names.update(_LOOPBACK_NAMES)
        return cls(frozenset(f"{n}:{port}" for n in names), token or None)

    def refusal(self, host_header: str | None, authorization: str | None) -> tuple[int, str] | None:
        """(status, message) to answer instead of storing, or None when the request may go on."""
        if self.hosts and (host_header or "").strip().lower() not in self.hosts:
            return 403, "the Host header does not name this receiver's address"
        if self.token is not None and not self.authorized(authorization):
            return 401, "a bearer token is required (Authorization: Bearer TOKEN)"
        return None

    def authorized(self, authorization: str | None) -> bool:
        scheme, _, given = (authorization or "").strip().partition(" ")
        return (self.token is None
                or (scheme.lower() == "bearer" and hmac.compare_digest(given.strip().encode(), self.token.encode())))
