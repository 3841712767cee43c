"""A person's malformed answer is refused in their language: the errors carry a catalog key, not English words."""

from __future__ import annotations

import pytest

from consulta.asks import Question, validate_answers
from consulta.runtime import ConflictError, InvalidAnswerError

QUESTIONS = [
    Question(header="Cell Line", question="Which K562?", options=["K562-WT", "K562-dTAG"]),
    Question(header="Boxes", question="Which boxes?", options=["1", "3"], multiple=True),
]


@pytest.mark.parametrize(
    ("answers", "zh"),
    [
        ("K562-WT", "答案必须是列表"),
        (["K562-WT"], "应有 2 个答案"),
        (["K562-WT", ["7"]], "不在选项"),
        ([["a", "b"], ["1"]], "必须是文字"),
    ],
)
def test_a_bad_answer_is_refused_in_the_readers_language(answers: object, zh: str) -> None:
    with pytest.raises(InvalidAnswerError) as refused:
        validate_answers(QUESTIONS, answers)
    assert zh in refused.value.localized("zh-CN")
    assert refused.value.localized("en") == str(refused.value) and str(refused.value).isascii()


def test_an_error_without_a_key_keeps_its_message() -> None:
    assert ConflictError("plain words").localized("zh-CN") == "plain words"
