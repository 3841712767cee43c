"""ln2's panels of the desktop window: the box grid with one tube's details, and the audit history with rollback.
They show what ln2's screen-side views return (`grid_view`, `tube_view`, `audit_entries`); a rollback is staged
through the window (`DesktopKit.call`, `propose_rollback`) as a plan the window's plan panel shows for approval, like
any write: only approving it there applies it. Qt is imported only when the window builds them (`panels`)."""

from __future__ import annotations

import html
import re
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
    QPushButton,
    QTableWidget,
    QTableWidgetItem,
    QTextBrowser,
    QVBoxLayout,
    QWidget,
)

from ...i18n import t
from ...runtime import ConsultaError, Event, PlanDecided, PlanStaged, RunStarted, ToolReturned
from .._def import AppView, DesktopKit, DesktopPanel
from .._proposals import Proposal
from ._views import GridView, audit_entries, grid_view, propose_rollback, tube_view

__all__ = ["AuditPanel", "GridPanel", "cells_of_records", "panels"]

# Record fields in the order the tube details list them, with their catalog labels.
_FIELDS = {
    "id": "ln2.qt.tube.id",
    "short_name": "ln2.qt.tube.short_name",
    "parent_cell_line": "ln2.qt.tube.parent_cell_line",
    "plasmid_name": "ln2.qt.tube.plasmid_name",
    "plasmid_id": "ln2.qt.tube.plasmid_id",
    "box": "ln2.qt.tube.box",
    "positions": "ln2.qt.tube.positions",
    "frozen_at": "ln2.qt.tube.frozen_at",
    "note": "ln2.qt.tube.note",
    "thaw_events": "ln2.qt.tube.thaw_events",
}


_OCCUPIED = QColor("#d7ecf7")
_MARKS = {"found": QColor("#fff1a8"), "staged": QColor("#ffd9b0"), "changed": QColor("#c8f0d2")}
"""What the last answer is about (tubes a look-up returned, tubes a staged plan changes), and what an apply changed."""
_RECORD_LINE = re.compile(r"\bbox (\d+) positions ([\d,]+)")
_ACTIONS = {
    "thaw": "ln2.qt.tube.action.thaw",
    "takeout": "ln2.qt.tube.action.takeout",
    "discard": "ln2.qt.tube.action.discard",
}


def _said(error: Exception, lang: str) -> str:
    """An error in the panel's language when it has words of its own (a bad inventory file's line and fix)."""
    return error.localized(lang) if isinstance(error, ConsultaError) else str(error)


class GridPanel(QWidget):
    """A box selector, the selected box as rows × cols cells (occupied ones show the record's short name), and the
    details of the clicked tube. `refresh()` rereads the inventory file."""

    def __init__(self, *, path: Path, lang: str, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.path = path
        self.lang = lang
        self.view: GridView | None = None
        self.selected: tuple[int, int] | None = None  # (box, position)
        self.marked: set[tuple[int, int]] = set()
        """(box, position) of the tubes the conversation's last answer is about."""
        self.mark_kind = "found"
        self.changed: set[tuple[int, int]] = set()
        """The cells the last change of the file (an applied plan) changed."""
        self.box_selector = QComboBox()
        self.table = QTableWidget()
        self.table.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        self.table.setSelectionMode(QAbstractItemView.SelectionMode.SingleSelection)
        self.table.horizontalHeader().setSectionResizeMode(QHeaderView.ResizeMode.Stretch)
        self.table.verticalHeader().setSectionResizeMode(QHeaderView.ResizeMode.Stretch)
        self.table.setWordWrap(True)
        self.details = QTextBrowser()
        self.details.setPlaceholderText(t("ln2.qt.tube.hint", lang))
        self.error = QLabel()
        self.error.setStyleSheet("color: #b00020;")
        self.error.setWordWrap(True)
        self.error.hide()
        self.refresh_button = QPushButton(t("ln2.qt.grid.refresh", lang))
        top = QHBoxLayout()
        top.addWidget(QLabel(t("ln2.qt.grid.box_label", lang)))
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
            view = grid_view(self.path)
        except Exception as error:  # noqa: BLE001 - an unreadable file is shown, not raised into Qt
            self.error.setText(t("ln2.qt.grid.unreadable", self.lang, error=_said(error, self.lang)))
            self.error.show()
            return
        self.error.hide()
        before, self.view = self.view, view
        keep = self.box or 1
        if before is not None and before.sha256 != view.sha256:
            self.changed = _changed(before, view)
            self.marked = set()  # applied: the change's own marks take over
            if self.changed:
                keep, position = min(self.changed)
                if self.selected is not None and self.selected[0] != keep:
                    self.selected = (keep, position)  # the tube pane follows the change, not a tube of another box
        self.box_selector.blockSignals(True)
        self.box_selector.clear()
        for box in view.boxes:
            self.box_selector.addItem(
                t("ln2.qt.grid.box", self.lang, box=box.box, occupied=box.occupied, capacity=len(box.cells)), box.box
            )
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
        self.table.setVerticalHeaderLabels(
            [box.cells[r * box.cols].label.rstrip("0123456789") for r in range(box.rows)]
        )
        self.table.setHorizontalHeaderLabels([str(c + 1) for c in range(box.cols)])
        for cell in box.cells:
            item = QTableWidgetItem(cell.name or "")
            item.setTextAlignment(Qt.AlignmentFlag.AlignCenter)
            item.setToolTip(
                t("ln2.qt.grid.cell_tip", self.lang, label=cell.label, name=cell.name) if cell.name else cell.label
            )
            key = (box.box, cell.position)
            mark = self.mark_kind if key in self.marked else "changed" if key in self.changed else None
            if mark is not None:
                item.setBackground(_MARKS[mark])
                font = item.font()
                font.setBold(True)
                item.setFont(font)
                item.setData(Qt.ItemDataRole.UserRole, mark)
            elif cell.record_id is not None:
                item.setBackground(_OCCUPIED)
            self.table.setItem((cell.position - 1) // box.cols, (cell.position - 1) % box.cols, item)

    def follow(self, event: Event) -> None:
        """Mark what the conversation's answer is about: the tubes a look-up returned (its result's record lines name
        box and positions), or those a staged plan would change; a new request clears the marks."""
        if isinstance(event, RunStarted) and not event.resumed:
            self.mark(set(), "found")
        elif isinstance(event, ToolReturned) and event.ok:
            self.mark(cells_of_records(event.result), "found")
        elif isinstance(event, PlanStaged):
            self.mark(self.cells_of_plan(event.items), "staged")

    def mark(self, cells: set[tuple[int, int]], kind: str) -> None:
        if not cells and not (kind == "found" and self.marked):
            return
        self.marked, self.mark_kind = cells, kind
        if cells and self.box not in {b for b, _ in cells}:
            self.show_box(min(cells)[0])
        else:
            self._draw_box()

    def marked_cells(self) -> dict[tuple[int, int], str]:
        """What the box shown draws as marked: (box, position) → found, staged or changed."""
        if self.view is None or self.box is None:
            return {}
        cols = self.view.boxes[self.box - 1].cols
        found = {}
        for r in range(self.table.rowCount()):
            for c in range(self.table.columnCount()):
                item = self.table.item(r, c)
                if item is not None and item.data(Qt.ItemDataRole.UserRole):
                    found[(self.box, r * cols + c + 1)] = str(item.data(Qt.ItemDataRole.UserRole))
        return found

    def cells_of_plan(self, items: list[dict[str, Any]]) -> set[tuple[int, int]]:
        """The cells a staged plan's operations name: a new record's box and positions, or a record's positions."""
        cells: set[tuple[int, int]] = set()
        boxes = self.view.boxes if self.view is not None else []

        def of_record(record_id: Any, positions: Any) -> None:
            for box in boxes:
                cells.update(
                    (box.box, c.position)
                    for c in box.cells
                    if c.record_id == record_id and c.position in (positions or [])
                )

        for item in items:
            op = item.get("op") if isinstance(item, dict) else None
            if not isinstance(op, dict):
                continue
            if op.get("op") == "add_entry" and isinstance(op.get("box"), int):
                cells.update((op["box"], p) for p in op.get("positions") or [] if isinstance(p, int))
            elif op.get("op") == "record_thaw":
                of_record(op.get("record_id"), op.get("positions"))
            elif op.get("op") == "batch_thaw":
                for entry in op.get("entries") or []:
                    if isinstance(entry, dict):
                        of_record(entry.get("record_id"), entry.get("positions"))
        return cells

    def _cell_clicked(self, row: int, col: int) -> None:
        if self.box is None or self.view is None:
            return
        self._show_tube(self.box, row * self.view.boxes[self.box - 1].cols + col + 1)

    def _show_tube(self, box: int, position: int) -> None:
        self.selected = (box, position)
        try:
            tube = tube_view(self.path, box=box, position=position)
        except Exception as error:  # noqa: BLE001
            self.details.setPlainText(t("ln2.qt.grid.unreadable", self.lang, error=_said(error, self.lang)))
            return
        assert self.view is not None
        label = self.view.boxes[box - 1].cells[position - 1].label
        lines = [f"<b>{html.escape(t('ln2.qt.tube.where', self.lang, box=box, label=label, position=position))}</b>"]
        if tube.record is None:
            lines.append(html.escape(t("ln2.qt.tube.empty", self.lang)))
        else:
            for field, key in _FIELDS.items():
                value = tube.record.get(field)
                if value in (None, [], ""):
                    continue
                lines.append(f"{html.escape(t(key, self.lang))}: {html.escape(_format(field, value, self.lang))}")
        self.details.setHtml("<br>".join(lines))


def cells_of_records(result: Any) -> set[tuple[int, int]]:
    """(box, position) of the tubes a look-up's result names (its `records` lines say "box B positions P,Q")."""
    cells: set[tuple[int, int]] = set()
    records = result.get("records") if isinstance(result, dict) else None
    for line in records if isinstance(records, list) else []:
        match = _RECORD_LINE.search(line) if isinstance(line, str) else None
        if match:
            cells.update((int(match[1]), int(p)) for p in match[2].split(",") if p)
    return cells


def _changed(before: GridView, after: GridView) -> set[tuple[int, int]]:
    held = {(b.box, c.position): c.record_id for b in before.boxes for c in b.cells}
    return {(b.box, c.position) for b in after.boxes for c in b.cells if held.get((b.box, c.position)) != c.record_id}


def _format(field: str, value: Any, lang: str) -> str:
    if field == "thaw_events":
        return "; ".join(
            t(
                "ln2.qt.tube.thaw_event",
                lang,
                date=e.get("date", ""),
                action=t(_ACTIONS[e["action"]], lang) if e.get("action") in _ACTIONS else e.get("action", ""),
                positions=", ".join(map(str, e.get("positions", []))),
            )
            + (f" ({e['note']})" if e.get("note") else "")
            for e in value
        )
    if isinstance(value, list):
        return ", ".join(map(str, value))
    return str(value)


class AuditPanel(QWidget):
    """The audit history, newest first; `rollback_requested(audit_id)` asks to restore the state before an entry (the
    rollback is staged for approval)."""

    rollback_requested = Signal(str)

    _COLUMNS = ("ln2.qt.audit.when", "ln2.qt.audit.actor", "ln2.qt.audit.summary")

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
        self.rollback_button = QPushButton(t("ln2.qt.audit.rollback", lang))
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
            self.entries = audit_entries(self.path, lang=self.lang)
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


def panels(kit: DesktopKit) -> list[DesktopPanel]:
    """The grid above the tabs and the audit history as a tab, both over the host's inventory file; redrawn when a
    plan is decided (a rollback's included)."""
    host: AppView | None = kit.host
    path = host.data_path if host is not None else None
    if path is None:  # pragma: no cover - ln2 always has an inventory
        return []
    grid = GridPanel(path=path, lang=kit.lang)
    audit = AuditPanel(path=path, lang=kit.lang)

    def refresh() -> None:
        grid.refresh()
        audit.refresh()

    def rollback(audit_id: str) -> None:
        async def work(host: AppView) -> Proposal:
            return await propose_rollback(host, audit_id=audit_id, principal=kit.principal, lang=kit.lang)

        def staged(_: Proposal) -> None:  # the window's plan panel shows it for approval (its AskOpened)
            kit.notify(t("ln2.qt.audit.staged", kit.lang, audit_id=audit_id), "good")
            audit.refresh()

        def refused(error: BaseException) -> None:
            kit.show_error(error)
            refresh()

        kit.call(work, on_done=staged, on_error=refused)

    def on_event(event: Event) -> None:
        grid.follow(event)
        if isinstance(event, PlanDecided):  # applied (or not): the panels show the file as it is now
            refresh()

    audit.rollback_requested.connect(rollback)
    refresh()
    return [
        DesktopPanel(widget=grid, placement="top", on_event=on_event),
        DesktopPanel(widget=audit, title=t("ln2.qt.tab.history", kit.lang), placement="tab"),
    ]
