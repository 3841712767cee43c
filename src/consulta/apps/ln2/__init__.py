"""ln2 — the liquid-nitrogen cryo-box inventory assistant (seed 001's reference app).

One YAML inventory edited round-trip; read tools, staged write tools, plans approved by the user, applied atomically,
audited in JSONL and reversible by rollback; the `question` tool when a request is ambiguous.
"""

from ._agent import AGENT, SAMPLE_INVENTORY, build_agent, default_inventory, instructions
from ._app import APP, Ln2Options  # noqa: E402 - the declaration, over the parts above
from ._audit import AuditEntry, read_audit
from ._inventory import (
    MAX_INVENTORY_BYTES,
    MAX_INVENTORY_RECORDS,
    Inventory,
    InventoryFile,
    InventoryFileError,
    Record,
    load_inventory,
)
from ._operations import (
    AddEntry,
    ApplyResult,
    BatchThaw,
    Operation,
    RecordThaw,
    Rollback,
    apply_plan,
    parse_op,
    preview,
    validate_ops,
)
from ._queries import empty_positions, inventory_stats, query_inventory, search_records
from ._tools import Ln2Plans, ln2_tools
from ._views import BoxView, CellView, GridView, TubeView, audit_entries, grid_view, propose_rollback, tube_view

__all__ = [
    "AGENT",
    "APP",
    "MAX_INVENTORY_BYTES",
    "MAX_INVENTORY_RECORDS",
    "SAMPLE_INVENTORY",
    "AddEntry",
    "ApplyResult",
    "AuditEntry",
    "BatchThaw",
    "BoxView",
    "CellView",
    "GridView",
    "Inventory",
    "InventoryFile",
    "InventoryFileError",
    "Ln2Options",
    "Ln2Plans",
    "Operation",
    "Record",
    "RecordThaw",
    "Rollback",
    "TubeView",
    "apply_plan",
    "audit_entries",
    "build_agent",
    "default_inventory",
    "empty_positions",
    "grid_view",
    "instructions",
    "inventory_stats",
    "ln2_tools",
    "load_inventory",
    "parse_op",
    "preview",
    "propose_rollback",
    "query_inventory",
    "read_audit",
    "search_records",
    "tube_view",
    "validate_ops",
]
