"""What a person's screen shows of the inventory (the box grid, one tube, the audit history) and the one write a
person starts there: rolling back an audited change, staged as a plan and approved like any write. Shared by the web
page and the desktop window."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from pydantic import BaseModel

from ...i18n import t
from .._def import AppView
from .._proposals import Proposal, propose
from ._audit import read_audit
from ._inventory import InventoryFile, describe_position, load_inventory, occupancy, position_label
from ._operations import Rollback

__all__ = ["BoxView", "CellView", "GridView", "TubeView", "audit_entries", "grid_view", "propose_rollback", "tube_view"]


class CellView(BaseModel):
    position: int
    label: str
    """`A1` … `I9` (row letter, column number)."""
    record_id: int | None = None
    name: str | None = None


class BoxView(BaseModel):
    box: int
    rows: int
    cols: int
    cells: list[CellView]
    """rows × cols cells, row by row (position 1 first)."""

    @property
    def occupied(self) -> int:
        return sum(1 for c in self.cells if c.record_id is not None)


class GridView(BaseModel):
    sha256: str
    """The state of the file shown (a change of it means the grid must be redrawn)."""
    boxes: list[BoxView]


class TubeView(BaseModel):
    box: int
    position: int
    where: str
    """e.g. `box 1 A1`."""
    record: dict[str, Any] | None
    """The record holding the position (all its fields), or None when the position is empty."""


def grid_view(path: Path | str) -> GridView:
    """Every box of the inventory as rows × cols cells, occupied ones naming their record."""
    file = InventoryFile.load(path)
    inventory = file.inventory
    layout = inventory.layout
    held = occupancy(inventory)
    names = {r.id: r.display_name for r in inventory.records}
    boxes = []
    for box in range(1, inventory.meta.box_count + 1):
        cells = []
        for pos in range(1, layout.capacity + 1):
            rid = held.get((box, pos))
            cells.append(
                CellView(
                    position=pos, label=position_label(pos, layout), record_id=rid, name=names.get(rid) if rid else None
                )
            )
        boxes.append(BoxView(box=box, rows=layout.rows, cols=layout.cols, cells=cells))
    return GridView(sha256=file.sha256, boxes=boxes)


def tube_view(path: Path | str, *, box: int, position: int) -> TubeView:
    """The tube at (box, position): the record holding it, or None."""
    inventory = load_inventory(path)
    rid = occupancy(inventory).get((box, position))
    record = inventory.record(rid) if rid is not None else None
    return TubeView(
        box=box,
        position=position,
        where=f"box {box} {describe_position(position, inventory.layout)}",
        record=record.model_dump(mode="json") if record is not None else None,
    )


async def propose_rollback(host: AppView, *, audit_id: str, principal: str, lang: str) -> Proposal:
    """Stage restoring the inventory to its state before audit entry `audit_id`, for `principal`, and open its
    approval (see `consulta.apps.propose`): nothing is written unless the plan is approved. ToolError when the entry
    or its backup is unusable (nothing is recorded then)."""
    op = Rollback(audit_id=audit_id).model_dump(mode="json", exclude_none=True)
    prompt = t("ln2.rollback.prompt", lang, audit_id=audit_id)
    return await propose(host, tool="rollback", op=op, prompt=prompt, principal=principal, lang=lang)


def audit_entries(path: Path | str, *, limit: int | None = 50, lang: str | None = None) -> list[dict[str, Any]]:
    """The newest audit entries first, as plain data; with `lang`, each `summary` is in that language where the
    entry has it (`translations`), else the recorded English."""
    entries = [e.model_dump(mode="json") for e in reversed(read_audit(path, limit=limit).entries)]
    if lang is not None:
        for entry in entries:
            entry["summary"] = entry["translations"].get(lang) or entry["summary"]
    return entries
