"""The terminal front end prints nothing hard-coded: every message a person reads comes from the catalogs."""

from __future__ import annotations

import ast
import re
from pathlib import Path

CLI = Path(__file__).resolve().parents[2] / "src" / "consulta" / "frontends" / "cli"
SHOWN = {"print", "BadParameter", "add_row", "add_column", "Panel", "status", "echo", "read", "aread"}
WORDS = re.compile(r"[A-Za-z\u4e00-\u9fff]{2,}")
MARKUP = re.compile(r"\[/?[a-z ]+\]")  # rich markup such as [bold] is not words


def _literal_words(node: ast.AST) -> list[str]:
    """Words in a literal string argument, or in the literal parts of an f-string (calls such as t(...) are fine)."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return WORDS.findall(MARKUP.sub("", node.value))
    if isinstance(node, ast.JoinedStr):
        return [w for part in node.values for w in _literal_words(part)]
    if isinstance(node, ast.IfExp):
        return _literal_words(node.body) + _literal_words(node.orelse)
    return []


def hard_coded(source: str) -> list[str]:
    found = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Call):
            name = node.func.attr if isinstance(node.func, ast.Attribute) else getattr(node.func, "id", "")
            if name in SHOWN:
                for arg in node.args:
                    if words := _literal_words(arg):
                        found.append(f"line {node.lineno}: {name}(… {' '.join(words)} …)")
    return found


def test_the_scan_finds_a_hard_coded_message() -> None:
    assert hard_coded('console.print("Run stopped")') == ["line 1: print(… Run stopped …)"]
    assert hard_coded('console.print(f"default: {model}")') != []
    assert hard_coded('console.print(t("cli.run.status", lang))') == []
    assert hard_coded('console.print(f"[bold]{name}[/bold]: {text}")') == []


def test_no_message_in_the_terminal_front_end_is_hard_coded() -> None:
    problems = {path.name: hard_coded(path.read_text(encoding="utf-8")) for path in sorted(CLI.glob("*.py"))}
    assert {name: found for name, found in problems.items() if found} == {}
