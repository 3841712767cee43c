from __future__ import annotations

from collections.abc import AsyncIterator, Callable, Iterator
from typing import Any

import pytest
from pydantic_ai.models import Model

from consulta.runtime import Runtime, Store


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture
def store(store_url: str, new_store_at: Callable[[str], Store]) -> Iterator[Store]:
    s = new_store_at(store_url)
    yield s
    s.close()


@pytest.fixture
async def make_runtime(store: Store) -> AsyncIterator[Callable[..., Runtime]]:
    """make_runtime(model, ask_policy=..., store=...) -> a Runtime resolving every model spec to `model`."""
    made: list[Runtime] = []

    def make(model: Model, *, ask_policy: str = "defer", on: Store | None = None, **kw: Any) -> Runtime:
        kw.setdefault("poll_interval", 0.05)
        rt = Runtime(store=on or store, resolve_model=lambda spec: model, ask_policy=ask_policy, **kw)  # type: ignore[arg-type]
        made.append(rt)
        return rt

    yield make
    for rt in made:
        await rt.aclose()
