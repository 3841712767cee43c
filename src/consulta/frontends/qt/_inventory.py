"""The ln2 panels of the desktop window: the box grid with one tube's details, the staged plan with Approve /
Reject, and the audit history with rollback. They show what ln2's screen-side views return (`grid_view`,
`tube_view`, `audit_entries`) and ask the window to act; they never write the inventory themselves."""

from __future__ import annotations

import html
from pathlib import Path
from typing import Any

from PySide6.QtCore import Qt, Signal
from PySide6.QtGui import QColor
from PySide6.QtWidgets import (
    QAbstractItemView,
    QComboBox,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QListWidget,
    QPushButton,
    QTableWidget,
    QTableWidgetItem,
    QTextBrowser,
    QVBoxLayout,
    QWidget,
)

from ...apps import ln2
from ...i18n import t

__all__ = ["AuditPanel", "GridPanel", "PlanPanel"]

# Record fields in the order the tube details list them, with their catalog labels.
_FIELDS = {
    "id": "qt.tube.id",
    "short_name": "qt.tube.short_name",
    "parent_cell_line": "qt.tube.parent_cell_line",
    "plasmid_name": "qt.tube.plasmid_name",
    "plasmid_id": "qt.tube.plasmid_id",
    "box": "qt.tube.box",
    "positions": "qt.tube.positions",
    "frozen_at": "qt.tube.frozen_at",
    "note": "qt.tube.note",
    "thaw_events": "qt.tube.thaw_events",
}


_OCCUPIED = QColor("#d7ecf7")
_ACTIONS = {"thaw": "qt.tube.action.thaw", "takeout": "qt.tube.action.takeout", "discard": "qt.tube.action.discard"}


class GridPanel(QWidget):
    """A box selector, the selected box as rows × cols cells (occupied ones show the record's short name), and the
    details of the clicked tube. `refresh()` rereads the inventory file."""

    def __init__(self, *, path: Path, lang: str, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.path = path
        self.lang = lang
        self.view: ln2.GridView | None = None
        self.selected: tuple[int, int] | None = None  # (box, position)
        self.box_selector = QComboBox()
        self.table = QTableWidget()
        self.table.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        self.table.setSelectionMode(QAbstractItemView.SelectionMode.SingleSelection)
        self.table.horizontalHeader().setSectionResizeMode(QHeaderView.ResizeMode.Stretch)
        self.table.verticalHeader().setSectionResizeMode(QHeaderView.ResizeMode.Stretch)
        self.table.setWordWrap(True)
        self.details = QTextBrowser()
        self.details.setPlaceholderText(t("qt.tube.hint", lang))
        self.error = QLabel()
        self.error.setStyleSheet("color: #b00020;")
        self.error.setWordWrap(True)
        self.error.hide()
        self.refresh_button = QPushButton(t("qt.grid.refresh", lang))
        top = QHBoxLayout()
        top.addWidget(QLabel(t("qt.grid.box_label", lang)))
        top.addWidget(self.box_selector, 1)
        top.addWidget(self.refresh_button)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addLayout(top)
        layout.addWidget(self.error)
        layout.addWidget(self.table, 3)
        layout.addWidget(self.details, 1)
        self.box_selector.currentIndexChanged.connect(self._draw_box)
        self.table.cellClicked.connect(self._cell_clicked)
        self.refresh_button.clicked.connect(self.refresh)

    @property
    def box(self) -> int | None:
        """The box shown."""
        data = self.box_selector.currentData()
        return int(data) if data is not None else None

    def show_box(self, box: int) -> None:
        index = self.box_selector.findData(box)
        if index >= 0:
            self.box_selector.setCurrentIndex(index)

    def cell_text(self, box: int, position: int) -> str:
        """What the cell of (box, position) shows (the selected box is switched to `box`)."""
        self.show_box(box)
        assert self.view is not None
        cols = self.view.boxes[box - 1].cols
        item = self.table.item((position - 1) // cols, (position - 1) % cols)
        return item.text() if item is not None else ""

    def refresh(self) -> None:
        """Reread the inventory and redraw (keeping the box and the tube shown)."""
        try:
            view = ln2.grid_view(self.path)
        except Exception as error:  # noqa: BLE001 - an unreadable file is shown, not raised into Qt
            self.error.setText(t("qt.grid.unreadable", self.lang, error=str(error)))
            self.error.show()
            return
        self.error.hide()
        self.view = view
        keep = self.box or 1
        self.box_selector.blockSignals(True)
        self.box_selector.clear()
        for box in view.boxes:
            self.box_selector.addItem(t("qt.grid.box", self.lang, box=box.box, occupied=box.occupied, capacity=len(box.cells)), box.box)
        self.box_selector.blockSignals(False)
        self.show_box(keep)
        self._draw_box()
        if self.selected is not None:
            self._show_tube(*self.selected)

    def _draw_box(self) -> None:
        if self.view is None or self.box is None:
            return
        box = self.view.boxes[self.box - 1]
        self.table.clear()
        self.table.setRowCount(box.rows)
        self.table.setColumnCount(box.cols)
        # Row letters and column numbers come from the cells' own labels (A1 … I9).
        self.table.setVerticalHeaderLabels([box.cells[r * box.cols].label.rstrip("0123456789") for r in range(box.rows)])
        self.table.setHorizontalHeaderLabels([str(c + 1) for c in range(box.cols)])
        for cell in box.cells:
            item = QTableWidgetItem(cell.name or "")
            item.setTextAlignment(Qt.AlignmentFlag.AlignCenter)
            item.setToolTip(t("qt.grid.cell_tip", self.lang, label=cell.label, name=cell.name) if cell.name else cell.label)
            if cell.record_id is not None:
                item.setBackground(_OCCUPIED)
            self.table.setItem((cell.position - 1) // box.cols, (cell.position - 1) % box.cols, item)

    def _cell_clicked(self, row: int, col: int) -> None:
        if self.box is None or self.view is None:
            return
        self._show_tube(self.box, row * self.view.boxes[self.box - 1].cols + col + 1)

    def _show_tube(self, box: int, position: int) -> None:
        self.selected = (box, position)
        try:
            tube = ln2.tube_view(self.path, box=box, position=position)
        except Exception as error:  # noqa: BLE001
            self.details.setPlainText(t("qt.grid.unreadable", self.lang, error=str(error)))
            return
        assert self.view is not None
        label = self.view.boxes[box - 1].cells[position - 1].label
        lines = [f"<b>{html.escape(t('qt.tube.where', self.lang, box=box, label=label, position=position))}</b>"]
        if tube.record is None:
            lines.append(html.escape(t("qt.tube.empty", self.lang)))
        else:
            for field, key in _FIELDS.items():
                value = tube.record.get(field)
                if value in (None, [], ""):
                    continue
                lines.append(f"{html.escape(t(key, self.lang))}: {html.escape(_format(field, value, self.lang))}")
        self.details.setHtml("<br>".join(lines))


def _format(field: str, value: Any, lang: str) -> str:
    if field == "thaw_events":
        return "; ".join(
            t("qt.tube.thaw_event", lang, date=e.get("date", ""), action=t(_ACTIONS[e["action"]], lang) if e.get("action") in _ACTIONS else e.get("action", ""), positions=", ".join(map(str, e.get("positions", []))))
            + (f" ({e['note']})" if e.get("note") else "")
            for e in value
        )
    if isinstance(value, list):
        return ", ".join(map(str, value))
    return str(value)


class PlanPanel(QWidget):
    """The staged plan waiting for approval: one preview line per change, Approve and Reject.
    `decided(ask_id, approve)` when the person decides; the window answers the plan's ask."""

    decided = Signal(str, bool)

    def __init__(self, *, lang: str, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.lang = lang
        self.ask_id: str | None = None
        self.status = QLabel(t("qt.plan.none", lang))
        self.status.setWordWrap(True)
        self.items = QListWidget()
        self.approve_button = QPushButton(t("qt.plan.approve", lang))
        self.reject_button = QPushButton(t("qt.plan.reject", lang))
        buttons = QHBoxLayout()
        buttons.addStretch(1)
        buttons.addWidget(self.approve_button)
        buttons.addWidget(self.reject_button)
        layout = QVBoxLayout(self)
        layout.addWidget(self.status)
        layout.addWidget(self.items, 1)
        layout.addLayout(buttons)
        self.approve_button.clicked.connect(lambda: self._decide(True))
        self.reject_button.clicked.connect(lambda: self._decide(False))
        self.clear()

    def show_plan(self, ask_id: str, previews: list[str]) -> None:
        self.ask_id = ask_id
        self.items.clear()
        self.items.addItems(previews)
        self.status.setText(t("qt.plan.title", self.lang))
        self.set_enabled(True)

    def clear(self, message: str | None = None) -> None:
        self.ask_id = None
        self.items.clear()
        self.status.setText(message or t("qt.plan.none", self.lang))
        self.set_enabled(False)

    def set_enabled(self, enabled: bool) -> None:
        self.approve_button.setEnabled(enabled)
        self.reject_button.setEnabled(enabled)

    def _decide(self, approve: bool) -> None:
        if self.ask_id is not None:
            self.set_enabled(False)
            self.decided.emit(self.ask_id, approve)


class AuditPanel(QWidget):
    """The audit history, newest first; `rollback_requested(audit_id)` restores the state before an entry."""

    rollback_requested = Signal(str)

    _COLUMNS = ("qt.audit.when", "qt.audit.actor", "qt.audit.summary")

    def __init__(self, *, path: Path, lang: str, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.path = path
        self.lang = lang
        self.entries: list[dict[str, Any]] = []
        self.table = QTableWidget(0, len(self._COLUMNS))
        self.table.setHorizontalHeaderLabels([t(key, lang) for key in self._COLUMNS])
        self.table.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        self.table.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        self.table.setSelectionMode(QAbstractItemView.SelectionMode.SingleSelection)
        self.table.horizontalHeader().setStretchLastSection(True)
        self.table.verticalHeader().hide()
        self.rollback_button = QPushButton(t("qt.audit.rollback", lang))
        self.rollback_button.setEnabled(False)
        row = QHBoxLayout()
        row.addStretch(1)
        row.addWidget(self.rollback_button)
        layout = QVBoxLayout(self)
        layout.addWidget(self.table, 1)
        layout.addLayout(row)
        self.table.itemSelectionChanged.connect(lambda: self.rollback_button.setEnabled(self.selected_id() is not None))
        self.rollback_button.clicked.connect(self._rollback)

    def refresh(self) -> None:
        try:
            self.entries = ln2.audit_entries(self.path, lang=self.lang)
        except Exception:  # noqa: BLE001 - an unreadable log shows as empty; the grid panel reports the file
            self.entries = []
        self.table.setRowCount(len(self.entries))
        for r, entry in enumerate(self.entries):
            for c, value in enumerate((entry.get("ts", ""), entry.get("actor", ""), entry.get("summary", ""))):
                self.table.setItem(r, c, QTableWidgetItem(str(value)))
        self.table.resizeColumnsToContents()
        self.rollback_button.setEnabled(self.selected_id() is not None)

    def selected_id(self) -> str | None:
        rows = self.table.selectionModel().selectedRows()
        return self.entries[rows[0].row()]["audit_id"] if rows and rows[0].row() < len(self.entries) else None

    def _rollback(self) -> None:
        audit_id = self.selected_id()
        if audit_id is not None:
            self.rollback_button.setEnabled(False)
            self.rollback_requested.emit(audit_id)
