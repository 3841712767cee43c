"""Every string a person reads in the desktop window comes from the catalogs (fast: reads the source, no Qt)."""

from __future__ import annotations

import ast
import re
import sys
from pathlib import Path

import pytest

QT_PACKAGE = Path(__file__).resolve().parents[3] / "src" / "consulta" / "frontends" / "qt"

# Calls whose string arguments a person reads: Qt setters, widget constructors, list/box items, message boxes.
USER_FACING = {
    "setText", "setWindowTitle", "setPlaceholderText", "setToolTip", "setStatusTip", "setWhatsThis", "setTitle",
    "setHtml", "setPlainText", "append", "insertPlainText", "insertHtml", "addItem", "addItems", "insertItem",
    "setItemText", "addTab", "insertTab", "setTabText", "setHorizontalHeaderLabels", "setVerticalHeaderLabels",
    "showMessage", "addButton", "setEditText", "setLabelText", "setInformativeText", "setDetailedText",
    "information", "warning", "critical", "question", "about",
    "QLabel", "QPushButton", "QCheckBox", "QRadioButton", "QGroupBox", "QAction", "QMessageBox", "QTableWidgetItem",
    "QListWidgetItem", "QTreeWidgetItem", "QToolButton", "QCommandLinkButton",
    "add",  # ChatPanel.add: a transcript line
}
_MARKUP = re.compile(r"<[^>]*>|&\w+;|\{[^}]*\}")


def _has_words(text: str) -> bool:
    """Text a person would read: letters left once markup tags, entities and placeholders are removed."""
    return any(ch.isalpha() for ch in _MARKUP.sub("", text))


def _literal_texts(node: ast.expr) -> list[str]:
    """The literal text in an argument: a string, the fixed parts of an f-string, the strings in a list/tuple."""
    match node:
        case ast.Constant(value=str(value)):
            return [value]
        case ast.JoinedStr(values=parts):  # the fixed text, with `{}` where values go
            return ["".join(p.value if isinstance(p, ast.Constant) else "{}" for p in parts)]
        case ast.List(elts=items) | ast.Tuple(elts=items):
            return [text for item in items for text in _literal_texts(item)]
        case ast.BinOp(left=left, right=right):
            return _literal_texts(left) + _literal_texts(right)
        case _:
            return []


def hard_coded(source: str, filename: str = "<source>") -> tuple[int, list[str]]:
    """(how many user-facing calls were checked, the ones passing literal words instead of `t(...)`)."""
    checked, found = 0, []
    for node in ast.walk(ast.parse(source, filename)):
        if not isinstance(node, ast.Call):
            continue
        name = node.func.attr if isinstance(node.func, ast.Attribute) else node.func.id if isinstance(node.func, ast.Name) else ""
        if name not in USER_FACING:
            continue
        checked += 1
        for arg in [*node.args, *(k.value for k in node.keywords)]:
            for text in _literal_texts(arg):
                if _has_words(text):
                    found.append(f"{filename}:{node.lineno}: {name}({text!r})")
    return checked, found


def test_the_scan_catches_literals_and_allows_catalog_calls() -> None:
    bad = 'label.setText("Hello")\nQPushButton("OK")\nbox.addItems(["Box 1"])\nw.setWindowTitle(f"Box {n}")\n'
    good = 'label.setText(t("qt.x", lang))\nQLabel(f"<b>{h}</b>: {q}")\nbox.addItem(t("qt.y", lang), 1)\nt.setText("")\n'
    assert len(hard_coded(bad)[1]) == 4
    assert hard_coded(good) == (4, [])


def test_no_user_facing_string_is_hard_coded_in_the_qt_package() -> None:
    files = sorted(QT_PACKAGE.glob("*.py"))
    assert len(files) >= 5, "the Qt package was not found"
    checked, found = 0, []
    for path in files:
        n, bad = hard_coded(path.read_text(encoding="utf-8"), path.name)
        checked += n
        found += bad
    assert checked >= 30, "the scan saw too few Qt calls: it is broken"
    assert found == []


def test_without_pyside6_the_import_error_says_how_to_install_it(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in list(sys.modules):
        if name == "PySide6" or name.startswith(("PySide6.", "consulta.frontends.qt")):
            monkeypatch.delitem(sys.modules, name)
    monkeypatch.setitem(sys.modules, "PySide6", None)  # what an interpreter without PySide6 sees
    with pytest.raises(ImportError) as error:
        import consulta.frontends.qt  # noqa: F401
    assert "pip install 'consulta[qt]'" in str(error.value) and "uv sync --extra qt" in str(error.value)
