"""Server-sent events, the wire codec: parse incrementally, and encode one event.

The codec knows nothing of chat completions or faults; the injector reads streams with it and
the stream faults (``faults/stream.py``, ``faults/messages_stream.py``) re-emit events with it.
Bytes may arrive split anywhere, even inside a line or a UTF-8 character; whatever is not a
complete event comes back marked incomplete with its exact bytes, so nothing is ever lost.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Any

DONE = b"data: [DONE]\n\n"
_LINE_END = re.compile(rb"\r\n|\r|\n")


@dataclass
class SSEEvent:
    data: str
    event: str | None = None
    raw: bytes = b""  # the exact upstream bytes including the blank line that ended the event
    id: str | None = None
    has_data: bool = True  # False for comment-only / empty blocks (kept only to re-emit them)
    complete: bool = True  # False for trailing bytes that never got their blank line

    @property
    def is_done(self) -> bool:
        return self.has_data and self.data.strip() == "[DONE]"

    def json(self) -> Any:
        """The data as JSON, or None when it is not JSON (or the event is not usable)."""
        if not (self.complete and self.has_data) or self.is_done:
            return None
        try:
            return json.loads(self.data)
        except ValueError:
            return None


def _event_from_lines(lines: list[bytes], raw: bytes, complete: bool = True) -> SSEEvent:
    data: list[str] = []
    name: str | None = None
    ident: str | None = None
    for line in lines:
        if line.startswith(b":"):
            continue
        field, sep, value = line.partition(b":")
        if sep and value.startswith(b" "):
            value = value[1:]
        text = value.decode("utf-8", "replace")
        if field == b"data":
            data.append(text)
        elif field == b"event":
            name = text
        elif field == b"id":
            ident = text
    return SSEEvent(data="\n".join(data), event=name, raw=raw, id=ident, has_data=bool(data),
                    complete=complete)


class SSEParser:
    """Incremental parser: bytes may be split anywhere, even inside a line or a UTF-8 character."""

    def __init__(self) -> None:
        self._buf = bytearray()
        self._line = 0    # start of the current (unfinished) line within the buffer
        self._search = 0  # bytes before this were already searched for a line end
        self._lines: list[bytes] = []
        self._closed = False

    def feed(self, data: bytes) -> list[SSEEvent]:
        if self._closed:
            raise RuntimeError("SSEParser.feed after close")
        self._buf += data
        return self._drain(final=False)

    def close(self) -> list[SSEEvent]:
        """Flush what is left; trailing bytes without their blank line come back as incomplete."""
        if self._closed:
            return []
        events = self._drain(final=True)
        self._closed = True
        if self._buf:
            lines = list(self._lines)
            rest = bytes(self._buf[self._line:])
            if rest:
                lines.append(rest)
            events.append(_event_from_lines(lines, bytes(self._buf), complete=False))
            self._buf.clear()
            self._line = self._search = 0
            self._lines = []
        return events

    def _drain(self, *, final: bool) -> list[SSEEvent]:
        events: list[SSEEvent] = []
        buf = self._buf
        start = 0  # start of the current event within buf
        while True:
            m = _LINE_END.search(buf, max(self._search, self._line))
            if m is None:
                self._search = len(buf)  # a long line arriving in pieces is scanned once
                break
            if m.group() == b"\r" and m.end() == len(buf) and not final:
                self._search = m.start()  # a "\r\n" may be split across feeds: wait for the next byte
                break
            line = bytes(buf[self._line:m.start()])
            self._line = self._search = m.end()
            if line:
                self._lines.append(line)
                continue
            events.append(_event_from_lines(self._lines, bytes(buf[start:self._line])))
            self._lines = []
            start = self._line
        if start:
            del buf[:start]
            self._line -= start
            self._search -= start
        return events


def _dumps(value: Any, *, spaced: bool = False) -> str:
    return json.dumps(value, ensure_ascii=False, separators=(", ", ": ") if spaced else (",", ":"))


def encode_event(value: Any, *, event: str | None = None, newline: str = "\n", spaced: bool = False) -> bytes:
    """One SSE event carrying ``value`` as JSON; ``newline`` and ``spaced`` copy an upstream's style."""
    head = f"event: {event}{newline}" if event else ""
    return f"{head}data: {_dumps(value, spaced=spaced)}{newline}{newline}".encode()
