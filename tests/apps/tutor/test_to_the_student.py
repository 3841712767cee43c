"""The tutor's assistant speaks to the student (issue 26): a reply about "the student" in the third person ("The
student can start task_2_1 once they have …") is written again with the reason, and said again is replaced by the
same reply in the second person; a reply in the second person passes."""

from __future__ import annotations

from pathlib import Path

import pytest
from pydantic_ai.messages import ModelMessage, ModelResponse, TextPart
from pydantic_ai.models.function import AgentInfo, FunctionModel

from consulta.apps import tutor
from consulta.runtime import RunStatus

from .test_claims import READY, assistant


@pytest.mark.parametrize(
    ("reply", "shown"),
    [
        (
            "The student can start task_2_1 once they have a dataset with 30 rows.",
            "You can start task_2_1 once you have a dataset with 30 rows.",
        ),
        ("The student's file has 25 rows. The student needs more rows.", "Your file has 25 rows. You need more rows."),
        ("该学生需要至少 30 行数据。", "你需要至少 30 行数据。"),
    ],
)
def test_a_reply_about_the_student_becomes_one_to_them(tmp_path: Path, run_once, reply: str, shown: str) -> None:  # noqa: ANN001
    def model(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        return ModelResponse(parts=[TextPart(reply)])

    store, agent = assistant(tmp_path, READY)
    run = run_once(store, agent, tutor.ca_request(READY, student="Can I start?", lang="en"), FunctionModel(model))
    assert run.status == RunStatus.finished and run.output == shown
    assert [e.data["check"] for e in store.list_events(run.id) if e.type == "reply_checked"] == ["tutor", "tutor"]


def test_a_reply_to_the_student_passes(tmp_path: Path, run_once) -> None:  # noqa: ANN001
    reply = "You can start task_2_1: your file has the columns it needs. Which column will you look at first?"

    def model(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        return ModelResponse(parts=[TextPart(reply)])

    store, agent = assistant(tmp_path, READY)
    run = run_once(store, agent, tutor.ca_request(READY, student="Can I start?", lang="en"), FunctionModel(model))
    assert run.output == reply
