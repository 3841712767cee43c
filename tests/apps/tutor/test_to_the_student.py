"""The tutor's assistant speaks to the student (issue 26): a reply about "the student" in the third person ("The
student can start task_2_1 once they have …") is replaced at once by the same reply in the second person (no model
request for a rewrite); a reply in the second person passes."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from pydantic_ai.messages import ModelMessage, ModelResponse, TextPart
from pydantic_ai.models.function import AgentInfo, FunctionModel

from consulta.apps import tutor
from consulta.i18n import t
from consulta.runtime import ReplyRefused, RunStatus, TurnFacts

from ._assistant import ask_assistant
from .test_claims import READY, assistant


def replied(tmp_path: Path, run_once: Any, reply: str) -> tuple[Any, Any, str]:
    """One turn of the assistant whose model says `reply` to a student asking whether they can start, in the
    reply's language: (the run, its store, the language)."""

    def model(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        return ModelResponse(parts=[TextPart(reply)])

    zh = any("\u4e00" <= c <= "\u9fff" for c in reply)
    student, lang = ("我可以开始了吗？", "zh-CN") if zh else ("Can I start?", "en")
    store, agent = assistant(tmp_path, READY)
    run = ask_assistant(run_once, store, agent, READY, student=student, lang=lang, model=FunctionModel(model))
    return run, store, lang


@pytest.mark.parametrize(
    ("reply", "shown"),
    [
        (
            "The student can start task_2_1 once they have a dataset with 100 rows.",
            "You can start task_2_1 once you have a dataset with 100 rows.",
        ),
        (
            "The student's file needs 100 rows. The student needs more rows.",
            "Your file needs 100 rows. You need more rows.",
        ),
        ("该学生需要至少 100 行数据。", "你需要至少 100 行数据。"),
        # seen on the embedded model (eval_tutor, wine_error_zh)
        ("现在需要提醒学生检查列名。你先看看 df.columns？", "现在需要提醒你检查列名。你先看看 df.columns？"),
        # sixth held-out set (second look)
        (
            "如果学生有任何问题，请检查代码和数据。你想先看哪一列？",
            "如果你有任何问题，请检查代码和数据。你想先看哪一列？",
        ),
        # twelfth held-out set, through the page
        (
            "学生在 task_2_2 中正确地计算了平均年龄。你想先看哪一列？",
            "你在 task_2_2 中正确地计算了平均年龄。你想先看哪一列？",
        ),
    ],
)
def test_a_reply_about_the_student_becomes_one_to_them(tmp_path: Path, run_once, reply: str, shown: str) -> None:  # noqa: ANN001
    run, store, _ = replied(tmp_path, run_once, reply)
    assert run.status == RunStatus.finished and run.output == shown
    # said to the student at once: one check, its correction shown, no rewrite asked of the model
    checked = [e.data for e in store.list_events(run.id) if e.type == "reply_checked"]
    assert [(c["check"], c["replaced"]) for c in checked] == [("tutor", True)]


@pytest.mark.parametrize(
    "reply",
    [
        # fourteenth set, through the page: the model's notes said back to the student
        "好的，我明白了。你的笔记中提到的文件和列信息是正确的，但它们是针对你，而不是学生。请向学生解释这些信息，并告诉他们接下来应该做什么。",
        "Got it. The notes are for you, not the student: explain them to the student and say what to do next.",
    ],
)
def test_the_models_notes_said_back_are_never_shown(tmp_path: Path, run_once, reply: str) -> None:  # noqa: ANN001
    run, _, lang = replied(tmp_path, run_once, reply)
    assert run.status == RunStatus.finished
    assert run.output == tutor.packet_reply(tutor.InstructionPacket.model_validate(READY), lang)


def test_guidance_said_back_in_chinese_is_written_again_then_codes(tmp_path: Path, run_once) -> None:  # noqa: ANN001
    """Seventh set (zh_odd_fullwidth): "…告诉你这个文件缺少哪些信息，然后要求他们提供一个符合任务要求的数据集" — the
    assistant's guidance said back in Chinese, the student as "them": not shown as it is, the model writes again, and
    the same again is code's reply."""
    reply = "现在，不要开始这个文件的分析，告诉你这个文件缺少哪些信息，然后要求他们提供一个符合任务要求的数据集。"

    def model(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        return ModelResponse(parts=[TextPart(reply)])

    store, agent = assistant(tmp_path, READY)
    run = ask_assistant(
        run_once, store, agent, READY, student="我可以开始了吗？", lang="zh-CN", model=FunctionModel(model)
    )
    assert run.status == RunStatus.finished and "他们" not in (run.output or "")
    checked = [(e.data["check"], e.data["replaced"]) for e in store.list_events(run.id) if e.type == "reply_checked"]
    assert checked == [("tutor", False), ("tutor", True)]
    assert run.output == tutor.packet_reply(tutor.InstructionPacket.model_validate(READY), "zh-CN")


def test_a_reply_to_the_student_passes(tmp_path: Path, run_once) -> None:  # noqa: ANN001
    reply = "You can start task_2_1: your file has the columns it needs. Which column will you look at first?"

    def model(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        return ModelResponse(parts=[TextPart(reply)])

    store, agent = assistant(tmp_path, READY)
    run = ask_assistant(run_once, store, agent, READY, student="Can I start?", lang="en", model=FunctionModel(model))
    assert run.output == reply


@pytest.mark.parametrize("lang", ["en", "zh-CN"])
def test_a_number_the_notes_never_gave_is_replaced_by_the_packet_said_by_code(
    tmp_path: Path,
    run_once,  # noqa: ANN001
    lang: str,
) -> None:
    """Issue 26: a fact check for every agent. The notes say nothing of a row count: "your file has 25 rows" is
    written again, then replaced by code's statement of the packet, in the student's language."""

    said = (
        "你的文件有 25 行，够做 task_2_1。你打算怎么做？"
        if lang == "zh-CN"
        else "Your file has 25 rows, enough for task_2_1. What will you try?"
    )

    def model(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        return ModelResponse(parts=[TextPart(said)])

    student = "我可以开始了吗？" if lang == "zh-CN" else "Can I start?"
    store, agent = assistant(tmp_path, READY)
    run = ask_assistant(run_once, store, agent, READY, student=student, lang=lang, model=FunctionModel(model))
    packet = tutor.InstructionPacket.model_validate(READY)
    assert run.status == RunStatus.finished and run.output == tutor.packet_reply(packet, lang)
    assert "25" not in run.output and "task_2_1" in run.output
    assert [e.data["check"] for e in store.list_events(run.id) if e.type == "reply_checked"] == ["facts", "facts"]


def test_code_a_reply_names_is_not_a_fact_of_the_data(tmp_path: Path, run_once) -> None:  # noqa: ANN001
    reply = "You can start task_2_1. Look at `df.head(5)` and df.describe() first. Which column will you check?"

    def model(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        return ModelResponse(parts=[TextPart(reply)])

    store, agent = assistant(tmp_path, READY)
    run = ask_assistant(run_once, store, agent, READY, student="Can I start?", lang="en", model=FunctionModel(model))
    assert run.output == reply


@pytest.mark.parametrize(
    ("student", "reply", "lang"),
    [
        ("KeyError 是什么意思？", "KeyError 是什么意思", "zh-CN"),
        ("What does KeyError mean?", "what does keyerror mean", "en"),
        ("hela还有吗", "还有 Hela 吗？", "zh-CN"),
    ],
)
def test_a_reply_that_says_the_students_words_back_is_replaced(
    tmp_path: Path,
    run_once,  # noqa: ANN001
    student: str,
    reply: str,
    lang: str,
) -> None:
    """Seen on the embedded model (tutor eval, key_error_zh): the reply was the student's question. It is written
    again with the reason, then replaced by the packet said by code in the student's language."""

    def model(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        return ModelResponse(parts=[TextPart(reply)])

    store, agent = assistant(tmp_path, READY, student=student)
    run = ask_assistant(run_once, store, agent, READY, student=student, lang=lang, model=FunctionModel(model))
    packet = tutor.InstructionPacket.model_validate(READY)
    assert run.status == RunStatus.finished and run.output == tutor.packet_reply(packet, lang)
    assert [e.data["check"] for e in store.list_events(run.id) if e.type == "reply_checked"] == ["tutor", "tutor"]


def test_a_reply_that_quotes_the_student_and_answers_passes(tmp_path: Path, run_once) -> None:  # noqa: ANN001
    student = "What does KeyError mean?"
    reply = "What does KeyError mean? It means the column name you used is not in your table. Which names does it have?"

    def model(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        return ModelResponse(parts=[TextPart(reply)])

    store, agent = assistant(tmp_path, READY, student=student)
    run = ask_assistant(run_once, store, agent, READY, student=student, lang="en", model=FunctionModel(model))
    assert run.output == reply


@pytest.mark.parametrize(
    "issue",
    [
        "too few rows: 40; the task needs at least 100",
        "missing column(s): age, city",
        "column age should hold number values but is object",
        "column city has 3 empty value(s)",
        "2 duplicate row(s)",
    ],
)
def test_each_issue_code_finds_is_said_in_chinese(issue: str) -> None:
    """Seen on the embedded model (eval_tutor, start_ok_zh): code's reply to a Chinese student carried the English
    words of the check. Every issue `check_dataset` words is said again in the student's language."""
    said = tutor.say_issue(issue, "zh-CN")
    assert said != issue and any("\u4e00" <= c <= "\u9fff" for c in said)
    assert tutor.say_issue(issue, "en") == issue
    assert tutor.say_issue("something else entirely", "zh-CN") == "something else entirely"


def test_code_s_reply_says_what_code_found_in_the_students_language() -> None:
    """The packet's `mention_to_student` is the model's English; code's reply to a Chinese student says the issues
    and the rule's request in Chinese instead, and leaves the English out."""
    packet = tutor.InstructionPacket.model_validate(
        {**READY, "task_status": "in_progress", "mention_to_student": ["The student should show the code they ran."]}
    )
    findings = tutor.Findings(issues=("2 duplicate row(s)",), rules=("evidence_not_enough", "dataset_warnings"))
    zh = tutor.packet_reply(packet, "zh-CN", findings)
    assert "有 2 行重复" in zh and "运行的代码" in zh and "student" not in zh
    en = tutor.packet_reply(packet, "en", findings)
    assert "2 duplicate row(s)" in en and "Show the code you ran" in en and "student" not in en
    assert "student" not in tutor.packet_reply(packet, "zh-CN")  # the packet's words only in the student's language
    assert "student" not in tutor.packet_reply(packet, "en")  # ... and only said to them, not of them
    said = packet.model_copy(update={"mention_to_student": ["Show me the code you ran.", "请给我看你运行的代码。"]})
    assert "Show me the code you ran." in tutor.packet_reply(said, "en")  # nothing found by code: the packet's words
    assert "请给我看你运行的代码。" in tutor.packet_reply(said, "zh-CN")
    inner = packet.model_copy(update={"mention_to_student": ["Consult an expert to explain the how parameter."]})
    assert "expert" not in tutor.packet_reply(inner, "en")  # seen on the model (concept_en): the orchestrator's step


def test_a_reply_with_code_is_replaced_by_codes_reply_not_failed(tmp_path: Path, run_once) -> None:  # noqa: ANN001
    """Seen on the embedded model (eval_tutor, no_age_zh): the assistant wrote code three times and the run failed,
    leaving the student with no reply. Refused twice, the reply is code's."""

    def model(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        return ModelResponse(parts=[TextPart("Try this:\n```python\ndf['age'].mean()\n```")])

    store, agent = assistant(tmp_path, READY, issues=["missing column(s): age"])
    run = ask_assistant(run_once, store, agent, READY, student="How do I start?", lang="en", model=FunctionModel(model))
    packet = tutor.InstructionPacket.model_validate(READY)
    findings = tutor.Findings(issues=("missing column(s): age",))
    assert run.status == RunStatus.finished and run.output == tutor.packet_reply(packet, "en", findings)
    assert "```" not in run.output


def test_a_reply_about_the_student_that_holds_the_retry_prompt_is_replaced_by_codes(
    tmp_path: Path,
    run_once,  # noqa: ANN001
) -> None:
    """Seen on the embedded model (eval_tutor, concept_en): the model said the engine's retry prompt back, which
    spoke of "the student"; said in the second person, the prompt reached the student. Now code's reply is shown."""
    leak = (
        "Your previous response failed the application's validation (this is automated feedback, not a message from "
        'the user):\n<pyai:retry_feedback>\nYour reply speaks of "the student"; you are talking to the student.'
    )

    def model(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        return ModelResponse(parts=[TextPart(leak)])

    store, agent = assistant(tmp_path, READY)
    run = ask_assistant(run_once, store, agent, READY, student="Can I start?", lang="en", model=FunctionModel(model))
    packet = tutor.InstructionPacket.model_validate(READY)
    assert run.status == RunStatus.finished and run.output == tutor.packet_reply(packet, "en")
    assert "pyai" not in run.output and "validation" not in run.output


@pytest.mark.parametrize(
    ("reply", "student", "lang"),
    [
        # an expert's id (seen: eval_tutor, start_ok_zh)
        ("你可以先向数据_inspector 询问一下数据是否合适。", "我可以开始了吗？", "zh-CN"),
        ("Ask the data_inspector whether your file is suitable.", "Can I start?", "en"),
        # the expert in words (seen: eval_tutor, wine_error_zh)
        ("好的，你可以先向数据检查员询问一个适合的判断。", "我的代码报错了", "zh-CN"),
        ("First ask the data inspector for a suitability judgement.", "My code fails", "en"),
        # the student's voice (seen: claim_bare_zh)
        ("好的，老师。我完成了 task_2_2，平均年龄已经算出来了。", "我做完了 task_2_2", "zh-CN"),
        ("I have completed task_2_2 and computed the mean age.", "I finished task_2_2", "en"),
        (
            "好的，我明白了。我会在下一次任务中再次展示我运行的代码和输出。",
            "我做完了 task_2_2",
            "zh-CN",
        ),  # claim_bare_zh
        ("OK. I will show you my code next time.", "I finished task_2_2", "en"),
        ("好的，我明白了。我会在下一次任务中再次尝试。", "老师，task_2_2 我做完了", "zh-CN"),  # claim_bare_zh
        ("好的，我明白了。我会在 task_2_5 中继续。", "task_2_4 做完了。我的代码：…", "zh-CN"),  # claim_evidence_zh
        ("OK, I understand. I will try again next time.", "I finished task_2_2", "en"),
        # the orchestrator's step said to the student (seen: concept_en)
        ("Consult an expert to explain the how parameter of merge.", "What does how= do in merge?", "en"),
        ("你可以咨询专家来解释 merge 的 how 参数。", "merge 的 how 参数是什么？", "zh-CN"),
    ],
)
def test_an_expert_s_id_or_the_student_s_voice_never_reaches_the_student(
    tmp_path: Path, run_once, reply: str, student: str, lang: str
) -> None:  # noqa: ANN001
    def model(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        return ModelResponse(parts=[TextPart(reply)])

    store, agent = assistant(tmp_path, READY)
    run = ask_assistant(run_once, store, agent, READY, student=student, lang=lang, model=FunctionModel(model))
    assert run.status == RunStatus.finished
    assert run.output == tutor.packet_reply(tutor.InstructionPacket.model_validate(READY), lang, tutor.Findings())


def test_code_s_reply_says_the_file_fits_and_the_explanation_in_the_students_language() -> None:
    """Seen on the embedded model (eval_tutor, start_ok_zh, concept turns): code's reply gave the packet's status
    only: no "you can start" on a file the inspection found fit, and none of the explanation the concept explainer
    gave. Now it says both, the explanation only when it is in the student's language and holds no code block."""
    packet = tutor.InstructionPacket.model_validate({**READY, "task_status": "not_started"})
    fits = tutor.Findings(fits=True)
    assert "you can start" in tutor.packet_reply(packet, "en", fits)
    assert "可以开始" in tutor.packet_reply(packet, "zh-CN", fits)
    assert "can start" not in tutor.packet_reply(packet, "en")  # nothing judged: nothing said
    for status in ("in_progress", "done"):  # under way or finished: "you can start" would say nothing true
        later = tutor.InstructionPacket.model_validate({**READY, "task_status": status})
        assert "can start" not in tutor.packet_reply(later, "en", fits)
    # under way, a turn that judged only the file says it fits (tenth set: "can i use fair_pt.csv for the averge age
    # one?" answered "You are working on task_2_2; it is not done yet.")
    under_way = tutor.InstructionPacket.model_validate({**READY, "task_status": "in_progress"})
    assert tutor.packet_reply(under_way, "en", fits).startswith("Your file fits task_2_1: you can go on with it.")
    assert "fits" not in tutor.packet_reply(under_way, "en", tutor.Findings(fits=True, diagnosis=("KeyError: 'x'",)))
    en = tutor.Findings(
        concept=("A mean is the sum of the values divided by their count.", "The mean of 2 and 4 is 3.")
    )
    assert "divided by their count. The mean of 2 and 4 is 3." in tutor.packet_reply(packet, "en", en)
    assert "divided" not in tutor.packet_reply(packet, "zh-CN", en)  # not the student's language: left out
    coded = tutor.Findings(concept=("均值是所有值的和除以个数。", "```python\ns.mean()\n```"))
    zh = tutor.packet_reply(packet, "zh-CN", coded)
    assert "均值是所有值的和除以个数。" in zh and "```" not in zh


def test_an_explanation_cut_off_at_its_length_limit_is_said_in_whole_sentences() -> None:
    """Seen on the embedded model (concept_en): the explainer's definition stopped mid-sentence ("'left' returns")."""
    packet = tutor.InstructionPacket.model_validate({**READY, "task_status": "in_progress"})
    cut = tutor.Findings(
        concept=("The how parameter sets the join. 'inner' keeps matching rows. 'left' returns", "merged = pd.merge(a")
    )
    said = tutor.packet_reply(packet, "en", cut)
    assert "The how parameter sets the join. 'inner' keeps matching rows." in said
    assert "'left' returns" not in said and "pd.merge(a" not in said


@pytest.mark.parametrize(
    ("student", "reply", "lang", "replaced"),
    [
        # seen on the embedded model (eval_tutor, offtopic_zh): an essay plan for an essay about spring
        ("你能帮我写一篇关于春天的作文吗？", "当然可以！请先写一个简短的介绍，然后描述春天的季节特点。", "zh-CN", True),
        ("Can you write my history essay about Napoleon?", "Sure! Start with his early life in Corsica.", "en", True),
        ("Hi! What's your favourite movie?", "Hi! I'm here to help with your pandas tasks. Which one?", "en", False),
        ("谢谢老师！", "不客气！你接下来想做哪个任务？", "zh-CN", False),
        ("How do I read my file?", "Look at how pd.read_csv is called. Which file name did you pass?", "en", False),
    ],
)
def test_a_reply_helping_with_something_outside_the_course_is_codes_line(
    tmp_path: Path,
    run_once,  # noqa: ANN001
    student: str,
    reply: str,
    lang: str,
    replaced: bool,
) -> None:
    def model(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        return ModelResponse(parts=[TextPart(reply)])

    store, agent = assistant(tmp_path, READY, student=student)
    run = ask_assistant(run_once, store, agent, READY, student=student, lang=lang, model=FunctionModel(model))
    assert run.status == RunStatus.finished
    assert (run.output == t("tutor.off_course", lang)) == replaced and (run.output == reply) != replaced


def test_the_notes_guidance_said_back_is_refused_then_codes_reply() -> None:
    """Seen on the embedded model (eval_tutor concept_en, at code's packet): "To explain the idea you ask about in
    plain words, from the idea in these notes, and help you take the next step themselves, you can say: …"."""
    packet = tutor.InstructionPacket(
        task_id="task_2_3",
        task_status="in_progress",
        guidance_for_ca="Explain the idea the student asks about in plain words, from the idea in these notes, and "
        "help them take the next step themselves.",
    )
    check = tutor.ca_agent(options={}, packet=packet).check_reply
    assert check is not None
    facts = TurnFacts(lang="en", prompt="What does how do in merge?")
    with pytest.raises(ReplyRefused, match="repeats your notes") as refused:
        check("To explain the idea you ask about in plain words, from the idea in these notes, you can say: …", facts)
    assert refused.value.replacement == tutor.packet_reply(packet, "en")
    check("The how parameter chooses which rows a merge keeps. Which join do you need?", facts)


def test_codes_reply_says_a_diagnosis_written_without_a_full_stop() -> None:
    """Seen on the embedded model (eval_tutor merge_error_en): code's reply left the diagnosis out, its root cause
    having no full stop; a long text with none may have been cut, and is still left out."""
    packet = tutor.InstructionPacket(task_id="task_2_3", task_status="in_progress", guidance_for_ca="Help.")
    cause = "The right table has no column named id"
    said = tutor.packet_reply(packet, "en", tutor.Findings(diagnosis=(cause, "")))
    assert f"{cause}." in said
    cut = "The merge " + "keeps rows that match " * 12
    assert "keeps rows" not in tutor.packet_reply(packet, "en", tutor.Findings(diagnosis=(cut, "")))


def test_an_explanation_is_said_without_the_tasks_status_and_ends_asking_what_to_try() -> None:
    """A concept question is about the idea, not where the task stands (seen: "你正在做 task_2_3，还没有完成。" before
    an explanation of DataFrame and Series)."""
    packet = tutor.InstructionPacket(task_id="task_2_3", task_status="in_progress", guidance_for_ca="Explain it.")
    findings = tutor.Findings(concept=("A merge joins two tables on a key column.", ""))
    assert tutor.packet_reply(packet, "en", findings) == (
        "A merge joins two tables on a key column. Does that help? What would you like to try with it first?"
    )


def test_an_explanation_is_said_without_what_the_check_of_a_file_found() -> None:
    """Seen on the page: "什么是 groupby？" with a 3-row upload answered with the file's missing columns first."""
    packet = tutor.InstructionPacket(
        task_id="task_2_4", task_status="blocked", guidance_for_ca="Explain it.", blocked_steps=["analysis"]
    )
    findings = tutor.Findings(
        issues=("too few rows: 3; the task needs at least 20",), concept=("groupby 把行按列分组。", "")
    )
    assert tutor.packet_reply(packet, "zh-CN", findings) == "groupby 把行按列分组。这样讲清楚吗？你想先用它试试什么？"


def test_a_reply_to_a_file_with_warnings_names_what_the_check_found() -> None:
    """Tenth set: a file fit for task_2_4 with 2 empty ages and 3 duplicate rows answered "如果有任何空值或重复的行，
    你需要先清理数据" — hedging what code knows. Such a reply is code's instead, which says the file fits and what
    was found."""
    from consulta.apps.tutor._agent import _names_the_warnings

    packet = tutor.InstructionPacket.model_validate({**READY, "task_id": "task_2_4", "task_status": "in_progress"})
    findings = tutor.Findings(
        issues=("column age has 2 empty value(s)", "3 duplicate row(s)"), rules=("dataset_warnings",), fits=True
    )
    check = _names_the_warnings(packet, findings)
    check("你的文件可以用，但 age 列有 2 个空值，还有 3 行重复。", TurnFacts(lang="zh-CN"))
    with pytest.raises(ReplyRefused) as refused:
        check("好的，你已经检查了数据质量了吗？如果有任何空值或重复的行，你需要先清理数据。", TurnFacts(lang="zh-CN"))
    said = refused.value.replacement or ""
    assert said.startswith("你的文件适合 task_2_4") and "列 age 有 2 个空值" in said and "3 行重复" in said


def test_a_task_is_said_done_only_when_a_validation_found_it_so() -> None:
    """Tenth-set reply (eleventh set, terminal): "你已经完成了任务_2_3，没有报错。接下来，CA应该指导你检查合并后的表是否正确。"
    to "我应该算是搞定了吧，跑出来没报错", with no validation: a false claim, and the assistant's own name."""
    from consulta.apps.tutor._agent import _INNER_NAMES, _done_only_when_validated

    packet = tutor.InstructionPacket.model_validate({**READY, "task_id": "task_2_3", "task_status": "in_progress"})
    check = _done_only_when_validated(packet, tutor.Findings())
    check("你还没有完成 task_2_3：先给出你运行的代码和输出。", TurnFacts(lang="zh-CN"))
    check("When you have finished, show me the output.", TurnFacts(lang="en"))  # a condition, not a claim
    with pytest.raises(ReplyRefused) as refused:
        check("你已经完成了任务_2_3，没有报错。", TurnFacts(lang="zh-CN"))
    assert (refused.value.replacement or "").startswith("你正在做 task_2_3，还没有完成")
    done = tutor.InstructionPacket.model_validate({**READY, "task_id": "task_2_3", "task_status": "done"})
    _done_only_when_validated(done, tutor.Findings())("You have finished task_2_3.", TurnFacts(lang="en"))
    assert _INNER_NAMES.search("接下来，CA应该指导你检查合并后的表是否正确。")
    assert _INNER_NAMES.search("The CA will guide you.")
    assert not _INNER_NAMES.search("Your file lists Los Angeles, CA and San Diego, CA.")


def test_a_validation_that_says_why_is_said_without_the_rules_request_for_code() -> None:
    """Eighteenth set: "Show the code you ran and its output" was said before the validation of the code and output
    the student had shown ("… counts line 132 ("Total") …")."""
    packet = tutor.InstructionPacket.model_validate({**READY, "task_status": "in_progress"})
    why = 'Your code runs, but its result counts line 132 ("Total"), which is not data.'
    findings = tutor.Findings(rules=("evidence_not_enough",), validation=(why, "Take line 132 out of the data."))
    said = tutor.packet_reply(packet, "en", findings)
    assert why in said and "Show the code you ran" not in said
