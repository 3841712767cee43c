"""Every session's advisor state is its own (issue 20, item 4): two sessions (two principals on one store and one
agent, the site's look-ups faked, the model scripted) talk in turns; each one's form, conversation and page context
stay its own — the other's turn neither reads nor changes them, and clearing one leaves the other."""

from __future__ import annotations

import asyncio
from pathlib import Path

from consulta.apps.advisor import session_of
from consulta.apps.advisor._sessions import SessionBook

from .conftest import Chat
from .fakes import ranking_page


def test_two_sessions_keep_their_own_form_conversation_and_page(tmp_path: Path) -> None:
    chat = Chat(tmp_path)

    async def scenario() -> None:
        alice, bob = "web:alice", "web:bob"
        chat.principal = alice
        await chat.say("我想考北京大学计算机系")
        chat.lookups.pages[alice] = ranking_page()  # Alice's page shows the ranking she asked for
        before = session_of(chat.store, alice)
        assert before.user_form.school and before.user_form.major

        chat.principal = bob
        bobs_first = session_of(chat.store, bob)  # read: Bob's session is empty, not Alice's
        assert bobs_first.user_form.school is None and bobs_first.conversation_history == []
        run = await chat.say("我想考清华大学")  # change: Bob fills his own form
        assert "北京大学" not in (run.output or "")
        bobs = session_of(chat.store, bob)
        assert bobs.user_form.school != before.user_form.school
        assert bobs.user_form.major is None  # Alice's major is not Bob's
        assert [m.content for m in bobs.conversation_history if m.role == "user"] == ["我想考清华大学"]

        after = session_of(chat.store, alice)  # nothing of Alice's changed
        assert after.user_form == before.user_form
        assert after.conversation_history == before.conversation_history
        assert [r.id for r in chat.store.list_runs(principal=bob)] == [run.id]  # runs: Bob's own only

        SessionBook(chat.store.engine).clear(bob)  # Bob's "new conversation"
        assert session_of(chat.store, alice).user_form == before.user_form
        await chat.runtime.aclose()

    asyncio.run(scenario())
