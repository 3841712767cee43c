"""The terminal front end prints nothing hard-coded: every message a person reads comes from the catalogs."""

from __future__ import annotations

from pathlib import Path

from ._hard_coded import Shown, scan, scan_package

CLI = Path(__file__).resolve().parents[2] / "src" / "consulta" / "frontends" / "cli"
SHOWN = Shown(
    calls=frozenset({"print", "BadParameter", "add_row", "add_column", "Panel", "status", "echo", "read", "aread"})
)


def test_the_scan_finds_a_hard_coded_message() -> None:
    assert scan('console.print("Run stopped")', SHOWN)[1] == ["<source>:1: print('Run stopped')"]
    assert scan('console.print(f"default: {model}")', SHOWN)[1] != []
    assert scan('console.print(t("cli.run.status", lang))', SHOWN) == (1, [])
    assert scan('console.print(f"[bold]{name}[/bold]: {text}")', SHOWN) == (1, [])


def test_no_message_in_the_terminal_front_end_is_hard_coded() -> None:
    checked, found = scan_package(CLI, SHOWN)
    assert checked >= 30, "the scan saw too few places that print: it is broken"
    assert found == []
