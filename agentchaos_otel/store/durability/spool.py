"""JSONL side file that keeps span rows the database could not take.

A locked, read-only or corrupt traces.duckdb must not cost the spans of a running agent, so the
exporter appends such batches here (`<db>.spool.jsonl`) and the next writer that gets the database
loads them first. Several processes may export to one store, so appends and the load are
serialised with an advisory lock on the spool file, and an appender re-checks after locking that
the file it holds is still the one on disk (a loader may have just taken it).

A load takes the spool whole: under the lock it reads the rows and renames the file to
``<spool>.loading.<pid>.<n>``, then lets go, so appends (the OTLP receiver journals every request
here) go on into a new spool while the rows are inserted. The loading file is deleted once the
rows are stored, and appended back to the spool if storing them failed. One left by a process
that died is taken over by the first load of the next ``Spool`` of the store (a process's
first, so a restarted exporter or receiver finds it; later loads list the directory only when
this process left one behind); ``exists`` and the summary count it as spooled.
"""

from __future__ import annotations

import io
import itertools
import json
import os
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import IO, Any

from agentchaos_otel import redact

try:
    import fcntl
except ImportError:  # pragma: no cover - non-POSIX platforms: single-process use only
    fcntl = None  # type: ignore[assignment]

logger = redact.get_logger(__name__)

SPOOL_SUFFIX = ".spool.jsonl"
REJECTED_SUFFIX = ".spool.rejected.jsonl"
LOADING_INFIX = ".loading."  # <spool>.loading.<pid>.<n>: rows a claim took, until they are stored

_loading_lock = threading.Lock()
_loading_here: set[str] = set()  # loading files this process's claims hold right now
_loading_seq = itertools.count()


def spool_path(db_path: str | os.PathLike[str]) -> Path:
    return Path(str(db_path) + SPOOL_SUFFIX)


def _lock(f: IO[Any]) -> None:
    if fcntl is not None:
        fcntl.flock(f.fileno(), fcntl.LOCK_EX)


def _unlock(f: IO[Any]) -> None:
    if fcntl is not None:
        fcntl.flock(f.fileno(), fcntl.LOCK_UN)


def spool_line(row: dict[str, Any]) -> str:
    """One JSONL line for ``row`` that always encodes as UTF-8.

    A string UTF-8 cannot carry (a lone surrogate) is written as a JSON escape instead, so the
    append can never fail on encoding; the row is repaired when it is loaded.
    """
    line = _encode_utf8(row)
    try:
        line.encode("utf-8")
    except UnicodeEncodeError:
        line = _encode_ascii(row)
    return line + "\n"


# built once: json.dumps with options builds a new encoder per call, which dominates for small rows
_encode_utf8 = json.JSONEncoder(ensure_ascii=False, separators=(",", ":"), default=str).encode
_encode_ascii = json.JSONEncoder(ensure_ascii=True, separators=(",", ":"), default=str).encode
if json.encoder.c_make_encoder is not None:
    # JSONEncoder.encode still builds the C encoder on every call (a third of a journal append);
    # these are made once. Rows are flat dicts of plain values, so no cycle markers are needed.
    _c_utf8 = json.encoder.c_make_encoder(None, str, json.encoder.encode_basestring, None, ":", ",",
                                          False, False, True)
    _c_ascii = json.encoder.c_make_encoder(None, str, json.encoder.encode_basestring_ascii, None, ":", ",",
                                           False, False, True)

    def _encode_utf8(row: Any) -> str:  # noqa: F811 - faster twin of the encoder above
        return "".join(_c_utf8(row, 0))

    def _encode_ascii(row: Any) -> str:  # noqa: F811
        return "".join(_c_ascii(row, 0))


# Rows a spool keeps in memory beside what it wrote, so that loading what only this process
# appended needs no JSON decoding; beyond this many, a load reads the file as always.
MEMORY_ROWS = 200_000


class Spool:
    def __init__(self, db_path: str | os.PathLike[str]) -> None:
        self.path = spool_path(db_path)
        self.rejected_path = Path(str(db_path) + REJECTED_SUFFIX)
        # The text this object appended since the file was last empty, and the rows it holds:
        # the receiver journals each request here and loads the journal moments later, and
        # decoding it again cost as much as the load. A load uses them only when the file holds
        # exactly that text, so a line anyone else wrote is always read from the file.
        self._mine: tuple[list[str], list[dict[str, Any]]] | None = None
        # Whether loading files nobody works on may lie around: at first, and after a failed
        # put-back. Listing the directory on every load would cost each batch a directory scan.
        self._orphans_due = True

    def exists(self) -> bool:
        if self.path.exists():
            return True
        if self._orphans_due and not self._orphans():
            self._orphans_due = False  # none now; the next is one this process leaves (put-back)
        return self._orphans_due

    def loading_files(self) -> list[Path]:
        """Rows taken by a load and not yet stored (this process's or another's)."""
        try:
            return sorted(self.path.parent.glob(self.path.name + LOADING_INFIX + "*"))
        except OSError:
            return []

    def _orphans(self) -> list[Path]:
        """Loading files no load is working on: their process died, or this one failed to put them back."""
        out = []
        with _loading_lock:
            here = set(_loading_here)
        for p in self.loading_files():
            if str(p) in here:
                continue
            try:
                pid = int(p.name[len(self.path.name + LOADING_INFIX):].split(".")[0])
            except ValueError:
                continue
            if pid == os.getpid() or not _alive(pid):
                out.append(p)
        return out

    def _take(self, src: Path) -> Path | None:
        """Rename `src` to a loading file of this process's (atomic: of racing takers one gets it)."""
        dst = Path(f"{self.path}{LOADING_INFIX}{os.getpid()}.{next(_loading_seq)}")
        with _loading_lock:
            _loading_here.add(str(dst))
        try:
            os.rename(src, dst)
        except FileNotFoundError:
            with _loading_lock:
                _loading_here.discard(str(dst))
            return None
        return dst

    @contextmanager
    def _locked(self, mode: str) -> Iterator[IO[str] | None]:
        """Open and lock the current spool file; None if it does not exist (read mode)."""
        for _ in range(50):
            try:
                f = open(self.path, mode, encoding="utf-8")
            except FileNotFoundError:
                if "a" in mode:
                    raise
                yield None
                return
            try:
                _lock(f)
                try:
                    on_disk, held = os.stat(self.path), os.fstat(f.fileno())
                    same = (on_disk.st_dev, on_disk.st_ino) == (held.st_dev, held.st_ino)
                except FileNotFoundError:
                    same = False
                if not same:
                    continue  # consumed and unlinked while we waited; open the new one
                yield f
                return
            finally:
                _unlock(f)
                f.close()
        raise OSError(f"{self.path}: spool kept changing under the lock")

    def append(self, rows: list[dict[str, Any]]) -> None:
        """Append rows durably; raises OSError when the spool cannot be written."""
        if not rows:
            return
        rows = redact.redact_rows(rows)  # a spool is a file on disk like the database: same rules
        data = "".join(spool_line(r) for r in rows)
        with self._locked("a") as f:
            assert f is not None
            empty = os.fstat(f.fileno()).st_size == 0
            f.write(data)
            f.flush()
            os.fsync(f.fileno())
            self._remember(empty, data, rows)

    def _remember(self, empty: bool, data: str, rows: list[dict[str, Any]]) -> None:
        mine = ([], []) if empty else self._mine
        if mine is None or len(mine[1]) + len(rows) > MEMORY_ROWS:
            self._mine = None
            return
        mine[0].append(data)
        mine[1].extend(rows)
        self._mine = mine

    @contextmanager
    def claim(self) -> Iterator[list[dict[str, Any]]]:
        """Rows currently spooled; gone from the spool only if the with-block completes without error.

        The spool is locked only while its rows are read and the file is renamed to a loading
        file, so appends go on into a new spool while the block stores the rows.
        """
        taken: list[Path] = []
        texts: list[str] = []
        mine = None
        with self._locked("r") as f:
            if f is not None:
                text = f.read()
                mine, self._mine = self._mine, None
                dst = self._take(self.path)
                if dst is not None:
                    taken.append(dst)
                    texts.append(text)
            else:
                self._mine = None
        for orphan in self._orphans() if self._orphans_due else ():
            dst = self._take(orphan)
            if dst is None:
                continue
            try:
                texts.append(dst.read_text(encoding="utf-8"))
            except OSError:
                with _loading_lock:
                    _loading_here.discard(str(dst))
                continue
            taken.append(dst)
        self._orphans_due = False
        if not taken:
            yield []
            return
        try:
            held = mine is not None and len(texts) == 1 and texts[0] == "".join(mine[0])
            rows: list[dict[str, Any]] = [dict(r) for r in mine[1]] if mine is not None and held else []
            bad: list[str] = []
            for line in (() if held else io.StringIO("".join(texts))):  # lines end at "\n" only
                if not line.strip():
                    continue
                try:
                    row = json.loads(line)
                except ValueError:
                    bad.append(line if line.endswith("\n") else line + "\n")
                    continue
                if isinstance(row, dict):
                    rows.append(row)
                else:
                    bad.append(line)
            try:
                yield rows
            except BaseException:
                self._put_back(taken, texts)
                raise
            if bad:
                with open(self.rejected_path, "a", encoding="utf-8") as r:
                    r.writelines(bad)
                logger.error("%s: %d unreadable spool line(s) moved to %s", self.path, len(bad),
                             self.rejected_path)
            for p in taken:
                os.unlink(p)
        finally:
            with _loading_lock:
                _loading_here.difference_update(str(p) for p in taken)

    def _put_back(self, taken: list[Path], texts: list[str]) -> None:
        """Storing the claimed rows failed: they go back into the spool (else stay for the next load)."""
        data = "".join(t if not t or t.endswith("\n") else t + "\n" for t in texts)
        try:
            with self._locked("a") as f:
                assert f is not None
                f.write(data)
                f.flush()
                os.fsync(f.fileno())
                self._mine = None
        except OSError as exc:  # the loading files stay: the next load of this process takes them
            self._orphans_due = True
            logger.error("%s: could not put claimed rows back (%s); kept in %s", self.path, exc,
                         ", ".join(str(p) for p in taken))
            return
        for p in taken:
            try:
                os.unlink(p)
            except OSError:
                pass

    def reject(self, rows: list[dict[str, Any]]) -> None:
        """Append rows the database refuses to the rejected file, kept for inspection."""
        if not rows:
            return
        with open(self.rejected_path, "a", encoding="utf-8") as r:
            r.write("".join(spool_line(x) for x in rows))
            r.flush()
            os.fsync(r.fileno())

    def reject_all(self) -> int:
        """Move every spooled line to the rejected file (rows the database refuses); returns the count.

        Kept, not deleted, so the spans can be inspected or repaired, but out of the way so one bad
        row does not make every later write fail and log again.
        """
        with self._locked("r") as f:
            self._mine = None
            if f is None:
                return 0
            lines = [ln if ln.endswith("\n") else ln + "\n" for ln in f if ln.strip()]
            with open(self.rejected_path, "a", encoding="utf-8") as r:
                r.writelines(lines)
                r.flush()
                os.fsync(r.fileno())
            os.unlink(self.path)
            return len(lines)


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except OSError:  # exists, owned by someone else
        return True
    return True
