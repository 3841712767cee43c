"""From a path to a YAML document: the file read within its limits (a regular file, at most MAX_INVENTORY_BYTES,
never read past them), decoded as UTF-8, parsed, and its values counted (aliases expanded); each failure an
`InventoryFileError`."""

from __future__ import annotations

import os
import re
import stat
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from ruamel.yaml import YAML
from ruamel.yaml.error import YAMLError

from ._errors import MAX_INVENTORY_BYTES, MAX_INVENTORY_RECORDS, MAX_VALUES, InventoryFileError, too_large

__all__ = ["decode", "parse", "read_bounded"]

_RECORD_ID_KEY = re.compile(rb"(?m)(?:^[ \t]*(?:-[ \t]+)*|[{,][ \t]*)['\"]?id['\"]?[ \t]*:")
"""An `id:` key (each record has one), block or flow style: counts the records of a text without parsing it."""


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


def read_bounded(path: Path) -> bytes:
    """The bytes of the inventory file at `path`, refused (InventoryFileError) before they are read when it is not
    a regular file or is over MAX_INVENTORY_BYTES (it is never read past the limit, should it grow meanwhile)."""
    try:
        info = path.stat()
        if stat.S_ISDIR(info.st_mode):
            raise _folder_error(path)
        if not stat.S_ISREG(info.st_mode):  # a pipe or a device would be read forever
            raise InventoryFileError(str(path), "not_regular", path=path)
        if info.st_size > MAX_INVENTORY_BYTES:
            raise too_large(str(path), info.st_size, path)
        with path.open("rb") as handle:
            raw = handle.read(MAX_INVENTORY_BYTES + 1)
    except OSError as exc:
        raise _read_error(path, exc) from None
    if len(raw) > MAX_INVENTORY_BYTES:
        raise too_large(str(path), len(raw), path)
    return raw


def decode(raw: bytes, source: str, path: Path | None) -> str:
    """The text of inventory bytes: UTF-8 (a BOM allowed), checked for size, binary data and the record limit."""
    if len(raw) > MAX_INVENTORY_BYTES:
        raise too_large(source, len(raw), path)
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


def parse(yaml: YAML, text: str, source: str, path: Path | None) -> Any:
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
    if _values_over(document, MAX_VALUES):
        raise InventoryFileError(source, "expands", path=path, limit=MAX_VALUES)
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
