"""The tutor evaluation's own reader (bench/eval_tutor.py `reading_problems`): the replies seen on the embedded model
that its lexicon used to pass, and replies a tutor would send, which it must pass."""

from __future__ import annotations

import pytest

from eval_tutor import reading_problems  # bench/ is on pytest's path (pyproject.toml's pythonpath)


@pytest.mark.parametrize(
    ("reply", "student", "lang", "kind"),
    [  # each seen on the embedded model (tutor_eval.ed2b9bd.json) and passed by the lexicon then
        ('Your response should be "You can start task_2_1 after …"', "Which gaps?", "en", "meant for the model"),
        (
            "Your previous response failed the application's validation (this is automated feedback): <pyai:x>",
            "What is a mean?",
            "en",
            "meant for the model",
        ),
        ("你可以先向数据_inspector 询问一下数据是否合适。", "我可以开始了吗？", "zh-CN", "meant for the model"),
        ("好的，你可以先向数据检查员询问一个适合的判断。", "我的代码报错了", "zh-CN", "meant for the model"),
        ("好的，我明白了。我会在下一次任务中再次尝试。", "task_2_2 我做完了", "zh-CN", "as the student"),
        ("好的，我明白了。我会在 task_2_5 中继续。", "task_2_4 做完了", "zh-CN", "as the student"),
        ("请先使用工具（写入用户批准的更改），然后提问。", "task_2_2 我做完了", "zh-CN", "meant for the model"),
        ("Ask the data inspector whether your file fits.", "Can I start?", "en", "meant for the model"),
        ("现在需要指导学生如何解决错误。", "为什么报错？", "zh-CN", "speaks of the student"),
        ("好的，老师。我完成了 task_2_2。", "我做完了 task_2_2", "zh-CN", "speaks as the student"),
        (
            "在做 task_2_2 时，我写了 df['年龄'].mean()，报错 KeyError: '年龄'，这是为什么？",
            "在做 task_2_2 时，我写了 df['年龄'].mean()，报错 KeyError: '年龄'，为什么？",
            "zh-CN",
            "said back",
        ),
        ("Consult an expert to explain the how parameter of merge.", "What is how=?", "en", "meant for the model"),
        (
            "好的，我明白了。我会在下一次任务中再次展示我运行的代码和输出。",
            "我做完了",
            "zh-CN",
            "speaks as the student",
        ),
        ("The file has the columns the task needs, so you can start.", "我可以开始了吗？", "zh-CN", "language"),
        ("你可以开始了，这个文件有任务需要的列。", "Can I start?", "en", "language"),
    ],
)
def test_replies_a_student_should_not_read_are_found(reply: str, student: str, lang: str, kind: str) -> None:
    problems = reading_problems(reply, student=student, lang=lang)
    assert problems and kind in problems[0], problems


@pytest.mark.parametrize(
    ("reply", "lang"),
    [
        ("You can start task_2_1: your file people.csv has the columns it needs. Which column first?", "en"),
        ("你可以开始 task_2_1 了：`people.csv` 有需要的列。你打算先看哪一列？", "zh-CN"),
        ("Your dataset has only 60 rows; this task needs at least 100. Please upload a larger file.", "en"),
        ("报错 `KeyError: 'age'` 说明没有这一列。你先用 df.columns 看看有哪些列？", "zh-CN"),
    ],
)
def test_a_tutor_s_reply_passes(reply: str, lang: str) -> None:
    assert reading_problems(reply, student="Can I start?" if lang == "en" else "我可以开始了吗？", lang=lang) == []
