"""The desktop front end (PySide6): `consulta desktop <app>` — chat, the seed's question dialog, the staged plan with
Approve / Reject, and the app's own side panels (its desktop part).

The run works off the GUI thread: one asyncio loop on one background thread owns the `AppHost` (`HostBridge`);
the GUI submits work to it and hears back through queued Qt signals. PySide6 is the optional `qt` extra.
"""

try:
    import PySide6  # noqa: F401
except ImportError as error:  # pragma: no cover - exercised by a test that hides PySide6
    raise ImportError(
        "The desktop front end needs PySide6: pip install 'consulta[qt]' (or, in a checkout, uv sync --extra qt)."
    ) from error

from ._app import run_desktop
from ._bridge import BridgeState, HostBridge
from ._chat import ChatPanel, describe_event
from ._dialog import QuestionDialog
from ._plan import PlanPanel
from ._window import MainWindow

__all__ = [
    "BridgeState",
    "ChatPanel",
    "HostBridge",
    "MainWindow",
    "PlanPanel",
    "QuestionDialog",
    "describe_event",
    "run_desktop",
]
