"""Every tool an app's main agent may call has words for the person in both languages (`<app>.step.<tool>`), so no
raw tool name is shown as a step; a `.detail` wording names only arguments the tool really takes."""

from __future__ import annotations

import asyncio
import re
from pathlib import Path

import pytest

from consulta.apps import app_names
from consulta.config import Settings
from consulta.frontends import AppHost
from consulta.i18n import LANGUAGES, catalog
from consulta.runtime import tool_schemas

RUNTIME_TOOLS = {"question"}
"""Tools of the runtime's own, drawn by the page in its own way (a question card)."""


def _tools(app: str, home: Path) -> dict[str, set[str]]:
    settings = Settings(home=home, database_url=f"sqlite:///{home}/consulta.db", model="test", lang="en")

    async def main() -> list[dict]:
        host = AppHost(app=app, settings=settings, ask_policy="defer")
        try:
            return tool_schemas(host.agent)
        finally:
            await host.aclose()

    return {
        s["function"]["name"]: set(s["function"]["parameters"].get("properties", {}))
        for s in asyncio.run(main())
        if s["function"]["name"] not in RUNTIME_TOOLS
    }


@pytest.mark.parametrize("app", [name for name in app_names() if name != "probe"])
def test_each_tool_has_step_words_in_both_languages(app: str, tmp_path: Path) -> None:
    tools = _tools(app, tmp_path)
    assert tools
    for lang in LANGUAGES:
        words = catalog(lang)
        assert [tool for tool in tools if f"{app}.step.{tool}" not in words] == [], lang
        for tool, params in tools.items():
            detail = words.get(f"{app}.step.{tool}.detail")
            if detail is not None:
                assert set(re.findall(r"{(\w+)}", detail)) <= params, (lang, tool, detail)
