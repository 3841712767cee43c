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
"""

from __future__ import annotations

import datetime as dt
import hashlib
import io
import os
import re
import stat
from abc import ABC, abstractmethod
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Annotated, Any, ClassVar, Literal

from pydantic import BaseModel, BeforeValidator, ConfigDict, Field, StrictInt, ValidationError, field_validator
from ruamel.yaml import YAML
from ruamel.yaml.comments import CommentedMap, CommentedSeq
from ruamel.yaml.error import YAMLError
from ruamel.yaml.nodes import ScalarNode
from ruamel.yaml.representer import RoundTripRepresenter
from ruamel.yaml.scalarstring import ScalarString
from ruamel.yaml.tokens import CommentToken

from consulta.i18n import catalog, normalize_lang
from consulta.runtime import ConsultaError, ToolError

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
    """The `meta` section: box layout and number of boxes (boxes are numbered 1..box_count).

    A file that does not say how many boxes it has (SnowFox's older sample, `meta.box_layout` alone) has the boxes
    its records use: the largest box number among them, at least 1 (see `FileDialect`)."""

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
    custom: dict[str, str] = Field(default_factory=dict)  # the file's own fields (meta.custom_fields) that have a value

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
    one_tube_per_record: bool = False  # the file keeps each tube as its own record (a single position)

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

    def add(self, record: Record) -> list[Record]:
        """Append `record` and return the records added: `record` itself or, when the file keeps one tube per
        record and `record` holds several positions, one record per position with consecutive ids from `record.id`."""
        added = [record]
        if self.one_tube_per_record and len(record.positions) > 1:
            added = [
                record.model_copy(update={"id": record.id + index, "positions": [pos]}, deep=True)
                for index, pos in enumerate(record.positions)
            ]
        self.records.extend(added)
        return added


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


# --------------------------------------------------------------------------------------------------------------
# Limits and errors

MAX_INVENTORY_BYTES = 2 * 1024 * 1024
"""ln2's limit on the size of an inventory file, checked with `os.stat` before a byte is read. A file is parsed on
every read (about 1 s per 250 kB on a busy 2-core machine): a bigger one would keep a person waiting minutes."""
MAX_INVENTORY_RECORDS = 10_000
"""ln2's limit on the records of an inventory, counted on the text before it is parsed (and again once parsed)."""
_MAX_VALUES = 100 * MAX_INVENTORY_RECORDS
"""The values a loaded document may hold, aliases expanded (a few `&anchor`/`*alias` pairs can make billions)."""


@dataclass(frozen=True)
class _Words:
    """A part of a message said in the reader's language: catalog key `key` with `values`, else `text` as it is."""

    text: str
    key: str | None = None
    values: Mapping[str, Any] = field(default_factory=dict)

    def said_in(self, lang: str) -> str:
        return _say(self.key, lang, self.values) if self.key else self.text


def _say(key: str, lang: str, values: Mapping[str, Any]) -> str:
    # Always formatted (`i18n.t` leaves a text without values as it is): the catalog's `{{`, `}}` are literal braces.
    return catalog(normalize_lang(lang))[key].format(**values)


class InventoryFileError(ToolError, ConsultaError):
    """A file that cannot be used as an inventory: missing, unreadable, too large, not YAML text, or not a consistent
    inventory.

    Its words are catalog keys (`ln2.input.<problem>` and `ln2.input.<problem>.fix`, with `values`): `str()` is one
    English line naming the file, the line when known, what is wrong and what to do; `localized(lang)` is that line
    in `lang`. `path`, `line`, `problem` and `fix` (English) hold the parts. It is a ToolError
    (`inventory_file_error`, the fix as its hint) so a tool reports it to the model, and a ConsultaError so a front
    end shows it as a message, never as a traceback.
    """

    code = "inventory_file_error"

    def __init__(
        self,
        source: str,
        problem: str,
        *,
        fix: str | None = None,
        line: int | None = None,
        path: Path | None = None,
        **values: Any,
    ) -> None:
        self.source = source
        self.problem_key = f"ln2.input.{problem}"
        self.fix_key = f"ln2.input.{fix or problem + '.fix'}"
        self.values = values
        self.line = line
        self.path = path
        self.problem = self._problem("en")
        self.fix = self._fix("en")
        super().__init__("inventory_file_error", self._message("en"), hint=self.fix)

    def _said(self, lang: str) -> dict[str, Any]:
        return {k: v.said_in(lang) if isinstance(v, _Words) else v for k, v in self.values.items()}

    def _problem(self, lang: str) -> str:
        return _say(self.problem_key, lang, self._said(lang))

    def _fix(self, lang: str) -> str:
        return _say(self.fix_key, lang, self._said(lang))

    def _message(self, lang: str) -> str:
        where = _say("ln2.input.where", lang, {"line": self.line}) if self.line else ""
        return _say("ln2.input.message", lang, {"file": self.source, "where": where, "problem": self._problem(lang)})

    def localized(self, lang: str) -> str:
        return _say("ln2.input.line", lang, {"message": self._message(lang), "fix": self._fix(lang)})

    def __str__(self) -> str:
        return self.localized("en")


def _size_text(size: int) -> str:
    return f"{size / (1024 * 1024):.1f} MB" if size >= 1024 * 1024 else f"{max(size // 1024, 1)} kB"


def _too_large(source: str, size: int, path: Path | None) -> InventoryFileError:
    return InventoryFileError(
        source, "too_large", path=path, size=_size_text(size), limit=_size_text(MAX_INVENTORY_BYTES)
    )


_RECORD_ID_KEY = re.compile(rb"(?m)(?:^[ \t]*(?:-[ \t]+)*|[{,][ \t]*)['\"]?id['\"]?[ \t]*:")
"""An `id:` key (each record has one), block or flow style: counts the records of a text without parsing it."""


# --------------------------------------------------------------------------------------------------------------
# Dialects: the two record layouts a file may use


def _like(sample: Any, value: str) -> str:
    """`value` quoted the way `sample` (a scalar of the same file) is, so new lines look like their neighbours."""
    return type(sample)(value) if isinstance(sample, ScalarString) else value


def _flow_seq(items: Sequence[Any]) -> CommentedSeq:
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
                value = _flow_seq(value)
            elif key == "frozen_at" and template is not None:
                value = _like(template.get("frozen_at"), value)
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
            "stored_at": _like(template.get("stored_at"), record.frozen_at) if template else record.frozen_at,
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


class _NullWordRepresenter(RoundTripRepresenter):
    """Writes a null as the word `null` (ruamel leaves the value empty), for files that spell their nulls so."""

    def represent_null_word(self, data: None) -> ScalarNode:
        return self.represent_scalar("tag:yaml.org,2002:null", "null")


_NullWordRepresenter.add_representer(type(None), _NullWordRepresenter.represent_null_word)
_NULL_WORD = re.compile(r":[ \t]+null[ \t]*(#|$)", re.MULTILINE)


def _new_yaml(text: str) -> YAML:
    yaml = YAML(typ="rt")
    if _NULL_WORD.search(text):
        yaml.Representer = _NullWordRepresenter
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
    """1-based line of the deepest node of `loc` (a location in the document) found in the document."""
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


def _pydantic_problem(exc: ValidationError, document: Any, file_loc: Any, source: str) -> InventoryFileError:
    """The first validation error, at its place in the file (`file_loc` maps the model's location to the file's)."""
    err = exc.errors()[0]
    loc = file_loc(list(err["loc"]))
    where = ".".join(str(part) for part in loc)
    key = next((str(part) for part in reversed(loc) if isinstance(part, str)), where)
    known = f"ln2.input.detail.{err['type']}"
    detail = _Words(err["msg"], known if known in catalog("en") else None, dict(err.get("ctx") or {}))
    fix = {"missing": "field.fix_missing", "model_type": "field.fix_record"}.get(err["type"], "field.fix")
    return InventoryFileError(
        source,
        "field",
        fix=fix,
        line=_line_of(document, loc),
        field=where,
        name=key,
        detail=detail,
    )


def _read_error(path: Path, exc: OSError) -> InventoryFileError:
    if isinstance(exc, FileNotFoundError):
        if path.is_symlink():
            return InventoryFileError(str(path), "dangling_link", path=path, target=os.readlink(path))
        return InventoryFileError(str(path), "not_found", path=path)
    if isinstance(exc, IsADirectoryError):
        return _folder_error(path)
    return InventoryFileError(str(path), "unreadable", path=path, reason=exc.strerror or str(exc))


def _folder_error(path: Path) -> InventoryFileError:
    try:
        inside = sorted(p.name for p in path.iterdir() if p.suffix in (".yaml", ".yml"))
    except OSError:
        inside = []
    if inside:
        return InventoryFileError(
            str(path), "folder", fix="folder.fix_example", path=path, example=str(path / inside[0])
        )
    return InventoryFileError(str(path), "folder", path=path)


def _read_bounded(path: Path) -> bytes:
    """The bytes of the inventory file at `path`, refused (InventoryFileError) before they are read when it is not
    a regular file or is over MAX_INVENTORY_BYTES (it is never read past the limit, should it grow meanwhile)."""
    try:
        info = path.stat()
        if stat.S_ISDIR(info.st_mode):
            raise _folder_error(path)
        if not stat.S_ISREG(info.st_mode):  # a pipe or a device would be read forever
            raise InventoryFileError(str(path), "not_regular", path=path)
        if info.st_size > MAX_INVENTORY_BYTES:
            raise _too_large(str(path), info.st_size, path)
        with path.open("rb") as handle:
            raw = handle.read(MAX_INVENTORY_BYTES + 1)
    except OSError as exc:
        raise _read_error(path, exc) from None
    if len(raw) > MAX_INVENTORY_BYTES:
        raise _too_large(str(path), len(raw), path)
    return raw


def _decode(raw: bytes, source: str, path: Path | None) -> str:
    """The text of inventory bytes: UTF-8 (a BOM allowed), checked for size, binary data and the record limit."""
    if len(raw) > MAX_INVENTORY_BYTES:
        raise _too_large(source, len(raw), path)
    for bom, encoding in (
        (b"\xff\xfe\x00\x00", "UTF-32"),
        (b"\x00\x00\xfe\xff", "UTF-32"),
        (b"\xff\xfe", "UTF-16"),
        (b"\xfe\xff", "UTF-16"),
    ):
        if raw.startswith(bom):
            raise InventoryFileError(source, "utf16", path=path, encoding=encoding)
    if (nul := raw.find(b"\x00")) >= 0:
        raise InventoryFileError(source, "binary", path=path, offset=nul)
    try:
        text = raw.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise InventoryFileError(source, "not_utf8", path=path, offset=exc.start) from None
    if (count := len(_RECORD_ID_KEY.findall(raw))) > MAX_INVENTORY_RECORDS:
        raise InventoryFileError(source, "too_many_records", path=path, count=count, limit=MAX_INVENTORY_RECORDS)
    return text


def _parse(yaml: YAML, text: str, source: str, path: Path | None) -> Any:
    try:
        document = yaml.load(text)
    except YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        detail = " ".join((getattr(exc, "problem", None) or str(exc)).split()).rstrip(".")
        tab = "'\\t'" in detail or "\t" in detail
        raise InventoryFileError(
            source,
            "syntax",
            fix="syntax.fix_tab" if tab else None,
            line=mark.line + 1 if mark else None,
            path=path,
            detail=detail,
        ) from None
    except RecursionError:  # brackets nested thousands deep
        raise InventoryFileError(source, "syntax", path=path, detail="nested too deep") from None
    if _values_over(document, _MAX_VALUES):
        raise InventoryFileError(source, "expands", path=path, limit=_MAX_VALUES)
    return document


def _values_over(document: Any, limit: int) -> bool:
    """Whether `document` holds more than `limit` values, aliases counted each time they are used (stops there)."""
    count, stack = 0, [document]
    while stack:
        node = stack.pop()
        count += 1
        if count > limit:
            return True
        if isinstance(node, Mapping):
            stack.extend(node.values())
        elif isinstance(node, list):
            stack.extend(node)
    return False


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
        return cls.from_bytes(_read_bounded(path), path=path)

    @classmethod
    def from_bytes(cls, raw: bytes, *, path: Path | None = None) -> InventoryFile:
        """Parse and validate inventory bytes (UTF-8 YAML); raise InventoryFileError if they cannot be used (over
        MAX_INVENTORY_BYTES or MAX_INVENTORY_RECORDS included)."""
        source = str(path) if path else "<inventory>"
        text = _decode(raw, source, path)
        yaml = _new_yaml(text)
        document = _parse(yaml, text, source, path)
        try:
            inventory, dialect = _validate_document(document, source)
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
        if (blank := _blank_line_between_records(items)) is not None:
            _attach_after(items[-1], CommentToken(blank.value, blank.start_mark, None))
        items.append(self.dialect.new_record(record, template=template, custom_keys=_custom_keys(self.document)))

    def take_out(self, record_id: int, positions: Sequence[int], event: ThawEvent) -> None:
        """Remove `positions` from record `record_id` and append `event` to its events, in the file's dialect."""
        node = self.record_node(record_id)
        self.dialect.take_out(node, positions)
        key = self.dialect.events_key
        trailing = _detach_trailing_lines(node)
        events = node.get(key)
        if not events:  # absent, null or [] — start a block list
            events = node[key] = CommentedSeq()
        events.append(self._event_node(self.dialect.stored_event(event), node))
        if trailing is not None:
            _attach_after(events, trailing)

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
                    value = _flow_seq(value)
                elif key == "date":
                    value = _like(date_like, value)
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


def _after_line(token: Any) -> bool:
    # "\n…" holds the lines after a value's line (blank or comment lines); "  # c\n…" is that line's own comment.
    return isinstance(token, CommentToken) and token.value.startswith("\n") and token.value != "\n"


def _detach_trailing_lines(node: CommentedMap, *, take: bool = True) -> CommentToken | None:
    """The blank and comment lines that follow the record `node` (as one token "\n…"), taken off its last value
    unless `take` is false. They separate the record from the next one (or head the next box), so what is appended
    to the record goes before them (`_attach_after`)."""
    last = next(reversed(node), None) if node else None
    if last is None:
        return None
    value = node[last]
    if isinstance(value, CommentedSeq) and value and not value.fa.flow_style():  # the record ends with its events
        if value.ca.end:  # lines kept apart from their indentation, which is in the tokens' marks
            lines = "".join(" " * t.start_mark.column + t.value if t.value.strip() else t.value for t in value.ca.end)
            token = CommentToken("\n" + lines, value.ca.end[0].start_mark, None)
            if take:
                value.ca.end = []
            return token
        index, item = len(value) - 1, value[-1]
        slot = value.ca.items.get(index)
        if slot and _after_line(slot[0]):
            token = slot[0]
            if take:
                slot[0] = None
            return token
        if isinstance(item, CommentedMap) and not item.fa.flow_style():
            return _detach_trailing_lines(item, take=take)
        return None
    slots = node.ca.items.get(last)
    if slots and len(slots) > 2 and _after_line(slots[2]):
        token = slots[2]
        if take:
            slots[2] = None
        return token
    return None


def _attach_after(node: CommentedMap | CommentedSeq, token: CommentToken) -> None:
    """Put lines taken by `_detach_trailing_lines` after the last value of `node` (a record or its events)."""
    if isinstance(node, CommentedSeq):
        last = node[-1]
        if isinstance(last, CommentedMap) and last and not last.fa.flow_style():
            _attach_after(last, token)
        else:
            node.ca.items[len(node) - 1] = [token, None]
        return
    key = next(reversed(node))
    value = node[key]
    if isinstance(value, CommentedMap | CommentedSeq) and value and not value.fa.flow_style():
        _attach_after(value, token)
    elif not node.ca.items.get(key):  # never over the line's own comment
        node.ca.items[key] = [None, None, token, None]


def _blank_line_between_records(items: CommentedSeq) -> CommentToken | None:
    """The blank line between the file's last two records, when there is one and the last has nothing after it yet
    (so a new record can be separated the same way)."""
    if len(items) < 2 or not all(isinstance(node, CommentedMap) and node for node in items[-2:]):
        return None
    between = _detach_trailing_lines(items[-2], take=False)
    if between is None or between.value != "\n\n" or _detach_trailing_lines(items[-1], take=False) is not None:
        return None
    return between


def _custom_keys(document: Mapping[str, Any]) -> list[str]:
    """The keys of the user's own record fields, declared in `meta.custom_fields` (`- key: batch`)."""
    meta = document.get("meta")
    fields = meta.get("custom_fields") if isinstance(meta, Mapping) else None
    if not isinstance(fields, list):
        return []
    return [f["key"] for f in fields if isinstance(f, Mapping) and isinstance(f.get("key"), str)]


def _explicit_box_count(meta: Mapping[str, Any]) -> tuple[Any, list[Any]] | None:
    """(the number of boxes, its location) when the file says it: `meta.box_count` or `meta.box_layout.box_count`."""
    if "box_count" in meta:
        return meta["box_count"], ["meta", "box_count"]
    layout = meta.get("box_layout")
    if isinstance(layout, Mapping) and "box_count" in layout:
        return layout["box_count"], ["meta", "box_layout", "box_count"]
    return None


def _validate_document(document: Any, source: str) -> tuple[Inventory, FileDialect]:
    """Validate a loaded document into an `Inventory` and its dialect, checking also what no single record can
    check alone."""
    if document is None:
        raise InventoryFileError(source, "empty")
    if not isinstance(document, CommentedMap):
        kind = "top_list" if isinstance(document, list) else "top_scalar"
        raise InventoryFileError(source, kind, fix="top_level.fix", line=1)
    if "meta" not in document:
        raise InventoryFileError(source, "no_meta")
    if "inventory" not in document:
        raise InventoryFileError(source, "no_inventory", line=_line_of(document, ["meta"]))
    meta = document["meta"]
    if not isinstance(meta, Mapping):
        raise InventoryFileError(source, "meta_not_mapping", line=_line_of(document, ["meta"]))
    if "box_layout" not in meta:
        raise InventoryFileError(source, "no_box_layout", line=_line_of(document, ["meta"]))
    items = document["inventory"] or []
    if not isinstance(items, list):
        raise InventoryFileError(source, "inventory_not_list", line=_line_of(document, ["inventory"]))
    if len(items) > MAX_INVENTORY_RECORDS:
        raise InventoryFileError(source, "too_many_records", count=len(items), limit=MAX_INVENTORY_RECORDS)
    dialect = FileDialect.choose(document)
    custom_keys = _custom_keys(document)
    records = []
    for index, item in enumerate(items):
        try:
            view = dialect.record_view(item) if isinstance(item, Mapping) else item
            if isinstance(view, dict):
                view["custom"] = {k: str(item[k]) for k in custom_keys if k in item and item[k] is not None}
            records.append(Record.model_validate(view))
        except ValidationError as exc:

            def file_loc(loc: list[Any], index: int = index, item: Any = item) -> list[Any]:
                return ["inventory", index, *dialect.file_loc(item, loc)]

            raise _pydantic_problem(exc, document, file_loc, source) from None
    explicit = _explicit_box_count(meta)
    box_count, count_loc = explicit if explicit else (max([1, *(r.box for r in records)]), list(dialect.box_count_key))
    try:
        inventory_meta = InventoryMeta.model_validate({"box_layout": meta.get("box_layout"), "box_count": box_count})
    except ValidationError as exc:

        def meta_loc(loc: list[Any]) -> list[Any]:
            return count_loc if loc[:1] == ["box_count"] else ["meta", *loc]

        raise _pydantic_problem(exc, document, meta_loc, source) from None
    inventory = Inventory(meta=inventory_meta, records=records, one_tube_per_record=dialect.one_tube_per_record)
    _check_consistency(inventory, document, dialect, count_loc, source)
    return inventory, dialect


def _record_problem(
    record: Record,
    inventory: Inventory,
    seen_ids: dict[int, int],
    holder: dict[tuple[int, int], int],
    count_key: str,
) -> tuple[str, str, dict[str, Any]] | None:
    """(problem, offending model field, the message's values) for a record clashing with the layout or the records
    before it."""
    layout, box_count = inventory.layout, inventory.meta.box_count
    if record.id in seen_ids:
        return "duplicate_id", "id", {"id": record.id, "other": seen_ids[record.id] + 1, "next_id": inventory.next_id()}
    if not 1 <= record.box <= box_count:
        return "box_range", "box", {"id": record.id, "box": record.box, "count": box_count, "count_key": count_key}
    for pos in record.positions:
        if not 1 <= pos <= layout.capacity:
            values = {
                "id": record.id,
                "pos": pos,
                "capacity": layout.capacity,
                "rows": layout.rows,
                "cols": layout.cols,
            }
            return "position_range", "positions", values
        other = holder.get((record.box, pos))
        if other is not None:
            where = describe_position(pos, layout)
            return (
                "shared_position",
                "positions",
                {"id": record.id, "other": other, "box": record.box, "position": where},
            )
        holder[(record.box, pos)] = record.id
    return None


def _check_consistency(
    inventory: Inventory, document: CommentedMap, dialect: FileDialect, count_loc: list[Any], source: str
) -> None:
    seen_ids: dict[int, int] = {}
    holder: dict[tuple[int, int], int] = {}
    items = document["inventory"]
    count_key = ".".join(count_loc)
    for index, record in enumerate(inventory.records):
        problem = _record_problem(record, inventory, seen_ids, holder, count_key)
        if problem is not None:
            kind, model_field, values = problem
            loc = ["inventory", index, *dialect.file_loc(items[index], [model_field])]
            raise InventoryFileError(source, kind, line=_line_of(document, loc), **values)
        seen_ids[record.id] = index


def load_inventory(path: Path | str) -> Inventory:
    """Load and validate the inventory at `path` (read-only use); InventoryFileError if it cannot be used."""
    return InventoryFile.load(path).inventory
