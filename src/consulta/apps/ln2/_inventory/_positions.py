"""Positions in a box, as people name them (row letter + column: "B3") and as messages show them."""

from __future__ import annotations

from collections.abc import Sequence

from ._records import ROW_LETTERS, BoxLayout, Inventory

__all__ = ["describe_position", "describe_positions", "occupancy", "position_label"]


def position_label(pos: int, layout: BoxLayout) -> str:
    """Row letter + column number of a position, e.g. 12 → "B3" in a 9×9 box (rows A.., columns 1..)."""
    row, col = divmod(pos - 1, layout.cols)
    return f"{ROW_LETTERS[row]}{col + 1}"


def describe_position(pos: int, layout: BoxLayout) -> str:
    """A position for messages: number and label, e.g. "12 (B3)"; out-of-range numbers are shown bare."""
    if 1 <= pos <= layout.capacity:
        return f"{pos} ({position_label(pos, layout)})"
    return str(pos)


def describe_positions(positions: Sequence[int], layout: BoxLayout) -> str:
    """Several positions for messages, e.g. "5 (A5), 6 (A6)"."""
    return ", ".join(describe_position(p, layout) for p in positions)


def occupancy(inventory: Inventory) -> dict[tuple[int, int], int]:
    """Map every held (box, position) to the id of the record holding it."""
    return {(r.box, p): r.id for r in inventory.records for p in r.positions}
