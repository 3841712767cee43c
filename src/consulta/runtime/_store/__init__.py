"""The store: runs, checkpoints, asks, plans, tool calls, events, consultations and issued sessions, on SQLite or
PostgreSQL.

One module per table group (`_runs`, `_steps`, `_events`, `_asks`, `_plans`, `_consultations`, `_sessions`), the
tables in `_schema`, what SQLite and PostgreSQL spell differently in `_database`, the schema's upgrades in `migrations/`.
"""

from ._app_tables import AppTables, migrate_app_tables, upsert, writing
from ._durable import RunSteps
from ._facade import Store
from ._schema import runs
from ._state_book import StateBook, state_table
from ._values import new_id, utcnow

__all__ = [
    "AppTables",
    "RunSteps",
    "Store",
    "migrate_app_tables",
    "new_id",
    "runs",
    "StateBook",
    "state_table",
    "upsert",
    "utcnow",
    "writing",
]
