"""The reply as it is written, at the terminal: shown in place while the model writes, replaced by the reply."""

from __future__ import annotations

import io

from rich.console import Console

from consulta.frontends.cli._render import EventPrinter
from consulta.i18n import t
from consulta.runtime import ModelText, ReplyChecked, TextDelta, ToolCalled


def printer(*, terminal: bool) -> tuple[EventPrinter, io.StringIO]:
    out = io.StringIO()
    return EventPrinter(Console(file=out, force_terminal=terminal, width=80), "en"), out


def test_a_terminal_shows_the_draft_then_the_reply_in_its_place():
    show, out = printer(terminal=True)
    show(TextDelta(run_id="r", offset=0, text="The two HeLa "))
    show(TextDelta(run_id="r", offset=13, text="tubes are "))
    assert "The two HeLa tubes are" in out.getvalue()  # on screen before the reply is done
    show(TextDelta(run_id="r", offset=99, text="lost words"))  # a gap: not drawn
    assert "lost words" not in out.getvalue()
    show(ModelText(run_id="r", text="Two HeLa tubes: box 3, A1 and A2."))
    assert show._live is None  # the draft left the screen; the reply is printed whole
    assert "Two HeLa tubes: box 3, A1 and A2." in out.getvalue()


def test_a_tool_call_ends_the_draft_and_a_pipe_gets_only_the_reply():
    show, out = printer(terminal=True)
    show(TextDelta(run_id="r", offset=0, text="Let me look"))
    show(ToolCalled(run_id="r", tool_call_id="c", tool_name="lookup", args={}))
    assert show._live is None
    piped, plain = printer(terminal=False)
    piped(TextDelta(run_id="r", offset=0, text="Let me look"))
    piped(ModelText(run_id="r", text="Done."))
    assert "Let me look" not in plain.getvalue() and "Done." in plain.getvalue()


def test_a_draft_a_check_refused_is_said_withdrawn_where_it_was_seen():
    show, out = printer(terminal=True)
    show(TextDelta(run_id="r", offset=0, text="Done: I took out "))
    show(ReplyChecked(run_id="r", check="claims", reason="no tool took anything out"))
    assert show._live is None and t("cli.chat.reply_withdrawn", "en").strip() in out.getvalue()
    assert "no tool took" not in out.getvalue()  # the reason is the model's to read
    piped, plain = printer(terminal=False)  # a pipe never saw the draft: nothing to withdraw
    piped(TextDelta(run_id="r", offset=0, text="Done: I took out "))
    piped(ReplyChecked(run_id="r", check="claims", reason="no tool took anything out"))
    assert plain.getvalue() == ""
