"""Running work that outgrows one process: on local processes, or on Ray, an existing engine (DESIGN 9)."""
