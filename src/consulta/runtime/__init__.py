"""The engine: agent definitions, tools and their policies, runs, asks, plans, events and the store.

Its names are imported when first used (`consulta._lazy`): importing the package costs nothing, so that a command that
needs only the store (`consulta asks`) does not pay for pydantic-ai."""

from __future__ import annotations

from typing import TYPE_CHECKING

from .._lazy import lazy_names

if TYPE_CHECKING:
    from ._agent import Agent, ChangeRequest, FirstLook, Instructions, ToolChoice, WritesAsked, tool_schemas
    from ._asks import AskTimers, Outcome
    from ._claims import (
        Claim,
        ReplyCheck,
        ReplyRefused,
        ToolOutcome,
        TurnFacts,
        all_checks,
        assertions,
        check_claims,
        compose_reply,
        find_claims,
        reply_lang,
    )
    from ._crash_points import CRASH_AT_ENV, crash_point
    from ._engine import invalid_arguments_result, tool_exception_result
    from ._errors import (
        Choice,
        ConfigError,
        ConflictError,
        ConsultaError,
        InvalidAnswerError,
        ListenerError,
        ModelFailed,
        NotFoundError,
        ToolError,
        model_failure,
    )
    from ._event_bus import EventBus, Listener
    from ._events import (
        AskClosed,
        AskOpened,
        Event,
        ModelText,
        PlanDecided,
        PlanStaged,
        ReplyChecked,
        RunEnded,
        RunStarted,
        StepStarted,
        TextDelta,
        ToolCalled,
        ToolReturned,
    )
    from ._facts import (
        FactRules,
        check_facts,
        check_language,
        check_model_words,
        echoes,
        facts_in,
        false_comparisons,
        model_words,
        unfounded,
        unfounded_names,
        wrong_language,
    )
    from ._grounding import Evidence, mentions
    from ._injection import own_words, takes_over
    from ._leases import Leases
    from ._messages import by_first_look
    from ._plan_book import PLAN_ASK, PlanBook, PlanOutcome, decided_reply, staged_result
    from ._plans import PlanExecutor
    from ._policies import Cache, Fallback, Retry, Timeout, ToolPolicy, apply_policies
    from ._records import (
        EXTERNAL_MODEL_PREFIX,
        AskRecord,
        AskStatus,
        ConsultationRecord,
        EventRecord,
        PlanRecord,
        PlanStatus,
        RunRecord,
        RunStatus,
        ToolCallRecord,
    )
    from ._run_log import RunLog, RunRecorder
    from ._runtime import AskPolicy, Runtime
    from ._schemas import argument_validator, json_schema_for
    from ._store import AppTables, RunSteps, StateBook, Store, migrate_app_tables, state_table, upsert, utcnow, writing
    from ._tools import (
        CURRENT_TOOL_CALL,
        AskKind,
        ToolCallContext,
        ToolDef,
        ToolKind,
        ask_tool,
        current_tool_call,
        read_tool,
        write_tool,
    )
    from ._tracing import TRACES_SETTING, Tracing, tracing_from_setting
    from ._typed_answer import LabelReader, StateReader, TypedAnswer, label_probabilities, last_state, typed_answer


__all__ = [
    "CRASH_AT_ENV",
    "CURRENT_TOOL_CALL",
    "EXTERNAL_MODEL_PREFIX",
    "PLAN_ASK",
    "TRACES_SETTING",
    "Agent",
    "AppTables",
    "ChangeRequest",
    "WritesAsked",
    "FactRules",
    "FirstLook",
    "AskClosed",
    "AskKind",
    "AskOpened",
    "AskPolicy",
    "AskRecord",
    "AskStatus",
    "AskTimers",
    "Cache",
    "Claim",
    "ConfigError",
    "ConflictError",
    "ConsultationRecord",
    "ConsultaError",
    "Event",
    "EventBus",
    "EventRecord",
    "Evidence",
    "Fallback",
    "Instructions",
    "InvalidAnswerError",
    "ListenerError",
    "ModelFailed",
    "Leases",
    "Listener",
    "ModelText",
    "NotFoundError",
    "Outcome",
    "PlanDecided",
    "PlanBook",
    "PlanExecutor",
    "PlanOutcome",
    "PlanRecord",
    "PlanStaged",
    "PlanStatus",
    "ReplyCheck",
    "ReplyChecked",
    "ReplyRefused",
    "Retry",
    "RunEnded",
    "RunLog",
    "RunRecord",
    "RunRecorder",
    "RunStarted",
    "RunStatus",
    "RunSteps",
    "Runtime",
    "StepStarted",
    "StateBook",
    "Store",
    "TextDelta",
    "Timeout",
    "ToolCallRecord",
    "ToolOutcome",
    "ToolCallContext",
    "ToolChoice",
    "ToolCalled",
    "ToolDef",
    "ToolError",
    "Choice",
    "ToolKind",
    "ToolPolicy",
    "ToolReturned",
    "Tracing",
    "TurnFacts",
    "TypedAnswer",
    "LabelReader",
    "StateReader",
    "all_checks",
    "apply_policies",
    "argument_validator",
    "ask_tool",
    "assertions",
    "check_claims",
    "check_facts",
    "check_language",
    "check_model_words",
    "compose_reply",
    "by_first_look",
    "crash_point",
    "current_tool_call",
    "decided_reply",
    "echoes",
    "facts_in",
    "false_comparisons",
    "find_claims",
    "invalid_arguments_result",
    "json_schema_for",
    "mentions",
    "model_failure",
    "model_words",
    "read_tool",
    "reply_lang",
    "staged_result",
    "own_words",
    "takes_over",
    "tool_exception_result",
    "tool_schemas",
    "tracing_from_setting",
    "unfounded",
    "unfounded_names",
    "wrong_language",
    "typed_answer",
    "label_probabilities",
    "last_state",
    "state_table",
    "upsert",
    "utcnow",
    "writing",
    "migrate_app_tables",
    "write_tool",
]

__getattr__ = lazy_names(__name__, __file__)
