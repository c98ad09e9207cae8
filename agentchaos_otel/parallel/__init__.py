"""Running work that outgrows one process: on local processes, or on Ray, an existing engine (docs/design.md 9)."""
