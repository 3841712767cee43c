"""The seed's question dialog (seed 001 §4.5.3), non-blocking: it emits what the person chose and the window answers
the ask through the host; the dialog stays open until the answer is accepted, and closes when the ask closes."""

from __future__ import annotations

import html
from dataclasses import dataclass
from typing import Any

from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import QCheckBox, QComboBox, QDialog, QDialogButtonBox, QLabel, QLineEdit, QVBoxLayout, QWidget

from ...asks import Question
from ...i18n import t

__all__ = ["QuestionDialog"]


@dataclass(frozen=True)
class _Choice:
    """Single choice from offered options; the combo box is editable, so free text is also an answer."""

    combo: QComboBox

    def value(self) -> str:
        return self.combo.currentText()


@dataclass(frozen=True)
class _Choices:
    """Several of the offered options: one check box per option (the option text is kept, not the label)."""

    boxes: tuple[tuple[QCheckBox, str], ...]

    def value(self) -> list[str]:
        return [option for box, option in self.boxes if box.isChecked()]


@dataclass(frozen=True)
class _Text:
    """No options: free text."""

    edit: QLineEdit

    def value(self) -> str:
        return self.edit.text()


_Field = _Choice | _Choices | _Text


class QuestionDialog(QDialog):
    """Asks the questions of one `question` ask.

    - `submitted(list)`: OK was pressed; one answer per question (a string, or a list of options for `multiple`).
      The dialog stays open (inputs disabled) until `accept_answer()` or `refuse(message)` is called.
    - `cancel_requested()`: Cancel (or Esc, or closing the dialog) was pressed. The dialog stays until the ask closes.
    """

    submitted = Signal(list)
    cancel_requested = Signal()

    def __init__(self, *, ask_id: str, questions: list[Question], lang: str, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.ask_id = ask_id
        self.questions = questions
        self.lang = lang
        self.setWindowTitle(t("ai.question.title", lang))
        self.setMinimumWidth(400)
        layout = QVBoxLayout(self)
        self.fields: list[_Field] = []
        for q in questions:
            label = QLabel(f"<b>{html.escape(q.header)}</b>: {html.escape(q.question)}")
            label.setWordWrap(True)
            layout.addWidget(label)
            self.fields.append(self._field(q, layout))
        self.error = QLabel()
        self.error.setWordWrap(True)
        self.error.setStyleSheet("color: #b00020;")
        self.error.hide()
        layout.addWidget(self.error)
        self.buttons = QDialogButtonBox()
        self.ok_button = self.buttons.addButton(t("ai.question.confirm", lang), QDialogButtonBox.ButtonRole.AcceptRole)
        self.cancel_button = self.buttons.addButton(
            t("ai.question.cancel", lang), QDialogButtonBox.ButtonRole.RejectRole
        )
        self.ok_button.setDefault(True)
        self.buttons.accepted.connect(self._on_ok)
        self.buttons.rejected.connect(self.reject)
        layout.addWidget(self.buttons)
        self._done = False

    def _field(self, q: Question, layout: QVBoxLayout) -> _Field:
        if q.options and q.multiple:
            boxes = []
            for option in q.options:
                box = QCheckBox(option.replace("&", "&&"))  # `&` would be taken as a keyboard accelerator
                layout.addWidget(box)
                boxes.append((box, option))
            return _Choices(tuple(boxes))
        if q.options:
            combo = QComboBox()
            combo.setEditable(True)
            combo.setInsertPolicy(QComboBox.InsertPolicy.NoInsert)
            combo.addItems(q.options)
            layout.addWidget(combo)
            return _Choice(combo)
        edit = QLineEdit()
        layout.addWidget(edit)
        return _Text(edit)

    # ---- what the person does -------------------------------------------------------------------------------

    def answers(self) -> list[Any]:
        """The answers as the inputs show them, one per question."""
        return [f.value() for f in self.fields]

    def _on_ok(self) -> None:
        self._set_busy(True)
        self.error.hide()
        self.submitted.emit(self.answers())

    def reject(self) -> None:
        """Cancel, Esc or the close button: ask the window to cancel the ask (the dialog closes when it is closed)."""
        if self._done:
            super().reject()
            return
        self._set_busy(True)
        self.cancel_requested.emit()

    # ---- what the window tells it ---------------------------------------------------------------------------

    def refuse(self, message: str) -> None:
        """The answer was not accepted: show why and let the person change it."""
        self._set_busy(False)
        self.error.setText(message)
        self.error.show()

    def finish(self) -> None:
        """The ask is closed (answered, cancelled, timed out, stopped): close the dialog for good."""
        self._done = True
        super().done(QDialog.DialogCode.Accepted)

    def _set_busy(self, busy: bool) -> None:
        for widget in self.findChildren(QWidget):
            if widget is not self.error and not isinstance(widget, QLabel):
                widget.setEnabled(not busy)
        self.setCursor(Qt.CursorShape.BusyCursor if busy else Qt.CursorShape.ArrowCursor)

    @property
    def closed(self) -> bool:
        return self._done
