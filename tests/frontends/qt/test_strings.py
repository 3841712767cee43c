"""Every string a person reads in the desktop window comes from the catalogs (fast: reads the source, no Qt)."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from .._hard_coded import Shown, scan, scan_package

SRC = Path(__file__).resolve().parents[3] / "src" / "consulta"
QT_PACKAGE = SRC / "frontends" / "qt"
APP_PANELS = sorted(SRC.glob("apps/*/_desktop.py"))
"""The apps' own desktop panels, held to the same rule."""

# Calls whose string arguments a person reads: Qt setters, widget constructors, list/box items, message boxes.
SHOWN = Shown(
    calls=frozenset(
        {
            "setText",
            "setWindowTitle",
            "setPlaceholderText",
            "setToolTip",
            "setStatusTip",
            "setWhatsThis",
            "setTitle",
            "setHtml",
            "setPlainText",
            "append",
            "insertPlainText",
            "insertHtml",
            "addItem",
            "addItems",
            "insertItem",
            "setItemText",
            "addTab",
            "insertTab",
            "setTabText",
            "setHorizontalHeaderLabels",
            "setVerticalHeaderLabels",
            "showMessage",
            "addButton",
            "setEditText",
            "setLabelText",
            "setInformativeText",
            "setDetailedText",
            "information",
            "warning",
            "critical",
            "question",
            "about",
            "QLabel",
            "QPushButton",
            "QCheckBox",
            "QRadioButton",
            "QGroupBox",
            "QAction",
            "QMessageBox",
            "QTableWidgetItem",
            "QListWidgetItem",
            "QTreeWidgetItem",
            "QToolButton",
            "QCommandLinkButton",
            "add",  # ChatPanel.add: a transcript line
        }
    )
)


def test_the_scan_catches_literals_and_allows_catalog_calls() -> None:
    bad = 'label.setText("Hello")\nQPushButton("OK")\nbox.addItems(["Box 1"])\nw.setWindowTitle(f"Box {n}")\n'
    good = (
        'label.setText(t("qt.x", lang))\nQLabel(f"<b>{h}</b>: {q}")\nbox.addItem(t("qt.y", lang), 1)\nt.setText("")\n'
    )
    assert len(scan(bad, SHOWN)[1]) == 4
    assert scan(good, SHOWN) == (4, [])


def test_no_user_facing_string_is_hard_coded_in_the_qt_package() -> None:
    assert len(list(QT_PACKAGE.glob("*.py"))) >= 5, "the Qt package was not found"
    checked, found = scan_package(QT_PACKAGE, SHOWN)
    assert checked >= 30, "the scan saw too few Qt calls: it is broken"
    assert found == []


@pytest.mark.parametrize("path", APP_PANELS, ids=lambda p: p.parent.name)
def test_no_user_facing_string_is_hard_coded_in_an_apps_panels(path: Path) -> None:
    checked, found = scan(path.read_text(encoding="utf-8"), SHOWN)
    assert checked >= 10 and found == []


def test_without_pyside6_the_import_error_says_how_to_install_it(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in list(sys.modules):
        if name == "PySide6" or name.startswith(("PySide6.", "consulta.frontends.qt")):
            monkeypatch.delitem(sys.modules, name)
    monkeypatch.setitem(sys.modules, "PySide6", None)  # what an interpreter without PySide6 sees
    with pytest.raises(ImportError) as error:
        import consulta.frontends.qt  # noqa: F401
    assert "pip install 'consulta[qt]'" in str(error.value) and "uv sync --extra qt" in str(error.value)


def test_an_app_with_desktop_panels_imports_without_pyside6(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in list(sys.modules):
        if name == "PySide6" or name.startswith(("PySide6.", "consulta.apps", "consulta.frontends.qt")):
            monkeypatch.delitem(sys.modules, name)
    monkeypatch.setitem(sys.modules, "PySide6", None)
    from consulta.apps import get_app

    ln2 = get_app("ln2")  # its declaration, agent, web and MCP parts need no Qt
    assert ln2.desktop is not None and ln2.web is not None and ln2.mcp is not None
    with pytest.raises(ImportError):
        ln2.desktop()  # only building the panels does
