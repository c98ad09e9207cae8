"""Every name the benchmarks import from the product exists.

Benchmarks import inside their functions (so ``python -m benchmarks`` starts fast), which hides
a name moved or removed in the product until someone runs that benchmark; this reads each
import statement instead and resolves it.
"""

from __future__ import annotations

import ast
import importlib
from pathlib import Path

import pytest

from tests.support import REPO

ROOT = REPO
PRODUCT = ("agentchaos_otel", "diagnosers", "predictors")
FILES = sorted((ROOT / "benchmarks").rglob("*.py"))


def _product_imports(path: Path) -> list[tuple[str, str, int]]:
    found = []
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.ImportFrom) and node.module and node.module.split(".")[0] in PRODUCT:
            found += [(node.module, alias.name, node.lineno) for alias in node.names]
    return found


@pytest.mark.parametrize("path", FILES, ids=lambda p: str(p.relative_to(ROOT)))
def test_every_product_name_a_benchmark_imports_exists(path: Path) -> None:
    missing = []
    for module, name, line in _product_imports(path):
        mod = importlib.import_module(module)
        if not hasattr(mod, name):
            try:
                importlib.import_module(f"{module}.{name}")
            except ImportError:
                missing.append(f"line {line}: {name} from {module}")
    assert missing == []
