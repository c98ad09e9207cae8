"""The commands the README and the docs/ pages show, read as a reader would type them.

A command is a line of a fenced ```bash or ```sh block, with backslash continuations joined;
blank and comment-only lines are not commands. The text is kept as written: the shell that runs
it applies leading ``VAR=value`` assignments, drops a trailing ``# comment`` and keeps
``export X=Y`` for the page's later commands. ``parts`` splits a command into the simple commands
a reader runs one after another (``a && b``), so set-up steps among them can be told apart.
"""

from __future__ import annotations

import re
import shlex
from dataclasses import dataclass
from pathlib import Path

from tests.support import REPO

RUNNABLE = ("bash", "sh")
_FENCE = re.compile(r"^ {0,3}(`{3,}|~{3,})\s*([\w+-]*)")
_ASSIGNMENT = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*=")
_SEPARATORS = {"&&", "||", ";", "|", "&"}


@dataclass(frozen=True)
class Block:
    """A fenced code block: its info string's language, first content line (1-based), lines."""

    lang: str
    line: int
    lines: tuple[str, ...]


@dataclass(frozen=True)
class Command:
    """One command of a page, with where it is (for a failure message that points at the page)."""

    page: Path
    line: int
    text: str

    def where(self) -> str:
        return f"{self.page.relative_to(REPO)}:{self.line}"


@dataclass(frozen=True)
class Part:
    """One simple command of a command line: its leading assignments, its words, what follows it."""

    assignments: tuple[str, ...]
    words: tuple[str, ...]
    separator: str  # "&&", ";", "&", ... or "" at the end of the line


def pages() -> list[Path]:
    """The README and every page of docs/, README first, then docs/ in path order."""
    return [REPO / "README.md", *sorted((REPO / "docs").rglob("*.md"))]


def blocks(text: str) -> list[Block]:
    """Every fenced block of a Markdown text (a fence closes on the same character, at least as long)."""
    found: list[Block] = []
    lines = text.splitlines()
    i = 0
    while i < len(lines):
        m = _FENCE.match(lines[i])
        if not m:
            i += 1
            continue
        fence, lang, start = m.group(1), m.group(2).lower(), i + 1
        j = start
        while j < len(lines) and not (lines[j].strip().startswith(fence[0] * len(fence))
                                      and lines[j].strip().strip(fence[0]) == ""):
            j += 1
        found.append(Block(lang, start + 1, tuple(lines[start:j])))
        i = j + 1
    return found


def commands_of(block: Block, page: Path) -> list[Command]:
    """A block's commands: continuation lines joined, blank and comment-only lines left out."""
    found: list[Command] = []
    pending: list[str] = []
    first = 0
    for offset, raw in enumerate(block.lines):
        if not pending:
            first = block.line + offset
            if not raw.strip() or raw.lstrip().startswith("#"):
                continue
        if raw.rstrip().endswith("\\"):
            pending.append(raw.rstrip()[:-1].rstrip())
            continue
        pending.append(raw.strip() if pending else raw.rstrip())
        found.append(Command(page, first, " ".join(p.strip() for p in pending)))
        pending = []
    if pending:
        found.append(Command(page, first, " ".join(p.strip() for p in pending)))
    return found


def commands(page: Path) -> list[Command]:
    """Every command of the page's ```bash and ```sh blocks, in page order."""
    return [c for b in blocks(page.read_text(encoding="utf-8")) if b.lang in RUNNABLE for c in commands_of(b, page)]


def parts(text: str) -> list[Part]:
    """The simple commands of a command line, split at ``&&``, ``||``, ``;``, ``|`` and ``&``."""
    lexer = shlex.shlex(text, posix=True, punctuation_chars=True)
    lexer.whitespace_split = True
    lexer.commenters = "#"
    found: list[Part] = []
    current: list[str] = []
    for token in lexer:
        if token in _SEPARATORS:
            found.append(_part(current, token))
            current = []
        else:
            current.append(token)
    if current:
        found.append(_part(current, ""))
    return found


def _part(tokens: list[str], separator: str) -> Part:
    n = 0
    while n < len(tokens) and _ASSIGNMENT.match(tokens[n]):
        n += 1
    return Part(tuple(tokens[:n]), tuple(tokens[n:]), separator)


def program(part: Part) -> str:
    """The command's program without its directory (``.venv/bin/pip`` is ``pip``)."""
    return Path(part.words[0]).name if part.words else ""


def rebuild(selected: list[Part]) -> str:
    """A command line of some of a line's simple commands, each quoted for the shell."""
    out: list[str] = []
    for i, p in enumerate(selected):
        out.append(shlex.join([*p.assignments, *p.words]))
        if i < len(selected) - 1:
            out.append(p.separator or "&&")
    return " ".join(out)
