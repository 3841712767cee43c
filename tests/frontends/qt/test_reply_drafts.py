"""The reply as it is written, in the desktop window: a provisional line below the transcript, replaced by the
reply (the transcript's line) when it comes, and gone when the model calls a tool instead."""

from __future__ import annotations

import pytest

from consulta.frontends.qt import ChatPanel
from consulta.i18n import t
from consulta.runtime import ModelText, ReplyChecked, TextDelta, ToolCalled

pytestmark = [pytest.mark.desktop, pytest.mark.slow]


def test_the_draft_shows_then_the_reply_replaces_it(qtbot) -> None:
    chat = ChatPanel(lang="en")
    qtbot.addWidget(chat)
    chat.show_event(TextDelta(run_id="r", offset=0, text="The two HeLa "))
    chat.show_event(TextDelta(run_id="r", offset=13, text="tubes"))
    assert chat.draft.isVisibleTo(chat) and "The two HeLa tubes" in chat.draft.text()
    assert chat.lines == []  # nothing in the transcript yet: the draft is not the reply
    chat.show_event(ModelText(run_id="r", text="Two HeLa tubes: box 3."))
    assert not chat.draft.isVisibleTo(chat) and chat.draft_text == ""
    assert any("Two HeLa tubes: box 3." in line for line in chat.lines)


def test_a_tool_call_takes_the_draft_away(qtbot) -> None:
    chat = ChatPanel(lang="en")
    qtbot.addWidget(chat)
    chat.show_event(TextDelta(run_id="r", offset=0, text="Let me look"))
    chat.show_event(ToolCalled(run_id="r", tool_call_id="c", tool_name="lookup", args={}))
    assert not chat.draft.isVisibleTo(chat)
    assert not any("Let me look" in line for line in chat.lines)


def test_a_draft_a_check_refused_is_said_withdrawn(qtbot) -> None:
    chat = ChatPanel(lang="zh-CN")
    qtbot.addWidget(chat)
    chat.show_event(TextDelta(run_id="r", offset=0, text="已取出"))
    chat.show_event(ReplyChecked(run_id="r", check="claims", reason="no tool took anything out"))
    assert not chat.draft.isVisibleTo(chat) and chat.lines == [t("web.reply.withdrawn", "zh-CN")]
    chat.show_event(ReplyChecked(run_id="r", check="claims", reason="again, with no draft shown"))
    assert chat.lines == [t("web.reply.withdrawn", "zh-CN")]  # nothing seen, nothing to withdraw
