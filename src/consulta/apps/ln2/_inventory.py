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
"""

from __future__ import annotations

import contextlib
import datetime as dt
import hashlib
import io
import os
import re
import stat
import tempfile
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated, Any, Literal

from pydantic import BaseModel, BeforeValidator, ConfigDict, Field, StrictInt, ValidationError, field_validator
from ruamel.yaml import YAML
from ruamel.yaml.comments import CommentedMap, CommentedSeq
from ruamel.yaml.error import YAMLError

from consulta.runtime._errors import ToolError

__all__ = [
    "ThawAction",
    "BoxLayout",
    "InventoryMeta",
    "ThawEvent",
    "Record",
    "Inventory",
    "InventoryFile",
    "load_inventory",
    "parse_iso_date",
    "position_label",
    "describe_position",
    "describe_positions",
    "occupancy",
    "sha256_hex",
    "atomic_write_bytes",
    "fsync_dir",
]

ThawAction = Literal["thaw", "takeout", "discard"]

_DATE_RE = re.compile(r"^\d{4}-\d{2}-\d{2}$")
_ROW_LETTERS = "ABCDEFGHIJKLMNOPQRSTUVWXYZ"


def parse_iso_date(value: object) -> dt.date:
    """Parse a real calendar date written as YYYY-MM-DD (or a `date` object); raise ValueError otherwise."""
    if isinstance(value, dt.datetime):
        return value.date()
    if isinstance(value, dt.date):
        return value
    if not isinstance(value, str) or not _DATE_RE.match(value.strip()):
        raise ValueError(f"{value!r} is not a date written as YYYY-MM-DD")
    try:
        return dt.date.fromisoformat(value.strip())
    except ValueError:
        raise ValueError(f"{value!r} is not a real calendar date") from None


def _iso_date_str(value: object) -> object:
    # Unquoted dates in YAML load as `date` objects; the models always hold the YYYY-MM-DD text.
    try:
        return parse_iso_date(value).isoformat()
    except ValueError:
        return value  # let the field validator produce the error with the field's name


def _clean_optional_str(value: object) -> object:
    # Blank optional text is the same as no text: it keeps queries and summaries free of empty strings.
    if isinstance(value, str):
        value = value.strip()
        return value or None
    return value


def _none_as_empty_list(value: object) -> object:
    # `positions:` with nothing after it is how a person writes "no tubes left".
    return [] if value is None else value


IsoDate = Annotated[str, BeforeValidator(_iso_date_str)]
OptionalText = Annotated[str | None, BeforeValidator(_clean_optional_str)]
# Numbers in the file must be real YAML integers: edits find list items and records by value.
PositionList = Annotated[list[StrictInt], BeforeValidator(_none_as_empty_list)]


class _Model(BaseModel):
    # Unknown keys in the user's file are ignored by the models (they stay in the round-trip document untouched).
    model_config = ConfigDict(extra="ignore", str_strip_whitespace=True)


class BoxLayout(_Model):
    """Rows × columns of one box; positions are numbered 1..rows*cols row by row."""

    rows: StrictInt = Field(ge=1, le=len(_ROW_LETTERS))
    cols: StrictInt = Field(ge=1, le=99)

    @property
    def capacity(self) -> int:
        """Number of positions in one box."""
        return self.rows * self.cols


class InventoryMeta(_Model):
    """The `meta` section: box layout and number of boxes (boxes are numbered 1..box_count)."""

    box_layout: BoxLayout
    box_count: StrictInt = Field(ge=1)


class ThawEvent(_Model):
    """One removal of tubes from a record: thawed, taken out (e.g. given away) or discarded."""

    date: IsoDate
    action: ThawAction
    positions: PositionList = Field(default_factory=list)
    note: OptionalText = None

    @field_validator("date")
    @classmethod
    def _real_date(cls, value: str) -> str:
        return parse_iso_date(value).isoformat()


class Record(_Model):
    """One frozen batch of tubes of one line in one box; `positions` are the tubes still held ([] = consumed)."""

    id: StrictInt = Field(ge=1)
    parent_cell_line: str = Field(min_length=1)
    short_name: OptionalText = None
    plasmid_name: OptionalText = None
    plasmid_id: OptionalText = None
    box: StrictInt
    positions: PositionList
    frozen_at: IsoDate
    note: OptionalText = None
    thaw_events: list[ThawEvent] = Field(default_factory=list)

    @field_validator("frozen_at")
    @classmethod
    def _real_date(cls, value: str) -> str:
        return parse_iso_date(value).isoformat()

    @field_validator("thaw_events", mode="before")
    @classmethod
    def _none_is_no_events(cls, value: object) -> object:
        return [] if value is None else value

    @property
    def consumed(self) -> bool:
        """True when no tube of the record is left."""
        return not self.positions

    @property
    def display_name(self) -> str:
        """The short name if there is one, else the parent cell line (what people call the tubes)."""
        return self.short_name or self.parent_cell_line


class Inventory(_Model):
    """The whole inventory: `meta` and the records (the YAML key `inventory`)."""

    meta: InventoryMeta
    records: list[Record] = Field(default_factory=list)

    @property
    def layout(self) -> BoxLayout:
        """The layout shared by all boxes."""
        return self.meta.box_layout

    def record(self, record_id: int) -> Record | None:
        """The record with this id, or None."""
        return next((r for r in self.records if r.id == record_id), None)

    def next_id(self) -> int:
        """The id a new record gets: one more than the largest id ever used in the file."""
        return max((r.id for r in self.records), default=0) + 1


# --------------------------------------------------------------------------------------------------------------
# Positions


def position_label(pos: int, layout: BoxLayout) -> str:
    """Row letter + column number of a position, e.g. 12 → "B3" in a 9×9 box (rows A.., columns 1..)."""
    row, col = divmod(pos - 1, layout.cols)
    return f"{_ROW_LETTERS[row]}{col + 1}"


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


# --------------------------------------------------------------------------------------------------------------
# Bytes on disk


def sha256_hex(data: bytes) -> str:
    """Hex sha256 of some bytes (used to name states of the file)."""
    return hashlib.sha256(data).hexdigest()


def atomic_write_bytes(path: Path, data: bytes, *, mode_like: Path | None = None) -> None:
    """Replace `path` with `data` so that a reader sees either the old or the new bytes, never a mix.

    Writes a temp file in the same folder, flushes and fsyncs it, gives it the permissions of `mode_like`
    (default: of `path` itself, if it exists), `os.replace`s it over the target and fsyncs the folder so the rename
    itself survives a crash. No temp file is left behind.
    """
    path = Path(path)
    mode_like = Path(mode_like) if mode_like is not None else path
    folder = path.parent
    fd, tmp_name = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=folder)
    tmp = Path(tmp_name)
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
            handle.flush()
            os.fsync(handle.fileno())
        with contextlib.suppress(FileNotFoundError):
            os.chmod(tmp, stat.S_IMODE(mode_like.stat().st_mode))
        os.replace(tmp, path)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise
    fsync_dir(folder)


def fsync_dir(folder: Path) -> None:
    """fsync a folder, so that files created or renamed in it survive a crash."""
    dir_fd = os.open(folder, os.O_RDONLY)
    try:
        os.fsync(dir_fd)
    finally:
        os.close(dir_fd)


# --------------------------------------------------------------------------------------------------------------
# Round-trip loading


def _guess_indent(text: str) -> tuple[int, int, int]:
    """(mapping indent, sequence indent, dash offset) of a block-style YAML text, defaulting to 2, 4, 2.

    ruamel does not remember indentation, so it is read off the text to make re-dumping reproduce it.
    """
    mapping, sequence, offset = None, None, None
    parent_indent: int | None = None  # indentation of the last line that was a bare `key:`
    for line in text.splitlines():
        content = line.lstrip(" ")
        if not content or content.startswith("#"):
            continue
        indent = len(line) - len(content)
        if parent_indent is not None and indent > parent_indent:
            if content.startswith("- ") and sequence is None:
                after_dash = content[1:]
                offset = indent - parent_indent
                sequence = offset + 1 + (len(after_dash) - len(after_dash.lstrip(" ")))
            elif not content.startswith("-") and mapping is None:
                mapping = indent - parent_indent
        elif parent_indent is not None and content.startswith("- ") and sequence is None and indent == parent_indent:
            offset, sequence = 0, 2  # "key:\n- item" (dash at the key's column)
        parent_indent = indent if content.rstrip().endswith(":") and not content.startswith("- ") else None
        if mapping is not None and sequence is not None:
            break
    mapping = mapping or 2
    if sequence is None:  # no block list to copy: indent lists by the mapping indent, dash included ("  - id: 1")
        return mapping, mapping + 2, mapping
    return mapping, sequence, offset if offset is not None else max(sequence - 2, 0)


def _new_yaml(text: str) -> YAML:
    yaml = YAML(typ="rt")
    yaml.preserve_quotes = True
    yaml.allow_unicode = True
    yaml.width = 4096  # never re-wrap a long note
    mapping, sequence, offset = _guess_indent(text)
    yaml.indent(mapping=mapping, sequence=sequence, offset=offset)
    first = next((ln for ln in text.splitlines() if ln.strip() and not ln.lstrip().startswith("#")), "")
    yaml.explicit_start = first.rstrip() == "---"
    return yaml


def _node_line(node: Any, key: Any) -> int | None:
    """0-based line of `node[key]` in the source, when ruamel recorded it."""
    try:
        if isinstance(node, CommentedMap):
            return node.lc.key(key)[0]
        if isinstance(node, CommentedSeq):
            return node.lc.item(key)[0]
    except (KeyError, IndexError, TypeError, AttributeError):
        return None
    return None


def _line_of(node: Any, loc: Sequence[Any]) -> int | None:
    """1-based line of the deepest node of `loc` (a pydantic error location) found in the document."""
    line = None
    for key in loc:
        found = _node_line(node, key)
        if found is None:
            break
        line = found
        try:
            node = node[key]
        except (KeyError, IndexError, TypeError):
            break
    return None if line is None else line + 1


def _file_error(source: str, what: str, *, line: int | None = None) -> ToolError:
    where = f" (line {line})" if line else ""
    return ToolError(
        "inventory_file_error",
        f"The inventory file {source} is not valid{where}: {what}",
        hint="Fix the file by hand (or roll back to an earlier state with rollback) and try again.",
    )


def _pydantic_problem(exc: ValidationError, node: Any, prefix: Sequence[Any], source: str) -> ToolError:
    err = exc.errors()[0]
    loc = [*prefix, *err["loc"]]
    field = ".".join(str(part) for part in loc)
    return _file_error(source, f"{field}: {err['msg']}", line=_line_of(node, loc))


@dataclass
class InventoryFile:
    """An inventory file loaded in round-trip mode: its bytes, the editable document and the validated models.

    Edit `document` (a ruamel CommentedMap) in place and call `render()` to get the new bytes; `inventory` is the
    validated view of the document as loaded (it is not updated by edits — reload the rendered bytes for that).
    """

    path: Path | None
    raw: bytes
    document: CommentedMap
    inventory: Inventory
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
        """Read and validate the file at `path`; raise ToolError `inventory_file_error` if it cannot be used."""
        path = Path(path)
        try:
            raw = path.read_bytes()
        except FileNotFoundError:
            raise ToolError(
                "inventory_file_error",
                f"The inventory file {path} does not exist.",
                hint="Check the configured inventory path.",
            ) from None
        except OSError as exc:
            raise ToolError(
                "inventory_file_error",
                f"The inventory file {path} cannot be read: {exc.strerror or exc}.",
                hint="Check the file's permissions.",
            ) from None
        return cls.from_bytes(raw, path=path)

    @classmethod
    def from_bytes(cls, raw: bytes, *, path: Path | None = None) -> InventoryFile:
        """Parse and validate inventory bytes (UTF-8 YAML); raise ToolError `inventory_file_error` if invalid."""
        source = str(path) if path else "<inventory>"
        try:
            text = raw.decode("utf-8-sig")
        except UnicodeDecodeError as exc:
            raise _file_error(source, f"it is not UTF-8 text (byte {exc.start}).") from None
        yaml = _new_yaml(text)
        try:
            document = yaml.load(text)
        except YAMLError as exc:
            mark = getattr(exc, "problem_mark", None)
            problem = getattr(exc, "problem", None) or str(exc).splitlines()[0]
            raise _file_error(source, f"YAML syntax error: {problem}.", line=mark.line + 1 if mark else None) from None
        inventory = _validate_document(document, source)
        return cls(path=path, raw=raw, document=document, inventory=inventory, _yaml=yaml, _crlf=b"\r\n" in raw)

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


def _validate_document(document: Any, source: str) -> Inventory:
    """Validate a loaded document into an `Inventory`, checking also what no single record can check alone."""
    if not isinstance(document, CommentedMap):
        raise _file_error(source, "the top level must be a mapping with the keys `meta` and `inventory`.")
    if "meta" not in document:
        raise _file_error(source, "the `meta` section (box_layout, box_count) is missing.")
    if "inventory" not in document:
        raise _file_error(source, "the `inventory` list is missing (write `inventory: []` for an empty one).")
    try:
        meta = InventoryMeta.model_validate(document["meta"])
    except ValidationError as exc:
        raise _pydantic_problem(exc, document, ["meta"], source) from None
    items = document["inventory"] or []
    if not isinstance(items, list):
        raise _file_error(source, "`inventory` must be a list of records.", line=_line_of(document, ["inventory"]))
    records = []
    for index, item in enumerate(items):
        try:
            records.append(Record.model_validate(item))
        except ValidationError as exc:
            raise _pydantic_problem(exc, document, ["inventory", index], source) from None
    inventory = Inventory(meta=meta, records=records)
    _check_consistency(inventory, document, source)
    return inventory


def _record_problem(
    record: Record, inventory: Inventory, seen_ids: dict[int, int], holder: dict[tuple[int, int], int]
) -> tuple[str, str] | None:
    """(what is wrong, offending key) for a record that clashes with the layout or with the records before it."""
    layout, box_count = inventory.layout, inventory.meta.box_count
    if record.id in seen_ids:
        return f"record id {record.id} is used twice (also by record #{seen_ids[record.id] + 1} of the list).", "id"
    if not 1 <= record.box <= box_count:
        return f"record {record.id} is in box {record.box}, but boxes are numbered 1..{box_count}.", "box"
    for pos in record.positions:
        if not 1 <= pos <= layout.capacity:
            return f"record {record.id} holds position {pos}, outside 1..{layout.capacity}.", "positions"
        other = holder.get((record.box, pos))
        if other is not None:
            where = f"box {record.box} position {describe_position(pos, layout)}"
            return f"{where} is held by both record {other} and record {record.id}.", "positions"
        holder[(record.box, pos)] = record.id
    return None


def _check_consistency(inventory: Inventory, document: CommentedMap, source: str) -> None:
    seen_ids: dict[int, int] = {}
    holder: dict[tuple[int, int], int] = {}
    for index, record in enumerate(inventory.records):
        problem = _record_problem(record, inventory, seen_ids, holder)
        if problem is not None:
            what, key = problem
            raise _file_error(source, what, line=_line_of(document, ["inventory", index, key]))
        seen_ids[record.id] = index


def load_inventory(path: Path | str) -> Inventory:
    """Load and validate the inventory at `path` (read-only use); ToolError `inventory_file_error` if invalid."""
    return InventoryFile.load(path).inventory

