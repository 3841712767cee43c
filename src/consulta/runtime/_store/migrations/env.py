"""Alembic's entry point for the store's migrations.

On `Store(url)` the store hands its connection, already in the migration transaction (see `_migrations.upgrade`);
the alembic command (a developer making a revision) opens `-x url=…` instead.
"""

from __future__ import annotations

from alembic import context
from sqlalchemy import create_engine

from consulta.runtime._store._migrations import configure

connection = context.config.attributes.get("connection")
if connection is not None:
    context.configure(**configure(connection))
    with context.begin_transaction():
        context.run_migrations()
else:
    url = context.get_x_argument(as_dictionary=True).get("url")
    if not url:
        raise SystemExit("Give the database to migrate: alembic -c … -x url=sqlite:///path/to/consulta.db …")
    with create_engine(url).connect() as conn:
        context.configure(**configure(conn))
        with context.begin_transaction():
            context.run_migrations()
        conn.commit()
