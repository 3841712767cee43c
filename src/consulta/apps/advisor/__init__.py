"""advisor (seed 003)."""
