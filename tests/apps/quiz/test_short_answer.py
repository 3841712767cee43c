"""What code knows about a short answer (`_short_answer`): tokens by language, keywords with variants and numbers,
the reference's coverage, and the calibration's mapping to the seed's score."""

from __future__ import annotations

import pytest

from consulta.apps.quiz._short_answer import Calibration, default_calibration, evidence, keyword_found, tokens


def test_tokens_stem_english_and_read_chinese_by_characters() -> None:
    assert tokens("The scratches were tightened") == ["scratch", "tight"]
    # the forms of one word meet: a keyword `dissolves` is said by "must dissolve", `tighter` by "tightened"
    assert tokens("dissolve dissolves dissolved") == ["dissolv"] * 3
    assert tokens("tight tighter tighten tightened") == ["tight"] * 4
    assert tokens("high higher highest") == ["high"] * 3
    assert {"二次", "函数", "顶点", "坐标"} <= set(tokens("二次函数的顶点坐标"))
    assert "的" not in tokens("顶点的坐标")


@pytest.mark.parametrize(
    ("answer", "keyword", "found"),
    [
        ("If the penny scratches the nickel", "scratch", True),
        ("It is HARMFUL to the cell", "deleterious|harmful", True),  # a variant the item lists
        ("the pitch got higher", "higher pitch", True),  # every word, in any order
        ("The solid must dissolve.", "dissolves", True),  # another form of the word
        ("When the string is tightened", "tighter", True),
        ("x = 1/2", "0.5", True),  # numbers compared as numbers
        ("答案是 .50", "0.5", True),
        ("5", "50", False),
        ("15", "5", False),
        ("顶点的坐标是 (1, 2)", "顶点坐标", True),
        ("只写了坐标", "顶点坐标", False),
        ("atomicity", "durability", False),
        ("顶点是（2，−1）", "-1", True),  # full-width brackets and commas, a Unicode minus sign
        ("(2,1)", "2.1", False),  # a comma separates two numbers
        ("(2, 1)", "-1", False),
    ],
)
def test_keywords_found(answer: str, keyword: str, found: bool) -> None:
    assert keyword_found(answer, keyword) is found


def test_evidence_counts_keywords_and_what_the_reference_adds_to_the_question() -> None:
    seen = evidence(
        "the harder one makes a scratch on the other coin",
        ["harder", "scratch", "other"],
        reference="The harder coin will scratch the other.",
        stem="Which is harder, a penny or a nickel? She did a scratch test.",
    )
    assert seen.found == ("harder", "scratch", "other") and seen.keyword_share == 1.0
    assert seen.reference_share == 1.0  # coin and other: what the question does not already say
    blank = evidence("I don't know", ["harder", "scratch"], reference="The harder coin will scratch the other.")
    assert blank.keyword_share == 0.0 and blank.reference_share == 0.0 and blank.missing == ("harder", "scratch")


def test_evidence_sees_a_negation_the_reference_lacks_and_words_off_the_item() -> None:
    reference = "Terminal 1 and the positive terminal are separated by the gap"
    said = evidence("terminal 1 isn't separated from the positive terminal", ["separated"], reference=reference)
    assert said.keyword_share == 1.0 and said.negation_differs  # every word said, the meaning reversed
    assert not evidence("a gap separates them", ["separated"], reference=reference).negation_differs
    assert evidence("它不是顶点", ["顶点"], reference="顶点是(1,2)").negation_differs
    off = evidence("my dog likes the terminal", ["separated"], reference=reference, stem="Why 1.5 volts?")
    assert off.on_topic_share == pytest.approx(1 / 3)  # dog, like: not the item's words; terminal is
    features = Calibration.features(None, said, ())
    assert features["negation"] == 1.0 and features["on_topic"] == 1.0


def test_calibration_maps_the_threshold_to_80() -> None:
    mapping = Calibration(weights={"bias": 0.0, "model": 1.0}, threshold=0.6, source="test")
    assert mapping.score(0.6) == 80 and mapping.score(0.59) < 80 and mapping.score(1.0) == 100 and mapping.score(0) == 0
    seen = evidence("x", ["y"])
    sure, unsure = (
        {"correct": 0.9, "partial": 0.0, "incorrect": 0.1},
        {"correct": 0.1, "partial": 0.0, "incorrect": 0.9},
    )
    assert mapping.probability(sure, seen) == pytest.approx(0.9) and mapping.probability(unsure, seen) < 0.2


def test_the_shipped_calibration_is_fitted_and_sensible() -> None:
    shipped = default_calibration()
    assert "train split" in shipped.source and 0 < shipped.threshold < 1
    right = evidence("atomicity and isolation", ["atomicity", "isolation"])
    wrong = evidence("no idea", ["atomicity", "isolation"])
    yes, no = (
        {"correct": 0.95, "partial": 0.03, "incorrect": 0.02},
        {"correct": 0.02, "partial": 0.03, "incorrect": 0.95},
    )
    assert shipped.score(shipped.probability(yes, right)) >= 80 > shipped.score(shipped.probability(no, wrong))


def test_calibration_reads_the_second_reading_and_does_without_it() -> None:
    mapping = Calibration(weights={"bias": 0.0, "same": 1.0}, threshold=0.5, source="test")
    seen = evidence("x", ["y"])
    verdict = {"correct": 0.1, "partial": 0.0, "incorrect": 0.9}
    assert mapping.probability({**verdict, "same": 0.8}, seen) == pytest.approx(0.8)
    # a verdict read alone (no time for the second reading, or a model without probabilities) stands for both
    assert mapping.probability(verdict, seen) == pytest.approx(0.1)


def test_calibration_names_the_readings_it_weighs_and_a_missing_one_stands_as_the_labels() -> None:
    mapping = Calibration(weights={"bias": 0.0, "model": 0.0, "false": -1.0, "same": 0.0}, threshold=0.5, source="t")
    assert mapping.readings == ("false",)  # a zero weight is not read
    seen = evidence("x", ["y"])
    verdict = {"correct": 0.2, "partial": 0.0, "incorrect": 0.8}
    assert mapping.probability({**verdict, "false": 0.9}, seen) == pytest.approx(0.1)
    assert mapping.probability(verdict, seen) == pytest.approx(0.8)  # -1 × logit(0.2)


def test_a_reference_answer_is_cut_into_the_ideas_an_answer_must_say() -> None:
    from consulta.apps.quiz._short_answer import ideas_of

    assert ideas_of("Terminals 1 and 6 are separated by the gap") == ["Terminals 1 and 6 are separated by the gap"]
    assert ideas_of("When the string was tighter, the pitch was higher.") == [
        "When the string was tighter",
        "the pitch was higher",
    ]
    assert ideas_of("The motor will continue to run because the motor still has a pathway to the D-cell") == [
        "The motor will continue to run",
        "because the motor still has a pathway to the D-cell",
    ]
    assert ideas_of("弦拧得越紧，音调越高。") == ["弦拧得越紧", "音调越高"]
    assert ideas_of("At noon, shadows are short.") == ["At noon, shadows are short"]  # 2 words: no idea alone
    many = "One idea here. Two idea here. Three idea here. Four idea here. Five idea here."
    assert ideas_of(many) == ["One idea here, Two idea here", "Three idea here", "Four idea here, Five idea here"]
    assert len(ideas_of(many, limit=2)) == 2
    assert ideas_of("") == [] and ideas_of(" . ") == []
