"""A tool call reads as the step in the person's words on every front end (the terminal, the desktop window; the page
has its own test in Chromium): never the tool's name, its raw arguments, an error code or a hint meant for the
model."""

from __future__ import annotations

import io

from rich.console import Console

from consulta.frontends._steps import step_time, step_words
from consulta.frontends.cli._render import EventPrinter
from consulta.i18n import catalog
from consulta.runtime import ToolCalled, ToolReturned

HINT = "Please provide the box and positions as the user said them, or ask the user with ONE question."
REFUSED = ToolReturned(
    run_id="r",
    tool_call_id="c",
    tool_name="record_thaw",
    ok=False,
    result={"ok": False, "error_code": "ungrounded_argument", "message": "box 1 was not said", "_hint": HINT},
    duration_ms=3.0,
)


def test_the_detail_wording_needs_every_argument_it_names() -> None:
    assert step_words("ln2", "query_inventory", {"cell_line": "HeLa"}, "en") == "Looking up HeLa in the inventory"
    assert step_words("ln2", "query_inventory", {"box": 2}, "en") == catalog("en")["ln2.step.query_inventory"]
    assert step_words("ln2", "empty_positions", {"box": 3}, "zh-CN") == "查找 3 号盒的空位"
    assert step_words("tutor", "consult_expert", {"expert_id": "data_inspector"}, "en").endswith("about your file")
    assert step_words("ln2", "no_such_tool", {}, "en") == catalog("en")["web.step.generic"]


def test_the_terminal_prints_steps_not_tools_or_hints() -> None:
    out = io.StringIO()
    printer = EventPrinter(Console(file=out, width=200), "en", app="ln2")
    printer(ToolCalled(run_id="r", tool_call_id="c", tool_name="query_inventory", args={"cell_line": "HeLa"}))
    printer(REFUSED)
    text = out.getvalue()
    assert "Looking up HeLa in the inventory" in text and "set aside" in text
    for internal in ("query_inventory", "record_thaw", "ungrounded_argument", "box 1 was not said", HINT, "{"):
        assert internal not in text


def test_the_terminal_says_how_long_a_step_took() -> None:
    out = io.StringIO()
    printer = EventPrinter(Console(file=out, width=200), "zh-CN", app="ln2")
    printer(ToolCalled(run_id="r", tool_call_id="c", tool_name="empty_positions", args={"box": 3}))
    printer(
        ToolReturned(run_id="r", tool_call_id="c", tool_name="empty_positions", ok=True, result={}, duration_ms=12_400)
    )
    assert out.getvalue().splitlines() == ["→ 查找 3 号盒的空位", "  ✓ 12 秒"]
    assert step_time(1234, "en") == "1.2 s" and step_time(61_000, "en") == "61 s"


def test_the_desktop_transcript_shows_steps_not_tools_or_hints() -> None:
    from consulta.frontends.qt import describe_event

    line = describe_event(
        ToolCalled(run_id="r", tool_call_id="c", tool_name="record_thaw", args={"cell_line": "K562"}),
        "zh-CN",
        app="ln2",
    )
    assert line is not None and "准备取出 K562" in line[0] and "record_thaw" not in line[0]
    refused = describe_event(REFUSED, "en", app="ln2")
    assert refused is not None and all(x not in refused[0] for x in ("ungrounded", "not said", HINT))
