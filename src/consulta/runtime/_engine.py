"""The bridge to the agent engine (pydantic-ai). The only module of the runtime that knows its API.

It builds a pydantic-ai agent from a Consulta `Agent`, and adds one capability that gives every tool call Consulta's
semantics: errors in the seeds' shape (unknown tool, invalid arguments, exceptions) instead of retries that can
crash the run; ask tools that defer the call (the run pauses on an Ask); write tools staged into a plan after the
grounding and validation checks; and a record of every call in the store.
"""

from __future__ import annotations

import json
import time
import uuid
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel, TypeAdapter, ValidationError
from pydantic_ai import Agent as PaiAgent
from pydantic_ai import (
    CallDeferred,
    DeferredToolRequests,
    DeferredToolResults,
    ModelMessagesTypeAdapter,
    RunContext,
    Tool,
    ToolApproved,
)
from pydantic_ai.capabilities import AbstractCapability
from pydantic_ai.exceptions import ModelRetry, ToolFailed, UnexpectedModelBehavior, UsageLimitExceeded
from pydantic_ai.messages import (
    ModelMessage,
    ModelRequest,
    ModelResponse,
    RetryFeedbackPart,
    RetryPromptPart,
    TextPart,
    ToolCallPart,
    ToolReturnPart,
    UserPromptPart,
)
from pydantic_ai.models import Model
from pydantic_ai.settings import ModelSettings, ToolOrOutput
from pydantic_ai.tools import ToolDefinition
from pydantic_ai.usage import UsageLimits

from ..i18n import catalog, normalize_lang, t
from ._agent import Agent
from ._claims import (
    ReplyCheck,
    ReplyRefused,
    ToolOutcome,
    TurnFacts,
    all_checks,
    check_claims,
    compose_reply,
    gather_facts,
)
from ._errors import ToolError
from ._events import ReplyChecked, StepStarted
from ._facts import check_facts, check_model_words
from ._grounding import Evidence
from ._store import utcnow
from ._streaming import ReplyDrafts, can_stream
from ._tools import CURRENT_TOOL_CALL, ToolCallContext, ToolDef

if TYPE_CHECKING:
    from ._run_log import RunLog

__all__ = [
    "Cancelled",
    "carry_over",
    "EngineRun",
    "PausedCall",
    "RunDeps",
    "build_engine_agent",
    "dump_each",
    "dump_messages",
    "evidence_from",
    "invalid_arguments_result",
    "tool_exception_result",
    "TypedAnswer",
    "typed_answer",
    "load_messages",
    "count_steps",
    "pending_tool_calls",
    "returned_call_ids",
]

ASK_METADATA_KEY = "consulta_ask"
QUESTION_KIND = "question"
"""The ask kind of seed 001's question: what the runtime opens itself for a write tool's `Choice`."""
RERUN_KEY = "rerun"
"""Where a runtime-opened question's payload keeps the call to run again: its tool call id, name, arguments and the
arguments each option stands for. The re-run's deferred metadata holds the user's answers under the same key."""


def dump_messages(messages: list[ModelMessage]) -> str:
    return ModelMessagesTypeAdapter.dump_json(messages).decode()


_MESSAGE: TypeAdapter[ModelMessage] = TypeAdapter(ModelMessage)


def dump_each(messages: list[ModelMessage]) -> list[str]:
    """Each message as its own JSON (the store keeps a conversation one message a row)."""
    return [_MESSAGE.dump_json(m).decode() for m in messages]


def load_messages(blob: str) -> list[ModelMessage]:
    return list(ModelMessagesTypeAdapter.validate_json(blob))


@dataclass(frozen=True)
class TypedAnswer:
    """A model's structured answer: the validated output, how many answers it took, the conversation (JSON)."""

    output: BaseModel
    attempts: int
    messages: list[ModelMessage]

    @property
    def messages_json(self) -> str:
        """The conversation as one JSON array."""
        return dump_messages(self.messages)


async def typed_answer(
    *,
    model: Model,
    instructions: str,
    prompt: str,
    output_type: type[BaseModel],
    check: Callable[[Any], None] | None = None,
    retries: int = 2,
    within: ToolCallContext | None = None,
) -> TypedAnswer:
    """Ask `model` for one answer of `output_type`. An answer that does not validate, or that `check` refuses (by
    raising ValueError with the reason), is sent back with the errors and asked again, up to `retries` times; then
    ToolError `invalid_expert_output`.

    Asked `within` a tool call, the answer's model requests count against that run's usage and limits (a nested
    run); when they would pass the limits: ToolError `usage_limit_exceeded`."""
    agent: PaiAgent[None, Any] = PaiAgent(
        model, instructions=instructions, output_type=output_type, retries={"tools": 1, "output": retries}
    )

    if check is not None:
        agent.output_validator(_checked_by(check))

    shared = (
        {"usage": within.usage, "usage_limits": within.usage_limits}
        if within is not None and within.usage is not None
        else {}
    )
    try:
        result = await agent.run(prompt, **shared)
    except UsageLimitExceeded as error:
        raise ToolError(
            "usage_limit_exceeded",
            f"The consultation would pass the run's usage limits: {error}",
            hint="Work with what you have: submit your answer now.",
        ) from None
    except UnexpectedModelBehavior as error:
        raise ToolError(
            "invalid_expert_output",
            f"The expert's answer did not fit {output_type.__name__} after {retries + 1} tries: {error.message}",
            hint="Ask a narrower question, or consult another expert.",
        ) from None
    messages = result.all_messages()
    return TypedAnswer(output=result.output, attempts=count_steps(messages), messages=messages)


def pending_tool_calls(messages: list[ModelMessage]) -> list[ToolCallPart]:
    """The tool calls of the last response that have no result yet (a run paused on them)."""
    if not messages or not isinstance(messages[-1], ModelResponse):
        return []
    return list(messages[-1].tool_calls)


def carry_over(messages: list[ModelMessage]) -> list[ModelMessage]:
    """What a new turn of a thread carries from the earlier ones: the user's words and the agent's replies.

    Tool calls and their results stay on record (checkpoints, tool call rows) but are not sent again: a small model's
    context is short and every token of it is paid for on every step.
    """
    kept: list[ModelMessage] = []
    for i, message in enumerate(messages):
        if _refused(messages, i):
            continue  # a reply the checks sent back was never shown
        if isinstance(message, ModelRequest):
            prompts = [p for p in message.parts if isinstance(p, UserPromptPart)]
            if prompts:
                kept.append(ModelRequest(parts=prompts))
        elif isinstance(message, ModelResponse):
            texts = [p for p in message.parts if isinstance(p, TextPart) and p.content.strip()]
            if texts and not message.tool_calls:
                kept.append(ModelResponse(parts=texts, model_name=message.model_name))
    return kept


def _refused(messages: list[ModelMessage], i: int) -> bool:
    """Whether message `i` is a final text the reply checks refused (the next request carries the reason)."""
    after = messages[i + 1] if i + 1 < len(messages) else None
    return (
        isinstance(messages[i], ModelResponse)
        and isinstance(after, ModelRequest)
        and any(_is_refusal(p) for p in after.parts)
    )


def _is_refusal(part: Any) -> bool:
    """Whether `part` sends a final text back: a reply check's reason (ModelRetry from an output validator)."""
    if isinstance(part, RetryFeedbackPart):
        return part.retry.cause == "model_retry"
    return isinstance(part, RetryPromptPart) and part.tool_name is None


def count_steps(messages: list[ModelMessage]) -> int:
    """The number of model responses: the step a conversation has reached."""
    return sum(isinstance(m, ModelResponse) for m in messages)


def returned_call_ids(messages: list[ModelMessage]) -> set[str]:
    """Ids of the tool calls whose results are in the conversation."""
    return {
        p.tool_call_id
        for m in messages
        if isinstance(m, ModelRequest)
        for p in m.parts
        if isinstance(p, ToolReturnPart)
    }


def evidence_from(messages: list[ModelMessage], agent: Agent, prompt: str | None = None) -> Evidence:
    """What the user said and what read tools returned, from the conversation so far."""
    user: list[str] = [prompt] if prompt else []
    answers: list[str] = []
    data: list[str] = []
    for message in messages:
        if not isinstance(message, ModelRequest):
            continue
        for part in message.parts:
            if isinstance(part, UserPromptPart) and isinstance(part.content, str):
                user.append(part.content)
            elif isinstance(part, ToolReturnPart):
                tool = agent.tool(part.tool_name)
                if tool is None:
                    continue
                if tool.kind == "ask":
                    answers.extend(_raw_answers(part.content))
                elif tool.kind == "read":
                    data.append(Evidence.data_text(part.content))
    return Evidence(user_texts=tuple(user), answers=tuple(answers), data_texts=tuple(data))


def _raw_answers(content: Any) -> list[str]:
    if isinstance(content, str):
        try:
            content = json.loads(content)
        except ValueError:
            return [content]
    if not isinstance(content, dict) or not content.get("ok"):
        return []
    raw = (content.get("result") or {}).get("raw_answers") or []
    flat: list[str] = []
    for value in raw:
        flat.extend(value if isinstance(value, list) else [value])
    return [str(v) for v in flat]


@dataclass(kw_only=True)
class RunDeps:
    """Per-run state handed to the capability (pydantic-ai's `deps`)."""

    agent: Agent
    instructions: str
    """The agent's instructions for this run (the same at every step)."""
    prompt: str | None
    log: RunLog
    """The run's record: tool calls and steps are told to it."""
    stage: Callable[[str, str, dict[str, Any], Evidence], Awaitable[dict[str, Any]]]

    @property
    def run_id(self) -> str:
        return self.log.run.id


def _result_of(value: Any) -> Any:
    if isinstance(value, BaseModel):
        return value.model_dump(mode="json", exclude_none=True)
    return value


def invalid_arguments_result(tool_name: str, error: ValidationError | ModelRetry) -> dict[str, Any]:
    """The seeds' `invalid_arguments` result for arguments that do not fit a tool's schema (naming the field)."""
    if isinstance(error, ValidationError):
        problems = [
            {"field": ".".join(str(p) for p in e["loc"]) or "(arguments)", "problem": e["msg"]} for e in error.errors()
        ]
        first = problems[0] if problems else {"field": "(arguments)", "problem": "invalid"}
        return {
            "ok": False,
            "error_code": "invalid_arguments",
            "message": f"Invalid arguments for {tool_name}: {first['field']}: {first['problem']}.",
            "field": first["field"],
            "errors": problems[:5],
            "_hint": "Fix the listed fields and call the tool again; see its parameter schema.",
        }
    return {
        "ok": False,
        "error_code": "invalid_arguments",
        "message": str(error.message),
        "_hint": "Fix the arguments.",
    }


def tool_exception_result(tool_name: str, error: Exception) -> dict[str, Any]:
    """The seeds' `tool_exception` result for a tool that raised (a bug must not end the run)."""
    return {
        "ok": False,
        "error_code": "tool_exception",
        "message": f"{tool_name} failed: {type(error).__name__}: {error}",
        "_hint": "Check the arguments; if they are right, tell the user the tool failed.",
    }


def _unknown_tool(name: str, available: list[str]) -> dict[str, Any]:
    return {
        "ok": False,
        "error_code": "unknown_tool",
        "message": f"Unknown tool: {name}",
        "_hint": f"Choose action from available tools: {', '.join(available)}.",
    }


class _ConsultaTools(AbstractCapability[RunDeps]):
    """Consulta's semantics for every tool call (see the module docstring)."""

    def get_model_settings(self) -> Callable[[RunContext[RunDeps]], ModelSettings] | None:
        def per_step(ctx: RunContext[RunDeps]) -> ModelSettings:
            agent = ctx.deps.agent
            chosen = agent.choose_tools(ctx.deps.run_id)
            if chosen is not None:
                return ModelSettings(tool_choice=chosen)
            first = agent.first_step_tool and not _called_this_turn(ctx.messages)
            if _last_result_was_repeat(ctx.messages) or _must_reply(ctx):
                # It asked again for what it already has, its writes keep being refused, or its step budget is
                # nearly spent: this step says what the results show (small models loop; a turn always ends).
                return ModelSettings(tool_choice="none")
            if not agent.offers_writes(_turn_words(ctx.messages)):
                # A request for information: no write is offered (every tool stays described to the model).
                others = [t.name for t in agent.tools if t.kind != "write"]
                if not others:
                    return ModelSettings(tool_choice="none")
                return ModelSettings(tool_choice=others if first else ToolOrOutput(function_tools=others))
            if first:
                return ModelSettings(tool_choice="required")  # facts first: the turn's first step calls a tool
            return ModelSettings()

        return per_step

    async def wrap_tool_execute(
        self,
        ctx: RunContext[RunDeps],
        *,
        call: ToolCallPart,
        tool_def: ToolDefinition,
        args: dict[str, Any],
        handler: Any,
    ) -> Any:
        deps = ctx.deps
        tool = deps.agent.tool(call.tool_name)
        started = time.perf_counter()
        started_at = utcnow()
        deps.log.call_started(call.tool_call_id, call.tool_name, args)
        try:
            if tool is None:  # an engine-level tool (e.g. structured output); not ours to judge
                return await handler(args)
            if tool.kind == "ask":
                result = self._defer_ask(ctx, call, tool, args)
            elif _repeated(ctx.messages, call, args, _parameter_defaults(tool_def)):
                if _repeats_this_turn(ctx.messages) >= MAX_REPEATS:
                    raise ModelStuck(
                        f"The model called {call.tool_name} with the same arguments again after {MAX_REPEATS} "
                        "refusals as repeated calls; the run stops here instead of spending its step limit. "
                        "A larger model (--model openai:…) follows the tools' hints."
                    )
                result = {
                    "ok": False,
                    "error_code": "repeated_call",
                    "message": f"{call.tool_name} was already called with these arguments in this turn; its result is above"
                    + (" (what it staged stays staged)." if tool.kind == "write" else "."),
                    "_hint": "Use that result: answer the user now, or ask with the question tool.",
                }
            elif tool.kind == "write" and not deps.agent.offers_writes(_turn_words(ctx.messages)):
                result = {
                    "ok": False,
                    "error_code": "not_a_change_request",
                    "message": f"Not staged: the user's words in this turn ask for no change, so {call.tool_name} is not offered.",
                    "_hint": "Answer what the user asked from the look-up results; to change something, they must say so.",
                }
            elif tool.kind == "write":
                evidence = evidence_from(ctx.messages, deps.agent, deps.prompt)
                if answers := _rerun_answers(ctx):  # the answer to the runtime's question is the user's words
                    evidence = replace(evidence, answers=(*evidence.answers, *answers))
                elif (ground := getattr(deps.agent.executor, "ground_args", None)) is not None:
                    args = ground(call.tool_name, args, evidence)  # words the user never said are not filters
                op = _result_of(await handler(args))
                result = await deps.stage(call.tool_call_id, call.tool_name, op, evidence)
            else:
                token = CURRENT_TOOL_CALL.set(
                    ToolCallContext(
                        run_id=deps.run_id,
                        tool_call_id=call.tool_call_id,
                        tool_name=call.tool_name,
                        trace_id=deps.log.run.trace_id,
                        usage=ctx.usage,
                        usage_limits=ctx.usage_limits,
                        log=deps.log,
                    )
                )
                try:
                    result = _result_of(await handler(args))
                finally:
                    CURRENT_TOOL_CALL.reset(token)
        except ToolError as error:
            answers = _rerun_answers(ctx)
            if (
                error.choice is not None
                and tool is not None
                and tool.kind != "ask"
                and answers is None
                and _asks_questions(deps.agent)
                and not _person_declined_this_turn(ctx.messages)
            ):
                # A guess becomes a question: the runtime asks the user itself and runs this call again with the answer.
                raise CallDeferred(
                    metadata={ASK_METADATA_KEY: _choice_ask(error, call, args, deps.log.run.lang)}, kind="question"
                ) from None
            result = error.to_result()
            if answers:  # asked once already: the model sees what the user answered with the refusal
                result["user_answer"] = answers[0] if len(answers) == 1 else answers
        except (CallDeferred, ModelStuck):
            raise
        except Exception as error:  # a tool's bug must not end the run: the model sees it in the seeds' shape
            result = tool_exception_result(call.tool_name, error)
        deps.log.call_returned(
            step=count_steps(ctx.messages),
            tool_call_id=call.tool_call_id,
            tool_name=call.tool_name,
            args=args,
            result=result,
            started_at=started_at,
            duration_ms=(time.perf_counter() - started) * 1000,
        )
        return result

    def _defer_ask(self, ctx: RunContext[RunDeps], call: ToolCallPart, tool: ToolDef, args: dict[str, Any]) -> Any:
        kind = tool.ask_kind
        assert kind is not None
        response = next((m for m in reversed(ctx.messages) if isinstance(m, ModelResponse)), None)
        siblings = [c for c in (response.tool_calls if response else []) if c.tool_call_id != call.tool_call_id]
        if siblings:
            return kind.not_alone_result()
        payload = kind.prepare(args)  # raises ToolError with the kind's own codes
        raise CallDeferred(metadata={ASK_METADATA_KEY: {"kind": kind.name, "payload": payload}}, kind="question")

    async def on_tool_validate_error(
        self, ctx: RunContext[RunDeps], *, call: ToolCallPart, tool_def: ToolDefinition, args: Any, error: Any
    ) -> Any:
        result = invalid_arguments_result(call.tool_name, error)
        ctx.deps.log.call_started(call.tool_call_id, call.tool_name, args)
        ctx.deps.log.call_returned(
            step=count_steps(ctx.messages),
            tool_call_id=call.tool_call_id,
            tool_name=call.tool_name,
            args=args if isinstance(args, dict) else {"raw": str(args)},
            result=result,
            started_at=utcnow(),
            duration_ms=0.0,
        )
        raise ToolFailed(json.dumps(result, ensure_ascii=False))

    async def before_model_request(self, ctx: RunContext[RunDeps], request_context: Any) -> Any:
        ctx.deps.log.emit(
            StepStarted(run_id=ctx.deps.run_id, step=count_steps(ctx.messages) + 1)
        )  # the model is about to think
        # pydantic-ai answers an unknown tool name with a retry; give the model the seeds' `unknown_tool` result
        # instead. (Its retry budget is set to the step limit, so the run ends on the step limit, never on it.)
        # Only the newest request can hold a fresh retry: the ones before were rewritten when they were sent.
        message = next((m for m in reversed(ctx.messages) if isinstance(m, ModelRequest)), None)
        if message is not None:
            for i, part in enumerate(message.parts):
                if not _is_unknown_tool_retry(part):
                    continue
                name = part.tool_name or "?"
                result = _unknown_tool(name, [t.name for t in ctx.deps.agent.tools])
                message.parts[i] = ToolReturnPart(
                    tool_name=name, content=result, tool_call_id=part.tool_call_id, outcome="failed"
                )
                call = _find_call(ctx.messages, part.tool_call_id)
                ctx.deps.log.call_returned(
                    step=count_steps(ctx.messages),
                    tool_call_id=part.tool_call_id,
                    tool_name=name,
                    args=call.args_as_dict() if call is not None else {},
                    result=result,
                    started_at=utcnow(),
                    duration_ms=0.0,
                )
        return request_context


def _asks_questions(agent: Agent) -> bool:
    """Whether the agent's asks include seed 001's question (else a Choice stays an error for the model)."""
    return any(t.ask_kind is not None and t.ask_kind.name == QUESTION_KIND for t in agent.tools)


def _choice_ask(error: ToolError, call: ToolCallPart, args: dict[str, Any], lang: str) -> dict[str, Any]:
    """The question ask (kind and payload) a write tool's Choice opens; the payload keeps the call to run again."""
    choice = error.choice
    assert choice is not None
    header, text = choice.header, choice.question
    words = catalog(normalize_lang(lang))
    if choice.header_key in words and choice.question_key in words:
        header, text = t(choice.header_key, lang, **choice.values), t(choice.question_key, lang, **choice.values)
    question = {"header": header[:30], "question": text, "options": list(choice.options), "multiple": False}
    rerun = {
        "tool_call_id": call.tool_call_id,
        "tool_name": call.tool_name,
        "args": args,
        "args_for_option": choice.args_for_option,
    }
    return {"kind": QUESTION_KIND, "payload": {"questions": [question], RERUN_KEY: rerun}}


def _rerun_answers(ctx: RunContext[RunDeps]) -> list[str] | None:
    """The user's answers when this call runs again after the runtime's question, else None."""
    metadata = ctx.tool_call_metadata
    if isinstance(metadata, dict) and isinstance(metadata.get(RERUN_KEY), list):
        return [str(a) for a in metadata[RERUN_KEY]]
    return None


def rerun_results(deferred: dict[str, Any], asks: dict[str, dict[str, Any]]) -> DeferredToolResults:
    """The engine's results for the calls a run paused on, from `deferred` (tool call id → the ask's outcome) and
    `asks` (tool call id → the ask's payload). A call paused on a question the runtime opened for a write tool's
    Choice runs again: an answered option merges that option's arguments into the call's; free text runs it with
    its own arguments, the text as the user's words (refused again, the model sees the refusal with the answer).
    A question not answered (timed out, cancelled) is the call's result as it is."""
    calls: dict[str, Any] = {}
    approvals: dict[str, Any] = {}
    metadata: dict[str, dict[str, Any]] = {}
    for call_id, outcome in deferred.items():
        rerun = (asks.get(call_id) or {}).get(RERUN_KEY)
        if not isinstance(rerun, dict) or not (isinstance(outcome, dict) and outcome.get("ok")):
            calls[call_id] = outcome
            continue
        answers = _raw_answers(outcome)
        chosen = rerun.get("args_for_option", {}).get(answers[0], {}) if answers else {}
        approvals[call_id] = ToolApproved(override_args={**rerun["args"], **chosen})
        metadata[call_id] = {RERUN_KEY: answers}
    return DeferredToolResults(calls=calls, approvals=approvals, metadata=metadata)


def _turn_words(messages: list[ModelMessage]) -> str | None:
    """What the user wrote to start this turn (None before any)."""
    for message in reversed(messages):
        if isinstance(message, ModelRequest):
            for part in message.parts:
                if isinstance(part, UserPromptPart):
                    return (
                        part.content
                        if isinstance(part.content, str)
                        else " ".join(str(c) for c in part.content if isinstance(c, str))
                    )
    return None


def _first_look(agent: Agent, prompt: str) -> list[ModelMessage]:
    """The turn's opening as if the model had made the agent's first-look calls: the user's words, then those calls
    (run by the engine like any call, so they are checked, logged and on record)."""
    calls = agent.first_calls(prompt)
    if not calls:
        return []
    parts = [ToolCallPart(name, args, tool_call_id=f"look_{uuid.uuid4().hex[:16]}") for name, args in calls]
    return [ModelRequest(parts=[UserPromptPart(prompt)]), ModelResponse(parts=parts, model_name=FIRST_LOOK_MODEL)]


FIRST_LOOK_MODEL = "consulta:first-look"
"""The model name on a response the runtime made itself (the turn's first look)."""


def _last_result_was_repeat(messages: list[ModelMessage]) -> bool:
    """Whether the latest tool results refused a call as `repeated_call`."""
    for message in reversed(messages):
        if isinstance(message, ModelRequest):
            returns = [p for p in message.parts if isinstance(p, ToolReturnPart)]
            if returns:
                return any(
                    isinstance(p.content, dict) and p.content.get("error_code") == "repeated_call" for p in returns
                )
            if any(isinstance(p, UserPromptPart) for p in message.parts):
                return False
    return False


MAX_REFUSED_WRITES = 2
"""Write calls refused in one turn (not by a question the runtime asked) before the model may only reply."""
MAX_CALLS_PER_TURN = 4
"""Tool calls in one turn of a writing agent before the model may only reply (a small model loops on look-ups)."""


def _must_reply(ctx: RunContext[RunDeps]) -> bool:
    """Whether this step of an agent that writes must be the turn's reply: its writes were refused
    `MAX_REFUSED_WRITES` times, it made `MAX_CALLS_PER_TURN` calls, or the run's step limit leaves only this request
    and one for a rewrite."""
    if ctx.deps.agent.executor is None:
        return False  # an agent that only reads and asks keeps its own step plan
    limit = ctx.usage_limits.request_limit if ctx.usage_limits is not None else None
    if limit is not None and ctx.usage.requests >= limit - 2:
        return True
    outcomes = turn_outcomes(ctx.messages, ctx.deps.agent)
    if len([c for c in outcomes if c.kind != "ask"]) >= MAX_CALLS_PER_TURN:
        return True
    return len([c for c in outcomes if c.kind == "write" and not c.ok]) >= MAX_REFUSED_WRITES


def _called_this_turn(messages: list[ModelMessage]) -> bool:
    return any(isinstance(m, ModelResponse) and m.tool_calls for m in this_turn(messages))


def _repeated(
    messages: list[ModelMessage], call: ToolCallPart, args: dict[str, Any], defaults: dict[str, Any] | None = None
) -> bool:
    """Whether a call repeats one made since the user's last words (small models loop on a call): the same arguments,
    once each side's are completed with the parameters' `defaults` (what the model left out means the default)."""
    meant = _without_defaults({**(defaults or {}), **args})
    for message in reversed(messages):
        if isinstance(message, ModelRequest) and any(isinstance(p, UserPromptPart) for p in message.parts):
            return False
        if isinstance(message, ModelResponse):
            for earlier in message.tool_calls:
                if earlier.tool_call_id != call.tool_call_id and earlier.tool_name == call.tool_name:
                    before = earlier.args_as_dict()
                    if before == args or _without_defaults({**(defaults or {}), **before}) == meant:
                        return True
    return False


def _parameter_defaults(tool_def: ToolDefinition) -> dict[str, Any]:
    """The default of each parameter that has one, from the tool's JSON schema."""
    properties = (tool_def.parameters_json_schema or {}).get("properties") or {}
    return {name: spec["default"] for name, spec in properties.items() if isinstance(spec, dict) and "default" in spec}


MAX_REPEATS = 3
"""Repeated calls answered `repeated_call` in one turn before the run stops as stuck."""


class ModelStuck(Exception):
    """The model keeps repeating a call it was told it already made: the run fails with a readable reason."""


def _errors_this_turn(messages: list[ModelMessage]) -> list[str]:
    """The error codes of the tool results since the user's last message."""
    codes: list[str] = []
    for message in reversed(messages):
        if isinstance(message, ModelRequest):
            if any(isinstance(p, UserPromptPart) for p in message.parts):
                break
            codes += [
                str(p.content["error_code"])
                for p in message.parts
                if isinstance(p, ToolReturnPart) and isinstance(p.content, dict) and p.content.get("error_code")
            ]
    return codes


def _repeats_this_turn(messages: list[ModelMessage]) -> int:
    return _errors_this_turn(messages).count("repeated_call")


_NOT_ANSWERED = frozenset({"question_cancelled", "question_timeout", "question_unavailable"})


def _person_declined_this_turn(messages: list[ModelMessage]) -> bool:
    """Whether a question of this turn went unanswered (cancelled, timed out, nobody to answer): the runtime then asks
    no question of its own in the same turn — it would ask again what the person just left open."""
    return not _NOT_ANSWERED.isdisjoint(_errors_this_turn(messages))


def _without_defaults(args: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in args.items() if v not in (None, False, [], {})}


def _find_call(messages: list[ModelMessage], tool_call_id: str) -> ToolCallPart | None:
    for message in reversed(messages):
        if isinstance(message, ModelResponse):
            for call in message.tool_calls:
                if call.tool_call_id == tool_call_id:
                    return call
    return None


def _is_unknown_tool_retry(part: Any) -> bool:
    if isinstance(part, ToolReturnPart):
        return getattr(getattr(part, "retry", None), "cause", None) == "unknown_tool"
    return (
        isinstance(part, RetryPromptPart)
        and isinstance(part.content, str)
        and part.content.startswith("Unknown tool name")
    )


def _engine_tool(tool: ToolDef) -> Tool[RunDeps]:
    # Without policies the plain function is handed over: the engine runs it (a sync one in a thread) itself.
    function = tool.call if tool.policies else tool.function
    if tool.parameters is not None:
        return Tool.from_schema(
            function, name=tool.name, description=_full_description(tool), json_schema=tool.parameters
        )
    return Tool(function, name=tool.name, description=_full_description(tool), takes_ctx=False)


def _full_description(tool: ToolDef) -> str:
    return tool.description if not tool.notes else f"{tool.description} {tool.notes}"


def this_turn(messages: list[ModelMessage]) -> list[ModelMessage]:
    """The messages since the user's last words (the turn the run is in)."""
    for i in range(len(messages) - 1, -1, -1):
        message = messages[i]
        if isinstance(message, ModelRequest) and any(isinstance(p, UserPromptPart) for p in message.parts):
            return messages[i:]
    return list(messages)


def turn_outcomes(messages: list[ModelMessage], agent: Agent) -> list[ToolOutcome]:
    """The tool calls of the turn and how they ended, from its conversation."""
    outcomes = []
    calls = {c.tool_call_id: c for m in this_turn(messages) if isinstance(m, ModelResponse) for c in m.tool_calls}
    for message in this_turn(messages):
        if not isinstance(message, ModelRequest):
            continue
        for part in message.parts:
            if not isinstance(part, ToolReturnPart):
                continue
            content = part.content
            if isinstance(content, str):
                try:
                    content = json.loads(content)
                except ValueError:
                    pass
            result = content if isinstance(content, dict) else {}
            tool = agent.tool(part.tool_name)
            ok = result.get("ok") is not False and getattr(part, "outcome", "success") != "failed"
            call = calls.get(part.tool_call_id)
            outcomes.append(
                ToolOutcome(
                    name=part.tool_name,
                    kind=tool.kind if tool is not None else "other",
                    ok=ok,
                    error_code=result.get("error_code"),
                    message=result.get("message"),
                    data=Evidence.data_text(content)
                    if tool is not None and tool.kind in ("read", "ask") and ok
                    else "",
                    args=call.args_as_dict() if call is not None else {},
                    hint=" ".join(str(result[k]) for k in ("_hint", "next_step") if result.get(k)) or None,
                )
            )
    return outcomes


def _turn_facts(ctx: RunContext[RunDeps]) -> TurnFacts:
    return _facts_of(ctx.deps, ctx.messages)


def _facts_of(deps: RunDeps, messages: list[ModelMessage]) -> TurnFacts:
    calls = turn_outcomes(messages, deps.agent)
    turn = this_turn(messages)
    refusals = [str(p.content) for m in turn if isinstance(m, ModelRequest) for p in m.parts if _is_refusal(p)]
    return gather_facts(
        store=deps.log.store,
        run=deps.log.run,
        calls=calls,
        prompt=deps.prompt,
        executor=deps.agent.executor,
        earlier=_earlier_words(messages[: len(messages) - len(turn)]),
        model_meant=(deps.instructions, *(c.hint for c in calls if c.hint), *refusals),
        tool_names=tuple(t.name for t in deps.agent.tools),
    )


def _earlier_words(messages: list[ModelMessage]) -> str:
    """The thread's earlier turns as the person saw them: their words and the replies shown."""
    return "\n".join(
        str(p.content)
        for m in carry_over(messages)
        for p in m.parts
        if isinstance(p, UserPromptPart | TextPart) and isinstance(p.content, str)
    )


def _checked_in_turn(check: ReplyCheck) -> Callable[[RunContext[RunDeps], Any], Any]:
    """An output validator holding the final text to `check` against the turn's facts. A refused text goes back to
    the model with the reason; refused again in the same turn, a `ReplyRefused`'s replacement is the reply instead
    (the conversation keeps it in place of the refused text)."""

    def checked(ctx: RunContext[RunDeps], output: Any) -> Any:
        if isinstance(output, DeferredToolRequests):
            return output
        try:
            check(str(output), _turn_facts(ctx))
        except ReplyRefused as error:
            last_step = _no_step_left(ctx)
            replaced = error.replacement is not None and (bool(_refusals(ctx.messages)) or last_step)
            ctx.deps.log.emit(
                ReplyChecked(run_id=ctx.deps.run_id, check=error.check, reason=str(error), replaced=replaced)
            )
            if not replaced:
                raise ModelRetry(str(error)) from None
            assert error.replacement is not None
            _say_instead(ctx.messages, error.replacement)
            return error.replacement
        except ValueError as error:
            ctx.deps.log.emit(ReplyChecked(run_id=ctx.deps.run_id, check="reply", reason=str(error)))
            raise ModelRetry(str(error)) from None
        return output

    return checked


def _no_step_left(ctx: RunContext[RunDeps]) -> bool:
    """Whether the run's step limit leaves no model request for a rewrite: code's reply is shown at once."""
    limit = ctx.usage_limits.request_limit if ctx.usage_limits is not None else None
    return limit is not None and ctx.usage.requests >= limit


def _refusals(messages: list[ModelMessage]) -> int:
    """Final texts refused so far in this turn."""
    return sum(1 for m in this_turn(messages) if isinstance(m, ModelRequest) for p in m.parts if _is_refusal(p))


def _say_instead(messages: list[ModelMessage], text: str) -> None:
    response = next((m for m in reversed(messages) if isinstance(m, ModelResponse)), None)
    if response is not None:
        response.parts = [TextPart(text), *(p for p in response.parts if not isinstance(p, TextPart))]


def _checked_by(check: Callable[[Any], None]) -> Callable[[Any], Any]:
    """An output validator from a check that raises ValueError saying why (the model is asked again with it)."""

    def checked(output: Any) -> Any:
        if isinstance(output, DeferredToolRequests):
            return output
        try:
            check(output)
        except ValueError as error:
            raise ModelRetry(str(error)) from None
        return output

    return checked


def _run_instructions(ctx: RunContext[RunDeps]) -> str:
    return ctx.deps.instructions


def build_engine_agent(agent: Agent, model: Model) -> PaiAgent[RunDeps, str | DeferredToolRequests]:
    """A pydantic-ai agent for `agent` on `model`: text output, or the deferred calls the run paused on."""
    engine: PaiAgent[RunDeps, str | DeferredToolRequests] = PaiAgent(
        model,
        # Instructions that depend on the run are evaluated once per run (RunDeps.instructions): the same text at
        # every step, so the model's cache of the conversation's prefix holds.
        instructions=agent.instructions if isinstance(agent.instructions, str) else _run_instructions,
        tools=[_engine_tool(t) for t in agent.tools],
        deps_type=RunDeps,
        output_type=[str, DeferredToolRequests],  # type: ignore[arg-type]
        capabilities=[_ConsultaTools()],
        retries=agent.max_steps,
    )
    # Every reply is held to what its turn did (the runtime's claim check), kept free of words meant for the model,
    # held to the facts the turn found (for an agent that declares them), then to the agent's own check.
    say_instead = agent.facts.replacement if agent.facts is not None else compose_reply
    engine.output_validator(
        _checked_in_turn(
            all_checks(
                check_claims,
                check_model_words(say_instead),
                check_facts(agent.facts) if agent.facts is not None else None,
                agent.check_reply,
            )
        )
    )
    return engine


@dataclass(kw_only=True)
class EngineRun:
    """One stretch of a run on the engine: from a prompt or from answers, to a final text or the next pause."""

    engine: PaiAgent[RunDeps, Any]
    deps: RunDeps
    history: list[ModelMessage]
    prompt: str | None
    deferred: dict[str, Any] | None
    max_steps: int
    on_step: Callable[[list[ModelMessage]], None]
    check_cancel: Callable[[], bool]

    async def __call__(self) -> tuple[str | None, list[PausedCall], list[ModelMessage]]:
        """Run; return (final text or None, the calls the run paused on, all messages)."""
        results = None
        if self.deferred:
            asks = self.deps.log.store.list_asks(status=None, run_id=self.deps.run_id)
            results = rerun_results(self.deferred, {a.tool_call_id: a.payload for a in asks if a.tool_call_id})
        prompt, history = self.prompt, self.history
        if prompt is not None and not self.deferred and (opening := _first_look(self.deps.agent, prompt)):
            prompt, history = None, [*history, *opening]  # the engine runs the first-look calls, then the model
        limits = UsageLimits(request_limit=self.max_steps)
        drafts = self._drafts()
        async with self.engine.iter(
            prompt, message_history=history, deferred_tool_results=results, deps=self.deps, usage_limits=limits
        ) as run:
            async for node in run:
                # One checkpoint per step: when the next model request, carrying the tools' results, is about to
                # be sent. The run's end is checkpointed by the caller.
                request = getattr(node, "request", None)
                if isinstance(request, ModelRequest) and any(
                    isinstance(p, ToolReturnPart | RetryPromptPart) for p in request.parts
                ):
                    messages = run.all_messages()
                    if not messages or messages[-1] is not request:
                        messages = [*messages, request]
                    self.on_step(messages)
                    final = _turn_ending_result(self.deps.agent, request)
                    if final is not None:
                        return final, [], messages
                if drafts is not None and PaiAgent.is_model_request_node(node):
                    await drafts.stream(node, run.ctx)  # its words reach listeners as drafts while it streams
                if self.check_cancel():
                    raise Cancelled(run.all_messages())
            assert run.result is not None
            output = run.result.output
            messages = run.result.all_messages()
        if isinstance(output, DeferredToolRequests):
            paused = [
                PausedCall(call=c, ask=(output.metadata.get(c.tool_call_id) or {}).get(ASK_METADATA_KEY))
                for c in output.calls
            ]
            return None, paused, messages
        return str(output), [], messages

    def _drafts(self) -> ReplyDrafts | None:
        """The run's reply drafts, when its model streams."""
        if not can_stream(self.engine.model):
            return None
        deps = self.deps
        return ReplyDrafts(
            run_id=deps.run_id,
            publish=deps.log.recorder.bus.publish,
            facts=lambda messages: _facts_of(deps, messages),
            stop=self.check_cancel,
        )


def _turn_ending_result(agent: Agent, request: ModelRequest) -> str | None:
    """The output of a turn ended by a successful call of an `ends_turn` tool, else None."""
    for part in request.parts:
        tool = agent.tool(part.tool_name) if isinstance(part, ToolReturnPart) else None
        if (
            tool is not None
            and tool.ends_turn
            and isinstance(part.content, dict)
            and part.content.get("ok") is not False
        ):
            return str(part.content.get("message") or json.dumps(part.content, ensure_ascii=False))
    return None


@dataclass(frozen=True)
class PausedCall:
    """A call the run paused on, with the ask it stands for (None for a deferral that is not an ask)."""

    call: ToolCallPart
    ask: dict[str, Any] | None


class Cancelled(Exception):
    def __init__(self, messages: list[ModelMessage]) -> None:
        super().__init__("cancelled")
        self.messages = messages
