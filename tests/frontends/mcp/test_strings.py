"""Nothing a person reads through the MCP front end is hard-coded: form messages, field titles, plan approval text,
tool titles and the run's title come from the catalogs, in the settings' language."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest

from consulta.apps.ln2 import build_agent
from consulta.i18n import catalog, t
from consulta.runtime import Store

from .._hard_coded import Shown, scan, scan_package
from ._support import Lab, Person, call, client, copy_sample

MCP = Path(__file__).resolve().parents[3] / "src" / "consulta" / "frontends" / "mcp"
SHOWN = Shown(
    calls=frozenset({"elicit_form", "elicit", "message_after"}),  # calls whose arguments reach a person
    keywords=frozenset({"message", "title", "prompt", "response_title"}),  # arguments that reach a person
    dict_keys=frozenset({"title", "description"}),  # keys of an elicitation schema's fields
)


def hard_coded(source: str) -> list[str]:
    return scan(source, SHOWN)[1]


def test_the_scan_finds_a_hard_coded_message() -> None:
    assert hard_coded('ctx.session.elicit_form("Please approve", schema)') == [
        "<source>:1: elicit_form('Please approve')"
    ]
    assert hard_coded('ElicitRequestFormParams(message=f"Approve {n} changes?")') != []
    assert hard_coded('field = {"title": "Approve", "type": "boolean"}') != []
    assert hard_coded('Form(message=t("mcp.plan.message", lang) + "\\nReally?")') != []
    assert hard_coded("served_tool(name=n, title=tool_title(n, lang))") == []
    assert hard_coded('field = {"title": question.header, "type": "string"}') == []


def test_no_message_in_the_mcp_front_end_is_hard_coded() -> None:
    checked, found = scan_package(MCP, SHOWN)
    assert checked >= 5, "the scan saw too few places that reach a person: it is broken"
    assert found == []


def test_every_tool_has_a_title_in_both_catalogs(tmp_path: Path) -> None:
    names = [tool.name for tool in build_agent(inventory=Lab(tmp_path).inventory).tools] + ["apply_plan"]
    for lang in ("en", "zh-CN"):
        assert [n for n in names if f"mcp.tool.{n}" not in catalog(lang)] == []


@pytest.mark.parametrize("lang", ["en", "zh-CN"])
def test_what_the_person_reads_is_in_their_language(tmp_path: Path, lang: str) -> None:
    lab = Lab(tmp_path, lang=lang)
    person = Person([{"q1": 7}, {"q1": "K562-dTAG-BRD4"}, {"approve": True}])
    question = {"header": "Cell Line", "question": "Which K562?", "options": ["K562-WT", "K562-dTAG-BRD4"]}

    async def scenario() -> tuple[list[Any], dict[str, Any]]:
        async with client(lab.server(), "2026-07-28", person) as c:
            tools = await c.list_tools()
            await call(c, "question", {"questions": [question]})
            staged = await call(c, "record_thaw", {"record_id": 9, "positions": [1]})
            await call(c, "apply_plan", {"plan_id": staged["plan_id"]})
            return tools, staged

    tools, staged = asyncio.run(scenario())
    assert {tool.name: tool.title for tool in tools} == {tool.name: t(f"mcp.tool.{tool.name}", lang) for tool in tools}

    (asked, _), (asked_again, _), (approval, schema) = person.seen
    assert asked == "\n".join(
        [t("ai.question.asking", lang), t("mcp.question.line", lang, header="Cell Line", question="Which K562?")]
    )
    assert asked_again == asked + "\n\n" + t("mcp.ask.invalid", lang, error="Answer 1 (Cell Line) must be text.")

    # The previews the person approves are the app's, in their language (the model's stay English).
    store = Store(lab.settings.database_url)
    (run,) = store.list_runs()
    (plan,) = store.list_plans(run_id=run.id)
    store.close()
    executor = build_agent(inventory=copy_sample(tmp_path / "before.yaml")).executor
    assert executor is not None
    (preview,) = executor.validate([item["op"] for item in plan.items], lang=lang)
    assert approval == "\n".join(
        [t("mcp.plan.message", lang, count=1), t("mcp.plan.line", lang, number=1, preview=preview)]
    )
    assert (preview == staged["preview"]) == (lang == "en")
    approve = schema["properties"]["approve"]
    assert approve["title"] == t("mcp.plan.approve", lang) and approve["description"] == t(
        "mcp.plan.approve_help", lang
    )
