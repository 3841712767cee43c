"""The seed's form in code: extraction in both languages, corrections replace, empty turns never erase, status
derived."""

from __future__ import annotations

from consulta.apps.advisor import Ambiguous, UserForm, extract, merge, status
from consulta.apps.advisor._form import asks_new_conversation, form_changes


def fill(*messages: str) -> UserForm:
    form = UserForm()
    for message in messages:
        form = merge(form, extract(message))
    return form


def test_the_seeds_first_turns() -> None:
    form = fill("我想考北京大学计算机系")
    assert (form.school, form.major) == ("北京大学", "计算机科学与技术")
    assert status(form).model_dump() == {"is_complete": True, "missing_required": [], "filled_optional": []}
    form = merge(form, extract("我想做机器学习，希望导师温和一点"))
    assert form.research_direction == "机器学习" and form.preferences.personality == "温和"
    assert status(form).filled_optional == ["research_direction", "personality"]


def test_status_names_what_is_missing() -> None:
    assert status(UserForm()).missing_required == ["school", "major"]
    assert status(fill("我想考清华")).missing_required == ["major"]


def test_a_correction_replaces_and_an_empty_turn_erases_nothing() -> None:
    form = fill("我想考北大计算机", "不对，是清华")
    assert form.school == "清华大学" and form.major == "计算机科学与技术"
    assert fill("I want Peking University, computer science", "no, Tsinghua").school == "清华大学"
    before = fill("我想考北大计算机", "导师温和一点")
    assert merge(before, extract("嗯嗯好的")) == before
    assert merge(before, extract("实验室环境好一点")) == before  # 环境 said in passing is not a major


def test_a_name_taken_back_empties_its_slot() -> None:
    form = fill("我想考北大计算机", "我不考北大了")
    assert form.school is None and form.major == "计算机科学与技术"


def test_two_schools_are_a_question() -> None:
    said = extract("北大还是清华？").school
    assert isinstance(said, Ambiguous) and set(said.candidates) == {"北京大学", "清华大学"}
    assert extract("不是北大，是清华").school.name == "清华大学"  # type: ignore[union-attr]


def test_preferences_in_both_languages() -> None:
    assert extract("不要太严格的导师").preferences == {"personality": "温和"}
    assert extract("我喜欢工程型、经费充足的导师").preferences == {"research_style": "工程型", "funding": "充足"}
    assert extract("a gentle, well-funded advisor in industry").preferences == {
        "personality": "温和",
        "research_style": "产业型",
        "funding": "充足",
    }
    assert extract("what kind of advisors are there?").preferences == {}
    assert extract("I'd like to work on computer vision").research_direction == "计算机视觉"
    assert extract("我想做量子信息方向").research_direction == "量子信息"


def test_update_form_params_are_the_changes_nested_as_the_seed_nests_them() -> None:
    before = fill("我想考北大计算机")
    after = merge(before, extract("想做机器学习，导师温和"))
    assert form_changes(before, after) == {"research_direction": "机器学习", "preferences": {"personality": "温和"}}


def test_new_conversation() -> None:
    assert asks_new_conversation("新对话") and asks_new_conversation("let's start over")
    assert not asks_new_conversation("我想考北大")
