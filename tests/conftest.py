"""Suite-wide collection order, and fixtures shared by the test folders."""

from __future__ import annotations

import asyncio
from collections.abc import Callable

import pytest
from pydantic_ai.models import Model

from consulta.runtime import Agent, Runtime, RunRecord, Store


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Run the Qt tests last. After PySide6's tests have run in a process, Playwright's sync driver (a greenlet
    running an asyncio loop) segfaults in `select` at its next launch (seen with PySide6 6.12.0, playwright 1.65.2,
    greenlet on CPython 3.11; every test passes on its own and in this order)."""
    items.sort(key=lambda item: _uses_qt(item.nodeid.replace("\\", "/")))


def _uses_qt(nodeid: str) -> bool:
    """The desktop window's tests: the Qt package's, and each app's desktop panels' (`tests/apps/<app>/test_desktop.py`)."""
    return "frontends/qt/" in nodeid or (nodeid.startswith("tests/apps/") and "/test_desktop.py" in nodeid)


@pytest.fixture
def run_once() -> Callable[..., RunRecord]:
    """Run an agent once to its end (or pause) in a fresh Runtime on `model`, closing the runtime after."""

    def run(store: Store, agent: Agent, prompt: str, model: Model, *, spec: str = "scripted") -> RunRecord:
        async def scenario() -> RunRecord:
            runtime = Runtime(store=store, resolve_model=lambda _: model)
            try:
                return await runtime.run(agent, prompt, model=spec)
            finally:
                await runtime.aclose()

        return asyncio.run(scenario())

    return run
