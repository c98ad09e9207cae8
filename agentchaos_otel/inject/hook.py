"""One hook under every httpx / httpx2 client of the process, shared by the injector and the guard.

The fault injector and the response guard are *layers*: each registers a factory that wraps a
transport, with an order (the injector innermost, the guard outside it so it sees what the
injector did). The hook is put in place when the first layer is added and taken away with OTel's
``unwrap`` when the last one goes, so neither can undo the other's layer.

It reaches clients in two places, as OTel's httpx instrumentation does:

- **the transport classes**: ``HTTPTransport.handle_request`` and
  ``AsyncHTTPTransport.handle_async_request`` of httpx and httpx2 are wrapped, so a client built
  before installation (a module-level SDK client or agent) is traced and faulted like any other;
- **``Client.__init__`` / ``AsyncClient.__init__``**: a client built afterwards gets its transport
  and mounts put behind a ``HookedTransport``, which covers custom transports too and keeps our
  ``chat`` span around the OTel httpx span of the same request whatever order the two
  instrumentations were installed in.

A request passes the layers once: while a chain handles it (``entered``), the class-level hook
lets it through untouched. A ``HookedTransport`` reads the current layers at each request (one
comparison when nothing changed), so removing a layer takes effect for clients already built, and
with no layer left it passes straight through. A layer whose transport type is already in a
client's own chain (``ChaosTransport`` passed explicitly) is not added a second time.
"""

from __future__ import annotations

import importlib
import threading
import weakref
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass
from typing import Any

import wrapt
from opentelemetry.instrumentation.utils import unwrap

from agentchaos_otel.inject.delegate import WrapsAsyncTransport, WrapsTransport

HTTP_MODULES = ("httpx", "httpx2")
INJECTOR, GUARD = "injector", "guard"


@dataclass(frozen=True)
class Layer:
    """A transport wrapper put under every client: ``wrap(transport, is_async)`` returns it."""

    name: str
    order: int  # lower is closer to the network
    wrap: Callable[[Any, bool], Any]
    types: tuple[type, ...] = ()  # its wrapper classes: a chain that has one already is left alone


_lock = threading.RLock()
_layers: dict[str, Layer] = {}
_generation = 0
# (owner, attribute, our wrapper): kept while our wrapper is in place, even buried under another.
_patched: list[tuple[Any, str, Any]] = []
_in_chain: ContextVar[Any] = ContextVar("agentchaos_in_chain", default=None)
_class_chains: weakref.WeakKeyDictionary[Any, tuple[int, Any, Any]] = weakref.WeakKeyDictionary()


def add(layer: Layer) -> None:
    """Put ``layer`` under every client (replacing a layer of the same name)."""
    global _generation
    with _lock:
        _layers[layer.name] = layer
        _generation += 1
        _patch()


def remove(name: str) -> None:
    """Take ``name``'s layer away; the hook itself goes with the last layer."""
    global _generation
    with _lock:
        if _layers.pop(name, None) is None:
            return
        _generation += 1
        if not _layers:
            _unpatch()


def active(name: str) -> bool:
    return name in _layers


def layer(name: str) -> Layer | None:
    return _layers.get(name)


def enter(request: Any) -> Any:
    """Mark ``request`` as inside a chain of ours, so the class-level hook lets it through.

    Returns the token for ``leave``. Transports of ours used on their own (``ChaosTransport``
    given to a client explicitly) call it too, so a process-wide hook never adds a second layer.
    """
    return _in_chain.set(request)


def leave(token: Any) -> None:
    _in_chain.reset(token)


@contextmanager
def entered(request: Any) -> Iterator[None]:
    token = enter(request)
    try:
        yield
    finally:
        leave(token)


def _has(transport: Any, types: tuple[type, ...]) -> bool:
    """Whether ``transport`` or one it wraps (``.wrapped``) is one of ``types``."""
    for _ in range(16):
        if transport is None:
            return False
        if types and isinstance(transport, types):
            return True
        transport = getattr(transport, "wrapped", None)
    return False


def build(base: Any, is_async: bool) -> Any:
    """``base`` behind every current layer, innermost first."""
    out = base
    for lay in sorted(_layers.values(), key=lambda x: x.order):
        if not _has(base, lay.types):
            out = lay.wrap(out, is_async)
    return out


class HookedTransport(WrapsTransport):
    """A client's own transport behind the current layers (see the module docstring)."""

    def __init__(self, transport: Any) -> None:
        self.wrapped = transport
        self._cached: tuple[int, Any] = (-1, transport)

    def chain(self) -> Any:
        gen, top = self._cached
        if gen != _generation:
            gen, top = _generation, build(self.wrapped, False)
            self._cached = (gen, top)
        return top

    def handle_request(self, request: Any) -> Any:
        token = _in_chain.set(request)
        try:
            return self.chain().handle_request(request)
        finally:
            _in_chain.reset(token)


class AsyncHookedTransport(WrapsAsyncTransport):
    """``HookedTransport`` for async clients."""

    def __init__(self, transport: Any) -> None:
        self.wrapped = transport
        self._cached: tuple[int, Any] = (-1, transport)

    def chain(self) -> Any:
        gen, top = self._cached
        if gen != _generation:
            gen, top = _generation, build(self.wrapped, True)
            self._cached = (gen, top)
        return top

    async def handle_async_request(self, request: Any) -> Any:
        token = _in_chain.set(request)
        try:
            return await self.chain().handle_async_request(request)
        finally:
            _in_chain.reset(token)


def is_async_client(client: Any) -> bool:
    return hasattr(client, "aclose") and not hasattr(client, "close")


def hook_client(client: Any) -> Any:
    """Put one client's transport and mounts behind the layers, in place; returns the client."""
    hooked = AsyncHookedTransport if is_async_client(client) else HookedTransport

    def put(t: Any) -> Any:
        return t if t is None or isinstance(t, HookedTransport | AsyncHookedTransport) else hooked(t)

    client._transport = put(client._transport)
    client._mounts = {pattern: put(t) for pattern, t in client._mounts.items()}
    return client


class _Original:
    """The innermost link of a class-level chain: the transport method as it was before us."""

    def __init__(self, instance: Any, method: Any) -> None:
        self.wrapped = instance
        self._method = method

    def handle_request(self, request: Any) -> Any:
        return self._method(request)

    async def handle_async_request(self, request: Any) -> Any:
        return await self._method(request)

    def close(self) -> None:
        self.wrapped.close()

    async def aclose(self) -> None:
        await self.wrapped.aclose()


def _class_chain(instance: Any, method: Any, is_async: bool) -> Any:
    cached = _class_chains.get(instance)
    if cached is not None and cached[0] == _generation and cached[1] == method:
        return cached[2]
    top = build(_Original(instance, method), is_async)
    try:
        _class_chains[instance] = (_generation, method, top)
    except TypeError:  # not weak-referenceable: built per request
        pass
    return top


def _request_of(args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
    return args[0] if args else kwargs.get("request")


def _sync_class_hook(wrapped: Any, instance: Any, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
    request = _request_of(args, kwargs)
    if not _layers or request is None or _in_chain.get() is request:
        return wrapped(*args, **kwargs)
    chain = _class_chain(instance, wrapped, False)
    token = _in_chain.set(request)
    try:
        return chain.handle_request(request)
    finally:
        _in_chain.reset(token)


async def _async_class_hook(wrapped: Any, instance: Any, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
    request = _request_of(args, kwargs)
    if not _layers or request is None or _in_chain.get() is request:
        return await wrapped(*args, **kwargs)
    chain = _class_chain(instance, wrapped, True)
    token = _in_chain.set(request)
    try:
        return await chain.handle_async_request(request)
    finally:
        _in_chain.reset(token)


def _after_init(wrapped: Any, instance: Any, args: tuple[Any, ...], kwargs: dict[str, Any]) -> None:
    wrapped(*args, **kwargs)
    if not _layers:
        return
    try:
        hook_client(instance)
    except Exception:  # fail open: an unknown client shape must still work
        pass


_TARGETS = (("Client", "__init__", _after_init), ("AsyncClient", "__init__", _after_init),
            ("HTTPTransport", "handle_request", _sync_class_hook),
            ("AsyncHTTPTransport", "handle_async_request", _async_class_hook))


def _patch() -> None:
    """Wrap every target not already ours (one buried under another's wrapper comes alive again)."""
    done = {(cls, attr) for cls, attr, _ in _patched}
    for name in HTTP_MODULES:
        try:
            module = importlib.import_module(name)
        except ImportError:
            continue
        for cls_name, attr, wrapper in _TARGETS:
            cls = getattr(module, cls_name, None)
            if cls is None or not hasattr(cls, attr) or (cls, attr) in done:
                continue
            wrapt.wrap_function_wrapper(cls, attr, wrapper)
            _patched.append((cls, attr, vars(cls)[attr]))


def _unpatch() -> None:
    """Unwrap what is still ours on top; a wrapper buried under another's stays, passing through."""
    kept = []
    for cls, attr, ours in _patched:
        if vars(cls).get(attr) is ours:
            unwrap(cls, attr)
        else:
            kept.append((cls, attr, ours))
    _patched[:] = kept


def patched() -> bool:
    """Whether any of our wrappers is still on a class (for tests)."""
    return bool(_patched)
