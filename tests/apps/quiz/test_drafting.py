"""Mode 1's drafts before validation: code fixes the form (never what is asked or which option is right), names what
it sees wrong as one reason, and words the rewrite request."""

from __future__ import annotations

from typing import Any

import pytest

from consulta.apps.quiz._drafting import first_problem, key_of, reason_of, rewrite_prompt, tidy

MC = {
    "item_type": "multiple_choice",
    "stem": "Which  gas do plants take in for photosynthesis? ",
    "choices": ["A. Carbon dioxide", "B. Oxygen", "C. Nitrogen", "D. Helium"],
    "correct_key": "A",
    "correct_keywords": None,
    "explanation": " It is fixed into sugar. ",
}


def mc(**changes: Any) -> dict[str, Any]:
    return {**MC, **changes}


@pytest.mark.parametrize(
    "key", ["A", "(a)", "Option A", "A. Carbon dioxide", "carbon  dioxide", "Carbon dioxide.", "carbon dioxide gas"]
)
def test_a_key_given_by_letter_or_spelled_otherwise_becomes_the_options_text(key: str) -> None:
    tidied = tidy(mc(correct_key=key))
    assert tidied["correct_key"] == "Carbon dioxide" and "Carbon dioxide" in tidied["choices"]
    assert sorted(tidied["choices"]) == ["Carbon dioxide", "Helium", "Nitrogen", "Oxygen"]  # labels gone
    assert tidied["stem"] == "Which gas do plants take in for photosynthesis?" and tidied["explanation"] == (
        "It is fixed into sugar."
    )


def test_a_key_that_names_no_option_or_several_is_left_for_validation_to_refuse() -> None:
    assert key_of("Argon", ["Oxygen", "Nitrogen", "Helium", "Neon"]) is None
    assert key_of("gen", ["Oxygen", "Nitrogen", "Helium", "Neon"]) is None  # in two options
    tidied = tidy(mc(correct_key="Argon"))
    assert tidied["correct_key"] == "Argon" and tidied["choices"] == ["Carbon dioxide", "Oxygen", "Nitrogen", "Helium"]


def test_the_key_moves_to_a_spot_drawn_from_the_stem_and_numbers_go_in_order() -> None:
    spots = {
        tidy(mc(stem=f"Which gas do plants take in, case {n}?"))["choices"].index("Carbon dioxide") for n in range(40)
    }
    assert spots == {0, 1, 2, 3}  # keys spread over A-D whatever the model's habit
    again = tidy(mc())
    assert again == tidy(mc()) and tidy(again) == again  # the same item, the same order; tidying twice changes nothing
    numbers = tidy(mc(stem="How many chambers has a human heart?", choices=["4", "2", "3", "6"], correct_key="4"))
    assert numbers["choices"] == ["2", "3", "4", "6"] and numbers["correct_key"] == "4"


def test_three_distractors_and_the_key_written_apart_make_four_options() -> None:
    tidied = tidy(mc(choices=["Oxygen", "Nitrogen", "Helium"], correct_key="Carbon dioxide"))
    assert sorted(tidied["choices"]) == ["Carbon dioxide", "Helium", "Nitrogen", "Oxygen"]
    assert tidied["correct_key"] == "Carbon dioxide"


@pytest.mark.parametrize(("key", "want"), [("正确", "True"), ("yes", "True"), ("错", "False"), ("FALSE", "False")])
def test_a_true_false_key_in_any_spelling_becomes_true_or_false(key: str, want: str) -> None:
    tidied = tidy(
        {"item_type": "true_false", "stem": "光合作用释放氧气。", "correct_key": key, "choices": ["对", "错"]}
    )
    assert tidied["correct_key"] == want and tidied["choices"] is None
    two = tidy(mc(choices=["True", "False"], correct_key="False"))
    assert two["item_type"] == "true_false" and two["correct_key"] == "False"


def test_short_answer_keywords_are_trimmed_and_unique_and_a_key_alone_becomes_one() -> None:
    sa = {"item_type": "short_answer", "stem": "What pigment makes leaves green?", "choices": ["x"]}
    assert tidy({**sa, "correct_keywords": [" chlorophyll ", "Chlorophyll", ""]})["correct_keywords"] == ["Chlorophyll"]
    alone = tidy({**sa, "correct_keywords": None, "correct_key": "chlorophyll"})
    assert alone["correct_keywords"] == ["chlorophyll"] and alone["correct_key"] is None and alone["choices"] is None


def test_the_first_problem_code_sees_is_named_with_one_reason() -> None:
    good = tidy(mc())
    assert first_problem(good, lang="en", topic="Photosynthesis", copied=False, on_topic=True) is None
    copy = first_problem(good, lang="en", topic="Photosynthesis", copied=True, on_topic=False)
    assert copy is not None and copy.code == "copies_existing_question" and "Photosynthesis" in copy.reason
    chinese = first_problem(good, lang="zh-CN", topic="光合作用", copied=False, on_topic=True)
    assert chinese is not None and chinese.code == "wrong_language" and "Chinese" in chinese.reason
    english = tidy(mc(stem="植物进行光合作用时吸收哪种气体？"))
    assert first_problem(english, lang="en", topic="Photosynthesis", copied=False, on_topic=True).code == (  # type: ignore[union-attr]
        "wrong_language"
    )
    off = first_problem(good, lang="en", topic="Volcanoes", copied=False, on_topic=False)
    assert off is not None and off.code == "off_topic"
    repeated = tidy(mc(choices=["Oxygen", "Oxygen", "Helium", "Carbon dioxide"], correct_key="Carbon dioxide"))
    rule = first_problem(repeated, lang="zh-CN", topic="光合作用", copied=False, on_topic=True)
    assert rule is not None and rule.code == "wrong_language"  # the language first
    rule = first_problem(repeated, lang="en", topic="Photosynthesis", copied=False, on_topic=True)
    assert rule is not None and rule.code == "duplicate_choices" and "Oxygen" in rule.reason and rule.issues


def test_a_true_false_item_that_asks_a_question_goes_back_to_be_written_as_a_statement() -> None:
    asked = tidy(
        {"item_type": "true_false", "stem": "在软件测试中，哪个阶段是测试用例设计阶段？", "correct_key": "True"}
    )
    problem = first_problem(asked, lang="zh-CN", topic="软件测试", copied=False, on_topic=True)
    assert problem is not None and problem.code == "true_false_asks" and "statement" in problem.reason
    yes_no = tidy({"item_type": "true_false", "stem": "Does chlorophyll absorb green light?", "correct_key": "False"})
    assert first_problem(yes_no, lang="en", topic="Photosynthesis", copied=False, on_topic=True) is not None
    which = tidy({"item_type": "true_false", "stem": "哪个函数的图像是抛物线吗", "correct_key": "True"})
    assert first_problem(which, lang="zh-CN", topic="二次函数", copied=False, on_topic=True) is not None
    for stem in ("Chlorophyll absorbs mostly green light.", "二次函数 y = x² 的图像是抛物线。"):
        stated = tidy({"item_type": "true_false", "stem": stem, "correct_key": "False"})
        assert (
            first_problem(stated, lang="zh-CN" if "二" in stem else "en", topic="x", copied=False, on_topic=True)
            is None
        )
    question = tidy(
        {"item_type": "short_answer", "stem": "Which pigment absorbs light?", "correct_keywords": ["chlorophyll"]}
    )
    assert first_problem(question, lang="en", topic="Photosynthesis", copied=False, on_topic=True) is None


@pytest.mark.parametrize(
    ("asked", "stated"),
    [
        (
            "Is it true that in negotiations, it's important to be flexible?",
            "In negotiations, it's important to be flexible.",
        ),
        ("True or false: light travels faster than sound.", "Light travels faster than sound."),
        ("Is the following statement true: water boils at 90 °C at sea level?", "Water boils at 90 °C at sea level."),
        ("Light is a wave, right?", "Light is a wave."),
        ("光是电磁波吗？", "光是电磁波。"),
        ("二次函数的图像是抛物线吗", "二次函数的图像是抛物线。"),
        ("水在100度沸腾，对吗？", "水在100度沸腾。"),
        ("增值税是否是消费税？", "增值税是消费税。"),
        ("光速是否大于声速？", "光速大于声速。"),
        ("光是不是电磁波？", "光是电磁波。"),
    ],
)
def test_a_true_false_claim_asked_as_a_yes_no_question_becomes_the_statement_with_its_key(
    asked: str, stated: str
) -> None:
    tidied = tidy({"item_type": "true_false", "stem": asked, "correct_key": "no"})
    assert tidied["stem"] == stated and tidied["correct_key"] == "False"
    lang = "zh-CN" if "光" in asked or "水" in asked or "函数" in asked or "税" in asked else "en"
    assert first_problem(tidied, lang=lang, topic="x", copied=False, on_topic=True) is None


@pytest.mark.parametrize(
    "asked",
    [
        "Does chlorophyll absorb green light?",
        "唐朝历史上，哪位皇帝是第一个皇帝？",
        "什么是光学？",
        "哪个阶段是设计阶段吗？",
    ],
)
def test_a_true_false_stem_that_asks_something_else_is_left_as_written(asked: str) -> None:
    assert tidy({"item_type": "true_false", "stem": asked, "correct_key": "True"})["stem"] == asked
    mc_stem = tidy(mc(stem="Is it true that plants take in oxygen?"))["stem"]
    assert mc_stem == "Is it true that plants take in oxygen?"  # only true/false stems are claims


def test_short_answer_keywords_the_question_says_stay_for_they_may_be_the_answer() -> None:
    rome = {"item_type": "short_answer", "stem": "What was the capital of Ancient Rome?"}
    assert tidy({**rome, "correct_keywords": ["Rome", "city"]})["correct_keywords"] == ["Rome", "city"]
    said = tidy({**rome, "correct_keywords": ["capital", "Ancient Rome"]})
    problem = first_problem(said, lang="en", topic="Ancient Rome", copied=False, on_topic=True)
    assert problem is not None and problem.code == "keywords_in_stem"


def test_a_multiple_choice_stem_that_says_its_key_and_no_other_option_goes_back() -> None:
    said = tidy(
        mc(stem='天文学中，"恒星"是什么类型的天体？', choices=["行星", "卫星", "彗星", "恒星"], correct_key="恒星")
    )
    problem = first_problem(said, lang="zh-CN", topic="天文学", copied=False, on_topic=True)
    assert problem is not None and problem.code == "key_in_stem" and "恒星" in problem.reason
    listed = tidy(mc(stem="Which is prime: 4, 6, 7 or 9?", choices=["4", "6", "7", "9"], correct_key="7"))
    assert first_problem(listed, lang="en", topic="primes", copied=False, on_topic=True) is None  # all are said
    assert first_problem(tidy(mc()), lang="en", topic="Photosynthesis", copied=False, on_topic=True) is None
    part = tidy(
        mc(stem="Which SQL keyword joins two tables?", choices=["JOIN", "UNION", "MERGE", "LINK"], correct_key="JOIN")
    )
    assert first_problem(part, lang="en", topic="SQL", copied=False, on_topic=True) is None  # "joins": another word
    named = tidy(
        mc(stem="Is the Calvin cycle part of photosynthesis?", choices=["Calvin cycle", "Krebs", "No", "Maybe"])
    )
    assert first_problem({**named, "correct_key": "Calvin cycle"}, lang="en", topic="x", copied=False, on_topic=True)


def test_all_of_the_above_goes_back_in_mode_1_as_the_writers_instructions_forbid_it() -> None:
    above = tidy(
        mc(
            choices=["Reduced costs", "More security", "All of the above", "Scalability"],
            correct_key="All of the above",
        )
    )
    problem = first_problem(above, lang="en", topic="Photosynthesis", copied=False, on_topic=True)
    assert problem is not None and problem.code == "all_none_of_the_above" and "All of the above" in problem.reason


def test_tool_4s_verdict_gives_one_reason_the_key_the_blind_check_disputes_first() -> None:
    blind = {"blind_check": {"answer": "Oxygen", "agrees": False}, "failed_rules": ["vague_terms"], "issues": ["x"]}
    assert '"Oxygen"' in reason_of(blind) and "exactly one option" in reason_of(blind)
    assert reason_of({"failed_rules": ["vague_terms"], "issues": ["Vague frequency terms (often)."]}).startswith(
        "Vague"
    )
    assert reason_of({"reasons": ["", "Two options are right."]}) == "Two options are right."
    assert reason_of({"final_score": 0.5}) and reason_of(None)


def test_the_rewrite_prompt_gives_the_task_the_draft_and_the_problem() -> None:
    prompt = rewrite_prompt(
        tidy(mc()), "Options repeat.", topic="光合作用", lang="zh-CN", difficulty=3, category="general"
    )
    lines = prompt.splitlines()
    assert (
        lines[0].startswith("Task: one multiple-choice question") and "光合作用" in lines[0] and "Chinese" in lines[0]
    )
    assert lines[1].startswith("Draft: {") and '"correct_keywords"' not in lines[1]
    assert lines[2] == "Problem: Options repeat."


def test_a_copy_is_written_again_from_the_task_without_the_copied_draft() -> None:
    prompt = rewrite_prompt(
        tidy(mc()), "This copies an existing one.", topic="SQL", lang="en", difficulty=3, category="technical",
        show_draft=False,
    )  # fmt: skip
    lines = prompt.splitlines()
    assert lines[0].startswith("Task: one multiple-choice question") and "about SQL" in lines[0] and len(lines) == 3
    assert "Draft" not in prompt and MC["stem"] not in prompt and lines[1] == "Problem: This copies an existing one."


def test_a_draft_that_does_not_say_the_topics_words_is_on_topic_when_the_model_reads_it_so() -> None:
    import asyncio
    from types import SimpleNamespace

    from consulta.apps.quiz._judge import ModelJudge
    from consulta.apps.quiz._modes import _about_topic

    class Reader:
        """A test double of the embedded model's label reading: yes when the question names SHA-256."""

        prompts: list[str] = []

        async def label_probabilities(self, *, system: str, prompt: str, labels: Any) -> dict[str, float]:
            self.prompts.append(prompt)
            yes = 0.9 if "SHA-256" in prompt else 0.2
            return {"yes": yes, "no": 1 - yes, "Yes": 0.0, "No": 0.0}

    tools = SimpleNamespace(judge=ModelJudge(Reader()))  # type: ignore[arg-type]
    sha = {"stem": "What is the purpose of the SHA-256 hashing algorithm?", "choices": None}
    gil = {"stem": "What does the GIL do in CPython?", "choices": None}
    assert asyncio.run(_about_topic(tools, sha, "Cryptography")) is True  # type: ignore[arg-type]
    assert asyncio.run(_about_topic(tools, gil, "Cryptography")) is False  # type: ignore[arg-type]
    assert Reader.prompts[0].startswith("Topic: Cryptography\nQuestion: What is the purpose of the SHA-256")
    without = SimpleNamespace(judge=ModelJudge(object()))  # type: ignore[arg-type]  # no probabilities: words decide
    assert asyncio.run(_about_topic(without, sha, "Cryptography")) is False  # type: ignore[arg-type]
