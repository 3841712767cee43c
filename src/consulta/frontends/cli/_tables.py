"""Tables whose ids stay whole: an id is what people copy into the next command, so its column never truncates or
wraps; the other columns wrap to make room (a narrow terminal folds an id onto more lines rather than cut it)."""

from __future__ import annotations

from collections.abc import Sequence

from rich.table import Table

__all__ = ["id_table"]


def id_table(title: str | None, columns: Sequence[str], *, ids: int = 1) -> Table:
    """A table of `columns` whose first `ids` columns hold ids (kept whole, never wrapped at a hyphen)."""
    table = Table(title=title)
    for i, name in enumerate(columns):
        if i < ids:
            table.add_column(name, no_wrap=True, overflow="fold", min_width=len(name))
        else:
            table.add_column(name, overflow="fold", ratio=1)
    return table
