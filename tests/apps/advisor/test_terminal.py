"""The advisor in the terminal: a person reads the turn's words and the page's actions, not the seed's JSON."""

from __future__ import annotations

import json

from rich.console import Console

from consulta.apps.advisor import APP
from consulta.frontends.cli._render import EventPrinter
from consulta.runtime import ModelText

TURN = {
    "voice_response": "好的，北京大学计算机科学与技术。",
    "tool_calls": [{"tool": "update_ranking", "params": {"school": "北京大学", "major": "计算机科学与技术"}}],
}


def _printed(text: str) -> str:
    console = Console(record=True, width=120)
    assert APP.terminal.reply is not None
    EventPrinter(console, "zh-CN", reply=APP.terminal.reply)(ModelText(run_id="run_1", text=text))
    return console.export_text()


def test_a_turn_shows_its_words_and_actions_not_json() -> None:
    shown = _printed(json.dumps(TURN, ensure_ascii=False))
    assert "好的，北京大学计算机科学与技术。" in shown
    assert 'update_ranking {"school": "北京大学", "major": "计算机科学与技术"}' in shown
    assert "voice_response" not in shown and "tool_calls" not in shown


def test_a_reply_that_is_not_a_turn_is_shown_as_it_is() -> None:
    assert "plain words" in _printed("plain words")
