"""The name normaliser: exact names and aliases, pinyin and initials, fuzzy with a cut-off; an ambiguous or weak
match is never taken silently; names found inside free text in both languages."""

from __future__ import annotations

import pytest

from consulta.apps.advisor import Ambiguous, Match, Unknown, majors, schools


@pytest.mark.parametrize(
    ("said", "name", "how"),
    [
        ("北京大学", "北京大学", "exact"),
        ("北大", "北京大学", "alias"),
        ("PKU", "北京大学", "alias"),
        ("pku", "北京大学", "alias"),
        ("Peking University", "北京大学", "exact"),
        ("beida", "北京大学", "pinyin"),
        ("bjdx", "北京大学", "pinyin"),
        ("qinghua", "清华大学", "pinyin"),
        ("清化大学", "清华大学", "pinyin"),  # a homophone typed with a pinyin keyboard
        ("中科大", "中国科学技术大学", "alias"),
        ("pekng", "北京大学", "fuzzy"),
    ],
)
def test_sure_names_match(said: str, name: str, how: str) -> None:
    result = schools().resolve(said)
    assert result == Match(name, said, how)  # type: ignore[arg-type]


@pytest.mark.parametrize("said", ["交大", "华师", "东大", "中大", "西大", "山大", "jiaoda", "师大"])
def test_ambiguous_aliases_are_questions(said: str) -> None:
    result = schools().resolve(said)
    assert isinstance(result, Ambiguous) and len(result.candidates) >= 2


@pytest.mark.parametrize(
    ("said", "meant"), [("华中科枝大学", "华中科技大学"), ("北京航天大学", "北京航空航天大学"), ("fudna", "复旦大学")]
)
def test_a_weak_match_is_asked_not_taken(said: str, meant: str) -> None:
    result = schools().resolve(said)
    assert isinstance(result, Ambiguous) and meant in result.candidates


def test_a_school_not_in_the_data_is_unknown_with_the_nearest() -> None:
    result = schools().resolve("北京邮电大学")
    assert isinstance(result, Unknown) and "北京大学" in result.nearest
    assert schools().resolve("   ") == Unknown((), "")


def test_majors() -> None:
    assert majors().resolve("计算机") == Match("计算机科学与技术", "计算机", "alias")
    assert majors().resolve("jisuanji").name == "计算机科学与技术"  # type: ignore[union-attr]
    assert isinstance(majors().resolve("经济"), Ambiguous)


@pytest.mark.parametrize(
    ("text", "school", "major"),
    [
        ("我想考北京大学计算机系", "北京大学", "计算机科学与技术"),
        ("I want to study CS at Peking University", "北京大学", "计算机科学与技术"),
        ("beida jisuanji", "北京大学", "计算机科学与技术"),
        ("我想考中山大学", "中山大学", None),  # not 山大 inside it
        ("东南大学的软件工程", "东南大学", "软件工程"),  # not 南大 inside it
        ("I want to hit the books at Tsinghua", "清华大学", None),  # "hit" is a word, HIT a school
    ],
)
def test_names_in_free_text(text: str, school: str, major: str | None) -> None:
    taken: list[tuple[int, int]] = []
    found_schools = schools().find(text, taken=taken)
    found_majors = majors().find(text, taken=taken)
    assert [f.result.name for f in found_schools] == [school]  # type: ignore[union-attr]
    assert [f.result.name for f in found_majors] == ([major] if major else [])  # type: ignore[union-attr]


def test_city_narrows_an_ambiguous_name() -> None:
    books = schools()
    assert books.narrow(books.resolve("交大"), "西安的交大") == Match("西安交通大学", "交大", "alias")
    assert isinstance(books.narrow(books.resolve("交大"), "交大"), Ambiguous)
