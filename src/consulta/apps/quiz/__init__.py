"""quiz (seed 004)."""
