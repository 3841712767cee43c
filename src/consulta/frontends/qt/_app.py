"""`run_desktop`: the entry point the `consulta desktop` command calls."""

from __future__ import annotations

import signal
import sys
from collections.abc import Mapping
from typing import Any

from PySide6.QtCore import QTimer
from PySide6.QtWidgets import QApplication

from ...apps import AppDef, AppOptions
from ...config import Settings
from ._window import MainWindow

__all__ = ["run_desktop"]


def run_desktop(*, app: str | AppDef, settings: Settings, options: Mapping[str, Any] | AppOptions | None = None) -> int:
    """Open the app's window and run Qt's event loop until it closes; the exit code (0, or 1 if the app could not
    start). Ctrl-C in the terminal closes the window gracefully, like its close button."""
    qt_app = QApplication.instance() or QApplication(sys.argv[:1])
    window = MainWindow(app=app, settings=settings, options=options)
    window.show()
    previous = signal.signal(signal.SIGINT, lambda *_: window.close())
    # Qt's loop runs C++ code: a periodic no-op hands control back to Python so the signal handler can run.
    ticker = QTimer()
    ticker.timeout.connect(lambda: None)
    ticker.start(250)
    try:
        code = qt_app.exec()
    finally:
        ticker.stop()
        signal.signal(signal.SIGINT, previous)
    return 1 if window.failed else code
