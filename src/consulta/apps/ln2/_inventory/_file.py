"""The inventory file loaded in round-trip mode (`InventoryFile`): its bytes, the editable document, its dialect and
the validated models; edits in the file's own terms, rendered back to bytes that differ only where they must."""

from __future__ import annotations

import hashlib
import io
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from ruamel.yaml import YAML
from ruamel.yaml.comments import CommentedMap, CommentedSeq
from ruamel.yaml.tokens import CommentToken

from ._comments import attach_after, blank_line_between_records, detach_trailing_lines
from ._dialects import FileDialect, custom_field_keys, flow_seq, quoted_like
from ._errors import InventoryFileError
from ._reading import decode, parse, read_bounded
from ._records import Inventory, Record, ThawEvent
from ._validation import validate_document
from ._yaml_style import new_yaml

__all__ = ["InventoryFile", "load_inventory", "sha256_hex"]


def sha256_hex(data: bytes) -> str:
    """Hex sha256 of some bytes (used to name states of the file)."""
    return hashlib.sha256(data).hexdigest()


@dataclass
class InventoryFile:
    """An inventory file loaded in round-trip mode: its bytes, the editable document, its dialect and the models.

    Change it with `add_record` and `take_out` (they write in the file's own dialect) and call `render()` to get
    the new bytes; `inventory` is the validated view of the document as loaded (it is not updated by edits —
    reload the rendered bytes for that, and compare with `reads_back_as`).
    """

    path: Path | None
    raw: bytes
    document: CommentedMap
    inventory: Inventory
    dialect: FileDialect
    _yaml: YAML
    _crlf: bool

    @property
    def sha256(self) -> str:
        """sha256 of the bytes the file had when loaded."""
        return sha256_hex(self.raw)

    @property
    def source(self) -> str:
        """How messages name the file."""
        return str(self.path) if self.path else "<inventory>"

    @classmethod
    def load(cls, path: Path | str) -> InventoryFile:
        """Read and validate the file at `path`; raise InventoryFileError if it cannot be used (a file over
        MAX_INVENTORY_BYTES is refused before it is read)."""
        path = Path(path)
        return cls.from_bytes(read_bounded(path), path=path)

    @classmethod
    def from_bytes(cls, raw: bytes, *, path: Path | None = None) -> InventoryFile:
        """Parse and validate inventory bytes (UTF-8 YAML); raise InventoryFileError if they cannot be used (over
        MAX_INVENTORY_BYTES or MAX_INVENTORY_RECORDS included)."""
        source = str(path) if path else "<inventory>"
        text = decode(raw, source, path)
        yaml = new_yaml(text)
        document = parse(yaml, text, source, path)
        try:
            inventory, dialect = validate_document(document, source)
        except InventoryFileError as err:
            err.path = path
            raise
        return cls(
            path=path,
            raw=raw,
            document=document,
            inventory=inventory,
            dialect=dialect,
            _yaml=yaml,
            _crlf=b"\r\n" in raw,
        )

    def render(self) -> bytes:
        """The current document as bytes, in the file's own indentation, quoting and line endings."""
        buffer = io.StringIO()
        self._yaml.dump(self.document, buffer)
        text = buffer.getvalue()
        if self._crlf:
            text = text.replace("\r\n", "\n").replace("\n", "\r\n")
        prefix = "\ufeff" if self.raw.startswith(b"\xef\xbb\xbf") else ""
        return (prefix + text).encode("utf-8")

    def record_node(self, record_id: int) -> CommentedMap:
        """The document's mapping of record `record_id` (for in-place edits); KeyError if there is none."""
        for node in self.document.get("inventory") or ():
            if isinstance(node, CommentedMap) and node.get("id") == record_id:
                return node
        raise KeyError(record_id)

    def add_record(self, record: Record) -> None:
        """Append `record` to the document, written like the file's other records."""
        items = self.document.get("inventory")
        if not isinstance(items, CommentedSeq):
            items = self.document["inventory"] = CommentedSeq()
        template = next((node for node in reversed(items) if isinstance(node, CommentedMap)), None)
        if (blank := blank_line_between_records(items)) is not None:
            attach_after(items[-1], CommentToken(blank.value, blank.start_mark, None))
        items.append(self.dialect.new_record(record, template=template, custom_keys=custom_field_keys(self.document)))

    def take_out(self, record_id: int, positions: Sequence[int], event: ThawEvent) -> None:
        """Remove `positions` from record `record_id` and append `event` to its events, in the file's dialect."""
        node = self.record_node(record_id)
        self.dialect.take_out(node, positions)
        key = self.dialect.events_key
        trailing = detach_trailing_lines(node)
        events = node.get(key)
        if not events:  # absent, null or [] — start a block list
            events = node[key] = CommentedSeq()
        events.append(self._event_node(self.dialect.stored_event(event), node))
        if trailing is not None:
            attach_after(events, trailing)

    def reads_back_as(self, state: Inventory) -> Inventory:
        """`state`, simulated from this file's `inventory`, as it reads back once written in this file's dialect
        (events added since loading are those `FileDialect.stored_event` writes)."""
        loaded = {r.id: len(r.thaw_events) for r in self.inventory.records}
        records = []
        for record in state.records:
            kept = loaded.get(record.id, 0)
            events = [*record.thaw_events[:kept], *map(self.dialect.stored_event, record.thaw_events[kept:])]
            records.append(record.model_copy(update={"thaw_events": events}))
        return state.model_copy(update={"records": records})

    def _event_node(self, event: ThawEvent, record: CommentedMap) -> CommentedMap:
        """An event mapping styled like the file's first event (key order, flow or block, date quoting)."""
        like = self._first_event()
        keys = [k for k in like if k in ThawEvent.model_fields] if like is not None else list(self.dialect.event_keys)
        keys += [k for k in self.dialect.event_keys if k not in keys]
        date_key = self.dialect.file_loc(record, ["frozen_at"])[0]
        date_like = like.get("date") if like is not None else record.get(date_key)
        values = event.model_dump(exclude_none=True)
        node = CommentedMap()
        for key in keys:
            if key in values:
                value = values[key]
                if key == "positions":
                    value = flow_seq(value)
                elif key == "date":
                    value = quoted_like(date_like, value)
                node[key] = value
        flow = like.fa.flow_style() if like is not None else self.dialect.flow_events
        if flow:
            node.fa.set_flow_style()
        return node

    def _first_event(self) -> CommentedMap | None:
        for item in self.document.get("inventory") or ():
            events = item.get(self.dialect.events_key) if isinstance(item, Mapping) else None
            for event in events if isinstance(events, list) else ():
                if isinstance(event, CommentedMap):
                    return event
        return None


def load_inventory(path: Path | str) -> Inventory:
    """Load and validate the inventory at `path` (read-only use); InventoryFileError if it cannot be used."""
    return InventoryFile.load(path).inventory
