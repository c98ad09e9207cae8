"""Text from spans shown on a terminal: always data, never markup or control sequences.

Span attributes carry whatever a provider or a tool returned: a 500 body ``404 Not Found
[/v1/chat/completions]`` is rich markup to a console, and an error body can hold an OSC 52
clipboard write, a window-title change or a screen clear. Every human-readable output prints it
through ``printable`` (control characters shown escaped, as ``\\x1b``) and every rich console that
shows span data is a ``data_console`` (strings are never parsed as markup). JSON output keeps the
exact string (``json.dumps`` escapes control characters itself).
"""

from __future__ import annotations

import functools
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from rich.console import Console

# C0 controls except tab and newline, DEL, C1 controls, and the bidirectional overrides and
# isolates that reorder what a terminal shows.
_ESCAPED = [*range(0x00, 0x09), *range(0x0B, 0x20), *range(0x7F, 0xA0), *range(0x202A, 0x202F),
            *range(0x2066, 0x206A)]
_TABLE = {c: (f"\\x{c:02x}" if c < 0x100 else f"\\u{c:04x}") for c in _ESCAPED}


def printable(text: str) -> str:
    """``text`` with every control character written as its escape (``\\x1b``, ``\\u202e``)."""
    return text.translate(_TABLE)


@functools.cache
def _console_class() -> type[Console]:
    from rich.console import Console
    from rich.text import Text

    class DataConsole(Console):
        """Strings become ``Text`` as they are, escaped; never parsed as markup."""

        def render_str(self, text: str, *, style: Any = "", justify: Any = None, overflow: Any = None,
                       emoji: bool | None = None, markup: bool | None = None, highlight: bool | None = None,
                       highlighter: Any = None) -> Text:
            return Text(printable(text), style=style, justify=justify, overflow=overflow)

    return DataConsole


def data_console(**kwargs: Any) -> Console:
    """A rich console that prints strings as data: no markup, no emoji codes, escaped controls.

    Styled output of our own is built as ``rich.text.Text`` (not parsed); every plain string,
    including table cells, titles and captions, goes through ``printable``. Rich is imported here,
    not with this module, so the light layers that import ``printable`` stay light.
    """
    kwargs.setdefault("highlight", False)
    return _console_class()(markup=False, emoji=False, **kwargs)
