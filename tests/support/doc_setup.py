"""Set-up steps the pages show, checked for what they are instead of being run again.

A documented command that installs or builds the environment the test itself runs in is not
rerun (it would rebuild the virtualenv, reach the package index, or run the whole suite from
inside it). Each kind is checked against the repository files it names:

- ``python3 -m venv .venv``: creates the directory the page's later ``.venv/bin/...`` commands use;
- ``pip install ...``: every option is one pip has, every requirement names this project (or pip
  itself, to upgrade), every extra exists in pyproject.toml, every ``-c``/``-r`` file exists;
- ``bash tests/run.sh``: what ``.ci/run`` runs;
- ``python tests/support/NAME.py ARGS``: a step of ``tests/run.sh``, whose ``--help`` names every
  option and positional argument the page gives it;
- ``python -m benchmarks[.NAME] ARGS``: a measurement, not a check. ``python -m benchmarks all``
  runs for minutes on two cores and writes the repository's recorded figures
  (``benchmarks/results.json``, ``benchmarks/RESULTS.md``), and each single benchmark measures this
  machine for a minute or more, so the module is checked to exist and its ``--help`` to name every
  option and benchmark the page gives it (``tests/benchmarks/`` checks what the benchmarks import).
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
import tomllib
from pathlib import Path

from tests.support import REPO
from tests.support.doc_commands import Part, program
from tests.support.resolution import canonical, requirement_name

PYPROJECT = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))
PROJECT = canonical(PYPROJECT["project"]["name"])
EXTRAS = set(PYPROJECT["project"].get("optional-dependencies", {}))
_PIP_FLAGS = {"-q", "--quiet", "-U", "--upgrade", "--no-deps", "-e", "--editable"}
_PIP_FILES = {"-c", "--constraint", "-r", "--requirement"}
_PYTHONS = {"python", "python3"}


def kind(part: Part) -> str | None:
    """What set-up step a simple command is, or None when it is an ordinary command to run."""
    words, prog = part.words, program(part)
    if prog in _PYTHONS and words[1:3] == ("-m", "venv"):
        return "venv"
    if (prog in ("pip", "pip3") and words[1:2] == ("install",)) or (
            prog in _PYTHONS and words[1:4] == ("-m", "pip", "install")):
        return "pip"
    if prog in ("bash", "sh") and len(words) > 1 and words[1].startswith("tests/"):
        return "test script"
    if prog in _PYTHONS and len(words) > 1 and words[1].startswith("tests/support/"):
        return "ci script"
    if prog in _PYTHONS and words[1:2] == ("-m",) and words[2:3] and words[2].split(".")[0] == "benchmarks":
        return "benchmark"
    return None


def check(part: Part) -> None:
    """Assert that a set-up step is what it claims; AssertionError says what is wrong."""
    step = kind(part)
    assert step is not None, f"not a set-up step: {part.words}"
    {"venv": _venv, "pip": _pip, "test script": _test_script, "ci script": _ci_script,
     "benchmark": _benchmark}[step](part)


def _venv(part: Part) -> None:
    assert part.words[3:] == (".venv",), f"the pages' later commands use .venv/bin: {part.words}"


def _pip(part: Part) -> None:
    words = list(part.words[part.words.index("install") + 1:])
    requirements: list[str] = []
    upgrade = False
    while words:
        word = words.pop(0)
        if word in _PIP_FILES:
            assert words, f"{word} needs a file"
            named = words.pop(0)
            assert (REPO / named).is_file(), f"pip {word} {named}: no such file in the repository"
        elif word in _PIP_FLAGS:
            upgrade = upgrade or word in ("-U", "--upgrade")
        elif word.startswith("-"):
            raise AssertionError(f"pip option {word} is not one the pages are checked for")
        else:
            requirements.append(word)
    assert requirements, f"pip install of nothing: {part.words}"
    for spec in requirements:
        if spec == "pip":
            assert upgrade, "pip install pip only makes sense with --upgrade"
            continue
        m = re.fullmatch(r"(\.|[\w.-]+)(?:\[([\w, -]+)\])?", spec)
        assert m, f"pip install {spec}: not a requirement the pages are checked for"
        assert m.group(1) == "." or requirement_name(m.group(1)) == PROJECT, (
            f"pip install {spec}: not this project ({PROJECT})")
        missing = {canonical(e.strip()) for e in (m.group(2) or "").split(",") if e.strip()} - EXTRAS
        assert not missing, f"pip install {spec}: no extra {sorted(missing)} in pyproject.toml ({sorted(EXTRAS)})"


def _runs(script: Path, step: str) -> bool:
    """Whether a shell script runs ``step`` on one of its own lines (not in a comment)."""
    for line in script.read_text(encoding="utf-8").splitlines():
        code = line.split("#", 1)[0]
        if re.search(rf"(^|[\s/]){re.escape(step)}(\s|$)", code):
            return True
    return False


def _test_script(part: Part) -> None:
    script = part.words[1]
    assert (REPO / script).is_file(), f"{script}: no such file"
    runner = REPO / (".ci/run" if script == "tests/run.sh" else "tests/run.sh")
    assert _runs(runner, script), f"{runner.relative_to(REPO)} does not run {script}"


def _ci_script(part: Part) -> None:
    script = part.words[1]
    assert (REPO / script).is_file(), f"{script}: no such file"
    assert _runs(REPO / "tests/run.sh", script), f"tests/run.sh does not run {script}"
    _names_its_arguments([sys.executable, str(REPO / script)], part.words[2:], script)


def _benchmark(part: Part) -> None:
    module = part.words[2]
    path = REPO.joinpath(*module.split("."))
    assert path.with_suffix(".py").is_file() or (path / "__main__.py").is_file(), f"python -m {module}: no such module"
    _names_its_arguments([sys.executable, "-m", module], part.words[3:], f"python -m {module}")


def _names_its_arguments(program_: list[str], args: tuple[str, ...], shown_as: str) -> None:
    """``--help`` of a program names every option and every positional argument given to it (a word
    right after an option is that option's value, and is not looked for)."""
    shown = subprocess.run([*program_, "--help"], capture_output=True, text=True, timeout=60, cwd=REPO,
                           env={**os.environ, "COLUMNS": "200"})
    assert shown.returncode == 0, shown.stderr
    previous = ""
    for arg in args:
        name = arg.split("=", 1)[0]
        if arg.startswith("-") or not previous.startswith("-") or "=" in previous:
            assert re.search(rf"(?<![\w-]){re.escape(name)}(?![\w-])", shown.stdout), (
                f"{shown_as} --help does not name {name}:\n{shown.stdout}")
        previous = arg
