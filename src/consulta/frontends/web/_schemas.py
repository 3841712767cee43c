"""The JSON API's request and response bodies (they are the OpenAPI schema at /openapi.json)."""

from __future__ import annotations

from typing import Annotated, Any, Literal, Self

from pydantic import BaseModel, ConfigDict, Field, GetJsonSchemaHandler, RootModel, model_validator
from pydantic.json_schema import JsonSchemaValue
from pydantic_core import CoreSchema

from ...runtime import AskRecord, AskStatus, Event, RunRecord, RunStatus
from .._host import HandedOver

__all__ = [
    "AnswerBody",
    "AppInfo",
    "AskOut",
    "ErrorBody",
    "Messages",
    "RunOut",
    "SessionOut",
    "StartRun",
    "StreamFrame",
]


class ErrorBody(BaseModel):
    """Every error the API returns (4xx and 5xx): what went wrong, in words, and what to do."""

    error_code: str = Field(description="Stable machine-readable code, e.g. `not_found`, `conflict`, `invalid_answer`.")
    message: str
    hint: str | None = None
    field: str | None = Field(default=None, description="The request field at fault, when one is (e.g. `answers.0`).")


class SessionOut(BaseModel):
    token: str = Field(
        description="Send it as `Authorization: Bearer <token>`. Shown once; the server keeps only its hash."
    )
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
    agent: str = Field(default="", description='The app\'s agent that ran it ("": the main agent, on older runs).')
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
    kind: str = Field(
        description="`question` (payload `{questions: [{header, question, options, multiple}]}`) or "
        "`plan` (payload `{plan_id, items: [{tool, op, preview}]}`)."
    )
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


def _absent_not_null(schema: dict[str, Any]) -> None:
    """An optional field's schema without `null`: None stands for the field left out, not one a client sends."""
    schema.pop("default", None)
    (present,) = [option for option in schema.pop("anyOf") if option != {"type": "null"}]
    schema.update(present)


class AnswerBody(BaseModel):
    """The answer to an ask, exactly one of: `answers` for a question (one per question: the chosen option or free
    text, a list of options for a `multiple` question), `decision` for a plan."""

    model_config = ConfigDict(
        extra="forbid",
        json_schema_extra={
            "oneOf": [{"required": ["answers"]}, {"required": ["decision"]}],
            "examples": [{"answers": ["K562-dTAG-BRD4"]}, {"decision": "approve"}],
        },
    )

    answers: Annotated[list[str | list[str]], Field(max_length=20)] | None = Field(
        default=None, json_schema_extra=_absent_not_null
    )
    decision: Literal["approve", "reject"] | None = Field(default=None, json_schema_extra=_absent_not_null)

    @model_validator(mode="after")
    def _one_of(self) -> Self:
        if (self.answers is None) == (self.decision is None):
            raise ValueError('Send exactly one of "answers" (to a question) and "decision" (to a plan)')
        return self


# ---- the event stream (GET /api/runs/{id}/events), as an EventSource client parses it -----------------------------


class _JsonText:
    """A field sent as JSON text (an SSE frame's `data`): a string whose content is the annotated type."""

    @classmethod
    def __get_pydantic_json_schema__(cls, core_schema: CoreSchema, handler: GetJsonSchemaHandler) -> JsonSchemaValue:
        return {"type": "string", "contentMediaType": "application/json", "contentSchema": handler(core_schema)}


class NoData(BaseModel):
    model_config = ConfigDict(extra="forbid")


class EndData(BaseModel):
    seq: int = Field(ge=0, description="The last event's number.")


class EventFrame(BaseModel):
    """One of the run's events (`event: message`): `id` is its number in the run, `data` the event."""

    event: Literal["message"]
    id: str = Field(pattern=r"^[0-9]+$")
    data: Annotated[Annotated[Event | HandedOver, Field(discriminator="type")], _JsonText]


class MarkFrame(BaseModel):
    """`live`: the replay is over, what follows happens now. `reset`: the client's `Last-Event-ID` was unknown here
    (a restart lost a step in progress), so the events follow from 1."""

    event: Literal["live", "reset"]
    data: Annotated[NoData, _JsonText]


class EndFrame(BaseModel):
    """Nothing more will come (the run has ended, or only the replay was asked for): the client closes."""

    event: Literal["end"]
    data: Annotated[EndData, _JsonText]


class StreamFrame(RootModel[Annotated[EventFrame | MarkFrame | EndFrame, Field(discriminator="event")]]):
    """One frame of a run's event stream (`retry:` and `: ping` lines carry no data and are not frames)."""
