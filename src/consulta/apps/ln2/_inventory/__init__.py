"""The ln2 inventory file: pydantic models of its content and a round-trip loader/renderer.

The inventory is ONE YAML file::

    meta:
      box_layout: {rows: 9, cols: 9}
      box_count: 5
    inventory:
      - id: 1
        parent_cell_line: K562
        box: 2
        positions: [5, 6, 7]
        frozen_at: '2025-03-14'
        thaw_events:
          - {date: '2025-06-01', action: thaw, positions: [4]}

It is read with ruamel.yaml in round-trip mode and the loaded document is kept, so that edits (see `_operations`)
change only what they must: the user's comments, key order, quoting and flow/block style survive, and an unchanged
document renders back to the very same bytes. The pydantic models are a validated *view* of the document; they are
never dumped themselves.

Files written by SnowFox (seed 001) open too, unchanged. Which of the two record layouts a file uses is decided
once, when it is loaded, by its `FileDialect`: the only place that knows the file's vocabulary. It reads the
document into the models' terms and writes edits back in the file's own terms (key names, one position or a list,
`storage_events` or `thaw_events`), so operations never know which layout they edit:

- `BatchDialect` — Consulta's layout above, and SnowFox's older one (the same keys; `meta.box_count` may be absent).
- `TubeDialect` — SnowFox's newer layout: one tube per record, `cell_line`, a single `position` (null once taken
  out), `stored_at`, `storage_events` (`takeout` / `move`), `meta.box_layout.box_count` and `meta.custom_fields`.

A file that cannot be used raises `InventoryFileError`: one line naming the file, the line, what is wrong and the fix.

The parts, one job each: `_records` (the models), `_positions` (positions as people name them), `_errors` (the
error and the limits), `_reading` (path → document, within the limits), `_yaml_style` (the file's own YAML style),
`_dialects` (the two layouts), `_validation` (document → models, with the line of each problem), `_comments` (the
comment lines kept in place by edits), `_file` (`InventoryFile`: load, edit, render).
"""

from __future__ import annotations

from ._dialects import BatchDialect, FileDialect, TubeDialect
from ._errors import MAX_INVENTORY_BYTES, MAX_INVENTORY_RECORDS, InventoryFileError
from ._file import InventoryFile, load_inventory, sha256_hex
from ._positions import describe_position, describe_positions, occupancy, position_label
from ._records import BoxLayout, Inventory, InventoryMeta, Record, ThawAction, ThawEvent, parse_iso_date

__all__ = [
    "ThawAction",
    "BoxLayout",
    "InventoryMeta",
    "ThawEvent",
    "Record",
    "Inventory",
    "InventoryFile",
    "InventoryFileError",
    "MAX_INVENTORY_BYTES",
    "MAX_INVENTORY_RECORDS",
    "FileDialect",
    "BatchDialect",
    "TubeDialect",
    "load_inventory",
    "parse_iso_date",
    "position_label",
    "describe_position",
    "describe_positions",
    "occupancy",
    "sha256_hex",
]
