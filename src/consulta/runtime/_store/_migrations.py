"""Bringing a store's schema up to date on open, with the Alembic migrations shipped in `migrations/`.

Every schema change is a revision under `migrations/versions/`. A store made by any earlier version upgrades when
it is opened: the first revision (the baseline) creates the tables of a new store and adopts a store made before
Alembic (its two hand-written earlier layouts included). One process at a time migrates (`Database.migrating`);
the others wait, then find the store up to date.

A developer makes a new revision with the alembic command, e.g.
    alembic -c src/consulta/runtime/_store/migrations/alembic.ini -x url=sqlite:///new.db revision --autogenerate -m "…"
"""

from __future__ import annotations

import functools
import threading
from pathlib import Path

from alembic import command
from alembic.config import Config
from alembic.runtime.migration import MigrationContext
from alembic.script import ScriptDirectory
from sqlalchemy.engine import Connection

from ._database import Database
from ._schema import metadata

__all__ = ["SCRIPTS", "configure", "head", "upgrade"]

SCRIPTS = Path(__file__).with_name("migrations")

# Alembic's `context` and `op` are module globals: two stores of one process migrate one after the other.
_IN_PROCESS = threading.Lock()


def _config(connection: Connection | None = None) -> Config:
    config = Config()
    config.set_main_option("script_location", str(SCRIPTS))
    config.attributes["connection"] = connection
    return config


@functools.cache
def head() -> str | None:
    """The newest revision shipped with this version of Consulta."""
    return ScriptDirectory.from_config(_config()).get_current_head()


def upgrade(db: Database) -> None:
    """Bring the store's schema up to the newest revision (nothing to do, one cheap query, when it is there)."""
    with db.read() as conn:
        if MigrationContext.configure(conn).get_current_revision() == head():
            return
    with _IN_PROCESS, db.migrating() as conn:
        command.upgrade(_config(conn), "head")


def configure(connection: Connection) -> dict[str, object]:
    """The options `migrations/env.py` hands to Alembic's context (one place for the store and the command)."""
    return {"connection": connection, "target_metadata": metadata, "render_as_batch": True}
