"""Turns settled in code: triggers fire once per change, references resolve from the page, §6's replies verbatim,
the voice within 50 字."""

from __future__ import annotations

import pytest

from consulta.apps.advisor import LIMIT, Session, fit, spoken_length
from consulta.apps.advisor._turn import DescribeTask, Turn, check_model_words, settle

from .fakes import ADVISORS, FakeLookups, ranking_page


def turn(words: str, session: Session, lookups: FakeLookups, *, page: dict | None = None, lang: str = "zh-CN") -> Turn:
    return settle(words, session, lookups=lookups, lang=lang, page=page)


def tools(result: Turn) -> list[str]:
    assert result.output is not None
    return [c.tool for c in result.output.tool_calls]


def test_ranking_once_per_change_and_recommendation_with_a_preference() -> None:
    session, lookups = Session(), FakeLookups()
    first = turn("我想考北京大学计算机系", session, lookups)
    assert tools(first) == ["update_form", "update_ranking"]
    assert first.output.voice_response.startswith("好的，北京大学计算机科学与技术。正在为你筛选导师...")  # type: ignore[union-attr]
    again = turn("我想考北京大学计算机系", first.session, lookups)
    assert tools(again) == [] and lookups.calls["update_ranking"] == 1
    prefs = turn("我想做机器学习，希望导师温和一点", again.session, lookups)
    assert tools(prefs) == ["update_form", "recommend_advisors"]
    assert prefs.output.voice_response == "根据你的需求，我推荐张三教授，主要研究机器学习。"  # type: ignore[union-attr]
    params = prefs.output.tool_calls[1].params  # type: ignore[union-attr]
    assert params == {
        "school": "北京大学",
        "major": "计算机科学与技术",
        "preferences": {"research_direction": "机器学习", "personality": "温和"},
    }
    same = turn("导师温和一点", prefs.session, lookups)
    assert tools(same) == [] and lookups.calls["recommend_advisors"] == 1
    moved = turn("不对，是清华", same.session, lookups)
    assert tools(moved) == ["update_form", "update_ranking", "recommend_advisors"]


def test_missing_fields_are_asked_for() -> None:
    lookups = FakeLookups()
    assert turn("我想考研", Session(), lookups).output.voice_response == "好的，请问你想考哪个学校的哪个专业呢？"  # type: ignore[union-attr]  # §6.1
    assert turn("北大", Session(), lookups).output.voice_response == "好的，北京大学。你想考哪个专业呢？"  # type: ignore[union-attr]
    assert turn("计算机", Session(), lookups).output.voice_response == "计算机科学与技术专业，请问是哪个学校的呢？"  # type: ignore[union-attr]
    assert (
        turn("你好", Session(), lookups).output.voice_response
        == "你好！我是导师推荐助手。请告诉我你想考哪个学校的哪个专业？"
    )  # type: ignore[union-attr]
    assert lookups.calls == {}


def test_a_failed_look_up_says_so_verbatim_and_changes_nothing_on_the_page() -> None:
    lookups = FakeLookups()
    lookups.fail = True
    result = turn("我想考北京大学计算机系", Session(), lookups)
    assert result.output.model_dump() == {"voice_response": "抱歉，数据加载失败了，请稍后再试。", "tool_calls": []}  # type: ignore[union-attr]
    lookups.fail = False
    retried = turn("北大计算机", result.session, lookups)
    assert "update_ranking" in tools(retried)  # not marked as done by the failure


@pytest.mark.parametrize(
    ("words", "advisor_id"),
    [
        ("第一个导师怎么样？", "12345"),
        ("第二位", "12346"),
        ("第三位", "12347"),
        ("the third one?", "12347"),
        ("最后一个怎么样", "12347"),
    ],
)
def test_ordinals_resolve_from_the_page(words: str, advisor_id: str) -> None:
    result = turn(words, Session(), FakeLookups(), page=ranking_page(), lang="en" if words.isascii() else "zh-CN")
    assert result.session.memory.last_advisor["id"] == advisor_id  # type: ignore[index]
    if "?" in words or "？" in words or "怎么样" in words:  # a question about the advisor: described
        assert result.describe is not None
    else:  # a plain choice ("第二位"): the detail page opens
        assert tools(result) == ["get_advisor_detail"]
        assert result.session.page_context["current_page"] == "detail"  # type: ignore[index]


@pytest.mark.parametrize(("words", "lang"), [("第一个", "zh-CN"), ("the first one", "en")])
def test_a_choice_on_the_page_opens_the_detail(words: str, lang: str) -> None:
    result = turn(words, Session(), FakeLookups(), page=ranking_page(), lang=lang)
    assert tools(result) == ["get_advisor_detail"] and result.output.tool_calls[0].params["advisor_id"] == "12345"  # type: ignore[union-attr]
    assert result.session.page_context["selected_advisor"]["id"] == "12345"  # type: ignore[index]


def test_an_empty_list_gives_the_seeds_reply() -> None:
    result = turn("第一个导师怎么样？", Session(), FakeLookups(), page=ranking_page([]))
    assert result.output.model_dump() == {
        "voice_response": "目前还没有导师列表，请先告诉我你的学校和专业。",
        "tool_calls": [],
    }  # type: ignore[union-attr]


def test_pronouns_read_the_selected_advisor_and_open_details_or_reviews() -> None:
    lookups = FakeLookups()
    page = ranking_page(selected={"id": "12346", "name": "李四"})
    detail = turn("我想看看他的详细信息", Session(), lookups, page=page)
    assert [c.model_dump() for c in detail.output.tool_calls] == [
        {"tool": "get_advisor_detail", "params": {"advisor_id": "12346", "advisor_name": "李四"}}
    ]  # type: ignore[union-attr]
    reviews = turn("她的学生评价怎么样？", Session(), lookups, page=page)
    assert tools(reviews) == ["get_advisor_reviews"] and "4.2" in reviews.output.voice_response  # type: ignore[union-attr]


def test_a_pronoun_without_anyone_selected_asks_which() -> None:
    result = turn("这个导师怎么样", Session(), FakeLookups(), page=ranking_page())
    assert result.question is not None and result.question.slot == "advisor"
    assert [v for v, _ in result.question.options] == [a["id"] for a in ADVISORS]


def test_other_advisors_is_not_him() -> None:
    result = turn("有其他导师吗", Session(), FakeLookups(), page=ranking_page())
    assert result.question is None  # 其他 is not 他


def test_ambiguous_and_unknown_schools_are_questions_that_change_nothing() -> None:
    session = Session()
    asked = turn("交大计算机", session, FakeLookups())
    assert asked.question is not None and asked.question.slot == "school" and len(asked.question.options) == 4
    assert asked.session.user_form.school is None and asked.session.user_form.major is None
    unknown = turn("我想考北京邮电大学", Session(), FakeLookups())
    assert (
        unknown.question is not None
        and unknown.question.unknown
        and "北京大学" in [v for v, _ in unknown.question.options]
    )


def test_the_answer_fills_the_form() -> None:
    session = Session()
    answered = settle("交大计算机", session, lookups=FakeLookups(), lang="zh-CN", chosen=("school", "西安交通大学"))
    assert (answered.session.user_form.school, answered.session.user_form.major) == ("西安交通大学", "计算机科学与技术")


def test_new_conversation_clears() -> None:
    lookups = FakeLookups()
    filled = turn("我想考北京大学计算机系", Session(), lookups)
    cleared = turn("新对话", filled.session, lookups)
    assert cleared.session.user_form.school is None and cleared.session.memory.ranked_for is None


def test_english_replies() -> None:
    result = turn("I want to study CS at Tsinghua", Session(), FakeLookups(), lang="en")
    assert result.output.voice_response.startswith("OK, Tsinghua University, Computer Science and Technology.")  # type: ignore[union-attr]
    assert spoken_length(result.output.voice_response) <= LIMIT  # type: ignore[union-attr]


def test_voice_length_is_checked_and_fitted() -> None:
    long = "根据你的需求，我推荐张三教授，他主要研究机器学习，学生评价他很温和，发表了很多论文，而且经费非常充足，带出来的学生都很优秀，很多去了大厂和高校。"
    assert spoken_length(long) > LIMIT and spoken_length(fit(long)) <= LIMIT
    assert spoken_length("Peking University is great") == 4


def test_model_words_are_checked() -> None:
    task = DescribeTask(kind="describe", facts="name: 张三\noverall rating: 4.5 / 5", fallback="x", names=("张三",))
    check_model_words("张三教授评分4.5分，很受欢迎。", task, "zh-CN")
    for bad in (
        "张三教授发表了50篇论文。",
        "他很好。",
        "已经为你打开了张三的详情。",
        "Zhang San is great.",
        "张三" + "很好" * 30,
    ):
        with pytest.raises(ValueError):
            check_model_words(bad, task, "zh-CN")


def test_model_words_stay_within_the_facts_and_whole_sentences() -> None:
    from consulta.apps.advisor._turn import whole_sentences

    task = DescribeTask(kind="describe", facts="name: 张三\nresearch: 机器学习", fallback="x", names=("张三",))
    with pytest.raises(ValueError, match="research areas"):
        check_model_words("张三教授做机器学习和计算机视觉。", task, "zh-CN")
    assert whole_sentences("张三教授做机器学习。学生评价他很温") == "张三教授做机器学习。"
    assert whole_sentences("张三教授做机器学习") == "张三教授做机器学习"


def test_advisors_read_in_english_from_the_datas_english_fields() -> None:
    from consulta.apps.advisor._turn import Advisor

    row = {
        "id": "7",
        "name": "万妍",
        "name_en": "Wan Yan",
        "title": "讲师",
        "title_en": "Lecturer",
        "rating": 4.2,
        "research_directions": ["深度学习"],
        "research_directions_en": ["Deep learning"],
    }
    assert Advisor.read(row, "en") == Advisor("7", "Wan Yan", "Lecturer", 4.2, ("Deep learning",))
    assert Advisor.read(row, "zh-CN") == Advisor("7", "万妍", "讲师", 4.2, ("深度学习",))
    assert Advisor.read({"name": "x"}) is None


def test_who_are_you_is_answered_in_code() -> None:
    assert (
        turn("你是谁？", Session(), FakeLookups()).output.voice_response
        == "我是导师推荐助手。告诉我学校和专业，我帮你找导师。"
    )  # type: ignore[union-attr]
    assert turn("What can you do?", Session(), FakeLookups(), lang="en").output is not None


def test_a_second_ambiguous_name_after_an_answer_is_asked_in_words() -> None:
    answered = settle("交大的经济", Session(), lookups=FakeLookups(), lang="zh-CN", chosen=("school", "上海交通大学"))
    assert answered.question is None and answered.session.user_form.school == "上海交通大学"
    assert answered.output.voice_response.startswith("你说的“经济”是哪个专业？")  # type: ignore[union-attr]
    assert "应用经济学" in answered.output.voice_response  # type: ignore[union-attr]
    then = turn("应用经济学", answered.session, FakeLookups())
    assert [c.tool for c in then.output.tool_calls] == ["update_form", "update_ranking"]  # type: ignore[union-attr]


def test_an_empty_result_says_which_filter_is_empty() -> None:
    """No advisor of the major at the school: the turn says so (not "relax a preference"); advisors that exist but
    meet no preference: the turn says how many there are and that it is the preferences."""
    lookups = FakeLookups()
    lookups.empty_ranking = lookups.empty_recommendations = True
    none_at = turn("我想考北京大学计算机系，希望导师资金充足", Session(), lookups)
    assert none_at.output.voice_response.startswith("本站暂无北京大学计算机科学与技术专业的导师")  # type: ignore[union-attr]
    assert "放宽" not in none_at.output.voice_response  # type: ignore[union-attr]
    lookups = FakeLookups()
    lookups.empty_recommendations = True
    first = turn("我想考北京大学计算机系", Session(), lookups)
    prefs = turn("我想做机器学习，希望导师温和一点", first.session, lookups)
    assert "3 位导师都不完全符合" in prefs.output.voice_response  # type: ignore[union-attr]
    english = turn(
        "Peking University computer science, an advisor with good funding", Session(), FakeLookups(), lang="en"
    )
    assert "advisor" in english.output.voice_response.lower()  # type: ignore[union-attr]


@pytest.mark.parametrize("words", ["北京打学计算机的导师", "我想考北京达学的计算机"])
def test_a_school_typed_with_a_typo_of_daxue_is_kept_not_dropped(words: str) -> None:
    """北京打学 sounds like 北京大学 (a sure match, as 清化大学 is): the school is kept with the major."""
    result = turn(words, Session(), FakeLookups())
    assert result.session.user_form.school == "北京大学" and result.session.user_form.major == "计算机科学与技术"


def test_a_school_one_character_off_is_offered_first() -> None:
    result = turn("我想考华中科枝大学的计算机", Session(), FakeLookups())
    assert result.question is not None and result.question.slot == "school"
    assert result.question.options[0][0] == "华中科技大学"
