"""The store: runs, checkpoints, asks, plans, tool calls, events, consultations and issued sessions, on SQLite or
PostgreSQL.

One module per table group (`_runs`, `_steps`, `_events`, `_asks`, `_plans`, `_consultations`, `_sessions`), the
tables in `_schema`, what SQLite and PostgreSQL spell differently in `_database`, the schema's upgrades in `migrations/`.
"""

from ._facade import Store
from ._schema import runs
from ._values import new_id, utcnow

__all__ = ["Store", "new_id", "runs", "utcnow"]
