"""Test-data builders and fixtures; not part of the installed package."""

from pathlib import Path

REPO = Path(__file__).resolve().parents[2]  # the repository's root: README, docs, dashboards
