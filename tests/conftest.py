"""Suite-wide collection order."""

from __future__ import annotations

import pytest


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Run the Qt tests last. After PySide6's tests have run in a process, Playwright's sync driver (a greenlet
    running an asyncio loop) segfaults in `select` at its next launch (seen with PySide6 6.12.0, playwright 1.65.2,
    greenlet on CPython 3.11; every test passes on its own and in this order)."""
    items.sort(key=lambda item: "frontends/qt/" in item.nodeid.replace("\\", "/"))
