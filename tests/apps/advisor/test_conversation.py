"""Seed §4's conversation end to end on the runtime (both languages), the page's context flowing back between
turns, and the session brought back after a restart."""

from __future__ import annotations

import asyncio
from pathlib import Path

from consulta.apps.advisor import session_of

from .conftest import Chat
from .fakes import ranking_page


def final(text: str) -> dict:
    return {"tool_calls": [{"name": "final_result", "args": {"voice_response": text}}]}


def test_the_seeds_conversation(tmp_path: Path) -> None:
    chat = Chat(tmp_path, [final("张三教授是机器学习方向的，学生评价4.5分，很受欢迎。")])

    async def scenario() -> None:
        run = await chat.say("我想考北京大学计算机系")
        assert chat.tools(run) == ["update_form", "update_ranking"]
        chat.lookups.pages[chat.principal] = ranking_page()  # the page updated and posted its context
        run = await chat.say("我想做机器学习，希望导师温和一点")
        assert chat.tools(run) == ["update_form", "recommend_advisors"]
        assert chat.output(run)["voice_response"] == "根据你的需求，我推荐张三教授，主要研究机器学习。"
        run = await chat.say("第一个导师怎么样？")
        assert chat.output(run) == {
            "voice_response": "张三教授是机器学习方向的，学生评价4.5分，很受欢迎。",
            "tool_calls": [],
        }
        run = await chat.say("我想看看他的详细信息")  # 他: the advisor just talked about (nobody selected on the page)
        assert chat.output(run)["tool_calls"] == [
            {"tool": "get_advisor_detail", "params": {"advisor_id": "12345", "advisor_name": "张三"}}
        ]
        session = session_of(chat.store, chat.principal)
        assert [m.role for m in session.conversation_history] == ["user", "assistant"] * 4
        assert session.form_state().form_status.is_complete
        await chat.runtime.aclose()

    asyncio.run(scenario())


def test_in_english_and_after_a_restart(tmp_path: Path) -> None:
    chat = Chat(tmp_path)

    async def scenario() -> None:
        run = await chat.say("I want to study computer science at Peking University", lang="en")
        assert chat.output(run)["voice_response"].startswith("OK, Peking University, Computer Science and Technology.")
        await chat.runtime.aclose()
        restarted = Chat(tmp_path)  # a new process on the same store
        run = await restarted.say("I'd like a gentle advisor working on machine learning", lang="en")
        assert restarted.tools(run) == ["update_form", "recommend_advisors"]  # the form came back: no new ranking
        assert (
            restarted.output(run)["voice_response"] == "For what you want, I suggest 教授 张三, who works on 机器学习."
        )
        run = await restarted.say("start over", lang="en")
        assert session_of(restarted.store, restarted.principal).user_form.school is None
        await restarted.runtime.aclose()

    asyncio.run(scenario())
