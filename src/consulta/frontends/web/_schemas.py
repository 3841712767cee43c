"""The JSON API's request and response bodies (they are the OpenAPI schema at /openapi.json)."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from ...runtime import AskRecord, AskStatus, RunRecord, RunStatus

__all__ = [
    "AnswerBody",
    "AppInfo",
    "AskOut",
    "ErrorBody",
    "Messages",
    "RunOut",
    "SessionOut",
    "StartRun",
]


class ErrorBody(BaseModel):
    """Every error the API returns (4xx and 5xx): what went wrong, in words, and what to do."""

    error_code: str = Field(description="Stable machine-readable code, e.g. `not_found`, `conflict`, `invalid_answer`.")
    message: str
    hint: str | None = None
    field: str | None = Field(default=None, description="The request field at fault, when one is (e.g. `answers.0`).")


class SessionOut(BaseModel):
    token: str = Field(description="Send it as `Authorization: Bearer <token>`. Shown once; the server keeps only its hash.")
    token_type: Literal["bearer"] = "bearer"


class AppInfo(BaseModel):
    app: str
    main_agent: str = Field(description="The agent each request starts with (others speak after a hand-over).")
    default_lang: str
    languages: list[str]
    question_timeout_s: float | None = Field(description="How long a question waits for an answer before it times out.")


class Messages(BaseModel):
    lang: str
    messages: dict[str, str] = Field(description="Every `web.*` and `ai.*` catalog message of the language.")


class StartRun(BaseModel):
    model_config = ConfigDict(extra="forbid")

    prompt: str = Field(min_length=1, max_length=4000, description="What the person asks the agent.")
    lang: Literal["en", "zh-CN"] | None = Field(default=None, description="The run's language (default: the server's).")
    continue_from: str | None = Field(
        default=None, max_length=64, description="An earlier run of this session whose conversation this run continues."
    )


class RunOut(BaseModel):
    model_config = ConfigDict(from_attributes=True)

    id: str
    status: RunStatus
    prompt: str
    lang: str
    thread_id: str
    parent_run_id: str | None
    agent: str = Field(default="", description="The app's agent that ran it (\"\": the main agent, on older runs).")
    output: str | None = Field(description="The agent's reply, once it has one.")
    error: str | None
    created_at: str
    updated_at: str

    @classmethod
    def of(cls, run: RunRecord) -> RunOut:
        return cls.model_validate(run)


class AskOut(BaseModel):
    model_config = ConfigDict(from_attributes=True)

    id: str
    run_id: str
    kind: str = Field(description="`question` (payload `{questions: [{header, question, options, multiple}]}`) or "
                      "`plan` (payload `{plan_id, items: [{tool, op, preview}]}`).")
    status: AskStatus
    payload: dict[str, Any]
    answer: Any = None
    outcome: Any = Field(default=None, description="What the model was told when the ask closed.")
    answered_by: str | None = None
    timeout_s: float | None = None
    created_at: str
    closed_at: str | None = None

    @classmethod
    def of(cls, ask: AskRecord) -> AskOut:
        return cls.model_validate(ask)


class AnswerBody(BaseModel):
    """The answer to an ask: `answers` for a question (one per question: the chosen option or free text, a list of
    options for a `multiple` question), `decision` for a plan."""

    model_config = ConfigDict(
        extra="forbid",
        json_schema_extra={"examples": [{"answers": ["K562-dTAG-BRD4"]}, {"decision": "approve"}]},
    )

    answers: list[str | list[str]] | None = Field(default=None, max_length=20)
    decision: Literal["approve", "reject"] | None = None
