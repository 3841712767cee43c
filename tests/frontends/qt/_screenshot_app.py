"""Run in a subprocess under Xvfb by test_xvfb.py: open the desktop window on the scripted ambiguous request, wait for
the question dialog and save a screenshot of the whole X screen; pick K562-dTAG-BRD4, wait for the staged plan and
save a second one; then close the window gracefully.

Usage: python _screenshot_app.py HOME LANG QUESTION.png PLAN.png   (exit 0 = both saved and closed cleanly)
"""

from __future__ import annotations

import shutil
import sys
from importlib import resources
from pathlib import Path

from PySide6.QtCore import QTimer
from PySide6.QtGui import QGuiApplication
from PySide6.QtWidgets import QApplication, QComboBox

from consulta.apps.ln2._desktop import GridPanel
from consulta.config import Settings
from consulta.frontends.qt import MainWindow

PROMPT = "帮我取一管K562"
LIMIT_MS = 60_000
SETTLE_MS = 700  # let the X server show the freshly mapped dialog before reading the screen


def main() -> int:
    home, lang, question_png, plan_png = Path(sys.argv[1]), sys.argv[2], Path(sys.argv[3]), Path(sys.argv[4])
    ln2_data = resources.files("consulta.apps.ln2").joinpath("data")
    inventory = home / "inventory.yaml"
    with resources.as_file(ln2_data.joinpath("sample_inventory.yaml")) as sample:
        shutil.copyfile(sample, inventory)
    with resources.as_file(ln2_data.joinpath("scripts", "ambiguous_thaw.yaml")) as script:
        settings = Settings(
            home=home, database_url=f"sqlite:///{home}/consulta.db", model=f"scripted:{script}", lang=lang
        )
    app = QApplication(sys.argv[:1])
    window = MainWindow(app="ln2", settings=settings, options={"inventory": str(inventory)})
    window.setGeometry(QGuiApplication.primaryScreen().geometry())  # no window manager here to maximise it
    window.show()
    outcome = {"code": 3}

    def when(condition: object, then: object) -> None:
        def check() -> None:
            if condition():  # type: ignore[operator]
                then()  # type: ignore[operator]
            else:
                QTimer.singleShot(50, check)

        check()

    def ready() -> None:
        grid = next(p.widget for p in window.panels if isinstance(p.widget, GridPanel))
        grid.show_box(2)
        grid.table.setCurrentCell(0, 1)
        grid.table.cellClicked.emit(0, 1)
        window.chat.input.setText(PROMPT)
        window.chat.send_button.click()
        when(
            lambda: any(d.isVisible() for d in window.dialogs.values()),
            lambda: QTimer.singleShot(SETTLE_MS, shoot_question),
        )

    def shoot(out: Path) -> bool:
        return QGuiApplication.primaryScreen().grabWindow(0).save(str(out), "PNG")

    def shoot_question() -> None:
        if not shoot(question_png):
            window.close()
            return
        (dialog,) = window.dialogs.values()
        (combo,) = dialog.findChildren(QComboBox)
        combo.setCurrentText("K562-dTAG-BRD4")
        dialog.ok_button.click()
        when(lambda: window.plan.approve_button.isEnabled(), lambda: QTimer.singleShot(SETTLE_MS, shoot_plan))

    def shoot_plan() -> None:
        outcome["code"] = 0 if shoot(plan_png) else 4
        window.close()  # stops the run (the pending plan closes as cancelled), then the window closes

    window.bridge.stopped.connect(app.quit)
    QTimer.singleShot(LIMIT_MS, lambda: app.exit(5))
    when(lambda: window.panels_ready, ready)
    code = app.exec()
    return outcome["code"] if code == 0 else code


if __name__ == "__main__":
    raise SystemExit(main())
