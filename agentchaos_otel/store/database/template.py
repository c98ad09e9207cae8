"""New trace stores start as a copy of an empty one, built once, instead of from DDL each time.

Creating a store's views costs DuckDB 90-130 ms of binding (each view re-binds the views it
reads), four times what opening an existing store costs, and a new store is created on the
path of its first batch of spans: every new `traces.duckdb`, every campaign's file, every test.
An empty store with the current layout is the same bytes every time for one DuckDB version,
schema version and set of views, so it is built once, kept in this process and in a cache
directory, and copied: copying half a megabyte takes under a millisecond.

The cache is ``$AGENTCHAOS_CACHE_DIR``, else ``$XDG_CACHE_HOME/agentchaos-otel``, else
``~/.cache/agentchaos-otel``. A file there is named by everything its bytes depend on and by
the SHA-256 of its bytes, and the bytes are checked against that digest before every first use
in a process, so a truncated or altered file is rebuilt, never copied. A cache that cannot be
written (read-only home, no home) only means the template is built in a temporary directory
and kept in memory for this process.

A copy goes to a hidden sibling of the target and is linked into place only if no file exists
there yet, so a concurrent creator's store is never overwritten, and a process killed while
copying leaves at most that hidden file, never a partial store under the target's name. Any
failure here falls back to the caller creating the store the usual way, which gives the usual
errors.
"""

from __future__ import annotations

import hashlib
import logging
import os
import tempfile
import threading
from collections.abc import Callable
from pathlib import Path

import duckdb

from agentchaos_otel import settings

logger = logging.getLogger(__name__)

_PREFIX = "empty-store-"

_lock = threading.Lock()
_bytes: dict[str, bytes] = {}  # key -> verified template bytes, for this process


def cache_dir() -> Path | None:
    """Where templates are kept across processes (None when there is no home to put them in)."""
    explicit = settings.CACHE_DIR.value()
    if explicit:
        return Path(explicit)
    xdg = os.environ.get("XDG_CACHE_HOME")
    if xdg:
        return Path(xdg) / "agentchaos-otel"
    try:
        return Path.home() / ".cache" / "agentchaos-otel"
    except RuntimeError:  # no home directory can be determined
        return None


def template_key(*layout: object) -> str:
    """A name for everything an empty store's bytes depend on: DuckDB's version and ``layout``
    (the schema version and the text of every table and view definition)."""
    text = "\n".join(map(str, layout)).encode()
    return f"{_PREFIX}duckdb{duckdb.__version__}-{hashlib.sha256(text).hexdigest()[:16]}"


def _digest(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()[:32]


def _from_cache(directory: Path, key: str) -> bytes | None:
    try:
        names = list(directory.glob(f"{key}-*.duckdb"))
    except OSError:
        return None
    for p in names:
        try:
            data = p.read_bytes()
        except OSError:
            continue
        if p.name == f"{key}-{_digest(data)}.duckdb":
            return data
        logger.debug("store template %s does not match its digest: removed", p)
        _remove(p)
    return None


def _build(key: str, build: Callable[[str], None]) -> bytes:
    """A fresh empty store made by ``build`` (the normal creation), cached when possible."""
    with tempfile.TemporaryDirectory(prefix="agentchaos-template-") as tmp:
        path = os.path.join(tmp, "empty.duckdb")
        build(path)
        if os.path.exists(path + ".wal"):
            raise OSError("the template store was not checkpointed")
        data = Path(path).read_bytes()
    directory = cache_dir()
    if directory is not None:
        staged = directory / f".{key}.{os.getpid()}.{threading.get_ident()}.tmp"
        try:
            directory.mkdir(parents=True, exist_ok=True)
            staged.write_bytes(data)
            os.replace(staged, directory / f"{key}-{_digest(data)}.duckdb")
        except OSError as exc:
            logger.debug("store template not cached in %s: %s", directory, exc)
            _remove(staged)
    return data


def template_bytes(key: str, build: Callable[[str], None]) -> bytes:
    """The verified bytes of the empty store ``key``: from memory, the cache, or built now."""
    with _lock:
        data = _bytes.get(key)
        if data is None:
            directory = cache_dir()
            data = _from_cache(directory, key) if directory is not None else None
            if data is None:
                data = _build(key, build)
            _bytes[key] = data
        return data


def create_from_template(path: str, key: str, build: Callable[[str], None]) -> bool:
    """Put a copy of the empty store ``key`` at ``path`` if nothing is there; False if not done.

    ``build(p)`` must create a complete empty store at ``p`` and close it; it is called when no
    verified template exists yet. False (nothing created) on any failure, and when ``path`` or a
    write-ahead log for it exists: the caller then creates or opens the store itself.
    """
    if path.startswith(":") or os.path.lexists(path) or os.path.lexists(path + ".wal"):
        return False  # ``:memory:`` is no file; an existing file or log is the caller's to open
    try:
        data = template_bytes(key, build)
    except (OSError, duckdb.Error, ValueError) as exc:
        logger.debug("no store template: %s", exc)
        return False
    target = Path(path)
    staged = target.with_name(f".{target.name}.{os.getpid()}.{threading.get_ident()}.new")
    try:
        with open(staged, "xb") as f:
            f.write(data)
        try:
            os.link(staged, target)  # fails if a store appeared meanwhile: theirs is kept
        except FileExistsError:
            return False
        except OSError:  # no hard links here (some network and FUSE file systems)
            if os.path.lexists(target):
                return False
            os.rename(staged, target)
        return True
    except OSError as exc:
        logger.debug("store template not copied to %s: %s", path, exc)
        return False
    finally:
        _remove(staged)


def _remove(path: Path) -> None:
    try:
        path.unlink()
    except OSError:
        pass


def forget() -> None:
    """Drop this process's memory of templates (tests that change the cache directory)."""
    with _lock:
        _bytes.clear()
