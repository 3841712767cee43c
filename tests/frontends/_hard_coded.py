"""The scan behind every front end's "nothing is hard-coded" test: literal words passed where the front end shows
text to a person (each front end names those places), instead of a catalog call `t(...)`."""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass, field
from pathlib import Path

__all__ = ["Shown", "scan", "scan_package"]

# Markup and placeholders are not words: HTML tags and entities, rich's [bold] tags, {values} of f-strings.
_NOT_WORDS = re.compile(r"<[^>]*>|&\w+;|\[/?[a-z ]+\]|\{[^}]*\}")


@dataclass(frozen=True, kw_only=True)
class Shown:
    """Where a front end shows text: every argument of these calls, these keyword arguments of any call, the
    values of these keys in dict literals."""

    calls: frozenset[str] = field(default_factory=frozenset)
    keywords: frozenset[str] = field(default_factory=frozenset)
    dict_keys: frozenset[str] = field(default_factory=frozenset)


def _literal_texts(node: ast.AST | None) -> list[str]:
    """The fixed text in an expression: a string, an f-string's fixed parts (`{}` where values go), the strings of a
    list or tuple, both sides of `+`, both branches of `a if c else b`. Calls such as t(...) give none."""
    match node:
        case ast.Constant(value=str(value)):
            return [value]
        case ast.JoinedStr(values=parts):
            return ["".join(p.value if isinstance(p, ast.Constant) else "{}" for p in parts)]
        case ast.List(elts=items) | ast.Tuple(elts=items):
            return [text for item in items for text in _literal_texts(item)]
        case ast.BinOp(left=left, right=right):
            return _literal_texts(left) + _literal_texts(right)
        case ast.IfExp(body=body, orelse=orelse):
            return _literal_texts(body) + _literal_texts(orelse)
        case _:
            return []


def _words(text: str) -> bool:
    return any(ch.isalpha() for ch in _NOT_WORDS.sub("", text))


def scan(source: str, shown: Shown, filename: str = "<source>") -> tuple[int, list[str]]:
    """(how many places that show text were checked, the ones given literal words). For the calls named, their
    positional arguments are checked; keyword arguments only when `keywords` names them (style="dim" is not text)."""
    checked, found = 0, []
    for node in ast.walk(ast.parse(source, filename)):
        values: list[tuple[str, ast.AST | None]] = []
        if isinstance(node, ast.Call):
            name = node.func.attr if isinstance(node.func, ast.Attribute) else getattr(node.func, "id", "")
            if name in shown.calls:
                values += [(name, arg) for arg in node.args]
            values += [(f"{name}:{k.arg}=", k.value) for k in node.keywords if k.arg in shown.keywords]
        elif isinstance(node, ast.Dict):
            for key, value in zip(node.keys, node.values, strict=True):
                if isinstance(key, ast.Constant) and key.value in shown.dict_keys:
                    values.append((f"{{{key.value!r}: …}}", value))
        if values or (isinstance(node, ast.Call) and name in shown.calls):
            checked += 1
        found += [
            f"{filename}:{node.lineno}: {where}({text!r})"
            for where, value in values
            for text in _literal_texts(value)
            if _words(text)
        ]
    return checked, found


def scan_package(folder: Path, shown: Shown) -> tuple[int, list[str]]:
    """`scan` over every module of a front end's package."""
    checked, found = 0, []
    for path in sorted(folder.glob("*.py")):
        n, bad = scan(path.read_text(encoding="utf-8"), shown, path.name)
        checked, found = checked + n, found + bad
    return checked, found
