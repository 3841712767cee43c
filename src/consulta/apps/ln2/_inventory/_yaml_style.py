"""The YAML reader and writer of one file, set to write it back as it was written: its indentation, quoting, `null`
spelling and document start (ruamel.yaml's round-trip mode does not remember them all)."""

from __future__ import annotations

import re

from ruamel.yaml import YAML
from ruamel.yaml.nodes import ScalarNode
from ruamel.yaml.representer import RoundTripRepresenter

__all__ = ["new_yaml"]


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


def new_yaml(text: str) -> YAML:
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
