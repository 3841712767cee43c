"""What an inventory holds, as pydantic models: the box layout, the records (one frozen batch of tubes each) and
their removal events; dates written as YYYY-MM-DD. The models are a validated view of the file's document (see
`_file`); they are never dumped themselves."""

from __future__ import annotations

import datetime as dt
import re
from typing import Annotated, Literal

from pydantic import BaseModel, BeforeValidator, ConfigDict, Field, StrictInt, field_validator

__all__ = [
    "ROW_LETTERS",
    "BoxLayout",
    "Inventory",
    "InventoryMeta",
    "Record",
    "ThawAction",
    "ThawEvent",
    "parse_iso_date",
]

ThawAction = Literal["thaw", "takeout", "discard"]
_DATE_RE = re.compile(r"^\d{4}-\d{2}-\d{2}$")
ROW_LETTERS = "ABCDEFGHIJKLMNOPQRSTUVWXYZ"
"""The letters naming a box's rows (a box has at most as many rows)."""


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

    rows: StrictInt = Field(ge=1, le=len(ROW_LETTERS))
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
