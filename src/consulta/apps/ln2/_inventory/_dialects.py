"""The two record layouts a file may use (`FileDialect`): the only code that knows a file's key names. It reads the
document's records into the models' terms and writes edits back in the file's own terms."""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Mapping, Sequence
from typing import Any, ClassVar

from ruamel.yaml.comments import CommentedMap, CommentedSeq
from ruamel.yaml.scalarstring import ScalarString

from ._records import Record, ThawEvent

__all__ = [
    "BATCH_DIALECT",
    "TUBE_DIALECT",
    "BatchDialect",
    "FileDialect",
    "TubeDialect",
    "custom_field_keys",
    "flow_seq",
    "quoted_like",
]


def quoted_like(sample: Any, value: str) -> str:
    """`value` quoted the way `sample` (a scalar of the same file) is, so new lines look like their neighbours."""
    return type(sample)(value) if isinstance(sample, ScalarString) else value


def flow_seq(items: Sequence[Any]) -> CommentedSeq:
    seq = CommentedSeq(items)
    seq.fa.set_flow_style()
    return seq


def _is_move(event: Any) -> bool:
    return isinstance(event, Mapping) and event.get("action") == "move"


class FileDialect(ABC):
    """How the records of one file layout are written: read into the models' terms, edits written in the file's.

    Chosen once per file when it is loaded (`choose`); the only code that knows the file's key names.
    """

    name: ClassVar[str]
    one_tube_per_record: ClassVar[bool] = False
    events_key: ClassVar[str]  # the record key holding its removal events
    event_keys: ClassVar[tuple[str, ...]]  # key order of a new event when the file has none to copy
    flow_events: ClassVar[bool]  # style of a new event when the file has none to copy
    box_count_key: ClassVar[tuple[str, ...]]  # where this layout keeps the number of boxes

    @staticmethod
    def choose(document: Mapping[str, Any]) -> FileDialect:
        """The dialect of a loaded document: the newer SnowFox layout when its records (or, with no record, its
        `meta`) use that layout's keys; Consulta's otherwise."""
        items = document.get("inventory")
        first = next((i for i in items if isinstance(i, Mapping)), None) if isinstance(items, list) else None
        if first is not None:
            tube = "positions" not in first and any(k in first for k in ("position", "cell_line", "stored_at"))
            return TUBE_DIALECT if tube else BATCH_DIALECT
        meta = document.get("meta")
        layout = meta.get("box_layout") if isinstance(meta, Mapping) else None
        custom = isinstance(meta, Mapping) and "custom_fields" in meta
        return TUBE_DIALECT if custom or isinstance(layout, Mapping) and "box_count" in layout else BATCH_DIALECT

    @abstractmethod
    def record_view(self, node: Mapping[str, Any]) -> dict[str, Any]:
        """The record `node` of the file as the `Record` model's fields (before validation)."""

    @abstractmethod
    def file_loc(self, node: Any, loc: Sequence[Any]) -> list[Any]:
        """A location inside a record in the model's terms (`positions.0`) as a location in the file (`position`)."""

    @abstractmethod
    def new_record(
        self, record: Record, *, template: Mapping[str, Any] | None, custom_keys: Sequence[str]
    ) -> CommentedMap:
        """The mapping of a new record in the file's terms; `template` is the last record of the file, if any."""

    @abstractmethod
    def take_out(self, node: CommentedMap, positions: Sequence[int]) -> None:
        """Remove `positions` from the record `node` (its events are appended separately)."""

    def stored_event(self, event: ThawEvent) -> ThawEvent:
        """`event` as this layout records it (and reads it back)."""
        return event


class BatchDialect(FileDialect):
    """Consulta's layout (and SnowFox's older one): a record holds `positions: [..]` of one frozen batch, events
    are `thaw_events`. The number of boxes is `meta.box_count`; when it is absent (SnowFox's older sample) the boxes
    are those the records use (the largest box number, at least 1)."""

    name = "batch"
    events_key = "thaw_events"
    event_keys = ("date", "action", "positions", "note")
    flow_events = True  # one line per event, as in hand-written files
    box_count_key = ("meta", "box_count")

    def record_view(self, node: Mapping[str, Any]) -> dict[str, Any]:
        return dict(node)

    def file_loc(self, node: Any, loc: Sequence[Any]) -> list[Any]:
        return list(loc)

    def new_record(
        self, record: Record, *, template: Mapping[str, Any] | None, custom_keys: Sequence[str]
    ) -> CommentedMap:
        node = CommentedMap()
        for key, value in record.model_dump(exclude={"thaw_events", "custom"}).items():
            if value is None:
                continue  # absent = unknown; keeps new records as short as hand-written ones
            if key == "positions":
                value = flow_seq(value)
            elif key == "frozen_at" and template is not None:
                value = quoted_like(template.get("frozen_at"), value)
            node[key] = value
        return node

    def take_out(self, node: CommentedMap, positions: Sequence[int]) -> None:
        held = node["positions"]
        for index in reversed(range(len(held))):
            if held[index] in positions:
                del held[index]  # in place: the list keeps its style and comments


class TubeDialect(FileDialect):
    """SnowFox's newer layout: one tube per record, `cell_line`, a single `position` (null once taken out),
    `stored_at`, `storage_events` (`takeout` and `move`; a move is not a removal, so the models leave it out), the
    number of boxes in `meta.box_layout.box_count` (absent: the boxes the records use, at least 1), the user's own
    fields declared in `meta.custom_fields`. Every removal is written as a `takeout` event."""

    name = "tube"
    one_tube_per_record = True
    events_key = "storage_events"
    event_keys = ("action", "date", "positions", "note")
    flow_events = False
    box_count_key = ("meta", "box_layout", "box_count")
    _KEYS: ClassVar[dict[str, str]] = {  # model field -> file key
        "parent_cell_line": "cell_line",
        "positions": "position",
        "frozen_at": "stored_at",
        "thaw_events": "storage_events",
    }
    _NEW_KEYS: ClassVar[tuple[str, ...]] = ("id", "box", "position", "stored_at", "cell_line", "note")

    def record_view(self, node: Mapping[str, Any]) -> dict[str, Any]:
        view = {k: v for k, v in node.items() if k not in self._KEYS.values()}
        if "cell_line" in node:
            view["parent_cell_line"] = node["cell_line"]
        if "position" in node:
            view["positions"] = [] if node["position"] is None else [node["position"]]
        if "stored_at" in node:
            view["frozen_at"] = node["stored_at"]
        events = node.get("storage_events")
        view["thaw_events"] = [e for e in events if not _is_move(e)] if isinstance(events, list) else events
        return view

    def file_loc(self, node: Any, loc: Sequence[Any]) -> list[Any]:
        if not loc:
            return []
        head, rest = loc[0], list(loc[1:])
        if head == "positions":
            return ["position"]
        if head == "thaw_events" and rest and isinstance(rest[0], int) and isinstance(node, Mapping):
            kept = [i for i, e in enumerate(node.get("storage_events") or ()) if not _is_move(e)]
            return ["storage_events", kept[rest[0]], *rest[1:]] if rest[0] < len(kept) else ["storage_events"]
        return [self._KEYS.get(head, head), *rest]

    def new_record(
        self, record: Record, *, template: Mapping[str, Any] | None, custom_keys: Sequence[str]
    ) -> CommentedMap:
        values: dict[str, Any] = {
            "id": record.id,
            "box": record.box,
            "position": record.positions[0] if record.positions else None,
            "stored_at": quoted_like(template.get("stored_at"), record.frozen_at) if template else record.frozen_at,
            "cell_line": record.parent_cell_line,
            "short_name": record.short_name,
            "plasmid_name": record.plasmid_name,
            "plasmid_id": record.plasmid_id,
            "note": record.note,
            "storage_events": None,
        }
        # The same keys in the same order as the records around it; custom fields start empty (null).
        order = list(template) if template else [*self._NEW_KEYS, *custom_keys, "storage_events"]
        node = CommentedMap((key, values.get(key)) for key in order)
        for key, value in values.items():
            if key not in node and value is not None:
                node[key] = value
        return node

    def take_out(self, node: CommentedMap, positions: Sequence[int]) -> None:
        node["position"] = None

    def stored_event(self, event: ThawEvent) -> ThawEvent:
        return event.model_copy(update={"action": "takeout"})


BATCH_DIALECT = BatchDialect()
TUBE_DIALECT = TubeDialect()


def custom_field_keys(document: Mapping[str, Any]) -> list[str]:
    """The keys of the user's own record fields, declared in `meta.custom_fields` (`- key: batch`)."""
    meta = document.get("meta")
    fields = meta.get("custom_fields") if isinstance(meta, Mapping) else None
    if not isinstance(fields, list):
        return []
    return [f["key"] for f in fields if isinstance(f, Mapping) and isinstance(f.get("key"), str)]
