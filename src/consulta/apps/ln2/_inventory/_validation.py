"""A loaded document checked into an `Inventory` and its dialect: each record by the models, then what no record can
check alone (ids, boxes, positions held twice); each problem an `InventoryFileError` at its line in the file."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from pydantic import ValidationError
from ruamel.yaml.comments import CommentedMap, CommentedSeq

from ._dialects import FileDialect, custom_field_keys
from ._errors import MAX_INVENTORY_RECORDS, InventoryFileError, said_by_pydantic
from ._positions import describe_position
from ._records import Inventory, InventoryMeta, Record

__all__ = ["line_of", "validate_document"]


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


def line_of(node: Any, loc: Sequence[Any]) -> int | None:
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
    detail = said_by_pydantic(err["type"], err["msg"], dict(err.get("ctx") or {}))
    fix = {"missing": "field.fix_missing", "model_type": "field.fix_record"}.get(err["type"], "field.fix")
    return InventoryFileError(
        source,
        "field",
        fix=fix,
        line=line_of(document, loc),
        field=where,
        name=key,
        detail=detail,
    )


def _explicit_box_count(meta: Mapping[str, Any]) -> tuple[Any, list[Any]] | None:
    """(the number of boxes, its location) when the file says it: `meta.box_count` or `meta.box_layout.box_count`."""
    if "box_count" in meta:
        return meta["box_count"], ["meta", "box_count"]
    layout = meta.get("box_layout")
    if isinstance(layout, Mapping) and "box_count" in layout:
        return layout["box_count"], ["meta", "box_layout", "box_count"]
    return None


def validate_document(document: Any, source: str) -> tuple[Inventory, FileDialect]:
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
        raise InventoryFileError(source, "no_inventory", line=line_of(document, ["meta"]))
    meta = document["meta"]
    if not isinstance(meta, Mapping):
        raise InventoryFileError(source, "meta_not_mapping", line=line_of(document, ["meta"]))
    if "box_layout" not in meta:
        raise InventoryFileError(source, "no_box_layout", line=line_of(document, ["meta"]))
    items = document["inventory"] or []
    if not isinstance(items, list):
        raise InventoryFileError(source, "inventory_not_list", line=line_of(document, ["inventory"]))
    if len(items) > MAX_INVENTORY_RECORDS:
        raise InventoryFileError(source, "too_many_records", count=len(items), limit=MAX_INVENTORY_RECORDS)
    dialect = FileDialect.choose(document)
    declared = custom_field_keys(document)
    records = []
    for index, item in enumerate(items):
        try:
            view = dialect.record_view(item) if isinstance(item, Mapping) else item
            if isinstance(view, dict):
                view["custom"] = {k: str(item[k]) for k in declared if k in item and item[k] is not None}
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
            raise InventoryFileError(source, kind, line=line_of(document, loc), **values)
        seen_ids[record.id] = index
