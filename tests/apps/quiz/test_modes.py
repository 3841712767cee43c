"""Mode 1 and Mode 2 as runs of the runtime (scripted models): the request read in code, tools 1-3 called by the
first look, the model's one structured call, validation and saving in code, every call on record; scoring several
answers at once against the bank's keys."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import select

from consulta.apps.quiz import (
    GenerateRequest,
    Profile,
    ScoreRequest,
    bank_items,
    parse_round_id,
    read_request,
    save_profile,
)
from consulta.apps.quiz._db import questions, responses
from consulta.apps.quiz._modes import MAX_REWRITES
from consulta.config import Settings
from consulta.frontends import AppHost
from consulta.runtime import RunStatus

from .conftest import USER, submit, write_script

SQL_MC = {
    "item_type": "multiple_choice",
    "stem": "Which SQL clause sorts the rows of a result?",
    "choices": ["ORDER BY", "GROUP BY", "WHERE", "HAVING"],
    "correct_key": "ORDER BY",
    "explanation": "ORDER BY sorts the result rows.",
}
SQL_SA = {
    "item_type": "short_answer",
    "stem": "Which SQL keyword combines the rows of two queries and removes duplicates?",
    "correct_keywords": ["UNION"],
    "explanation": "UNION merges results and drops duplicate rows.",
}
BAD_MC = {
    "item_type": "multiple_choice",
    "stem": "Which is a SQL keyword?",
    "choices": ["SELECT", "SELECT", "all of the above", "none"],
    "correct_key": "MAYBE",
    "explanation": "",
}


def generation_calls(tmp_path: Path, script: Path, count: int = 1) -> list[Any]:
    """The tool calls of one Mode 1 request ("Generate `count` technical question(s) about SQL") on the scripted
    `script`."""

    async def scenario() -> list[Any]:
        host = host_for(tmp_path, script)
        try:
            run = await host.start(f"Generate {count} technical questions about SQL", principal=None)
            await host.runtime.settled(run.id)
            return host.store.list_tool_calls(run.id)
        finally:
            await host.aclose()

    return asyncio.run(scenario())


def host_for(tmp_path: Path, script: Path, **options: Any) -> AppHost:
    settings = Settings(
        home=tmp_path, database_url=f"sqlite:///{tmp_path}/consulta.db", model=f"scripted:{script}", lang="en"
    )
    return AppHost(app="quiz", settings=settings, options=options, ask_policy="defer")


def no_profile(_: str) -> None:
    return None


def nothing_known(_: str) -> bool:
    return False


# ---- reading the request ------------------------------------------------------------------------------------------


def test_the_request_is_read_from_english_and_chinese_words() -> None:
    got = read_request(
        f"Generate 2 technical questions about SQL at level 6 for user {USER}",
        "en",
        profile=no_profile,
        known_question=nothing_known,
    )
    assert isinstance(got, GenerateRequest)
    assert (got.category, got.difficulty, got.count, got.user_id, got.lang) == ("technical", 6, 2, USER, "en")
    assert got.interests[0].casefold() == "sql"
    zh = read_request("请生成3道关于会计的商业类题目，难度4", "en", profile=no_profile, known_question=nothing_known)
    assert isinstance(zh, GenerateRequest)
    assert (zh.category, zh.difficulty, zh.count, zh.lang) == ("business", 4, 3, "zh-CN") and "会计" in zh.interests
    words = read_request("a few questions on Networking please", "en", profile=no_profile, known_question=nothing_known)
    assert (
        isinstance(words, GenerateRequest)
        and words.category == "technical"
        and words.difficulty == 5
        and "Networking" in words.interests
    )
    capped = read_request("Generate 40 general questions", "en", profile=no_profile, known_question=nothing_known)
    assert isinstance(capped, GenerateRequest) and capped.count == 5 and capped.category == "general"
    for words, count in (("出两道关于会计的题", 2), ("来十二道会计题", 5), ("四个关于会计的问题", 4)):
        said = read_request(words, "zh-CN", profile=no_profile, known_question=nothing_known)
        assert isinstance(said, GenerateRequest) and said.count == count, words


def test_what_the_words_leave_out_comes_from_the_profile() -> None:
    profile = Profile(user_id=USER, self_level="advanced", interests=["Finance"])
    got = read_request(
        "Make me some questions", "en", profile=lambda _: profile, known_question=nothing_known, user_id=USER
    )
    assert isinstance(got, GenerateRequest)
    assert (got.difficulty, got.interests, got.category, got.user_id) == (7, ["Finance"], "business", USER)


def test_answers_after_question_ids_are_a_scoring_request() -> None:
    a, b = bank_items()[0].id, bank_items()[1].id
    got = read_request(
        f"Score my answers: {a}: WHERE; {b}: the HAVING clause",
        "en",
        profile=no_profile,
        known_question=lambda q: q in {a, b},
    )
    assert isinstance(got, ScoreRequest)
    assert [(x.question_id, x.user_answer) for x in got.answers] == [(a, "WHERE"), (b, "the HAVING clause")]


# ---- Mode 1 -------------------------------------------------------------------------------------------------------


def test_mode1_validates_the_models_items_saves_those_that_pass_and_returns_them(tmp_path: Path) -> None:
    script = write_script(tmp_path / "script.json", generator=[submit(SQL_MC, SQL_SA, BAD_MC)])

    async def scenario() -> tuple[Any, list[Any]]:
        host = host_for(tmp_path, script)
        save_profile(host.store.engine, Profile(user_id=USER, self_level="intermediate", interests=["SQL"]))
        try:
            run = await host.start(
                f"Generate 3 technical questions about SQL at level 5 for user {USER}", principal=None
            )
            run = await host.runtime.settled(run.id)
            return run, host.store.list_tool_calls(run.id)
        finally:
            await host.aclose()

    run, calls = asyncio.run(scenario())
    assert run.status == RunStatus.finished, run
    names = [c.tool_name for c in calls]
    assert set(names[:4]) == {
        "get_user_profile",
        "get_difficulty_keywords",
        "search_question_templates",
        "get_generation_brief",
    }  # run side by side
    assert all(c.tool_call_id.startswith("look_") for c in calls[:4])
    brief = next(c.result for c in calls if c.tool_name == "get_generation_brief")
    assert brief["topic"] == "SQL" and brief["count"] == 3 and brief["language"] == "English"
    # the bad item's repeated options are seen in code: no model judges it, and no rewrite is scripted
    assert (
        names.count("validate_question_quality") == 2
        and names.count("save_generated_question") == 2
        and names[-1] == "submit_questions"
    )
    profile = next(c.result for c in calls if c.tool_name == "get_user_profile")
    assert profile["self_level"] == "intermediate"
    submitted = calls[-1].result
    assert (
        submitted["saved"] == 2 and len(submitted["rejected"]) == 1 and isinstance(calls[-1].args["questions"][0], dict)
    )
    assert {i["stem"] for i in submitted["items"]} == {SQL_MC["stem"], SQL_SA["stem"]}
    assert "Saved 2 of 3 technical question(s) at difficulty 5" in run.output and SQL_MC["stem"] in run.output
    from consulta.runtime import Store

    store = Store(f"sqlite:///{tmp_path}/consulta.db")
    with store.engine.connect() as conn:
        rows = conn.execute(select(questions).where(questions.c.source == "generated")).mappings().all()
    assert len(rows) == 2
    for row in rows:
        session_id, round_number, _ = parse_round_id(row["round_id"])
        assert (session_id, row["session_id"], round_number) == (run.id, run.id, 1)  # the run id's own underscore kept
        assert (
            row["difficulty"] == 5
            and json.loads(row["categories"]) == ["technical"]
            and row["validation_score"] >= 0.70
        )
    store.engine.dispose()


def test_mode1_keeps_a_judged_poor_item_out_of_the_bank(tmp_path: Path) -> None:
    script = write_script(tmp_path / "script.json", generator=[submit(SQL_MC)], rating=2)

    async def scenario() -> Any:
        host = host_for(tmp_path, script)
        try:
            run = await host.start("Generate 1 technical question about SQL", principal=None)
            return await host.runtime.settled(run.id)
        finally:
            await host.aclose()

    run = asyncio.run(scenario())
    assert run.status == RunStatus.finished and "Saved 0 of 1" in run.output and "did not pass validation" in run.output


def test_mode1_answers_in_chinese_for_a_chinese_request(tmp_path: Path) -> None:
    item = {
        "item_type": "true_false",
        "stem": "在会计中，资产等于负债加所有者权益。",
        "correct_key": "True",
        "explanation": "这是会计基本等式。",
    }
    script = write_script(tmp_path / "script.json", generator=[submit(item)])

    async def scenario() -> tuple[Any, list[Any]]:
        host = host_for(tmp_path, script)
        try:
            run = await host.start("生成1道关于会计的商业类题目，难度2", principal=None)
            run = await host.runtime.settled(run.id)
            return run, host.store.list_tool_calls(run.id)
        finally:
            await host.aclose()

    run, calls = asyncio.run(scenario())
    assert run.status == RunStatus.finished and "已保存 1/1 道商业类题目" in run.output
    keywords = next(c for c in calls if c.tool_name == "get_difficulty_keywords")
    assert keywords.args == {"difficulty": 2, "category": "business", "lang": "zh-CN"}


# ---- Mode 2 -------------------------------------------------------------------------------------------------------


def test_mode2_scores_several_answers_at_once_with_no_model_step(tmp_path: Path) -> None:
    mc = next(i for i in bank_items() if i.type == "multiple_choice" and i.lang == "en")
    sa = next(i for i in bank_items() if i.type == "short_answer" and i.lang == "en")
    script = write_script(tmp_path / "script.json")

    async def scenario() -> tuple[Any, list[Any], list[Any]]:
        host = host_for(tmp_path, script, user=USER)
        try:
            wrong = next(c for c in mc.choices or [] if c != mc.answer)
            run = await host.start(
                f"Score my answers: {mc.id}: {wrong}; {sa.id}: {' '.join(sa.keywords or [])}", principal=None
            )
            run = await host.runtime.settled(run.id)
            with host.store.engine.connect() as conn:
                kept = conn.execute(select(responses)).mappings().all()
            return run, host.store.list_tool_calls(run.id), list(kept)
        finally:
            await host.aclose()

    run, calls, kept = asyncio.run(scenario())
    assert run.status == RunStatus.finished, run
    assert [c.tool_name for c in calls] == ["score_and_explain", "score_and_explain", "score_answers"]
    first, second = calls[0].result, calls[1].result
    assert first["is_correct"] is False and first["score"] == 0
    assert second["score"] >= 70 and second["keyword_matches"]
    assert len(first["explanation"]) >= 500 and len(first["reference_links"]) >= 3
    assert {(k["question_id"], k["user_id"]) for k in kept} == {(mc.id, USER), (sa.id, USER)}
    assert "Score 0/100" in run.output and mc.stem in run.output
    steps = [c.step for c in calls]
    assert steps == sorted(steps)


@pytest.mark.parametrize("words", ["", "hello"])
def test_words_with_no_request_still_make_a_default_generation_request(words: str) -> None:
    got = read_request(words, "en", profile=no_profile, known_question=nothing_known)
    assert isinstance(got, GenerateRequest) and got.category == "general" and got.count == 3 and got.interests


def test_the_generation_evaluation_runs_on_the_scripted_model(tmp_path: Path) -> None:
    import importlib.util
    import sys

    bench = Path(__file__).resolve().parents[3] / "bench" / "eval_quiz_generate.py"
    spec = importlib.util.spec_from_file_location("eval_quiz_generate", bench)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules["eval_quiz_generate"] = module
    spec.loader.exec_module(module)
    script = write_script(tmp_path / "script.json", generator=[submit(SQL_MC, BAD_MC)])
    out = tmp_path / "quiz_generate.json"
    result = module.main(["--model", f"scripted:{script}", "--requests", "3", "--out", str(out)])
    assert result["requests"] == 3 and result["finished"] == 3
    # the script's SQL items are on the topic of the first request only (computer networks, accounting: off topic)
    assert result["drafts"] == 6 and result["saved"] == 1 and result["share_passing_validation"] == 0.167
    assert result["items_generated_per_minute"] > 0
    assert json.loads(out.read_text(encoding="utf-8"))["runs"][0]["request"].startswith("Generate 2 technical")


def test_mode1_sends_a_copy_back_to_the_model_with_the_reason_and_never_saves_one(tmp_path: Path) -> None:
    example = next(i for i in bank_items() if i.type == "true_false" and i.lang == "en" and i.topic == "SQL")
    copy = {
        "item_type": "true_false",
        "stem": example.stem,
        "correct_key": "True" if example.answer == "False" else "False",
    }
    words = example.stem.split()
    near = {**copy, "stem": " ".join(["Indeed,", *words])}  # one word more: still the shipped item
    script = write_script(tmp_path / "script.json", generator=[submit(copy)], rewrite=near)

    calls = generation_calls(tmp_path, script)
    names = [c.tool_name for c in calls]
    assert "validate_question_quality" not in names and names.count("submit_questions") == 1
    rewrites = [c for c in calls if c.tool_name == "rewrite_question"]
    assert len(rewrites) == MAX_REWRITES  # told why each time, it wrote again; a copy still, it is not saved
    assert {c.args["problem"] for c in rewrites} == {"copies_existing_question"}
    assert "copies an existing one" in rewrites[0].args["reason"] and rewrites[0].args["draft"]["stem"] == example.stem
    submitted = calls[-1].result
    assert submitted["rejected"][0]["issues"] == ["copies_existing_question"] and submitted["saved"] == 0
    assert submitted["rewrites"] == MAX_REWRITES


def test_mode1_an_item_off_the_topic_or_in_another_language_is_written_again(tmp_path: Path) -> None:
    logic = next(i for i in bank_items() if i.lang == "zh-CN" and "下雨" in i.stem)
    english = {
        "item_type": "short_answer",
        "stem": "What is the vertex of the quadratic function y = x^2 - 2x + 1?",
        "explanation": "y = (x - 1)^2, so the vertex is (1, 0).",
        "correct_keywords": ["(1, 0)"],
    }
    on = {
        "item_type": "short_answer",
        "stem": "二次函数 y = x² − 2x + 1 的顶点坐标是什么？",
        "correct_keywords": ["(1, 0)"],
        "explanation": "配方得 y = (x − 1)²，顶点为 (1, 0)。",
    }
    copied = {"item_type": "true_false", "stem": logic.stem, "correct_key": "True"}
    script = write_script(tmp_path / "script.json", generator=[submit(english, copied)], rewrite=on)

    async def scenario() -> tuple[Any, list[Any]]:
        host = host_for(tmp_path, script)
        try:
            run = await host.start("用中文给高中生出 2 道关于二次函数的题", principal=None)
            run = await host.runtime.settled(run.id)
            return run, host.store.list_tool_calls(run.id)
        finally:
            await host.aclose()

    run, calls = asyncio.run(scenario())
    problems = [c.args["problem"] for c in calls if c.tool_name == "rewrite_question"]
    assert problems[:2] == ["wrong_language", "copies_existing_question"]
    # the second rewrite is the first's item again: a copy of the saved one, so it is not saved twice
    assert calls[-1].result["saved"] == 1 and "已保存 1/2" in run.output


# ---- a model that gets stuck --------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("lang", "words"),
    [("en", "Generate 1 business question at difficulty 2"), ("zh-CN", "生成1道关于会计的商业类题目，难度2")],
)
def test_a_model_stuck_repeating_a_call_tells_the_person_why_in_their_language(
    tmp_path: Path, lang: str, words: str
) -> None:
    from consulta.i18n import t
    from consulta.runtime._tool_wrappers import MAX_REPEATS

    same = {"tool_calls": [{"name": "get_difficulty_keywords", "args": {"difficulty": 2, "category": "business"}}]}
    script = write_script(tmp_path / "script.json", generator=[same] * (MAX_REPEATS + 3))

    async def scenario() -> Any:
        host = host_for(tmp_path, script)
        try:
            run = await host.start(words, principal=None)
            return await host.runtime.settled(run.id)
        finally:
            await host.aclose()

    run = asyncio.run(scenario())
    assert run.status == RunStatus.failed
    # one line from the person's catalog, not the runtime's English sentence or an exception's name
    assert run.error == t("error.run.model_stuck", lang, tool="get_difficulty_keywords", repeats=MAX_REPEATS)
    assert "ModelStuck" not in run.error and "\n" not in run.error


def test_each_item_type_has_its_own_shape_in_the_submit_tools_schema_and_the_local_models_grammar(
    tmp_path: Path,
) -> None:
    from consulta.models._grammar import schema_to_gbnf
    from consulta.models._schema import bound_schema
    from consulta.runtime._agent import tool_schemas

    host = host_for(tmp_path, write_script(tmp_path / "script.json"))
    try:
        schemas = tool_schemas(host.agent)
    finally:
        asyncio.run(host.aclose())
    submit = next(s["function"]["parameters"] for s in schemas if s["function"]["name"] == "submit_questions")
    defs = submit["$defs"]
    shapes = {name: defs[name] for name in ("ChoiceDraftArg", "TrueFalseDraftArg", "ShortAnswerDraftArg")}
    assert shapes["ChoiceDraftArg"]["properties"]["choices"]["minItems"] == 4
    assert set(shapes["ChoiceDraftArg"]["required"]) == {"item_type", "stem", "choices", "correct_key"}
    assert shapes["TrueFalseDraftArg"]["properties"]["correct_key"]["enum"] == ["True", "False", "true", "false"]
    assert shapes["ShortAnswerDraftArg"]["properties"]["correct_keywords"]["maxItems"] == 3
    short = shapes["ShortAnswerDraftArg"]  # the answer said first, then its keywords (the grammar keeps this order)
    assert list(short["properties"]).index("explanation") < list(short["properties"]).index("correct_keywords")
    assert {"explanation", "correct_keywords"} <= set(short["required"])
    grammar = schema_to_gbnf(bound_schema(submit))
    assert grammar.count("multiple_choice") == 1 and "true_false" in grammar and "short_answer" in grammar


def test_mode1_saves_a_draft_whose_key_code_could_read_from_its_letter(tmp_path: Path) -> None:
    lettered = {
        "item_type": "multiple_choice",
        "stem": "Which SQL keyword removes duplicate rows from a result?",
        "choices": ["A. GROUP", "B. DISTINCT", "C. LIMIT", "D. OFFSET"],
        "correct_key": "B",
    }
    script = write_script(tmp_path / "script.json", generator=[submit(lettered)])

    calls = generation_calls(tmp_path, script)
    checked = next(c for c in calls if c.tool_name == "validate_question_quality")
    assert checked.args["correct_answer"] == "DISTINCT" and sorted(checked.args["choices"]) == [
        "DISTINCT",
        "GROUP",
        "LIMIT",
        "OFFSET",
    ]
    assert calls[-1].result["saved"] == 1 and calls[-1].result["items"][0]["answer_schema"]["correct_key"] == "DISTINCT"


def test_mode1_a_draft_repeating_one_saved_for_the_request_is_told_which_and_the_writer_sees_no_shipped_examples(
    tmp_path: Path,
) -> None:
    other = {
        "item_type": "multiple_choice",
        "stem": "Which SQL clause filters groups after aggregation?",
        "choices": ["HAVING", "WHERE", "ORDER BY", "LIMIT"],
        "correct_key": "HAVING",
    }
    script = write_script(tmp_path / "script.json", generator=[submit(SQL_MC, SQL_MC)], rewrite=other)
    calls = generation_calls(tmp_path, script, count=2)
    level = next(c for c in calls if c.tool_name == "get_difficulty_keywords")
    assert "example_questions" not in level.result  # shipped items: the writer copies them
    assert all("sql" in k.casefold() for k in level.result.get("keywords", []))  # the level's words of other topics
    assert level.result["difficulty"] == 5 and level.result["category"] == "technical"
    (rewrite,) = [c for c in calls if c.tool_name == "rewrite_question"]
    assert rewrite.args["problem"] == "copies_existing_question"
    assert f'already written for this request ("{SQL_MC["stem"]}")' in rewrite.args["reason"]
    submitted = calls[-1].result
    assert submitted["saved"] == 2 and [i["stem"] for i in submitted["items"]] == [SQL_MC["stem"], other["stem"]]


def test_the_writer_is_shown_the_levels_keywords_and_concepts_that_name_the_topic_only() -> None:
    from consulta.apps.quiz._agent import writer_view

    level = {
        "difficulty": 6,
        "category": "general",
        "keywords": ["幸存者偏差", "锚定效应", "物理模型"],
        "concepts": [{"name": "BATNA", "definition": "谈判破裂时的最佳行动。"}],
        "example_questions": [{"stem": "什么是锚定效应？", "answer_summary": "先入为主"}],
    }
    assert writer_view(level, ["物理"]) == {"difficulty": 6, "category": "general", "keywords": ["物理模型"]}
    assert writer_view(level, ["Ecology"]) == {"difficulty": 6, "category": "general"}
    assert writer_view(level, ["谈判"])["concepts"] == level["concepts"]


def test_mode1_the_model_reads_the_topic_only_after_codes_copy_and_language_checks_pass() -> None:
    from types import SimpleNamespace

    from consulta.apps.quiz._modes import CallRecorder, _check_and_save

    read: list[str] = []

    async def about_topic(*, text: str, topic: str, timeout: float | None = None) -> float:
        read.append(text)
        return 0.9

    tools = SimpleNamespace(engine=None, judge=SimpleNamespace(about_topic=about_topic))
    request = GenerateRequest(category="technical", difficulty=3, count=2, interests=["Cryptography"], lang="en")
    repeat = {"item_type": "true_false", "stem": "SHA-256 output is 256 bits long.", "correct_key": "True"}
    outcome, problem = asyncio.run(
        _check_and_save(
            repeat,
            request,
            tools=tools,
            round_id="r",
            record=CallRecorder(),
            topic="",
            written=[repeat["stem"]],  # type: ignore[arg-type]
        )
    )
    assert problem is not None and problem.code == "copies_existing_question" and read == []
    chinese = {**repeat, "stem": "SHA-256 的输出是 256 位。"}
    _, problem = asyncio.run(
        _check_and_save(chinese, request, tools=tools, round_id="r", record=CallRecorder(), topic="")
    )  # type: ignore[arg-type]
    assert problem is not None and problem.code == "wrong_language" and read == []
    asks = {**repeat, "stem": "How long is a SHA-256 output?"}
    _, problem = asyncio.run(_check_and_save(asks, request, tools=tools, round_id="r", record=CallRecorder(), topic=""))  # type: ignore[arg-type]
    assert problem is not None and problem.code == "true_false_asks" and read == [asks["stem"]]  # read, then refused
