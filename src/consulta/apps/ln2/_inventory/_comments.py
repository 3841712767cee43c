"""Comment surgery on the round-trip document: the blank and comment lines after a record stay after it when an
event or a record is appended (ruamel.yaml hangs them on the record's last value)."""

from __future__ import annotations

from typing import Any

from ruamel.yaml.comments import CommentedMap, CommentedSeq
from ruamel.yaml.tokens import CommentToken

__all__ = ["attach_after", "blank_line_between_records", "detach_trailing_lines"]


def _after_line(token: Any) -> bool:
    # "\n…" holds the lines after a value's line (blank or comment lines); "  # c\n…" is that line's own comment.
    return isinstance(token, CommentToken) and token.value.startswith("\n") and token.value != "\n"


def detach_trailing_lines(node: CommentedMap, *, take: bool = True) -> CommentToken | None:
    """The blank and comment lines that follow the record `node` (as one token "\n…"), taken off its last value
    unless `take` is false. They separate the record from the next one (or head the next box), so what is appended
    to the record goes before them (`attach_after`)."""
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
            return detach_trailing_lines(item, take=take)
        return None
    slots = node.ca.items.get(last)
    if slots and len(slots) > 2 and _after_line(slots[2]):
        token = slots[2]
        if take:
            slots[2] = None
        return token
    return None


def attach_after(node: CommentedMap | CommentedSeq, token: CommentToken) -> None:
    """Put lines taken by `detach_trailing_lines` after the last value of `node` (a record or its events)."""
    if isinstance(node, CommentedSeq):
        last = node[-1]
        if isinstance(last, CommentedMap) and last and not last.fa.flow_style():
            attach_after(last, token)
        else:
            node.ca.items[len(node) - 1] = [token, None]
        return
    key = next(reversed(node))
    value = node[key]
    if isinstance(value, CommentedMap | CommentedSeq) and value and not value.fa.flow_style():
        attach_after(value, token)
    elif not node.ca.items.get(key):  # never over the line's own comment
        node.ca.items[key] = [None, None, token, None]


def blank_line_between_records(items: CommentedSeq) -> CommentToken | None:
    """The blank line between the file's last two records, when there is one and the last has nothing after it yet
    (so a new record can be separated the same way)."""
    if len(items) < 2 or not all(isinstance(node, CommentedMap) and node for node in items[-2:]):
        return None
    between = detach_trailing_lines(items[-2], take=False)
    if between is None or between.value != "\n\n" or detach_trailing_lines(items[-1], take=False) is not None:
        return None
    return between
