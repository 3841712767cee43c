"""Alembic's entry point for the store's migrations.

On `Store(url)` the store hands its connection, already in the migration transaction (see `_migrations.upgrade`);
the alembic command (a developer making a revision) opens `-x url=…` instead.
"""

from __future__ import annotations

from alembic import context
from sqlalchemy import create_engine
from sqlalchemy.engine import Connection

from consulta.runtime._store._migrations import configure


def migrate(connection: Connection) -> None:
    context.configure(**configure(connection, context.config))
    with context.begin_transaction():
        context.run_migrations()


given = context.config.attributes.get("connection")
if given is not None:
    migrate(given)
else:
    url = context.get_x_argument(as_dictionary=True).get("url")
    if not url:
        raise SystemExit(
            "Give the database: alembic -c src/consulta/runtime/_store/migrations/alembic.ini -x url=sqlite:///… …"
        )
    with create_engine(url).connect() as conn:
        migrate(conn)
        conn.commit()
