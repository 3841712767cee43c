"""The staged plan panel of the desktop window: a plan waiting for approval, with Approve and Reject (plans are the
runtime's: any app with write tools stages them)."""

from __future__ import annotations

from PySide6.QtCore import Signal
from PySide6.QtWidgets import QHBoxLayout, QLabel, QListWidget, QPushButton, QVBoxLayout, QWidget

from ...i18n import t

__all__ = ["PlanPanel"]


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
