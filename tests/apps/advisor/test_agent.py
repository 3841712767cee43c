"""The advisor agent on the real runtime and store (the site's look-ups faked, the model scripted): a code turn
never asks the model and ends with the seed's output; an ambiguous school pauses on the runtime's question and the
answer (an option or free text) fills the form; the model's words are checked and replaced when they fail."""

from __future__ import annotations

import asyncio
import time
from pathlib import Path

from consulta.apps.advisor import session_of
from consulta.runtime import AskStatus, RunStatus, Runtime

from .conftest import Chat
from .fakes import ranking_page


def final(text: str) -> dict:
    return {"tool_calls": [{"name": "final_result", "args": {"voice_response": text}}]}


def test_a_code_turn_ends_without_the_model_and_fast(chat: Chat) -> None:
    async def scenario() -> None:
        await chat.say("你好")  # warm: tables made, modules imported
        started = time.perf_counter()
        run = await chat.say("我想考北京大学计算机系")
        elapsed = time.perf_counter() - started
        out = chat.output(run)
        assert chat.tools(run) == ["update_form", "update_ranking"]
        assert (
            out["voice_response"]
            == "好的，北京大学计算机科学与技术。正在为你筛选导师...你对研究方向或导师风格有偏好吗？"
        )
        assert elapsed < 1.0, elapsed
        assert [c.tool_name for c in chat.store.list_tool_calls(run.id)] == ["advisor_turn"]
        await chat.runtime.aclose()

    asyncio.run(scenario())


def test_an_ambiguous_school_is_a_question_whose_answer_fills_the_form(chat: Chat) -> None:
    async def scenario() -> None:
        run = await chat.say("交大的计算机")
        assert run.status == RunStatus.waiting
        (ask,) = chat.store.list_asks(run_id=run.id)
        (question,) = ask.payload["questions"]
        assert question["options"] == ["上海交通大学", "西安交通大学", "北京交通大学", "西南交通大学"]
        assert session_of(chat.store, chat.principal).user_form.school is None  # nothing filled before the answer
        chat.runtime.answer(ask.id, ["西安交通大学"])
        run = await chat.runtime.settled(run.id)
        assert chat.tools(run) == ["update_form", "update_ranking"]
        form = session_of(chat.store, chat.principal).user_form
        assert (form.school, form.major) == ("西安交通大学", "计算机科学与技术")
        await chat.runtime.aclose()

    asyncio.run(scenario())


def test_a_free_text_answer_is_read_too(chat: Chat) -> None:
    async def scenario() -> None:
        run = await chat.say("我想考华师的心理学")
        (ask,) = chat.store.list_asks(run_id=run.id)
        chat.runtime.answer(ask.id, ["上海那个"])
        run = await chat.runtime.settled(run.id)
        assert chat.output(run)["tool_calls"][0]["params"]["school"] == "华东师范大学"
        run = await chat.say("我想考东大")
        (ask,) = chat.store.list_asks(run_id=run.id)
        chat.runtime.answer(ask.id, ["随便"])
        run = await chat.runtime.settled(run.id)
        assert chat.output(run) == {"voice_response": "没听懂你的选择，请从选项里选一个。", "tool_calls": []}
        assert session_of(chat.store, chat.principal).user_form.school == "华东师范大学"  # unchanged
        await chat.runtime.aclose()

    asyncio.run(scenario())


def test_the_answer_resumes_in_another_process(tmp_path: Path) -> None:
    first = Chat(tmp_path)

    async def scenario() -> None:
        run = await first.say("我想考东大计算机")
        (ask,) = first.store.list_asks(run_id=run.id)
        await first.runtime.aclose()
        again = Chat(tmp_path)  # a restarted server on the same store
        fresh = Runtime(store=again.store, resolve_model=lambda spec: again.model, ask_policy="defer")  # type: ignore[arg-type]
        fresh.register(again.agent)
        fresh.answer(ask.id, ["东北大学"])
        await fresh.resume(run.id, again.agent)
        run = await fresh.settled(run.id)
        assert again.store.get_ask(ask.id).status == AskStatus.answered
        assert Chat.output(run)["tool_calls"][0]["params"]["school"] == "东北大学"
        await fresh.aclose()

    asyncio.run(scenario())


def test_a_description_is_the_models_checked_words(tmp_path: Path) -> None:
    chat = Chat(tmp_path, [final("张三教授做机器学习，学生评分4.5分。")])
    chat.lookups.pages[chat.principal] = ranking_page()

    async def scenario() -> None:
        run = await chat.say("第一个导师怎么样？")
        assert chat.output(run) == {"voice_response": "张三教授做机器学习，学生评分4.5分。", "tool_calls": []}
        await chat.runtime.aclose()

    asyncio.run(scenario())


def test_model_words_that_fail_the_checks_are_replaced_by_codes(tmp_path: Path) -> None:
    invented = final("张三教授发表了80篇论文，已经为你打开了详情。")
    chat = Chat(tmp_path, [invented, invented])
    chat.lookups.pages[chat.principal] = ranking_page()

    async def scenario() -> None:
        run = await chat.say("第一个导师怎么样？")
        assert chat.output(run)["voice_response"] == "张三教授，研究机器学习、深度学习，学生评分4.5分。"
        await chat.runtime.aclose()

    asyncio.run(scenario())


def test_chit_chat_goes_to_the_model(tmp_path: Path) -> None:
    chat = Chat(tmp_path, [final("Hi! Tell me a school and a major, and I can help.")])

    async def scenario() -> None:
        run = await chat.say("What makes a good advisor?", lang="en")
        assert chat.output(run) == {
            "voice_response": "Hi! Tell me a school and a major, and I can help.",
            "tool_calls": [],
        }
        await chat.runtime.aclose()

    asyncio.run(scenario())


def test_a_pronoun_with_no_one_selected_asks_which_advisor(tmp_path: Path) -> None:
    chat = Chat(tmp_path)
    chat.lookups.pages[chat.principal] = ranking_page()

    async def scenario() -> None:
        run = await chat.say("我想看看他的详细信息")
        (ask,) = chat.store.list_asks(run_id=run.id)
        assert ask.payload["questions"][0]["options"][1] == "李四 副教授"
        chat.runtime.answer(ask.id, ["李四 副教授"])
        run = await chat.runtime.settled(run.id)
        assert chat.output(run)["tool_calls"] == [
            {"tool": "get_advisor_detail", "params": {"advisor_id": "12346", "advisor_name": "李四"}}
        ]
        await chat.runtime.aclose()

    asyncio.run(scenario())


def test_a_question_left_unanswered_ends_the_turn_with_the_seeds_shape(tmp_path: Path) -> None:
    chat = Chat(tmp_path, [{"text": "I could not tell which school."}, {"text": "Still not sure."}])

    async def scenario() -> None:
        run = await chat.say("交大")
        (ask,) = chat.store.list_asks(run_id=run.id)
        chat.runtime.cancel_ask(ask.id)
        run = await chat.runtime.settled(run.id)
        assert chat.output(run) == {"voice_response": "好的，请问你想考哪个学校的哪个专业呢？", "tool_calls": []}
        assert session_of(chat.store, chat.principal).user_form.school is None
        await chat.runtime.aclose()

    asyncio.run(scenario())
