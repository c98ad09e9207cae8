"""Running work that outgrows one process on Ray, an existing engine (DESIGN 9)."""
