"""Test-data builders and fixtures; not part of the installed package."""
